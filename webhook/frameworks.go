package webhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Frameworks lists the framework plugins the webhook handles, in the order it
// examines them (by name, so that messages come out in a stable order).
var Frameworks = []string{mpi.Name, mxnet.Name, pytorch.Name, tensorflow.Name}

// Plugins Volcano's own job mutation adds to framework jobs, and so does ours
// (for mxnet too, which Volcano does not know).
const (
	svcPlugin = "svc"
	sshPlugin = "ssh"
)

// UsesFrameworks reports whether the Job uses one of the four framework plugins.
func UsesFrameworks(job *batch.Job) bool {
	for _, name := range Frameworks {
		if _, ok := job.Spec.Plugins[name]; ok {
			return true
		}
	}
	return false
}

// role is a framework role played by a task of the Job.
type role struct {
	name string // the role, as the framework spells it (ps, master, scheduler, ...)
	flag string // the plugin flag that names its task ("worker" for --worker)
	task string
}

// edge is a launch-order dependency: the pods of task from wait for task to.
type edge struct {
	from, to string
	// how says what imposes it, for messages: "tensorflow --wait", "dependsOn".
	how string
	// path is the field that creates it.
	path *field.Path
}

// use is one framework plugin of a Job as its own argument parser reads it.
type use struct {
	plugin string
	// errs are ParseArgs' errors; when there are some, nothing below is set.
	errs field.ErrorList
	// roles are the roles played by tasks that exist and have replicas.
	roles []role
	// waits is the launch order the plugin's wait container imposes.
	waits []edge
	// completion is the task whose completion ends training ("": none).
	completion string
	// elasticTask is the pytorch worker task of an elastic job, whose gang
	// minimum is elasticMin rather than its replicas.
	elasticTask string
	elasticMin  int32
	// argv are the plugin's arguments.
	argv []string
	// sizes returns the sizes of the variables whose values list hosts (one
	// per replica), computed without building them; nil: the plugin sets none.
	sizes func() []sizedEnv
}

// sizedEnv is the size of a variable a plugin gives one pod, computed from the
// names and replica counts.
type sizedEnv struct {
	name     string
	task     string
	index    int
	valueLen int
}

// analyze runs the argument parser of every framework plugin the Job uses, in
// Frameworks order. It reads the Job and never changes it.
func analyze(job *batch.Job) []use {
	var out []use
	for _, name := range Frameworks {
		argv, ok := job.Spec.Plugins[name]
		if !ok {
			continue
		}
		u := use{plugin: name, argv: argv}
		switch name {
		case tensorflow.Name:
			analyzeTensorFlow(&u, job)
		case pytorch.Name:
			analyzePyTorch(&u, job)
		case mpi.Name:
			analyzeMPI(&u, job)
		case mxnet.Name:
			analyzeMXNet(&u, job)
		}
		out = append(out, u)
	}
	return out
}

// present returns the task named name when it exists and has replicas.
func present(job *batch.Job, name string) (*batch.TaskSpec, bool) {
	t, ok := jobs.Task(job, name)
	if !ok || t.Replicas < 1 {
		return nil, false
	}
	return t, true
}

func (u *use) addRoles(job *batch.Job, roles ...role) {
	for _, r := range roles {
		if _, ok := present(job, r.task); ok {
			u.roles = append(u.roles, r)
		}
	}
}

func (u *use) hasTask(job *batch.Job, name string) bool {
	_, ok := present(job, name)
	return ok
}

func (u *use) wait(from, to string) {
	u.waits = append(u.waits, edge{from: from, to: to, how: u.plugin + " --wait",
		path: field.NewPath("spec", "plugins").Key(u.plugin)})
}

// TensorFlow: chief, workers and evaluator wait for every ps; the chief's
// completion ends training, the workers' when there is no chief.
func analyzeTensorFlow(u *use, job *batch.Job) {
	a, errs := tensorflow.ParseArgs(u.argv, job)
	if u.errs = errs; len(errs) > 0 {
		return
	}
	u.addRoles(job,
		role{tensorflow.RoleChief, "chief", a.Chief},
		role{tensorflow.RoleWorker, "worker", a.Worker},
		role{tensorflow.RolePS, "ps", a.PS},
		role{tensorflow.RoleEvaluator, "evaluator", a.Evaluator})
	u.sizes = func() []sizedEnv {
		var out []sizedEnv
		for _, r := range u.roles {
			index := jobs.Replicas(job, r.task) - 1
			if n := tensorflow.TFConfigSize(job, a, r.task, index); n > 0 {
				out = append(out, sizedEnv{name: tensorflow.EnvTFConfig, task: r.task, index: index, valueLen: n})
			}
		}
		return out
	}
	if a.Wait.Enabled && u.hasTask(job, a.PS) {
		for _, t := range []string{a.Chief, a.Worker, a.Evaluator} {
			if u.hasTask(job, t) {
				u.wait(t, a.PS)
			}
		}
	}
	switch {
	case u.hasTask(job, a.Chief):
		u.completion = a.Chief
	case u.hasTask(job, a.Worker):
		u.completion = a.Worker
	}
}

// PyTorch: workers wait for the master; the master's completion ends training,
// the workers' when there is no master task. Elastic jobs gang-schedule the
// elastic minimum of pods.
func analyzePyTorch(u *use, job *batch.Job) {
	a, errs := pytorch.ParseArgs(u.argv, job)
	if u.errs = errs; len(errs) > 0 {
		return
	}
	u.addRoles(job, role{"master", "master", a.Master}, role{"worker", "worker", a.Worker})
	hasMaster, hasWorker := u.hasTask(job, a.Master), u.hasTask(job, a.Worker)
	if a.Wait.Enabled && hasMaster && hasWorker {
		u.wait(a.Worker, a.Master)
	}
	if hasMaster {
		u.completion = a.Master
	} else if hasWorker {
		u.completion = a.Worker
	}
	if a.Elastic() && hasWorker {
		masters, workers := 0, jobs.Replicas(job, a.Worker)
		if hasMaster {
			masters = jobs.Replicas(job, a.Master)
		}
		min, _ := a.NodeRange(masters + workers)
		min -= masters
		if min < 0 {
			min = 0
		}
		if min > workers {
			min = workers
		}
		u.elasticTask, u.elasticMin = a.Worker, int32(min)
	}
}

// MPI: the master (launcher) waits for every worker's sshd and its completion
// ends training.
func analyzeMPI(u *use, job *batch.Job) {
	a, errs := mpi.ParseArgs(u.argv, job)
	if u.errs = errs; len(errs) > 0 {
		return
	}
	u.addRoles(job, role{"master", "master", a.Master}, role{"worker", "worker", a.Worker})
	u.sizes = func() []sizedEnv {
		if !u.hasTask(job, a.Master) {
			return nil
		}
		return []sizedEnv{{name: mpi.EnvMPIHost, task: a.Master, index: 0, valueLen: mpi.MPIHostSize(job, a)}}
	}
	if a.Wait.Enabled && u.hasTask(job, a.Worker) && u.hasTask(job, a.Master) {
		u.wait(a.Master, a.Worker)
	}
	if u.hasTask(job, a.Master) {
		u.completion = a.Master
	}
}

// MXNet: servers and workers wait for the scheduler; the workers' completion
// ends training (servers and scheduler run until stopped).
func analyzeMXNet(u *use, job *batch.Job) {
	a, errs := mxnet.ParseArgs(u.argv, job)
	if u.errs = errs; len(errs) > 0 {
		return
	}
	u.addRoles(job,
		role{mxnet.RoleScheduler, "scheduler", a.Scheduler},
		role{mxnet.RoleServer, "server", a.Server},
		role{mxnet.RoleWorker, "worker", a.Worker})
	if a.Wait.Enabled && u.hasTask(job, a.Scheduler) {
		for _, t := range []string{a.Server, a.Worker} {
			if u.hasTask(job, t) {
				u.wait(t, a.Scheduler)
			}
		}
	}
	if u.hasTask(job, a.Worker) {
		u.completion = a.Worker
	}
}
