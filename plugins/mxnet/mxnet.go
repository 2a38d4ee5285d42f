// Package mxnet is the mxnet job plugin: it gives every pod of a distributed
// MXNet (or BytePS) Job the DMLC_* variables that ps-lite, the parameter server
// under MXNet's kvstore and BytePS, bootstraps from, opens the scheduler's port,
// and holds servers and workers back until the scheduler answers. Volcano has no
// in-tree mxnet plugin; the contract follows Kubeflow's MXJob controller
// (training-operator, pkg/controller.v1/mxnet), which sets the same variables.
//
// Environment contract, on every container and init container of the pods of the
// three roles:
//
//   - DMLC_ROLE: "scheduler", "server" or "worker" (ps-lite docs/env.md).
//   - DMLC_PS_ROOT_URI: DNS name of the scheduler pod, <hostname>.<subdomain>.
//   - DMLC_PS_ROOT_PORT: the port the scheduler binds to.
//   - DMLC_NUM_SERVER: replicas of the server task, 0 when the job has none.
//   - DMLC_NUM_WORKER: replicas of the worker task.
//   - DMLC_USE_KUBERNETES=1: ps-lite's van then binds the scheduler to 0.0.0.0
//     rather than to DMLC_PS_ROOT_URI, which here is a DNS name of the Job's
//     headless service, not an address of the pod's own interfaces.
//   - DMLC_WORKER_ID: on workers only, the pod's index in the worker task (0-based),
//     which BytePS requires (byteps docs/env.md).
//
// A variable the user already set is left as it is.
package mxnet

import (
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/inject"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

const (
	// Name is the plugin's name in a Job's plugins stanza.
	Name = "mxnet"
	// PortName names the scheduler's opened container port. A container port of
	// this name in the scheduler task's template overrides --port (Kubeflow
	// MXJob's convention).
	PortName = "mxjob-port"
)

// DMLC roles, as DMLC_ROLE spells them.
const (
	RoleScheduler = "scheduler"
	RoleServer    = "server"
	RoleWorker    = "worker"
)

// Environment variables the plugin sets (ps-lite docs/env.md, Kubeflow MXJob,
// BytePS docs/env.md).
const (
	EnvRole          = "DMLC_ROLE"
	EnvRootURI       = "DMLC_PS_ROOT_URI"
	EnvRootPort      = "DMLC_PS_ROOT_PORT"
	EnvNumServer     = "DMLC_NUM_SERVER"
	EnvNumWorker     = "DMLC_NUM_WORKER"
	EnvUseKubernetes = "DMLC_USE_KUBERNETES"
	EnvWorkerID      = "DMLC_WORKER_ID"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the mxnet plugin to the rest of the project
// (plugins.Frameworks). Volcano's job mutation knows no mxnet; the webhook
// adds svc for it all the same.
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin)

// describe: servers and workers wait for the scheduler's port; the workers'
// completion ends training (servers and scheduler run until stopped).
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job,
		framework.Role{Name: RoleScheduler, Task: a.Scheduler},
		framework.Role{Name: RoleServer, Task: a.Server},
		framework.Role{Name: RoleWorker, Task: a.Worker})
	if scheduler, ok := jobs.Task(job, a.Scheduler); ok && a.Wait.Enabled {
		d.AddWaits(job, a.Scheduler, jobs.NamedPort(scheduler, PortName, a.Port), false, a.Server, a.Worker)
	}
	if jobs.Present(job, a.Worker) {
		d.Completion = a.Worker
	}
	return d
}

// Plugin implements Volcano's PluginInterface. Volcano builds one per hook call.
type Plugin struct {
	framework.Base[*plan]
}

// New builds the plugin with the Job's arguments for it (Framework.New): the
// builder registered with Volcano's plugin factory.
func New(client pluginsinterface.PluginClientset, arguments []string) pluginsinterface.PluginInterface {
	return Framework.New(client, arguments)
}

// plan is what one Job revision's pods share.
type plan struct {
	// roles maps a task name to its DMLC role.
	roles map[string]string
	// env maps a role to the variables every pod of that role gets, in the order
	// they are added; workers get DMLC_WORKER_ID after them.
	env map[string][]v1.EnvVar
	// port is the scheduler's port.
	port int
	// waiters are the init containers of servers and workers, from describe's
	// wait edges: none when waiting is off.
	waiters framework.Waiters
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	// ParseArgs guarantees a scheduler task of one replica and a worker task.
	scheduler, _ := jobs.Task(job, a.Scheduler)
	p := &plan{
		roles: map[string]string{a.Scheduler: RoleScheduler, a.Worker: RoleWorker},
		env:   map[string][]v1.EnvVar{},
		port:  jobs.NamedPort(scheduler, PortName, a.Port),
	}
	numServer := 0
	if jobs.Present(job, a.Server) {
		p.roles[a.Server] = RoleServer
		numServer = jobs.Replicas(job, a.Server)
	}
	uri := jobs.Host(job, scheduler, 0)
	shared := []v1.EnvVar{
		{Name: EnvRootURI, Value: uri},
		{Name: EnvRootPort, Value: strconv.Itoa(p.port)},
		{Name: EnvNumServer, Value: strconv.Itoa(numServer)},
		{Name: EnvNumWorker, Value: strconv.Itoa(jobs.Replicas(job, a.Worker))},
		{Name: EnvUseKubernetes, Value: "1"},
	}
	for _, role := range p.roles {
		env := make([]v1.EnvVar, 0, len(shared)+1)
		env = append(env, v1.EnvVar{Name: EnvRole, Value: role})
		p.env[role] = append(env, shared...)
	}
	p.waiters = framework.NewWaiters(job, describe(a, job).Waits, a.Wait)
	return p, nil
}

// OnPodCreate sets the DMLC_* variables on every container of a scheduler,
// server or worker pod (DMLC_WORKER_ID on workers only), opens the port on the
// scheduler, and adds the wait container, waiting for the scheduler's port, to
// servers and workers. Pods of tasks that play no role are left alone. Invalid
// arguments inject nothing and are reported as an InvalidPluginArguments event
// on the Job. It returns an error only for a worker pod without a task index.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok {
		return nil
	}
	task := jobs.PodTask(pod)
	role, ok := pl.roles[task]
	if !ok {
		return nil
	}
	env := pl.env[role]
	index := 0
	if role == RoleWorker {
		var err error
		if index, err = jobs.PodIndex(pod); err != nil {
			return err
		}
		// The full slice expression makes append copy: env is shared by all pods.
		env = append(env[:len(env):len(env)], v1.EnvVar{Name: EnvWorkerID, Value: strconv.Itoa(index)})
	}
	inject.Env(pod, env...)
	if role == RoleScheduler {
		inject.Port(pod, PortName, int32(pl.port))
	} else {
		// Servers wait whatever their index, which only workers need.
		pl.waiters.AddTo(pod, task, index)
	}
	return nil
}
