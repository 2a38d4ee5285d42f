package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Builder builds a plugin for one hook call; the form Volcano's plugin factory
// takes (volcano.sh/volcano/pkg/controllers/job/plugins.PluginBuilder).
type Builder = func(pluginsinterface.PluginClientset, []string) pluginsinterface.PluginInterface

// Framework is everything the rest of the project needs to know about one
// framework plugin. Each package under plugins/ exports one, and
// plugins.Frameworks lists them: Volcano's plugin factory, the admission
// webhook, the demo and the benchmarks take theirs from that list.
type Framework struct {
	// Name is the plugin's name in a Job's plugins stanza.
	Name string
	// New is the builder registered with Volcano's plugin factory.
	New Builder
	// NewUncached builds the same plugin without the per-job plan cache
	// (Definition.UncachedBase), for admission's simulated pods.
	NewUncached Builder
	// Describe parses the plugin's arguments against job and says what the
	// plugin will do with it. It reads the Job and never changes it.
	Describe func(argv []string, job *batch.Job) Description
	// VolcanoPlugins are the Volcano plugins the framework's Jobs need (svc
	// for the DNS names, ssh for mpi); the webhook adds those missing.
	VolcanoPlugins []string
	// Stock is Volcano's in-tree plugin of the same name, as the webhook
	// and the controller treat it (Framework.WithStock); nil for the
	// frameworks Volcano has no plugin for.
	Stock *Stock
}

// Description is what one framework plugin makes of its arguments and a Job:
// the launch order, roles and completion its hooks implement, as the webhook
// reads them for its defaults and checks. When Errs is not empty the
// arguments do not parse and nothing else is set.
type Description struct {
	// Errs are the argument errors (ParseArgs'), under spec.plugins[<name>].
	Errs field.ErrorList
	// Roles are the roles played by tasks that exist and have replicas.
	Roles []Role
	// Waits is the launch order the plugin's wait container imposes.
	Waits []Wait
	// Completion is the task whose completion ends training ("": none).
	Completion string
	// ElasticTask is a task whose gang minimum is ElasticMin pods rather than
	// its replicas (pytorch's workers of an elastic job); "": none.
	ElasticTask string
	ElasticMin  int32
	// Sizes returns the sizes of the variables whose values list hosts (one
	// per replica), computed without building them; nil: the plugin sets none.
	Sizes func() []SizedEnv
}

// Role is a framework role played by a task of the Job.
type Role struct {
	// Name is the role as the framework spells it (ps, master, scheduler, ...).
	Name string
	// Task is the task that plays it.
	Task string
}

// Wait is a launch-order edge: the pods of task From wait until the pods of
// task To answer. Port 0 waits for their DNS names to resolve, a port for a
// TCP connection to it.
type Wait struct {
	From, To string
	Port     int
	// FirstOnly waits for pod 0 of To only (pytorch's master address); pod 0
	// of From does not wait when From is To.
	FirstOnly bool
	// Domain is the cluster domain the targets are named in; "": the
	// process-wide one (jobs.Domain). mpi sets its --cluster-domain, so that
	// the launcher waits for the hosts its hostfile names.
	Domain jobs.Domain
}

// SizedEnv is the size of a variable a plugin gives one pod, computed from
// the names and replica counts.
type SizedEnv struct {
	Name     string
	Task     string
	Index    int
	ValueLen int
	// Optional, when not empty, marks a variable the framework's processes
	// can do without and says what gives them the same hosts instead (for
	// MPI_HOST, the hostfile): over bounds.MaxArgStrlen the plugin leaves it
	// out of the pods (OverArgLimit) and the admission warns, where any
	// other variable over the limit denies the Job.
	Optional string
}

// OverArgLimit reports whether the environment string NAME=value of a
// value of valueLen bytes is over bounds.MaxArgStrlen, with which no
// container could start (execve fails with E2BIG).
func OverArgLimit(name string, valueLen int) bool {
	return bounds.EnvBytes(name, valueLen) > bounds.MaxArgStrlen
}

// AddRoles appends the roles whose task exists and has replicas.
func (d *Description) AddRoles(job *batch.Job, roles ...Role) {
	for _, r := range roles {
		if jobs.Present(job, r.Task) {
			d.Roles = append(d.Roles, r)
		}
	}
}

// AddWaits appends an edge from each of from that exists and has replicas to
// to, when to does too (or, for FirstOnly, when from is to).
func (d *Description) AddWaits(job *batch.Job, to string, port int, firstOnly bool, from ...string) {
	if !jobs.Present(job, to) {
		return
	}
	for _, f := range from {
		if jobs.Present(job, f) {
			d.Waits = append(d.Waits, Wait{From: f, To: to, Port: port, FirstOnly: firstOnly})
		}
	}
}

// Describer turns a framework's ParseArgs and its description of parsed
// arguments into Framework.Describe. With a nil job, Describe checks the
// flags alone and returns only their errors.
func Describer[A any](parse func([]string, *batch.Job) (A, field.ErrorList), describe func(A, *batch.Job) Description) func([]string, *batch.Job) Description {
	return func(argv []string, job *batch.Job) Description {
		a, errs := parse(argv, job)
		if len(errs) > 0 || job == nil {
			return Description{Errs: errs}
		}
		return describe(a, job)
	}
}

// WaitTargets returns the hosts the pods of w.From wait for, each with
// w.Port: pod 0 of w.To with FirstOnly, else its pods' distinct hosts in
// index order (jobs.DistinctHosts), named in w.Domain. The job must have task w.To.
func WaitTargets(job *batch.Job, w Wait) []wait.Target {
	to, _ := jobs.Task(job, w.To)
	if w.FirstOnly {
		return []wait.Target{{Host: w.Domain.Host(job, to, 0), Port: w.Port}}
	}
	hosts := w.Domain.DistinctHosts(job, to)
	out := make([]wait.Target, len(hosts))
	for i, h := range hosts {
		out[i] = wait.Target{Host: h, Port: w.Port}
	}
	return out
}

// WaitTargetsLen returns len(wait.TargetsFile(WaitTargets(job, w))),
// computed from the names and replica counts without building the targets
// (admission measures Jobs of any size).
func WaitTargetsLen(job *batch.Job, w Wait) int {
	to, _ := jobs.Task(job, w.To)
	if w.FirstOnly {
		return wait.TargetsFileLen(len(w.Domain.Host(job, to, 0)), 1, w.Port)
	}
	return wait.TargetsFileLen(w.Domain.DistinctHostsLen(job, to), jobs.DistinctHostCount(to), w.Port)
}

// Waiters holds the wait container of each task whose pods wait, built once
// per plan from a Description's Waits; tasks whose edges lead to the same
// targets share one container template.
type Waiters struct {
	byTask map[string]waiter
}

type waiter struct {
	t *wait.Template
	// skipFirst: the task's pod 0 is the one its other pods wait for.
	skipFirst bool
}

// NewWaiters builds the wait containers of waits with o; nothing waits when
// o is not enabled. A task with several edges waits for the targets of all.
func NewWaiters(job *batch.Job, waits []Wait, o wait.Options) Waiters {
	w := Waiters{byTask: map[string]waiter{}}
	if !o.Enabled {
		return w
	}
	// Each task's edges, From left out so that tasks with the same edges
	// share one template.
	edges := map[string][]Wait{}
	var order []string
	for _, e := range waits {
		if _, ok := edges[e.From]; !ok {
			order = append(order, e.From)
		}
		to := e
		to.From = ""
		edges[e.From] = append(edges[e.From], to)
	}
	shared := map[string]*wait.Template{}
	for _, from := range order {
		id := fmt.Sprint(edges[from])
		t, ok := shared[id]
		if !ok {
			var targets []wait.Target
			for _, e := range edges[from] {
				targets = append(targets, WaitTargets(job, e)...)
			}
			t = wait.NewTemplate(targets, o)
			shared[id] = t
		}
		skip := false
		for _, e := range edges[from] {
			skip = skip || (e.To == from && e.FirstOnly)
		}
		w.byTask[from] = waiter{t: t, skipFirst: skip}
	}
	return w
}

// AddTo adds the wait container (wait.Template.AddTo) to the index-th pod of
// task when that pod waits, and reports whether it does.
func (w Waiters) AddTo(pod *v1.Pod, task string, index int) bool {
	x, ok := w.byTask[task]
	if !ok || (x.skipFirst && index == 0) {
		return false
	}
	x.t.AddTo(pod)
	return true
}

// Volcano's job plugins the frameworks rely on (Framework.VolcanoPlugins),
// under the names Volcano's plugin factory registers them.
const (
	// SvcPlugin gives the pods their DNS names (hostname, subdomain, the
	// Job's headless Service).
	SvcPlugin = "svc"
	// SSHPlugin gives the pods a shared ssh key pair (mpi's launcher).
	SSHPlugin = "ssh"
)

// Framework returns the Framework of the plugin package whose Definition is
// d: its builders wrap the Base of each hook call (cached, or uncached for
// admission) in the package's plugin type with wrap.
func (d *Definition[P]) Framework(wrap func(Base[P]) pluginsinterface.PluginInterface,
	describe func(argv []string, job *batch.Job) Description, volcanoPlugins ...string) Framework {
	return Framework{
		Name: d.Name,
		New: func(client pluginsinterface.PluginClientset, args []string) pluginsinterface.PluginInterface {
			return wrap(d.Base(client.KubeClients, args))
		},
		NewUncached: func(client pluginsinterface.PluginClientset, args []string) pluginsinterface.PluginInterface {
			return wrap(d.UncachedBase(client.KubeClients, args))
		},
		Describe:       describe,
		VolcanoPlugins: volcanoPlugins,
	}
}
