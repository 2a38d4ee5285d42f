// Package bench compares this project's framework plugins with Volcano's in-tree
// tensorflow, pytorch and mpi plugins on the same jobs. `make bench` runs the
// benchmarks through ./report, which prints and checks the comparison.
package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
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

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
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
	// Sample is the framework's sample.Sample: the benchmarked job's
	// roles (Lead, Worker) and the check of what the plugin injected.
	Sample *sample.Sample
	// Ours and InTree build the plugins; InTree is nil when Volcano has none.
	Ours, InTree jobtest.Builder
}

// inTree are Volcano's in-tree plugins, by framework.
var inTree = map[string]jobtest.Builder{
	tensorflow.Name: intreetf.New,
	pytorch.Name:    intreepytorch.New,
	mpi.Name:        intreempi.New,
}

// processEnv resolves container 0's environment as the kubelet does: in
// declaration order, $(NAME) references expanded with the kubelet's own
// expansion code, configMapKeyRef read from configMaps, the downward API's
// status.podIP from the pod's status.
func processEnv(pod *v1.Pod, configMaps map[string]*v1.ConfigMap) (map[string]string, error) {
	env := map[string]string{}
	mapping := expansion.MappingFuncFor(env)
	for _, e := range pod.Spec.Containers[0].Env {
		switch {
		case e.Value != "":
			env[e.Name] = expansion.Expand(e.Value, mapping)
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env[e.Name] = pod.Status.PodIP
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
// samples.Frameworks, in its order, each with its own Sample.
var Frameworks = func() []Framework {
	var out []Framework
	for _, f := range samples.Frameworks() {
		out = append(out, Framework{Name: f.Name, Sample: f.Sample, Ours: f.New, InTree: inTree[f.Name]})
	}
	return out
}()

// JobName is the benchmarked jobs' name: 14 characters, a realistic length
// (host names, and so TF_CONFIG and hostfile sizes, grow with it; a short
// name flatters whoever writes them per pod).
const JobName = "resnet50-train"

// Job returns the benchmarked job of fw: one pod of each of its Sample's
// Lead roles and workers worker pods, each task named as its role flag, the
// plugin enabled with its default arguments (none).
func Job(fw Framework, workers int) *batch.Job {
	j := jobtest.MakeJob(JobName)
	for _, lead := range fw.Sample.Lead {
		j.Task(jobtest.MakeTask(lead, 1).Obj())
	}
	return j.Task(jobtest.MakeTask(fw.Sample.Worker, int32(workers)).Obj()).Plugin(fw.Name).Obj()
}

// revision numbers the job revisions the benchmarks hand to the plugins, far
// above what jobtest.MakeJob gives out.
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
	// InTree: the plugin is Volcano's (sample.Pod.InTree), whose pods the
	// first iteration also checks for stock's wait init container.
	InTree bool
	// Build returns the builder and the plugin arguments, nil when the
	// framework has no such implementation.
	Build func(fw Framework) (jobtest.Builder, []string)
}

// Impls are Volcano's in-tree plugin, ours with its default arguments (the
// targets apply to it; tensorflow's --tf-config=auto: inline at 16 workers,
// by reference at 256 and 2048), ours with
// --wait=false, which adds no wait init container: in-tree plugins add none,
// so that variant shows what it costs, tensorflow with
// --tf-config=inline, every pod holding its whole TF_CONFIG as in-tree's do,
// and pytorch's in-tree plugin with --wait-master-enabled, which gives its
// workers an init container that waits for the master's port as ours does
// by default (the other in-tree plugins have no such argument).
var Impls = []Impl{
	{"in-tree", true, func(fw Framework) (jobtest.Builder, []string) { return fw.InTree, []string{} }},
	{"in-tree-wait", true, func(fw Framework) (jobtest.Builder, []string) {
		if fw.Name != pytorch.Name {
			return nil, nil
		}
		return fw.InTree, []string{"--wait-master-enabled"}
	}},
	{"ours", false, func(fw Framework) (jobtest.Builder, []string) { return fw.Ours, []string{} }},
	{"ours-nowait", false, func(fw Framework) (jobtest.Builder, []string) { return fw.Ours, []string{"--wait=false"} }},
	{"ours-inline", false, func(fw Framework) (jobtest.Builder, []string) {
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
							benchJob(b, fw, build, job, im.InTree)
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
// pods (jobtest.MakePod copies), a fresh fake clientset, so that ConfigMaps
// are created, not found, in every iteration, and a garbage collection, so
// that the garbage of the setup and of the previous iteration is not
// collected on this one's clock (it would be charged to whichever size
// happens to trigger it). Besides wall time it reports the process's CPU time
// (user and system, all threads: the garbage collector's workers included)
// per op: on a shared machine wall time also counts waiting for a core.
//
// The first iteration checks every pod's values (Framework.Check, on the
// environment as the kubelet resolves it) and measures the retained heap and,
// for tensorflow, the TF_CONFIG bytes stored; with inTree, it checks the
// in-tree pytorch plugin's init containers too (checkInTreeWait).
func benchJob(b *testing.B, fw Framework, build jobtest.Builder, base *batch.Job, inTree bool) {
	args := base.Spec.Plugins[fw.Name]
	templates := podsOf(base)
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
			pods[i] = t.DeepCopy()
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
			configMaps, err := checkPods(fw, base, kube, pods, inTree)
			if err != nil {
				b.Fatal(err)
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

// podsOf returns the pods of job before any plugin ran, in task and index
// order, each with its own pod IP (10.244.0.0/16), as the kubelet would
// resolve a downward API reference to it.
func podsOf(job *batch.Job) []*v1.Pod {
	var out []*v1.Pod
	for _, task := range job.Spec.Tasks {
		for i := 0; i < int(task.Replicas); i++ {
			pod := jobtest.MakePod(job, task.Name, i).Obj()
			n := len(out) + 1
			pod.Status.PodIP = fmt.Sprintf("10.244.%d.%d", n/256, n%256)
			out = append(out, pod)
		}
	}
	return out
}

// checkPods runs fw's Sample.Check on every pod of base (pods in task and
// index order, after the plugin ran) with the environment as the kubelet
// resolves it, and returns the ConfigMaps the plugin created through kube.
// inTree: the plugin is Volcano's (sample.Pod.InTree); for pytorch, its
// pods' init containers must then be what its arguments ask
// (checkInTreeWait).
func checkPods(fw Framework, base *batch.Job, kube *fake.Clientset, pods []*v1.Pod, inTree bool) (map[string]*v1.ConfigMap, error) {
	configMaps := map[string]*v1.ConfigMap{}
	list, err := kube.CoreV1().ConfigMaps(base.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		configMaps[list.Items[i].Name] = &list.Items[i]
	}
	workers, i := 0, 0
	for _, task := range base.Spec.Tasks {
		if task.Name == fw.Sample.Worker {
			workers = int(task.Replicas)
		}
	}
	for _, task := range base.Spec.Tasks {
		for index := 0; index < int(task.Replicas); index++ {
			pod := pods[i]
			i++
			env, err := processEnv(pod, configMaps)
			if err == nil && inTree && fw.Name == pytorch.Name {
				err = checkInTreeWait(base, pod, task.Name, slices.Contains(base.Spec.Plugins[fw.Name], "--wait-master-enabled"))
			}
			if err == nil {
				err = fw.Sample.Check(sample.Pod{Job: base, Pod: pod, Role: task.Name, Index: index,
					Workers: workers, Env: env, ConfigMaps: configMaps, InTree: inTree})
			}
			if err != nil {
				return nil, fmt.Errorf("pod %s: the plugin did not inject what it must: %v", pod.Name, err)
			}
		}
	}
	return configMaps, nil
}

// checkInTreeWait checks the init containers Volcano's in-tree pytorch plugin
// gave pod of the task role of base (the master task "master", default
// port): with wait (--wait-master-enabled) a worker has exactly its
// wait-for-master container, whose script probes the master's
// <hostname>.<subdomain> at the port; otherwise, and on the master, no pod
// has any init container. A mismatch is an error naming the pod's init
// containers.
func checkInTreeWait(base *batch.Job, pod *v1.Pod, role string, wait bool) error {
	if !wait || role != intreepytorch.DefaultWorker {
		if n := len(pod.Spec.InitContainers); n != 0 {
			return fmt.Errorf("%d init containers, want none (wait %v, role %s)", n, wait, role)
		}
		return nil
	}
	if n := len(pod.Spec.InitContainers); n != 1 {
		return fmt.Errorf("%d init containers, want stock's wait-for-master alone", n)
	}
	c := pod.Spec.InitContainers[0]
	var master *batch.TaskSpec
	for i := range base.Spec.Tasks {
		if base.Spec.Tasks[i].Name == intreepytorch.DefaultMaster {
			master = &base.Spec.Tasks[i]
		}
	}
	if master == nil {
		return fmt.Errorf("the job has no task %s", intreepytorch.DefaultMaster)
	}
	probe := fmt.Sprintf("nc -z %s %d", sample.Pod{Job: base, InTree: true}.Host(master, 0), intreepytorch.DefaultPort)
	if c.Name != "wait-for-master" || c.Image != intreepytorch.DefaultWaitMasterImage || len(c.Command) != 3 ||
		!strings.Contains(c.Command[2], probe) {
		return fmt.Errorf("init container %s (image %s, command %q), want wait-for-master (image %s) running %q",
			c.Name, c.Image, c.Command, intreepytorch.DefaultWaitMasterImage, probe)
	}
	return nil
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
