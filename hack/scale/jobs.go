package main

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/framework"
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

// scaleJob returns the Volcano Job the scale test submits for framework fw, with
// pods pods in all: one lead pod (ps, MPI or PyTorch master) and pods-1 workers.
//
// The plugin arguments are the in-tree plugins' own flags with the in-tree
// defaults (this project's plugins accept the same flags and share those
// defaults: their Default* constants), so the very same Job runs under both
// controller managers. The svc (and for mpi ssh) plugins are listed
// explicitly, so no admission webhook has anything to add that would differ.
// Every pod keeps running on its KWOK node (localcluster.AnnotationPodResult
// "Running"), so the first job is quiet while the second is measured.
//
// inline adds --tf-config=inline to the TensorFlow job (our plugin only: the
// in-tree one does not know the flag).
func scaleJob(fw string, pods int, inline bool) (*batch.Job, error) {
	if pods < 2 {
		return nil, fmt.Errorf("a %s job needs at least 2 pods, got %d", fw, pods)
	}
	var lead, worker string
	var plugins map[string][]string
	switch fw {
	case TensorFlow:
		lead, worker = tensorflow.DefaultPS, tensorflow.DefaultWorker
		plugins = map[string][]string{
			tensorflow.Name:     {"--ps=" + lead, "--worker=" + worker, "--port=" + strconv.Itoa(tensorflow.DefaultPort)},
			framework.SvcPlugin: {},
		}
		if inline {
			plugins[tensorflow.Name] = append(plugins[tensorflow.Name], "--tf-config="+string(tensorflow.Inline))
		}
	case MPI:
		lead, worker = mpi.DefaultMaster, mpi.DefaultWorker
		plugins = map[string][]string{
			mpi.Name:            {"--master=" + lead, "--worker=" + worker, "--port=" + strconv.Itoa(mpi.DefaultPort)},
			framework.SSHPlugin: {},
			framework.SvcPlugin: {},
		}
	case PyTorch:
		lead, worker = pytorch.DefaultMaster, pytorch.DefaultWorker
		plugins = map[string][]string{
			pytorch.Name:        {"--master=" + lead, "--worker=" + worker, "--port=" + strconv.Itoa(pytorch.DefaultPort)},
			framework.SvcPlugin: {},
		}
	default:
		return nil, fmt.Errorf("unknown framework %q: want %q, %q or %q", fw, TensorFlow, MPI, PyTorch)
	}
	task := func(name string, replicas int) batch.TaskSpec {
		return batch.TaskSpec{
			Name:     name,
			Replicas: int32(replicas),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Annotations: map[string]string{localcluster.AnnotationPodResult: "Running"},
				},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:    fw,
						Image:   "busybox:1.36",
						Command: []string{"sleep", "infinity"},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("100m"),
							corev1.ResourceMemory: resource.MustParse("64Mi"),
						}},
					}},
				},
			},
		}
	}
	return &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "scale-" + fw, Namespace: metav1.NamespaceDefault},
		Spec: batch.JobSpec{
			SchedulerName: "volcano",
			Queue:         "default",
			MinAvailable:  int32(pods),
			Tasks:         []batch.TaskSpec{task(lead, 1), task(worker, pods-1)},
			Plugins:       plugins,
		},
	}, nil
}
