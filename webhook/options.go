package webhook

import (
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// DefaultSchedulerName is the scheduler GPU jobs get when neither the Job nor
// Options name one; the default of Volcano's --scheduler-name.
const DefaultSchedulerName = "volcano"

// Options configure MutateJob.
type Options struct {
	// GPUResources decides which container resources are GPUs
	// (jobs.MatchesGPU). Empty means the process-wide patterns (jobs.IsGPU:
	// --gpu-resources, by default jobs.DefaultGPUResources).
	GPUResources []string
	// SchedulerName is set on GPU jobs that name no scheduler. Empty means
	// DefaultSchedulerName.
	SchedulerName string
}

func (o Options) schedulerName() string {
	if o.SchedulerName != "" {
		return o.SchedulerName
	}
	return DefaultSchedulerName
}

// IsGPU reports whether a resource counts as a GPU under these options.
func (o Options) IsGPU(name v1.ResourceName) bool {
	if len(o.GPUResources) == 0 {
		return jobs.IsGPU(name)
	}
	return jobs.MatchesGPU(o.GPUResources, name)
}

// TaskGPU returns the GPU resource the task's pods request (the first by name,
// over requests and limits of its containers and init containers, with a
// positive quantity) and true, or "" and false when they request none.
func (o Options) TaskGPU(task *batch.TaskSpec) (v1.ResourceName, bool) {
	names := jobs.ResourceNames(&task.Template.Spec, o.IsGPU)
	if len(names) == 0 {
		return "", false
	}
	return names[0], true
}
