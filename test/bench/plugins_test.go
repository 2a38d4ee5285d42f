// Package bench compares this project's framework plugins with Volcano's in-tree
// tensorflow, pytorch and mpi plugins on the same jobs. `make bench` runs the
// benchmarks through ./report, which prints and checks the comparison.
package bench

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

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
// bytes of TF_CONFIG values written per job (one value per pod, shared by its
// containers), the lower bound of what any tensorflow plugin must produce.
const TFConfigUnit = "TF_CONFIG-B/op"

// RetainedUnit is the unit of the heap a job's plugin calls leave reachable
// once its pods exist (the pods' injected parts and whatever the plugin
// keeps, such as our plan cache): what a user pays for as long as the pods
// are in the controller's hands. Measured in the first iteration, after a
// GC before and after the job, with the pods kept alive.
const RetainedUnit = "retained-B/op"

// Framework is one benchmarked framework: the job shape and the two builders.
type Framework struct {
	Name string
	// Lead is the task of the one non-worker pod.
	Lead string
	// Ours and InTree build the plugins; InTree is nil when Volcano has none.
	Ours, InTree utiltesting.Builder
	// Check reports whether a pod of the task got what the plugin must inject,
	// so that a benchmark cannot silently measure a plugin that did nothing.
	Check func(pod *v1.Pod, task string) bool
}

func hasEnv(name string) func(*v1.Pod, string) bool {
	return func(pod *v1.Pod, _ string) bool { return utiltesting.CountEnv(pod.Spec.Containers[0].Env, name) == 1 }
}

// shapes are what the benchmarks need to know of each framework beyond
// plugins.Frameworks: the job shape, Volcano's plugin and the check.
var shapes = map[string]Framework{
	tensorflow.Name: {Lead: tensorflow.DefaultPS, InTree: intreetf.New, Check: hasEnv(tensorflow.EnvTFConfig)},
	pytorch.Name:    {Lead: pytorch.DefaultMaster, InTree: intreepytorch.New, Check: hasEnv(pytorch.EnvRank)},
	mpi.Name: {Lead: mpi.DefaultMaster, InTree: intreempi.New, Check: func(pod *v1.Pod, task string) bool {
		if task == mpi.DefaultMaster {
			return utiltesting.CountEnv(pod.Spec.Containers[0].Env, mpi.EnvMPIHost) == 1
		}
		return len(pod.Spec.Containers[0].Ports) == 1
	}},
	mxnet.Name: {Lead: mxnet.DefaultScheduler, Check: hasEnv(mxnet.EnvRole)},
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

// Job returns the benchmarked job of fw: one Lead pod and workers worker pods,
// the plugin enabled with its default arguments (none).
func Job(fw Framework, workers int) *batch.Job {
	return utiltesting.MakeJob("bench").
		Task(utiltesting.MakeTask(fw.Lead, 1).Obj()).
		Task(utiltesting.MakeTask("worker", int32(workers)).Obj()).
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
// targets apply to it) and ours with --wait=false, which adds no wait init
// container: in-tree plugins add none, so that variant shows what it costs.
var Impls = []Impl{
	{"in-tree", func(fw Framework) (utiltesting.Builder, []string) { return fw.InTree, []string{} }},
	{"ours", func(fw Framework) (utiltesting.Builder, []string) { return fw.Ours, []string{} }},
	{"ours-nowait", func(fw Framework) (utiltesting.Builder, []string) { return fw.Ours, []string{"--wait=false"} }},
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
// pods (utiltesting.MakePod copies) and a fresh fake clientset, so that mpi's
// hostfile ConfigMap is created, not found, in every iteration.
func benchJob(b *testing.B, fw Framework, build utiltesting.Builder, base *batch.Job) {
	args := base.Spec.Plugins[fw.Name]
	type podOf struct {
		pod  *v1.Pod
		task string
	}
	var templates []podOf
	for _, task := range base.Spec.Tasks {
		for i := 0; i < int(task.Replicas); i++ {
			templates = append(templates, podOf{utiltesting.MakePod(base, task.Name, i).Obj(), task.Name})
		}
	}
	pods := make([]*v1.Pod, len(templates))
	tfConfigBytes := -1
	var retained int64
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
		client := pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}
		first := tfConfigBytes < 0
		var before runtime.MemStats
		if first {
			runtime.GC()
			runtime.ReadMemStats(&before)
		}
		b.StartTimer()

		if err := build(client, args).OnJobAdd(addJob); err != nil {
			b.Fatalf("OnJobAdd: %v", err)
		}
		for _, pod := range pods {
			if err := build(client, args).OnPodCreate(pod, podJob); err != nil {
				b.Fatalf("OnPodCreate %s: %v", pod.Name, err)
			}
		}

		if first {
			b.StopTimer()
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(pods)
			runtime.KeepAlive(client)
			retained = int64(after.HeapAlloc) - int64(before.HeapAlloc)
			tfConfigBytes = 0
			for i, pod := range pods {
				if !fw.Check(pod, templates[i].task) {
					b.Fatalf("pod %s: the plugin did not inject what it must: %+v", pod.Name, pod.Spec)
				}
				for _, e := range pod.Spec.Containers[0].Env {
					if e.Name == tensorflow.EnvTFConfig {
						tfConfigBytes += len(e.Value)
					}
				}
			}
			b.StartTimer()
		}
	}
	if fw.Name == tensorflow.Name {
		b.ReportMetric(float64(tfConfigBytes), TFConfigUnit)
	}
	b.ReportMetric(float64(retained), RetainedUnit)
}
