package webhook

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	vcmutate "volcano.sh/volcano/pkg/webhooks/admission/jobs/mutate"
	"volcano.sh/volcano/pkg/webhooks/router"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/plugins"
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
	unnamed := jobtest.MakeTask("", 2).Obj()
	hostNet := jobtest.MakeTask("net", 1).Obj()
	hostNet.Template.Spec.HostNetwork = true
	corpus := []*batch.Job{
		mkJob("bare").SchedulerName("").Queue("").Task(jobtest.MakeTask("main", 1).Obj()).Obj(),
		mkJob("unnamed").Task(unnamed).Task(jobtest.MakeTask("", 1).Obj()).Obj(),
		mkJob("gpu").SchedulerName("").Task(jobtest.MakeTask("train", 4).GPU(8).RestartPolicy("").Obj()).Obj(),
		mkJob("gpu-partial").Task(jobtest.MakeTask("train", 4).GPU(1).MinAvailable(1).Obj()).Obj(),
		mkJob("svc-env").Task(jobtest.MakeTask("a", 2).Obj()).Task(jobtest.MakeTask("b", 3).MinAvailable(1).Obj()).
			Plugin("svc").Plugin("env").Obj(),
		mkJob("ssh-only").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("ssh", "--no-root").Obj(),
		mkJob("empty-plugins").Task(jobtest.MakeTask("main", 1).Obj()).Obj(),
		mkJob("policies").Policy("PodEvicted", "RestartJob").
			Task(jobtest.MakeTask("master", 1).RestartPolicy("").Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Obj(),
		mkJob("depends").Task(jobtest.MakeTask("a", 1).Obj()).Task(jobtest.MakeTask("b", 2).DependsOn("a").Obj()).Obj(),
		mkJob("host-network").Task(hostNet).Obj(),
		mkJob("min-available").MinAvailable(2).Task(jobtest.MakeTask("main", 4).Obj()).Obj(),
		// Task names of framework roles without the framework plugins.
		mkJob("tf-names").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 2).GPU(1).RestartPolicy("").Obj()).Plugin("svc").Obj(),
		mkJob("zero").Task(jobtest.MakeTask("main", 0).Obj()).Obj(),
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
		Task(jobtest.MakeTask("master", 1).GPU(1).Obj()).Task(jobtest.MakeTask("worker", 8).GPU(1).RestartPolicy("").Obj()).
		Plugin("pytorch", "--min-nodes=3").Obj()

	got := volcanoMutate(t, oursMutate(t, job))
	want := volcanoMutate(t, mkJob("pt").SchedulerName("volcano").MinAvailable(3).
		Task(jobtest.MakeTask("master", 1).GPU(1).MinAvailable(1).Policy(taskCompleted, completeJob).Obj()).
		Task(jobtest.MakeTask("worker", 8).GPU(1).MinAvailable(2).RestartPolicy(v1.RestartPolicyOnFailure).Policy(podFailed, terminateJob).Obj()).
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
		{mkJob("ray").Task(jobtest.MakeTask("head", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("ray").Obj(), true},
		{mkJob("hccl").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("hcclrank").Obj(), false},
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

// envNameDetail is Kubernetes's detail for an env name that starts with a digit.
const envNameDetail = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"

// invalidEnv returns a task whose container has n env entries with invalid
// names (digits, then suffix).
func invalidEnv(task string, n int, suffix string) batch.TaskSpec {
	t := jobtest.MakeTask(task, 1).Obj()
	for i := 0; i < n; i++ {
		t.Template.Spec.Containers[0].Env = append(t.Template.Spec.Containers[0].Env, v1.EnvVar{Name: fmt.Sprintf("%d%s", i, suffix)})
	}
	return t
}

// envError is the error of env entry i of task's container, as
// volcanoTemplateErrors lists it.
func envError(task, i int, name string) string {
	return fmt.Sprintf("spec.tasks[%d].template.spec.containers[0].env[%d].name: Invalid value: %q: %s", task, i, name, envNameDetail)
}

// Volcano's job validation is left to answer a Job CREATE whose pod
// templates have at most MaxErrors short errors; with more, or with errors
// that quote long values, the wrapped validation denies it with the first
// MaxErrors, values abbreviated.
func TestVolcanoTemplateErrors(t *testing.T) {
	long := strings.Repeat("9", 100<<10)
	firstErrors := func(tasks ...int) string {
		var out []string
		for task, n := range tasks {
			for i := 0; i < n; i++ {
				out = append(out, envError(task, i, strconv.Itoa(i)))
			}
		}
		return strings.Join(out, "; ")
	}
	tests := []struct {
		name string
		job  *batch.Job
		op   admissionv1.Operation
		want string
	}{
		{"valid", mkJob("valid").Task(jobtest.MakeTask("a", 1).Env("A", "1").Obj()).Obj(), admissionv1.Create, ""},
		{"MaxErrors errors", mkJob("fifty").Task(invalidEnv("a", MaxErrors, "")).Obj(), admissionv1.Create, ""},
		{"one more", mkJob("fifty-one").Task(invalidEnv("a", MaxErrors+1, "")).Obj(), admissionv1.Create,
			"the job's pod templates have more than 50 errors; the first 50: " + firstErrors(50)},
		{"over tasks", mkJob("tasks").Task(invalidEnv("a", 30, "")).Task(invalidEnv("b", 30, "")).Obj(), admissionv1.Create,
			"the job's pod templates have more than 50 errors; the first 50: " + firstErrors(30, 20)},
		{"long values", mkJob("long").Task(invalidEnv("a", 2, long)).Obj(), admissionv1.Create,
			"the job's pod templates have 2 errors of 205502 bytes in all (more than 65536); abbreviated: " +
				envError(0, 0, jobs.Abbrev("0"+long)) + "; " + envError(0, 1, jobs.Abbrev("1"+long))},
		{"an UPDATE", mkJob("update").Task(invalidEnv("a", MaxErrors+1, "")).Obj(), admissionv1.Update, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ar := review(t, tc.op, tc.job, nil)
			if diff := cmp.Diff(tc.want, volcanoTemplateErrors(ar)); diff != "" {
				t.Errorf("denial (-want +got):\n%s", diff)
			}
		})
	}
}

// Through Volcano's registered /jobs/validate handler (router.Serve, as
// vc-webhook-manager serves it), a Job without a framework plugin whose
// container has 20,000 invalid env names (the reviewers' Job: 7.4 s, 2.2 GB,
// a 6.3 MB denial) is denied by the bound on env entries, and one of 2,048,
// within the bounds, by the capped template validation: each quickly, with
// an allocation linear in the Job. Stock, the Job of 2,048 costs Volcano's
// validation 0.7 GB and a 660 KB denial (logged; the one of 20,000 would
// take minutes).
func TestVolcanoValidationCostOfTemplates(t *testing.T) {
	plugins.Register()
	volcanoValidate(t) // gives the validation a fake client with an open queue
	var service *router.AdmissionService
	if err := router.ForEachAdmission(&options.Config{EnabledAdmission: VolcanoValidatePath}, func(s *router.AdmissionService) error {
		service = s
		stock := s.Func
		t.Cleanup(func() { s.Func = stock })
		return nil
	}); err != nil || service == nil {
		t.Fatalf("Volcano's %s is not registered: %v", VolcanoValidatePath, err)
	}
	tests := []struct {
		name   string
		job    *batch.Job
		stock  bool   // also measure the stock validation
		factor int    // allowed allocation: maxAdmissionBytes + factor × the Job's JSON
		want   string // the whole denial, or its start with "..."
	}{
		{"20,000 invalid env names", mkJob("env").Task(invalidEnv("main", 20000, "")).Obj(), false, 4,
			BoundsDenialPrefix + "[spec.tasks[0].template.spec.containers[0].env: Too many: 20000: must have at most 2048 items, " +
				"spec.tasks[0].template: Too many: 20001: the pod template's lists and maps have 20001 entries in all; a template may have at most 4096]"},
		{"2,048 invalid env names", mkJob("env").Task(invalidEnv("main", bounds.MaxEnv, "")).Obj(), true, 20,
			"the job's pod templates have more than 50 errors; the first 50: " + envError(0, 0, "0") + "; ..."},
	}
	for _, tc := range tests {
		body := fuzzReview(admissionv1.Create, mustJSON(t, tc.job), nil)
		serve := func() (*admissionv1.AdmissionResponse, uint64, time.Duration) {
			var resp *admissionv1.AdmissionResponse
			start := time.Now()
			n := allocated(func() { resp = serveBody(t, service.Handler, body, types.UID("fuzz")) })
			return resp, n, time.Since(start)
		}
		t.Run(tc.name, func(t *testing.T) {
			if tc.stock {
				resp, n, d := serve()
				t.Logf("stock: %d bytes allocated, %v, a denial of %d bytes, for a %d-byte review", n, d, len(resp.Result.Message), len(body))
			}
			defer func(stock router.AdmitFunc) { service.Func = stock }(service.Func)
			if err := BoundVolcanoAdmissions(); err != nil {
				t.Fatal(err)
			}
			resp, n, d := serve()
			t.Logf("bounded: %d bytes allocated, %v, a denial of %d bytes, for a %d-byte review", n, d, len(resp.Result.Message), len(body))
			if budget := uint64(maxAdmissionBytes + tc.factor*len(body)); n > budget || d > time.Second {
				t.Errorf("%d bytes allocated in %v; want at most %d in 1 s", n, d, budget)
			}
			if resp.Allowed || resp.Result.Code != http.StatusUnprocessableEntity || len(resp.Result.Message) > maxDenialBytes {
				t.Fatalf("response %+v; want a 422 denial of at most %d bytes", resp.Result, maxDenialBytes)
			}
			got := resp.Result.Message
			if prefix, ok := strings.CutSuffix(tc.want, "..."); ok {
				got = got[:min(len(got), len(prefix))]
				tc.want = prefix
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("denial (-want +got):\n%s", diff)
			}
		})
	}
}
