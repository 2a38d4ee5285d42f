package measure

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// StockFrameworks returns the frameworks Volcano's stock controller manager
// has a plugin for (its in-tree distributed-framework plugins: those with a
// framework.Stock), in catalog.Frameworks order; it has none for the others.
func StockFrameworks() []string {
	var out []string
	for _, f := range catalog.Frameworks {
		if f.Stock != nil {
			out = append(out, f.Name)
		}
	}
	return out
}

// StockHas reports whether Volcano's stock controller manager has a plugin
// for framework fw.
func StockHas(fw string) bool { return slices.Contains(StockFrameworks(), fw) }

// TaskReplicas is one task of a measured job: its name and pod count.
type TaskReplicas struct {
	Name     string
	Replicas int
}

// WithoutWaits adds --wait=false to the arguments of job's framework plugins
// (those of plugins.Frameworks; svc and ssh are left alone): its pods then
// get no wait init container.
func WithoutWaits(job *batch.Job) {
	for name, args := range job.Spec.Plugins {
		if catalog.Lookup(name) != nil {
			job.Spec.Plugins[name] = append(slices.Clone(args), "--wait=false")
		}
	}
}

// StockWaitArg is the argument of Volcano's in-tree pytorch plugin that
// gives its workers an init container waiting for the master's port (300 s
// at most, image busybox:1.36.1). Our pytorch plugin reads it as upstream's
// spelling of its port wait (pytorch.ParseArgs), so only stock runs it.
const StockWaitArg = "--wait-master-enabled"

// WithStockWait adds StockWaitArg to the arguments of job's pytorch plugin
// and reports whether job has one; a job without it is left alone.
func WithStockWait(job *batch.Job) bool {
	args, ok := job.Spec.Plugins[pytorch.Name]
	if ok {
		job.Spec.Plugins[pytorch.Name] = append(slices.Clone(args), StockWaitArg)
	}
	return ok
}

// Job returns the Volcano Job name (namespace default) of framework fw with
// tasks, every pod of which must be scheduled at once (minAvailable: all its
// pods), and the plugins of Plugins(fw, inline). Every pod requests 100m CPU
// and 64Mi and keeps running on its KWOK node
// (localcluster.AnnotationPodResult "Running"), so that the cluster is quiet
// again once the job has started. It returns Plugins' error.
func Job(name, fw string, tasks []TaskReplicas, inline bool) (*batch.Job, error) {
	plugins, err := Plugins(fw, inline)
	if err != nil {
		return nil, err
	}
	job := &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: batch.JobSpec{
			SchedulerName: "volcano",
			Queue:         "default",
			Plugins:       plugins,
		},
	}
	for _, t := range tasks {
		job.Spec.Tasks = append(job.Spec.Tasks, task(t.Name, fw, t.Replicas))
		job.Spec.MinAvailable += int32(t.Replicas)
	}
	return job, nil
}

// task returns a task of replicas pods of one container named container.
func task(name, container string, replicas int) batch.TaskSpec {
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
					Name:    container,
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

// Plugins returns the plugins stanza of a measured job of framework fw: the
// framework's plugin and the Volcano plugins it needs
// (framework.Framework.VolcanoPlugins: svc, and ssh for mpi), listed
// explicitly so that no admission webhook has anything to add that would
// differ between the controller managers.
//
// The frameworks stock has (StockFrameworks) get the in-tree plugins' own
// flags with the in-tree defaults (this project's plugins accept the same
// flags and share those defaults: their Default* constants), so the very
// same Job runs under both controller managers; their tasks must have those
// default names (tensorflow: ps and worker; pytorch and mpi: master and
// worker). The others get no arguments: their tasks have the default names
// of their role flags (sample.Sample).
//
// inline adds --tf-config=inline to a TensorFlow job (our plugin only: the
// in-tree one does not know the flag); it changes no other framework's job.
// It returns an error for a framework that is not in catalog.Frameworks.
func Plugins(fw string, inline bool) (map[string][]string, error) {
	f := catalog.Lookup(fw)
	if f == nil {
		return nil, fmt.Errorf("unknown framework %q: want one of %v", fw, catalog.Names())
	}
	// Empty, not nil: a nil list is JSON null, which Volcano's Job CRD
	// schema does not allow as a plugin's arguments.
	plugins := map[string][]string{fw: {}}
	for _, p := range f.VolcanoPlugins {
		plugins[p] = []string{}
	}
	switch fw {
	case tensorflow.Name:
		plugins[fw] = []string{"--ps=" + tensorflow.DefaultPS, "--worker=" + tensorflow.DefaultWorker, "--port=" + strconv.Itoa(tensorflow.DefaultPort)}
		if inline {
			plugins[fw] = append(plugins[fw], "--tf-config="+string(tensorflow.Inline))
		}
	case mpi.Name:
		plugins[fw] = []string{"--master=" + mpi.DefaultMaster, "--worker=" + mpi.DefaultWorker, "--port=" + strconv.Itoa(mpi.DefaultPort)}
	case pytorch.Name:
		plugins[fw] = []string{"--master=" + pytorch.DefaultMaster, "--worker=" + pytorch.DefaultWorker, "--port=" + strconv.Itoa(pytorch.DefaultPort)}
	}
	return plugins, nil
}
