package xgboost

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Defaults: Kubeflow XGBoostJob's replica types, lower-cased as task names,
// and its default port (XGBoostJobDefaultPort, training-operator v1.9
// pkg/apis/kubeflow.org/v1/xgboost_types.go).
const (
	DefaultMaster = "master"
	DefaultWorker = "worker"
	DefaultPort   = 9999
)

// Args are the xgboost plugin's arguments.
type Args struct {
	// Master names the task whose one pod is rank 0 and runs the tracker;
	// Worker the task whose pods are ranks 1 to n.
	Master, Worker string
	// Port is the tracker's port on the master (MASTER_PORT,
	// DMLC_TRACKER_PORT) and the workers' listening port (WORKER_PORT),
	// unless the master or worker task declares a container port named
	// PortName.
	Port int
	// Wait holds the workers back until the master's port accepts
	// connections.
	Wait wait.Options
}

// ParseArgs parses the xgboost plugin's arguments (Volcano-style
// ["--flag=value", ...]) and, when job is not nil, checks them against it.
//
// Flags: --master, --worker (task names), --port (1-65535), --wait,
// --wait-timeout, --wait-image. It returns field errors under
// spec.plugins[xgboost] for unknown flags, malformed values, both roles on one
// task, a master task that is missing, has no replicas or more than one
// (XGBoostJob's validation requires exactly one master), and an explicit
// --worker naming a task that is missing or has no replicas. Without
// --worker a job may have no worker task: the master trains alone
// (WORLD_SIZE=1), as an XGBoostJob with only a master does.
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.Master, "master", DefaultMaster, "name of the master task (exactly one replica: rank 0, runs the tracker)")
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the worker task (optional unless given)")
	s.Port(&a.Port, "port", DefaultPort, "tracker port on the master (MASTER_PORT, DMLC_TRACKER_PORT) and workers' port (WORKER_PORT)")
	a.Wait.AddFlags(s)
	s.Parse(argv)
	if job == nil {
		return a, s.Errors()
	}
	if !s.Distinct("master", "worker") {
		return a, s.Errors()
	}
	s.Task(job, "master", a.Master, true, 1)
	s.Task(job, "worker", a.Worker, false, 0)
	return a, s.Errors()
}
