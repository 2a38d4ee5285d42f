package main

import (
	"fmt"
	"sort"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/webhook"
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

// admittedPods returns the most pods, at most pods, of framework fw's scale
// job (as ours runs it) that our admission admits (webhook.MutateJob, then
// webhook.ValidateJob without errors), and, when that is fewer than pods,
// the denial's detail at pods. The TensorFlow job is bounded by its own
// contract: TF_CONFIG holds the whole cluster in every process's
// environment, whichever --tf-config (by reference the kubelet expands it),
// and must fit MAX_ARG_STRLEN, which 2,000 pods' fully qualified host names
// do not. It returns scaleJob's error.
func admittedPods(fw string, pods int) (int, string, error) {
	admits := func(n int) (bool, string, error) {
		job, err := scaleJob(fw, n, ImplOurs)
		if err != nil {
			return false, "", err
		}
		mutated, _ := webhook.MutateJob(job, webhook.Options{})
		if errs := webhook.ValidateJob(mutated); len(errs) > 0 {
			return false, errs[0].Error(), nil
		}
		return true, "", nil
	}
	ok, denial, err := admits(pods)
	if ok || err != nil {
		return pods, "", err
	}
	// The first size from 2 (the smallest job) up that is refused; pods is.
	var searchErr error
	first := 2 + sort.Search(pods-2, func(i int) bool {
		ok, _, err := admits(2 + i)
		if err != nil {
			searchErr = err
		}
		return !ok
	})
	if searchErr != nil {
		return 0, "", searchErr
	}
	return first - 1, denial, nil
}
