package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcmutate "volcano.sh/volcano/pkg/webhooks/admission/jobs/mutate"

	. "github.com/vcplugins/framework-plugins/pkg/testing"
)

// volcanoMutate runs Volcano's own job mutation (the AdmissionService Func of
// /jobs/mutate) in-process and applies its patch.
func volcanoMutate(t *testing.T, job *batch.Job) *batch.Job {
	t.Helper()
	resp := vcmutate.Jobs(review(t, admissionv1.Create, job, nil))
	if !resp.Allowed {
		t.Fatalf("Volcano's job mutation denied %s: %v", job.Name, resp.Result)
	}
	return applyPatch(t, job, resp.Patch)
}

// oursMutate runs our mutating admission as the API server calls it.
func oursMutate(t *testing.T, job *batch.Job) *batch.Job {
	t.Helper()
	resp := MutateService(Options{}).Func(review(t, admissionv1.Create, job, nil))
	if !resp.Allowed {
		t.Fatalf("our job mutation denied %s: %v", job.Name, resp.Result)
	}
	return applyPatch(t, job, resp.Patch)
}

// Jobs that use none of the framework plugins get exactly what Volcano's own
// job mutation gives them when ours runs first.
func TestNonFrameworkJobsKeepVolcanoMutation(t *testing.T) {
	unnamed := MakeTask("", 2).Obj()
	hostNet := MakeTask("net", 1).Obj()
	hostNet.Template.Spec.HostNetwork = true
	corpus := []*batch.Job{
		mkJob("bare").SchedulerName("").Queue("").Task(MakeTask("main", 1).Obj()).Obj(),
		mkJob("unnamed").Task(unnamed).Task(MakeTask("", 1).Obj()).Obj(),
		mkJob("gpu").SchedulerName("").Task(MakeTask("train", 4).GPU(8).RestartPolicy("").Obj()).Obj(),
		mkJob("gpu-partial").Task(MakeTask("train", 4).GPU(1).MinAvailable(1).Obj()).Obj(),
		mkJob("svc-env").Task(MakeTask("a", 2).Obj()).Task(MakeTask("b", 3).MinAvailable(1).Obj()).
			Plugin("svc").Plugin("env").Obj(),
		mkJob("ssh-only").Task(MakeTask("master", 1).Obj()).Task(MakeTask("worker", 2).Obj()).Plugin("ssh", "--no-root").Obj(),
		mkJob("empty-plugins").Task(MakeTask("main", 1).Obj()).Obj(),
		mkJob("policies").Policy("PodEvicted", "RestartJob").
			Task(MakeTask("master", 1).RestartPolicy("").Obj()).Task(MakeTask("worker", 2).Obj()).Obj(),
		mkJob("depends").Task(MakeTask("a", 1).Obj()).Task(MakeTask("b", 2).DependsOn("a").Obj()).Obj(),
		mkJob("host-network").Task(hostNet).Obj(),
		mkJob("min-available").MinAvailable(2).Task(MakeTask("main", 4).Obj()).Obj(),
		// Task names of framework roles without the framework plugins.
		mkJob("tf-names").Task(MakeTask("ps", 1).Obj()).Task(MakeTask("worker", 2).GPU(1).RestartPolicy("").Obj()).Plugin("svc").Obj(),
		mkJob("zero").Task(MakeTask("main", 0).Obj()).Obj(),
	}
	corpus[6].Spec.Plugins = map[string][]string{}
	corpus[3].Spec.MaxRetry = 7
	corpus[10].Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
	for _, job := range corpus {
		t.Run(job.Name, func(t *testing.T) {
			volcanoOnly := volcanoMutate(t, job)
			both := volcanoMutate(t, oursMutate(t, job))
			if diff := cmp.Diff(volcanoOnly, both); diff != "" {
				t.Errorf("Volcano's mutation alone (-) vs ours then Volcano's (+):\n%s", diff)
			}
			resp := MutateService(Options{}).Func(review(t, admissionv1.Create, job, nil))
			if resp.Patch != nil || resp.PatchType != nil || resp.Warnings != nil {
				t.Errorf("our mutation answered %+v; want no patch and no warnings", resp)
			}
		})
	}
}

// Our mutation runs first (its webhook configuration sorts first), so "when
// unset" sees the user's spec; Volcano's mutation then keeps what it set. Run
// the other way round, Volcano would have set every task's minAvailable to its
// replicas and the elastic minimum would be lost.
func TestMutationOrder(t *testing.T) {
	job := mkJob("pt").SchedulerName("").
		Task(MakeTask("master", 1).GPU(1).Obj()).Task(MakeTask("worker", 8).GPU(1).RestartPolicy("").Obj()).
		Plugin("pytorch", "--min-nodes=3").Obj()

	got := volcanoMutate(t, oursMutate(t, job))
	want := volcanoMutate(t, mkJob("pt").SchedulerName("volcano").MinAvailable(3).
		Task(MakeTask("master", 1).GPU(1).MinAvailable(1).Policy(taskCompleted, completeJob).Obj()).
		Task(MakeTask("worker", 8).GPU(1).MinAvailable(2).RestartPolicy(v1.RestartPolicyOnFailure).Policy(podFailed, terminateJob).Obj()).
		Plugin("pytorch", "--min-nodes=3").Plugin("svc").Obj())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ours then Volcano's (-want +got):\n%s", diff)
	}
	if m := got.Spec.Tasks[1].MinAvailable; m == nil || *m != 2 || got.Spec.MinAvailable != 3 {
		t.Errorf("worker minAvailable %v, job minAvailable %d; want 2 and 3", m, got.Spec.MinAvailable)
	}

	reversed := oursMutate(t, volcanoMutate(t, job))
	if m := reversed.Spec.Tasks[1].MinAvailable; m == nil || *m != 8 {
		t.Errorf("Volcano's then ours: worker minAvailable %v; want 8 (why ours must run first)", m)
	}
}

// Volcano v1.13+'s in-tree ray and hcclrank plugins keep working through
// this manager: our mutation leaves their Jobs alone, Volcano's own
// mutation (which this manager serves) adds svc to a ray Job as stock's
// does, and Volcano's validation, which knows the plugins from its factory,
// admits both.
func TestInTreeRayAndHcclrankJobs(t *testing.T) {
	stock := volcanoValidate(t)
	for _, tc := range []struct {
		job     *batch.Job
		wantSvc bool
	}{
		{mkJob("ray").Task(MakeTask("head", 1).Obj()).Task(MakeTask("worker", 2).Obj()).Plugin("ray").Obj(), true},
		{mkJob("hccl").Task(MakeTask("master", 1).Obj()).Task(MakeTask("worker", 2).Obj()).Plugin("hcclrank").Obj(), false},
	} {
		t.Run(tc.job.Name, func(t *testing.T) {
			resp := MutateService(Options{}).Func(review(t, admissionv1.Create, tc.job, nil))
			if resp.Patch != nil || resp.Warnings != nil {
				t.Errorf("our mutation answered %+v; want no patch and no warnings", resp)
			}
			mutated := volcanoMutate(t, tc.job)
			if _, got := mutated.Spec.Plugins["svc"]; got != tc.wantSvc {
				t.Errorf("Volcano's mutation: svc plugin %v, want %v (plugins %v)", got, tc.wantSvc, mutated.Spec.Plugins)
			}
			if got := stock(review(t, admissionv1.Create, mutated, nil)); !got.Allowed {
				t.Errorf("Volcano's validation denies it: %v", got.Result)
			}
		})
	}
}
