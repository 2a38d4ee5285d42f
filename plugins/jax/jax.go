// Package jax is the jax job plugin: it gives every pod of a multi-process JAX
// Job (one JAX process per pod) the variables both Kubeflow generations set
// for jax.distributed.initialize, opens the coordinator's port, and holds
// processes 1 to N-1 back until process 0's coordinator port answers. Volcano
// has no jax plugin of its own.
//
// Environment contract, on every container and init container of the worker
// task's pods, for a worker task of N replicas whose pod 0 has the DNS name
// <host> (<hostname>.<subdomain>, as the svc plugin names it) and the
// coordinator port <port>:
//
//   - JAX_COORDINATOR_ADDRESS=<host>:<port>, JAX_NUM_PROCESSES=N and
//     JAX_PROCESS_ID=<the pod's index in the task>: Kubeflow Trainer v2's
//     names and forms (kubeflow/trainer v2.2+,
//     pkg/runtime/framework/plugins/jax/jax.go). jax.distributed.initialize()
//     reads JAX_COORDINATOR_ADDRESS itself when its coordinator_address
//     argument is not given (jax/_src/distributed.py, since jax 0.3.14); it
//     reads neither JAX_NUM_PROCESSES nor JAX_PROCESS_ID (jax 0.11.0 still
//     does not), so the program passes those two, as Trainer's guide does.
//   - COORDINATOR_ADDRESS=<host> (without the port), COORDINATOR_PORT=<port>,
//     NUM_PROCESSES=N, PROCESS_ID=<index>: Kubeflow JAXJob's names
//     (training-operator v1.9, pkg/controller.v1/jax/envvar.go), whose
//     programs pass f"{COORDINATOR_ADDRESS}:{COORDINATOR_PORT}".
//   - PYTHONUNBUFFERED=1, as JAXJob sets it.
//
// A variable the user already set is left as it is.
package jax

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
	Name = "jax"
	// PortName names the coordinator's opened container port. A container
	// port of this name in the worker task's template overrides --port
	// (Kubeflow JAXJob's JAXJobDefaultPortName).
	PortName = "jaxjob-port"
	// RoleWorker is the one role: Kubeflow JAXJob's only replica type.
	RoleWorker = "worker"
)

// Environment variables the plugin sets: Kubeflow Trainer v2's JAX_*,
// Kubeflow JAXJob's, and PYTHONUNBUFFERED.
const (
	EnvJAXCoordinatorAddress = "JAX_COORDINATOR_ADDRESS"
	EnvJAXNumProcesses       = "JAX_NUM_PROCESSES"
	EnvJAXProcessID          = "JAX_PROCESS_ID"
	EnvCoordinatorAddress    = "COORDINATOR_ADDRESS"
	EnvCoordinatorPort       = "COORDINATOR_PORT"
	EnvNumProcesses          = "NUM_PROCESSES"
	EnvProcessID             = "PROCESS_ID"
	EnvPythonUnbuffered      = "PYTHONUNBUFFERED"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the jax plugin to the rest of the project
// (plugins.Frameworks). Volcano's job mutation knows no jax; the webhook
// adds svc for it all the same.
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin)

// describe: processes 1 to N-1 wait for process 0's coordinator port (an edge
// within the worker task); the worker task's completion, every process's,
// ends training, as a JAXJob succeeds when all its workers have.
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job, framework.Role{Name: RoleWorker, Task: a.Worker})
	if worker, ok := jobs.Task(job, a.Worker); ok && a.Wait.Enabled {
		d.AddWaits(job, a.Worker, jobs.NamedPort(worker, PortName, a.Port), true, a.Worker)
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
	worker string
	// host and port are process 0's: the coordinator's.
	host string
	port int
	// numProcesses is the worker task's replicas, as a string.
	numProcesses string
	// waiters is the wait container of processes 1 to N-1, from describe's
	// wait edge; none when waiting is off.
	waiters framework.Waiters
}

// Coordinator returns the host and port of the JAX coordinator of a Job the
// plugin accepted with a: pod 0 of the worker task, on the port named
// PortName in the task's template or else a.Port. The job must have the task.
func Coordinator(job *batch.Job, a *Args) (host string, port int) {
	worker, _ := jobs.Task(job, a.Worker)
	return jobs.Host(job, worker, 0), jobs.NamedPort(worker, PortName, a.Port)
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	host, port := Coordinator(job, a)
	return &plan{
		worker:       a.Worker,
		host:         host,
		port:         port,
		numProcesses: strconv.Itoa(jobs.Replicas(job, a.Worker)),
		waiters:      framework.NewWaiters(job, describe(a, job).Waits, a.Wait),
	}, nil
}

// OnPodCreate sets the JAX_* and JAXJob variables on every container of a
// worker pod (its process id is its index in the task), declares the
// coordinator's port on it, and adds the wait container, waiting for process
// 0's port, to every worker pod but pod 0. Pods of other tasks are left
// alone. Invalid arguments inject nothing and are reported as an
// InvalidPluginArguments event on the Job. It returns an error only for a
// worker pod without a task index.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok {
		return nil
	}
	if jobs.PodTask(pod) != pl.worker {
		return nil
	}
	index, err := jobs.PodIndex(pod)
	if err != nil {
		return err
	}
	id, port := strconv.Itoa(index), strconv.Itoa(pl.port)
	inject.Env(pod,
		v1.EnvVar{Name: EnvJAXCoordinatorAddress, Value: pl.host + ":" + port},
		v1.EnvVar{Name: EnvJAXNumProcesses, Value: pl.numProcesses},
		v1.EnvVar{Name: EnvJAXProcessID, Value: id},
		v1.EnvVar{Name: EnvCoordinatorAddress, Value: pl.host},
		v1.EnvVar{Name: EnvCoordinatorPort, Value: port},
		v1.EnvVar{Name: EnvNumProcesses, Value: pl.numProcesses},
		v1.EnvVar{Name: EnvProcessID, Value: id},
		v1.EnvVar{Name: EnvPythonUnbuffered, Value: "1"},
	)
	// Every worker pod declares the port, as JAXJob's defaulting and Trainer
	// do for the whole template; only pod 0 listens on it.
	inject.Port(pod, PortName, int32(pl.port))
	pl.waiters.AddTo(pod, pl.worker, index)
	return nil
}
