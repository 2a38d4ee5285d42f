package main

import (
	"fmt"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Frameworks the scale test submits, in order.
const (
	TensorFlow = tensorflow.Name
	MPI        = mpi.Name
	PyTorch    = pytorch.Name
)

// scaleJob returns the Volcano Job the scale test submits for framework fw,
// with pods pods in all: one lead pod (ps, MPI or PyTorch master) and pods-1
// workers, all of them in its gang, with the in-tree plugins' arguments
// (measure.Job, measure.Plugins), so the very same Job runs under both
// controller managers.
//
// impl's arguments: ours-inline adds --tf-config=inline to the TensorFlow
// job (our plugin only: the in-tree one does not know the flag), stock-wait
// --wait-master-enabled to the PyTorch job (measure.WithStockWait). It
// returns an error for an unknown framework or fewer than 2 pods.
func scaleJob(fw string, pods int, impl string) (*batch.Job, error) {
	if pods < 2 {
		return nil, fmt.Errorf("a %s job needs at least 2 pods, got %d", fw, pods)
	}
	var lead, worker string
	switch fw {
	case TensorFlow:
		lead, worker = tensorflow.DefaultPS, tensorflow.DefaultWorker
	case MPI:
		lead, worker = mpi.DefaultMaster, mpi.DefaultWorker
	case PyTorch:
		lead, worker = pytorch.DefaultMaster, pytorch.DefaultWorker
	default:
		return nil, fmt.Errorf("unknown framework %q: want %q, %q or %q", fw, TensorFlow, MPI, PyTorch)
	}
	job, err := measure.Job("scale-"+fw, fw, []measure.TaskReplicas{{Name: lead, Replicas: 1}, {Name: worker, Replicas: pods - 1}}, impl == measure.ImplOursInline)
	if err == nil && impl == measure.ImplStockWait {
		measure.WithStockWait(job)
	}
	return job, err
}
