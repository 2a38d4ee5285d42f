package framework

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// Stock says how Volcano's in-tree plugin of a framework's name treats a
// Job: Volcano v1.14 and v1.15 have tensorflow, pytorch and mpi plugins
// (volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework),
// which this project's replace in the plugin factory. It is nil for the
// frameworks Volcano has no plugin for.
type Stock struct {
	// Admits reports whether Volcano's own admission (admit_job.go's
	// validateJobCreate) accepts the Job with argv as this plugin's
	// arguments; nil means always (Volcano checks nothing of them).
	Admits func(argv []string, job *batch.Job) bool
}

// AdmitsJob reports whether Volcano's admission accepts argv for this
// plugin on job (Admits; true when Admits is nil).
func (s *Stock) AdmitsJob(argv []string, job *batch.Job) bool {
	return s.Admits == nil || s.Admits(argv, job)
}

// WithStock returns f with its Stock set.
func (f Framework) WithStock(s *Stock) Framework {
	f.Stock = s
	return f
}

// MaxStockPodBytes is the most bytes Volcano's in-tree plugin may add to
// the pods of one Job, in all, when it configures them in our plugin's
// place (StockFallback), in bytes: the same budget as the pods' templates
// (bounds.MaxPodTemplateBytes), as the controller builds every pod of a Job
// in memory at once. The in-tree tensorflow plugin gives every pod the
// whole cluster inline (O(pods) each, O(pods²) per Job: 256 MiB at about
// 2,500 pods with typical names) and the in-tree mpi plugin gives the
// master every worker host.
const MaxStockPodBytes = bounds.MaxPodTemplateBytes

// StockFallback returns a builder of the plugin ours builds that hands a
// Job to stock, Volcano's in-tree plugin of the same name, while ours finds
// problems in the Job's arguments or roles (not its bounds). Volcano's
// admission accepts such a Job (Stock.Admits) and its in-tree plugin
// configures the pods with what it parsed (Go's flag package stops at the
// first flag it does not define; the rest keep their defaults), so a Job
// that trains on stock Volcano trains here too. The Job gets one
// InvalidPluginArguments Warning event that lists the problems and says
// that the in-tree plugin configures its pods; or, when the in-tree plugin
// would add more than MaxStockPodBytes to the Job's pods (measured on the
// first pod of each task), that neither plugin configures them.
//
// OnJobAdd, OnJobUpdate and OnPodCreate go to the in-tree plugin for such a
// Job; OnJobDelete always goes to ours, which removes only what the Job
// controls and the plugin's mark (the in-tree plugins' own OnJobDelete only
// removes the mark). Both plugins are built with the same client and
// arguments for each hook call, as Volcano's factory builds them.
func StockFallback(ours, stock Builder) Builder {
	return func(c pluginsinterface.PluginClientset, args []string) pluginsinterface.PluginInterface {
		return &fallback{ours: ours(c, args), stock: func() pluginsinterface.PluginInterface { return stock(c, args) }}
	}
}

// stockHander is what StockFallback asks of our plugin: Base provides it.
type stockHander interface {
	handsToStock(job *batch.Job, stock func() pluginsinterface.PluginInterface) bool
}

type fallback struct {
	ours  pluginsinterface.PluginInterface
	stock func() pluginsinterface.PluginInterface
}

func (f *fallback) Name() string { return f.ours.Name() }

// hook returns the plugin that serves job's hooks.
func (f *fallback) hook(job *batch.Job) pluginsinterface.PluginInterface {
	if h, ok := f.ours.(stockHander); ok && h.handsToStock(job, f.stock) {
		return f.stock()
	}
	return f.ours
}

func (f *fallback) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	return f.hook(job).OnPodCreate(pod, job)
}

func (f *fallback) OnJobAdd(job *batch.Job) error { return f.hook(job).OnJobAdd(job) }

func (f *fallback) OnJobUpdate(job *batch.Job) error { return f.hook(job).OnJobUpdate(job) }

func (f *fallback) OnJobDelete(job *batch.Job) error { return f.ours.OnJobDelete(job) }

// stockVerdict is StockFallback's decision for one plan: made once per Job
// revision and arguments, with the plan it belongs to.
type stockVerdict struct {
	once sync.Once
	// bytes are what the in-tree plugin adds to the Job's pods, up to the
	// first task whose pods pass MaxStockPodBytes.
	bytes int64
	ok    bool
}

// handsToStock reports whether StockFallback hands job to the in-tree
// plugin stock builds: its plan has argument errors and is not over the
// bounds, and the in-tree plugin stays within MaxStockPodBytes. It reports
// the plan's errors on the Job as Plan does, saying which plugin
// configures the pods. Admission's uncached plugin never hands over.
func (b *Base[P]) handsToStock(job *batch.Job, stock func() pluginsinterface.PluginInterface) bool {
	if b.uncached {
		return false
	}
	r := planOf(&b.def.cache, b.def.Name, b.Args, job, b.def.Build)
	if len(r.errs) == 0 || r.over {
		return false
	}
	r.stock.once.Do(func() {
		r.stock.bytes, r.stock.ok = stockPodBytes(job, stock())
	})
	note := fmt.Sprintf("Volcano's in-tree %s plugin configures the job's pods instead, with what it parses of the arguments, as stock Volcano's controller does", b.def.Name)
	if !r.stock.ok {
		note = fmt.Sprintf("no plugin configures the job's pods: Volcano's in-tree %s plugin, which stock Volcano's controller runs, would add more than %d bytes to them in all (MaxStockPodBytes)", b.def.Name, MaxStockPodBytes)
	}
	report(b.Client, job, r, note)
	return r.stock.ok
}

// stockPodBytes runs the in-tree plugin p on the first pod of each task with
// pods and returns the bytes it adds to the Job's pods (each task's first
// pod's, times its replicas) and true, or, at the first task that takes them
// past MaxStockPodBytes, the bytes so far and false. The in-tree plugins
// make no API call in OnPodCreate and give a task's pods values of one size
// but for their index.
func stockPodBytes(job *batch.Job, p pluginsinterface.PluginInterface) (int64, bool) {
	var total int64
	for i := range job.Spec.Tasks {
		task := &job.Spec.Tasks[i]
		if task.Replicas <= 0 {
			continue
		}
		pod := jobs.NewPod(job, task, 0)
		before := podBytes(pod)
		_ = p.OnPodCreate(pod, job) // an error makes Volcano retry the pod, adding nothing
		total += int64(task.Replicas) * max(podBytes(pod)-before, 0)
		if total > MaxStockPodBytes {
			return total, false
		}
	}
	return total, true
}

// podBytes counts what the in-tree plugins add to a pod: the names and
// values of its containers' environment variables, a port's name and
// number, and an init container's name, image, command and arguments.
func podBytes(pod *v1.Pod) int64 {
	var n int64
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			n += int64(len(c.Name) + len(c.Image))
			for _, s := range append(c.Command, c.Args...) {
				n += int64(len(s))
			}
			for _, e := range c.Env {
				n += int64(len(e.Name) + len(e.Value))
			}
			for _, p := range c.Ports {
				n += int64(len(p.Name)) + 8
			}
		}
	}
	return n
}
