package dask

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Defaults: the three parts of a DaskJob (dask-kubernetes' operator: a
// scheduler, workers and the job runner, here the client), and the port
// dask-scheduler serves when not given --port (distributed 2022.12.1,
// distributed/cli/dask_scheduler.py).
const (
	DefaultScheduler = "scheduler"
	DefaultWorker    = "worker"
	DefaultClient    = "client"
	DefaultPort      = 8786
)

// Args are the dask plugin's arguments.
type Args struct {
	// Scheduler, Worker and Client name the task that plays each role.
	Scheduler, Worker, Client string
	// Port is the scheduler's port, in DASK_SCHEDULER_ADDRESS, unless the
	// scheduler task declares a container port named PortName.
	Port int
	// Wait holds workers and the client back until the scheduler answers.
	Wait wait.Options
}

// ParseArgs parses the dask plugin's arguments (Volcano-style
// ["--flag=value", ...]) and, when job is not nil, checks them against it.
//
// Flags: --scheduler, --worker, --client (task names), --port (1-65535),
// --wait, --wait-timeout, --wait-image. It returns field errors under
// spec.plugins[dask] for unknown flags, malformed values, two roles on one
// task, a scheduler or client task that is missing or does not have exactly
// one replica (a Dask cluster has one scheduler; the client's exit is the
// Job's, as a DaskJob's runner pod's), and a worker task that is missing or
// has no replicas.
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.Scheduler, "scheduler", DefaultScheduler, "name of the scheduler task (exactly one replica)")
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the worker task")
	s.NonEmpty(&a.Client, "client", DefaultClient, "name of the client task (exactly one replica), whose completion ends the job")
	s.Port(&a.Port, "port", DefaultPort, "port the scheduler serves (the port of DASK_SCHEDULER_ADDRESS)")
	a.Wait.AddFlags(s)
	s.Parse(argv)
	if job == nil {
		return a, s.Errors()
	}
	s.Distinct("scheduler", "worker", "client")
	s.Task(job, "scheduler", a.Scheduler, true, 1)
	s.Task(job, "worker", a.Worker, true, 0)
	s.Task(job, "client", a.Client, true, 1)
	return a, s.Errors()
}
