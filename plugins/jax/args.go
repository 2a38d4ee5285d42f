package jax

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Defaults: Kubeflow JAXJob's worker replica type and port
// (training-operator v1.9 pkg/apis/kubeflow.org/v1/jax_types.go,
// JAXJobReplicaTypeWorker and JAXJobDefaultPort).
const (
	DefaultWorker = "worker"
	DefaultPort   = 6666
)

// Args are the jax plugin's arguments.
type Args struct {
	// Worker names the task whose pods are the JAX processes, one per pod.
	Worker string
	// Port is the coordinator's port on process 0 unless the worker task
	// declares a container port named PortName.
	Port int
	// Wait holds processes 1 to N-1 back until process 0's port answers.
	Wait wait.Options
}

// ParseArgs parses the jax plugin's arguments (Volcano-style
// ["--flag=value", ...]) and, when job is not nil, checks them against it.
//
// Flags: --worker (a task name), --port (1-65535), --wait, --wait-timeout,
// --wait-image. It returns field errors under spec.plugins[jax] for unknown
// flags, malformed values, and a worker task that is missing or has no
// replicas.
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the task whose pods are the JAX processes")
	s.Port(&a.Port, "port", DefaultPort, "coordinator port on process 0 (JAX_COORDINATOR_ADDRESS, COORDINATOR_PORT)")
	a.Wait.AddFlags(s)
	s.Parse(argv)
	if job == nil {
		return a, s.Errors()
	}
	s.Task(job, "worker", a.Worker, true, 0)
	return a, s.Errors()
}
