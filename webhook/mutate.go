package webhook

import (
	"encoding/json"
	"fmt"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	jsonpatch "gomodules.xyz/jsonpatch/v2"
	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	busv1alpha1 "volcano.sh/apis/pkg/apis/bus/v1alpha1"
)

// MutateJob returns a copy of job with this project's defaults applied, and the
// admission warnings to return with it. job itself is not modified. A Job that
// uses none of the framework plugins comes back unchanged, without warnings.
//
// For Jobs that use one of the framework plugins (plugins.Frameworks):
//
//   - plugins: svc is added when missing, and ssh too for mpi; arguments the
//     user gave them are kept.
//   - gang scheduling of GPU tasks (a container or init container requests or
//     limits a resource Options.IsGPU accepts): the task's minAvailable is set
//     to its replicas when unset (for the workers of an elastic pytorch job, to
//     the elastic minimum less the master's replicas); when the job has a GPU
//     task, the job's minAvailable is set to the sum over its tasks when unset and
//     its schedulerName to Options.SchedulerName when unset. A GPU task whose
//     user-set minAvailable is below its replicas is kept, with a warning.
//   - lifecycle: the task whose completion ends training (the framework's
//     Description.Completion: mpi master, pytorch master or else worker,
//     tensorflow chief or else worker, mxnet, jax and collective paddle worker,
//     xgboost master, dask client, parameter-server paddle master) gets
//     the policy TaskCompleted → CompleteJob when it has no policies and the
//     job's policies do not handle TaskCompleted; tasks that play a framework role
//     and set no restartPolicy get OnFailure; a task whose pods wait (the wait
//     container), for another task or for the task's own pod 0, gets
//     PodFailed → TerminateJob when it
//     has no policies, its restartPolicy is not Never and the job's policies do
//     not handle PodFailed, so that a timed-out wait (whose pod the
//     wait-timeout controller fails) ends the Job.
//
// Role-dependent defaults are skipped for a plugin whose arguments do not parse,
// and the Job comes back unchanged when a task has negative replicas, it asks
// for more than MaxReplicas pods or a dimension is over bounds.Check;
// ValidateJob rejects such Jobs.
func MutateJob(job *batch.Job, opts Options) (*batch.Job, []string) {
	out := job.DeepCopy()
	if !UsesFrameworks(out) || !countable(out) {
		return out, nil
	}
	addPlugins(out)
	uses := analyze(out)
	warnings := gang(out, uses, opts)
	lifecycle(out, uses)
	return out, warnings
}

// MutatePatch returns MutateJob's changes as a JSON patch (RFC 6902) against
// raw, the JSON the Job was decoded from (the request's object; nil: job's own
// encoding), nil when there are none, and the warnings. The patch applies to
// raw even where raw has null or leaves out an object the mutation writes into
// (`template: null`), and touches nothing else of it (see anchorPatch).
func MutatePatch(raw []byte, job *batch.Job, opts Options) ([]byte, []string, error) {
	mutated, warnings := MutateJob(job, opts)
	// MutateJob changes no Job out of bounds; diffing one would cost in
	// proportion to its arguments or tasks.
	if !UsesFrameworks(job) || !countable(job) {
		return nil, warnings, nil
	}
	patch, err := jobPatch(raw, job, mutated)
	return patch, warnings, err
}

// jobPatch returns the JSON patch from job to mutated, anchored to raw
// (MutatePatch), nil when they do not differ. Its cost is linear in the size
// of the Job: gomodules.xyz/jsonpatch/v2 from v2.3.0 on compares lists element
// by element (v2.2.0 filled an m×n edit-distance table for every list of
// plain values present in both, its template lists included: 15,000 args
// took 1.8 GB).
func jobPatch(raw []byte, job, mutated *batch.Job) ([]byte, error) {
	before, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	after, err := json.Marshal(mutated)
	if err != nil {
		return nil, err
	}
	ops, err := jsonpatch.CreatePatch(before, after)
	if err != nil || len(ops) == 0 {
		return nil, err
	}
	if raw != nil {
		if ops, err = anchorPatch(raw, after, ops); err != nil || len(ops) == 0 {
			return nil, err
		}
	}
	return json.Marshal(ops)
}

// addPlugins adds the Volcano plugins the Job's frameworks need
// (framework.Framework.VolcanoPlugins: svc, and ssh for mpi), as Volcano's own
// job mutation does for tensorflow, pytorch and mpi.
func addPlugins(job *batch.Job) {
	for _, f := range frameworks() {
		if _, ok := job.Spec.Plugins[f.Name]; !ok {
			continue
		}
		for _, name := range f.VolcanoPlugins {
			if _, ok := job.Spec.Plugins[name]; !ok {
				job.Spec.Plugins[name] = []string{}
			}
		}
	}
}

// gang makes GPU tasks all-or-nothing and returns the warnings for GPU tasks
// the user made partial.
func gang(job *batch.Job, uses []use, opts Options) []string {
	elastic := map[string]int32{}
	for _, u := range uses {
		if u.ElasticTask != "" {
			elastic[u.ElasticTask] = u.ElasticMin
		}
	}
	var warnings []string
	partial := 0 // GPU tasks with minAvailable < replicas; the first maxWarnings are named
	gpuJob := false
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		res, ok := opts.TaskGPU(t)
		if !ok {
			continue
		}
		gpuJob = true
		want, isElastic := elastic[t.Name]
		if !isElastic {
			want = t.Replicas
		}
		switch {
		case t.MinAvailable == nil:
			t.MinAvailable = &want
		case !isElastic && *t.MinAvailable < t.Replicas:
			partial++
			if partial <= maxWarnings {
				warnings = append(warnings, PartialGPUWarning(t.Name, res, *t.MinAvailable, t.Replicas))
			}
		}
	}
	if partial > maxWarnings {
		warnings = append(warnings, fmt.Sprintf("and %d more GPU tasks with minAvailable < replicas", partial-maxWarnings))
	}
	if !gpuJob {
		return warnings
	}
	if job.Spec.MinAvailable == 0 {
		var sum int32
		for i := range job.Spec.Tasks {
			if m := job.Spec.Tasks[i].MinAvailable; m != nil {
				sum += *m
			} else {
				sum += job.Spec.Tasks[i].Replicas
			}
		}
		job.Spec.MinAvailable = sum
	}
	if job.Spec.SchedulerName == "" {
		job.Spec.SchedulerName = opts.schedulerName()
	}
	return warnings
}

// PartialGPUWarning is the admission warning for a GPU task whose minAvailable
// is below its replicas. The task name is cut to 63 runes (a DNS label's
// length; the Job's own validation may not have run yet).
func PartialGPUWarning(task string, gpu v1.ResourceName, minAvailable, replicas int32) string {
	return fmt.Sprintf("task %q requests %s with minAvailable %d < replicas %d: partially allocated GPUs sit idle until the rest arrive",
		cut(task, 63), cut(string(gpu), 63), minAvailable, replicas)
}

// lifecycle sets the completion policy, restartPolicy and wait-timeout
// defaults.
func lifecycle(job *batch.Job, uses []use) {
	// A TaskCompleted policy the user wrote anywhere, on the job or on any
	// task, says which completion ends the Job: adding ours to another task
	// would end it earlier than the user chose.
	userHandlesCompletion := handles(job.Spec.Policies, busv1alpha1.TaskCompletedEvent)
	jobHandlesFailure := handles(job.Spec.Policies, busv1alpha1.PodFailedEvent)
	// Only tasks the user gave no policies get ours, the two below included.
	bare := map[string]bool{}
	for _, t := range job.Spec.Tasks {
		bare[t.Name] = len(t.Policies) == 0
		userHandlesCompletion = userHandlesCompletion || handles(t.Policies, busv1alpha1.TaskCompletedEvent)
	}
	for _, u := range uses {
		if len(u.Errs) > 0 {
			continue
		}
		if u.Completion != "" && !userHandlesCompletion && bare[u.Completion] {
			// Two plugins may name the same task; a second TaskCompleted policy
			// would make Volcano deny the Job for policies the user never wrote.
			if t, ok := jobs.Task(job, u.Completion); ok && !handles(t.Policies, busv1alpha1.TaskCompletedEvent) {
				t.Policies = append(t.Policies, batch.LifecyclePolicy{Event: busv1alpha1.TaskCompletedEvent, Action: busv1alpha1.CompleteJobAction})
			}
		}
		for _, r := range u.Roles {
			if t, ok := jobs.Task(job, r.Task); ok && t.Template.Spec.RestartPolicy == "" {
				t.Template.Spec.RestartPolicy = v1.RestartPolicyOnFailure
			}
		}
	}
	// A waiting pod whose wait times out is failed by vc-controller-manager's
	// wait-timeout controller (pkg/waitwatch); without a PodFailed policy the
	// Job would run on without it. With restartPolicy Never a PodFailed also
	// follows a failed main container, whose outcome the user decides.
	for _, u := range uses {
		if len(u.Errs) > 0 {
			continue
		}
		// Every waiting task, also one whose pods wait for its own pod 0
		// (jax's processes, a worker-only pytorch Job's workers).
		for _, w := range u.Waits {
			e := edge{from: w.From}
			t, ok := jobs.Task(job, e.from)
			if !ok || !bare[e.from] || jobHandlesFailure || t.Template.Spec.RestartPolicy == v1.RestartPolicyNever ||
				handles(t.Policies, busv1alpha1.PodFailedEvent) {
				continue
			}
			t.Policies = append(t.Policies, batch.LifecyclePolicy{Event: busv1alpha1.PodFailedEvent, Action: busv1alpha1.TerminateJobAction})
		}
	}
}

// handles reports whether policies react to event (or to any event).
func handles(policies []batch.LifecyclePolicy, event busv1alpha1.Event) bool {
	for _, p := range policies {
		if p.Event == event || p.Event == busv1alpha1.AnyEvent {
			return true
		}
		for _, e := range p.Events {
			if e == event || e == busv1alpha1.AnyEvent {
				return true
			}
		}
	}
	return false
}
