// Package bench compares this project's framework plugins with Volcano's in-tree
// tensorflow, pytorch and mpi plugins on the same jobs. `make bench` runs the
// benchmarks through ./report, which prints and checks the comparison.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	intreempi "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/mpi"
	intreepytorch "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/pytorch"
	intreetf "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/tensorflow"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	utiltesting "github.com/vcplugins/framework-plugins/pkg/testing"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Sizes are the worker counts of the benchmarked jobs; every job has one more
// pod (ps, master or scheduler).
var Sizes = []int{16, 256, 2048}

// TFConfigUnit is the unit of the metric the tensorflow benchmarks report: the
// bytes TF_CONFIG costs a job in stored objects (tfConfigStored): the
// TF_CONFIG (and, by reference, TF_CONFIG_CLUSTER) entries of every pod's
// containers and the cluster ConfigMap's data.
const TFConfigUnit = "TF_CONFIG-B/op"

// CPUUnit is the unit of the process CPU time (user and system, every
// thread) per op, measured over the timed part of each iteration.
const CPUUnit = "cpu-ns/op"

// RetainedUnit is the unit of the heap a job's plugin calls leave reachable
// once its pods exist (the pods' injected parts and whatever the plugin
// keeps, such as our plan cache): what a user pays for as long as the pods
// are in the controller's hands. Measured in the first iteration, after a
// GC before and after the job, with the pods kept alive.
const RetainedUnit = "retained-B/op"

// Framework is one benchmarked framework: the job shape and the two builders.
type Framework struct {
	Name string
	// Lead is the task of the one non-worker pod; Worker the workers' task
	// (the plugin's default --worker).
	Lead, Worker string
	// Ours and InTree build the plugins; InTree is nil when Volcano has none.
	Ours, InTree utiltesting.Builder
	// Check returns an error unless a pod got the values the plugin must
	// inject (env is its first container's environment as the kubelet
	// resolves it), so that a benchmark cannot silently measure a plugin that
	// did nothing or the wrong thing.
	Check func(c podCheck) error
}

// podCheck is one pod of a benchmarked job, after the plugin ran.
type podCheck struct {
	job        *batch.Job
	pod        *v1.Pod
	task       string
	index      int
	worker     string
	workers    int
	env        map[string]string
	configMaps map[string]*v1.ConfigMap
}

// shapes are what the benchmarks need to know of each framework beyond
// plugins.Frameworks: the job shape, Volcano's plugin and the check.
var shapes = map[string]Framework{
	tensorflow.Name: {Lead: tensorflow.DefaultPS, Worker: tensorflow.DefaultWorker, InTree: intreetf.New, Check: checkTFConfig},
	pytorch.Name: {Lead: pytorch.DefaultMaster, Worker: pytorch.DefaultWorker, InTree: intreepytorch.New, Check: func(c podCheck) error {
		rank := 0
		if c.task == c.worker {
			rank = c.index + 1
		}
		return wantEnv(c, pytorch.EnvRank, strconv.Itoa(rank))
	}},
	mpi.Name: {Lead: mpi.DefaultMaster, Worker: mpi.DefaultWorker, InTree: intreempi.New, Check: checkMPI},
	mxnet.Name: {Lead: mxnet.DefaultScheduler, Worker: mxnet.DefaultWorker, Check: func(c podCheck) error {
		if c.task == c.worker {
			if err := wantEnv(c, mxnet.EnvWorkerID, strconv.Itoa(c.index)); err != nil {
				return err
			}
		}
		return wantEnv(c, mxnet.EnvRole, c.task)
	}},
}

func wantEnv(c podCheck, name, want string) error {
	if got, ok := c.env[name]; !ok || got != want {
		return fmt.Errorf("%s = %q (set: %v), want %q", name, got, ok, want)
	}
	return nil
}

// host is the DNS name of the index-th pod of task, as the svc plugin makes it.
func host(job *batch.Job, task string, index int) string {
	return fmt.Sprintf("%s-%s-%d.%s", job.Name, task, index, job.Name)
}

// checkTFConfig decodes TF_CONFIG as TensorFlow would and checks the pod's
// task type and index and the size of the cluster.
func checkTFConfig(c podCheck) error {
	var tf struct {
		Cluster map[string][]string `json:"cluster"`
		Task    struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(c.env[tensorflow.EnvTFConfig]), &tf); err != nil {
		return fmt.Errorf("TF_CONFIG: %w", err)
	}
	if tf.Task.Type != c.task || tf.Task.Index != c.index {
		return fmt.Errorf("TF_CONFIG task %s %d, want %s %d", tf.Task.Type, tf.Task.Index, c.task, c.index)
	}
	last := host(c.job, c.worker, c.workers-1) + ":" + strconv.Itoa(tensorflow.DefaultPort)
	if w := tf.Cluster[tensorflow.RoleWorker]; len(w) != c.workers || w[c.workers-1] != last {
		return fmt.Errorf("TF_CONFIG lists %d workers, want %d ending in %s", len(w), c.workers, last)
	}
	return nil
}

// checkMPI checks the master's MPI_HOST (both plugins) and, where the plugin
// writes one (ours), the hostfile: one line per worker, in index order.
func checkMPI(c podCheck) error {
	if c.task != mpi.DefaultMaster {
		if len(c.pod.Spec.Containers[0].Ports) != 1 {
			return fmt.Errorf("worker ports %v, want the ssh port", c.pod.Spec.Containers[0].Ports)
		}
		return nil
	}
	hosts := make([]string, c.workers)
	lines := make([]string, c.workers)
	for i := range hosts {
		hosts[i] = host(c.job, c.worker, i)
		lines[i] = hosts[i] + " slots=1\n"
	}
	if err := wantEnv(c, mpi.EnvMPIHost, strings.Join(hosts, ",")); err != nil {
		return err
	}
	if cm, ok := c.configMaps[mpi.ConfigMapName(c.job)]; ok {
		if got, want := cm.Data[mpi.HostfileKey], strings.Join(lines, ""); got != want {
			return fmt.Errorf("hostfile of %d bytes differs from the %d bytes of %d workers", len(got), len(want), c.workers)
		}
	} else if utiltesting.CountEnv(c.pod.Spec.Containers[0].Env, mpi.EnvOMPIHostfile) == 1 {
		return fmt.Errorf("the master points at a hostfile, but there is no ConfigMap %s", mpi.ConfigMapName(c.job))
	}
	return nil
}

// processEnv resolves container 0's environment as the kubelet does: in
// declaration order, $(NAME) references expanded with the kubelet's own
// expansion code, configMapKeyRef read from configMaps.
func processEnv(pod *v1.Pod, configMaps map[string]*v1.ConfigMap) (map[string]string, error) {
	env := map[string]string{}
	mapping := expansion.MappingFuncFor(env)
	for _, e := range pod.Spec.Containers[0].Env {
		switch {
		case e.Value != "":
			env[e.Name] = expansion.Expand(e.Value, mapping)
		case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			v, ok := configMaps[ref.Name].Data[ref.Key]
			if !ok {
				return nil, fmt.Errorf("%s: no ConfigMap %s with key %s", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		default:
			env[e.Name] = ""
		}
	}
	return env, nil
}

// tfConfigStored is what a job's TF_CONFIG costs in stored objects: the
// TF_CONFIG and TF_CONFIG_CLUSTER entries of every container of every pod
// (names and values, ConfigMap names and keys) and the data of the cluster
// ConfigMap, if any.
func tfConfigStored(pods []*v1.Pod, configMaps map[string]*v1.ConfigMap, job *batch.Job) int {
	n := 0
	for _, pod := range pods {
		for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for _, c := range cs {
				for _, e := range c.Env {
					if e.Name != tensorflow.EnvTFConfig && e.Name != tensorflow.EnvCluster {
						continue
					}
					n += len(e.Name) + len(e.Value)
					if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil {
						n += len(r.ConfigMapKeyRef.Name) + len(r.ConfigMapKeyRef.Key)
					}
				}
			}
		}
	}
	if cm, ok := configMaps[tensorflow.ConfigMapName(job)]; ok {
		for k, v := range cm.Data {
			n += len(k) + len(v)
		}
	}
	return n
}

// Frameworks lists the benchmarked frameworks: every one of
// plugins.Frameworks, in its order. One without a shape panics, so that a
// new framework cannot go unmeasured.
var Frameworks = func() []Framework {
	var out []Framework
	for _, f := range plugins.Frameworks {
		fw, ok := shapes[f.Name]
		if !ok {
			panic("test/bench: no benchmark shape for framework " + f.Name)
		}
		fw.Name, fw.Ours = f.Name, f.New
		out = append(out, fw)
	}
	return out
}()

// JobName is the benchmarked jobs' name: 14 characters, a realistic length
// (host names, and so TF_CONFIG and hostfile sizes, grow with it; a short
// name flatters whoever writes them per pod).
const JobName = "resnet50-train"

// Job returns the benchmarked job of fw: one Lead pod and workers worker pods,
// the plugin enabled with its default arguments (none).
func Job(fw Framework, workers int) *batch.Job {
	return utiltesting.MakeJob(JobName).
		Task(utiltesting.MakeTask(fw.Lead, 1).Obj()).
		Task(utiltesting.MakeTask(fw.Worker, int32(workers)).Obj()).
		Plugin(fw.Name).Obj()
}

// revision numbers the job revisions the benchmarks hand to the plugins, far
// above what utiltesting.MakeJob gives out.
var revision atomic.Int64

func init() { revision.Store(1 << 40) }

func nextRevision() string { return strconv.FormatInt(revision.Add(1), 10) }

// generation numbers the spec revisions of the benchmark jobs.
var generation atomic.Int64

func nextGeneration() int64 { return generation.Add(1) }

// Impl is one benchmarked implementation of a framework's plugin.
type Impl struct {
	// Name is the impl= part of the benchmark name.
	Name string
	// Build returns the builder and the plugin arguments, nil when the
	// framework has no such implementation.
	Build func(fw Framework) (utiltesting.Builder, []string)
}

// Impls are Volcano's in-tree plugin, ours with its default arguments (the
// targets apply to it; tensorflow's --tf-config=reference), ours with
// --wait=false, which adds no wait init container: in-tree plugins add none,
// so that variant shows what it costs, and tensorflow with
// --tf-config=inline, every pod holding its whole TF_CONFIG as in-tree's do.
var Impls = []Impl{
	{"in-tree", func(fw Framework) (utiltesting.Builder, []string) { return fw.InTree, []string{} }},
	{"ours", func(fw Framework) (utiltesting.Builder, []string) { return fw.Ours, []string{} }},
	{"ours-nowait", func(fw Framework) (utiltesting.Builder, []string) { return fw.Ours, []string{"--wait=false"} }},
	{"ours-inline", func(fw Framework) (utiltesting.Builder, []string) {
		if fw.Name != tensorflow.Name {
			return nil, nil
		}
		return fw.Ours, []string{"--tf-config=inline"}
	}},
}

func BenchmarkPlugins(b *testing.B) {
	for _, fw := range Frameworks {
		b.Run("framework="+fw.Name, func(b *testing.B) {
			for _, im := range Impls {
				build, args := im.Build(fw)
				if build == nil {
					continue
				}
				b.Run("impl="+im.Name, func(b *testing.B) {
					for _, n := range Sizes {
						b.Run("workers="+strconv.Itoa(n), func(b *testing.B) {
							job := Job(fw, n)
							job.Spec.Plugins[fw.Name] = args
							benchJob(b, fw, build, job)
						})
					}
				})
			}
		})
	}
}

// benchJob measures what the job controller makes a plugin do for one job: one
// OnJobAdd, then one OnPodCreate per pod, each on a fresh plugin instance built
// by build(client, args) as the controller does.
//
// Every iteration is a new spec revision (metadata.generation), so our plan
// cache cannot carry a plan from one iteration to the next. Within one,
// OnJobAdd sees resourceVersion r and the pods r+1 with the same generation,
// as in the controller, where initiateJob runs OnJobAdd and then updates the
// Job's status (a new resourceVersion, not a new generation) before a later
// sync creates all pods. Our plugins therefore build their plan once per
// iteration, in OnJobAdd, and reuse it for every pod.
//
// Untimed, and the same for both implementations: copying the job, building the
// pods (utiltesting.MakePod copies), a fresh fake clientset, so that ConfigMaps
// are created, not found, in every iteration, and a garbage collection, so
// that the garbage of the setup and of the previous iteration is not
// collected on this one's clock (it would be charged to whichever size
// happens to trigger it). Besides wall time it reports the process's CPU time
// (user and system, all threads: the garbage collector's workers included)
// per op: on a shared machine wall time also counts waiting for a core.
//
// The first iteration checks every pod's values (Framework.Check, on the
// environment as the kubelet resolves it) and measures the retained heap and,
// for tensorflow, the TF_CONFIG bytes stored.
func benchJob(b *testing.B, fw Framework, build utiltesting.Builder, base *batch.Job) {
	args := base.Spec.Plugins[fw.Name]
	type podOf struct {
		pod   *v1.Pod
		task  string
		index int
	}
	var templates []podOf
	workers := 0
	for _, task := range base.Spec.Tasks {
		if task.Name == fw.Worker {
			workers = int(task.Replicas)
		}
		for i := 0; i < int(task.Replicas); i++ {
			templates = append(templates, podOf{utiltesting.MakePod(base, task.Name, i).Obj(), task.Name, i})
		}
	}
	pods := make([]*v1.Pod, len(templates))
	tfConfigBytes := -1
	var retained int64
	var cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		// One spec revision (generation) per iteration, as a new Job; the
		// status update between OnJobAdd and pod creation changes only the
		// resourceVersion.
		generation := nextGeneration()
		addJob := base.DeepCopy()
		addJob.Generation = generation
		addJob.ResourceVersion = nextRevision()
		// The controller makes the map before it calls OnJobAdd.
		addJob.Status.ControlledResources = map[string]string{}
		podJob := base.DeepCopy()
		podJob.Generation = generation
		podJob.ResourceVersion = nextRevision()
		podJob.Status.ControlledResources = map[string]string{"plugin-" + fw.Name: fw.Name}
		for i, t := range templates {
			pods[i] = t.pod.DeepCopy()
		}
		kube := fake.NewSimpleClientset()
		client := pluginsinterface.PluginClientset{KubeClients: kube}
		first := tfConfigBytes < 0
		var before runtime.MemStats
		runtime.GC()
		if first {
			runtime.ReadMemStats(&before)
		}
		cpuStart := cpuTime(b)
		b.StartTimer()

		if err := build(client, args).OnJobAdd(addJob); err != nil {
			b.Fatalf("OnJobAdd: %v", err)
		}
		for _, pod := range pods {
			if err := build(client, args).OnPodCreate(pod, podJob); err != nil {
				b.Fatalf("OnPodCreate %s: %v", pod.Name, err)
			}
		}

		b.StopTimer()
		cpu += cpuTime(b) - cpuStart
		if first {
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(pods)
			runtime.KeepAlive(client)
			retained = int64(after.HeapAlloc) - int64(before.HeapAlloc)
			configMaps := map[string]*v1.ConfigMap{}
			list, err := kube.CoreV1().ConfigMaps(base.Namespace).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for i := range list.Items {
				configMaps[list.Items[i].Name] = &list.Items[i]
			}
			for i, pod := range pods {
				env, err := processEnv(pod, configMaps)
				if err == nil {
					err = fw.Check(podCheck{job: base, pod: pod, task: templates[i].task, index: templates[i].index,
						worker: fw.Worker, workers: workers, env: env, configMaps: configMaps})
				}
				if err != nil {
					b.Fatalf("pod %s: the plugin did not inject what it must: %v", pod.Name, err)
				}
			}
			tfConfigBytes = tfConfigStored(pods, configMaps, base)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), CPUUnit)
	if fw.Name == tensorflow.Name {
		b.ReportMetric(float64(tfConfigBytes), TFConfigUnit)
	}
	b.ReportMetric(float64(retained), RetainedUnit)
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
