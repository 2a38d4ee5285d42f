// Package dask is the dask job plugin: it tells every pod of a Dask Job (one
// scheduler, workers, and one client that runs the user's computation)
// where the scheduler is, in the variable Dask's own configuration reads,
// opens the scheduler's port, and holds workers and the client back until
// the scheduler answers. Neither Volcano nor Kubeflow has a Dask plugin or
// job kind; the contract follows dask-kubernetes' DaskJob (operator
// controller, dask_kubernetes/operator/controller/controller.py, 2025.4),
// which sets the same variables on its worker and job-runner pods.
//
// Environment contract, on every container and init container of the pods of
// the three roles:
//
//   - DASK_SCHEDULER_ADDRESS: tcp://<scheduler pod's DNS name>:<port>. Dask's
//     configuration turns every DASK_* variable into a key (dask 2022.12.1,
//     dask/config.py collect_env: DASK_SCHEDULER_ADDRESS becomes
//     "scheduler-address"), and distributed 2022.12.1 reads that key wherever
//     no address is given: distributed.Client() (distributed/client.py),
//     `dask-worker` without a scheduler argument (distributed/cli/dask_worker.py,
//     which starts a Nanny that reads it in distributed/nanny.py), and
//     distributed.Worker (distributed/worker.py). dask-scheduler does not read
//     it; it is set there too so that any client on that pod finds the
//     scheduler the same way.
//   - DASK_WORKER_NAME: on workers only, the pod's name (<job>-<task>-<index>),
//     unique in the Job as Dask requires of worker names. Dask does not read
//     it itself: DaskJob sets it for `dask-worker --name $(DASK_WORKER_NAME)`,
//     which the kubelet expands.
//
// dask-scheduler takes its port from its --port option only (default 8786,
// distributed/cli/dask_scheduler.py; no configuration key or variable), so a
// Job with another --port must start the scheduler with that port.
//
// A variable the user already set is left as it is.
package dask

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
	Name = "dask"
	// PortName names the scheduler's opened container port: the name
	// dask-kubernetes gives the scheduler's port in its pod and Service
	// specs (dask_kubernetes/operator/kubecluster/kubecluster.py). A
	// container port of this name in the scheduler task's template
	// overrides --port.
	PortName = "tcp-comm"
)

// Dask roles, as dask-kubernetes' dask.org/component label spells the
// scheduler and the workers; the client is DaskJob's job runner.
const (
	RoleScheduler = "scheduler"
	RoleWorker    = "worker"
	RoleClient    = "client"
)

// Environment variables the plugin sets (DaskJob's names).
const (
	EnvSchedulerAddress = "DASK_SCHEDULER_ADDRESS"
	EnvWorkerName       = "DASK_WORKER_NAME"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the dask plugin to the rest of the project
// (plugins.Frameworks). Volcano's job mutation knows no dask; the webhook
// adds svc for it all the same.
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin)

// describe: workers and the client wait for the scheduler's port; the
// client's completion ends the job (scheduler and workers serve until
// stopped), as a DaskJob's runner pod's does.
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job,
		framework.Role{Name: RoleScheduler, Task: a.Scheduler},
		framework.Role{Name: RoleWorker, Task: a.Worker},
		framework.Role{Name: RoleClient, Task: a.Client})
	if scheduler, ok := jobs.Task(job, a.Scheduler); ok && a.Wait.Enabled {
		d.AddWaits(job, a.Scheduler, jobs.NamedPort(scheduler, PortName, a.Port), false, a.Worker, a.Client)
	}
	if jobs.Present(job, a.Client) {
		d.Completion = a.Client
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
	// roles maps a task name to its role.
	roles map[string]string
	// env is what every pod of the three roles gets; workers get
	// DASK_WORKER_NAME after it.
	env []v1.EnvVar
	// port is the scheduler's port.
	port int
	// waiters are the init containers of workers and the client, from
	// describe's wait edges: none when waiting is off.
	waiters framework.Waiters
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	// ParseArgs guarantees a scheduler task of one replica.
	scheduler, _ := jobs.Task(job, a.Scheduler)
	p := &plan{
		roles: map[string]string{a.Scheduler: RoleScheduler, a.Worker: RoleWorker, a.Client: RoleClient},
		port:  jobs.NamedPort(scheduler, PortName, a.Port),
	}
	p.env = []v1.EnvVar{{Name: EnvSchedulerAddress, Value: SchedulerAddress(jobs.Host(job, scheduler, 0), p.port)}}
	p.waiters = framework.NewWaiters(job, describe(a, job).Waits, a.Wait)
	return p, nil
}

// SchedulerAddress returns a Dask address of the TCP protocol,
// "tcp://<host>:<port>", the form dask-kubernetes sets and distributed
// parses (distributed/comm/addressing.py).
func SchedulerAddress(host string, port int) string {
	return "tcp://" + host + ":" + strconv.Itoa(port)
}

// OnPodCreate sets DASK_SCHEDULER_ADDRESS on every container of a scheduler,
// worker or client pod (and DASK_WORKER_NAME on workers), opens the port on
// the scheduler, and adds the wait container, waiting for the scheduler's
// port, to workers and the client. Pods of tasks that play no role are left
// alone. Invalid arguments inject nothing and are reported as an
// InvalidPluginArguments event on the Job. It returns an error only for a
// worker pod without a task index.
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
	env := pl.env
	index := 0
	if role == RoleWorker {
		var err error
		if index, err = jobs.PodIndex(pod); err != nil {
			return err
		}
		// The full slice expression makes append copy: env is shared by all pods.
		env = append(env[:len(env):len(env)], v1.EnvVar{Name: EnvWorkerName, Value: jobs.PodName(job.Name, task, index)})
	}
	inject.Env(pod, env...)
	if role == RoleScheduler {
		inject.Port(pod, PortName, int32(pl.port))
	} else {
		pl.waiters.AddTo(pod, task, index)
	}
	return nil
}
