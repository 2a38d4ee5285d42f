package paddle

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Defaults: Kubeflow PaddleJob's replica types, lower-cased as its pod names
// have them, and its default port (training-operator v1.9,
// pkg/apis/kubeflow.org/v1/paddlepaddle_types.go: PaddleJobDefaultPort).
const (
	DefaultMaster = "master"
	DefaultWorker = "worker"
	DefaultPort   = 36543
)

// Args are the paddle plugin's arguments.
type Args struct {
	// Master names the task of PaddleJob's Master replicas. It is optional:
	// a Job with it runs in parameter-server mode, one without it in
	// collective mode.
	Master string
	// Worker names the task of PaddleJob's Worker replicas.
	Worker string
	// Port is the port of the launcher's rendezvous on the rank-0 pod
	// (PADDLE_MASTER), unless the rank-0 pod's task declares a container port
	// named PortName.
	Port int
	// Wait holds every pod but the rank-0 pod back until the rendezvous
	// port answers.
	Wait wait.Options
}

// ParseArgs parses the paddle plugin's arguments (Volcano-style
// ["--flag=value", ...]) and, when job is not nil, checks them against it.
//
// Flags: --master, --worker (task names), --port (1-65535), --wait,
// --wait-timeout, --wait-image. It returns field errors under
// spec.plugins[paddle] for unknown flags, malformed values, one task named
// for both roles, an explicit --master or --worker naming a task that is
// missing or has no replicas, and a Job with neither task.
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.Master, "master", DefaultMaster, "name of the master task (parameter-server mode; optional)")
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the worker task")
	s.Port(&a.Port, "port", DefaultPort, "port of the launcher's rendezvous on the rank-0 pod (PADDLE_MASTER)")
	a.Wait.AddFlags(s)
	s.Parse(argv)
	if job == nil {
		return a, s.Errors()
	}
	if !s.Distinct("master", "worker") {
		return a, s.Errors()
	}
	master := s.Task(job, "master", a.Master, false, 0)
	worker := s.Task(job, "worker", a.Worker, false, 0)
	if master == nil && worker == nil && len(s.Errors()) == 0 {
		s.Invalid("worker", a.Worker, fmt.Sprintf("the job has neither a worker task (%q) nor a master task (%q)", a.Worker, a.Master))
	}
	return a, s.Errors()
}
