package webhook

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// validateShape checks what every later check assumes of a Job: first, and
// alone when any is over, the bounds on its dimensions (bounds.Check:
// tasks, dependsOn names, plugins, plugin arguments and their lengths), then
// replicas and minAvailable that are not negative, at most MaxReplicas pods in all, task minAvailable within replicas, the
// job's minAvailable within the total, and distinct task names that are DNS
// labels. ValidateJob stops at these errors: the plugins' parsers, the
// launch-order graph and the pod simulation are not run on a Job that fails
// them (Volcano's own svc.GenerateHosts panics on negative replicas).
//
// Volcano's job validation checks the same, but it runs beside ours, not
// before it, so ours cannot rely on it.
func validateShape(job *batch.Job) field.ErrorList {
	if errs := bounds.Check(job); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(job.Spec.MinAvailable), spec.Child("minAvailable"))...)
	names := make(map[string]bool, len(job.Spec.Tasks))
	var total int64
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		p := spec.Child("tasks").Index(i)
		if msgs := validation.IsDNS1123Label(t.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("name"), jobs.Abbrev(t.Name), "a task name must be a DNS label: "+strings.Join(msgs, "; ")))
		} else if names[t.Name] {
			dup := field.Duplicate(p.Child("name"), t.Name)
			dup.Detail = "task names must be unique"
			errs = append(errs, dup)
		}
		names[t.Name] = true
		if t.Replicas < 0 {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(t.Replicas), p.Child("replicas"))...)
		} else {
			total += int64(t.Replicas)
		}
		if m := t.MinAvailable; m != nil {
			switch {
			case *m < 0:
				errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*m), p.Child("minAvailable"))...)
			case *m > t.Replicas && t.Replicas >= 0:
				errs = append(errs, field.Invalid(p.Child("minAvailable"), *m, fmt.Sprintf("must not be greater than the task's replicas (%d)", t.Replicas)))
			}
		}
	}
	if m := int64(job.Spec.MinAvailable); m > total && len(errs) == 0 {
		errs = append(errs, field.Invalid(spec.Child("minAvailable"), job.Spec.MinAvailable,
			fmt.Sprintf("must not be greater than the total replicas of the tasks (%d)", total)))
	}
	return errs
}

// MaxReplicas is bounds.MaxReplicas: the most pods any Job may ask for
// (bounds.Check holds every Job to it since round 4's H3).
const MaxReplicas = bounds.MaxReplicas

// countable reports whether MutateJob can work on the Job: its dimensions
// are within bounds.Check, no task has negative replicas and there are at
// most MaxReplicas pods. The mutation leaves other Jobs as they are; the
// validation denies them.
func countable(job *batch.Job) bool {
	if len(bounds.Check(job)) > 0 {
		return false
	}
	for i := range job.Spec.Tasks {
		if job.Spec.Tasks[i].Replicas < 0 {
			return false
		}
	}
	return len(bounds.CheckReplicas(job)) == 0
}
