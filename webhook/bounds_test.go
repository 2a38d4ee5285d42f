package webhook

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	"volcano.sh/volcano/pkg/webhooks/router"

	vcmutate "volcano.sh/volcano/pkg/webhooks/admission/jobs/mutate"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/webhooktest"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/plugins"
)

// maxDenialBytes bounds the message of any denial: MaxErrors errors of a few
// hundred bytes each, no value quoted whole.
const maxDenialBytes = 64 << 10

// Any Job the API server can send is answered by both admissions and by
// Volcano's job mutation and validation (which vc-webhook-manager serves in
// the same process, BoundVolcanoAdmissions) with a short denial, and at a
// bounded cost. Before the bounds, the
// Jobs above took the manager to 1.6–2.5 GB, timed the mutation out, came back
// as denials of up to 2 MB, or took 3 to 13 s; of the pod template lists,
// 15,000 args took the mutation 1.8 GB (gomodules.xyz/jsonpatch/v2 v2.2.0),
// 20,000 invalid env names Volcano's validation 7 s and a 6 MB denial, and
// 4,096 (within the count bounds) 2.7 GB and 1.4 s before
// volcanoTemplateErrors.
func TestAdmissionCostOverBounds(t *testing.T) {
	plugins.Register()
	mutateH, validateH := asServed(MutateService(Options{}).Handler), asServed(ValidateService().Handler)
	volcano := DeniedOverBounds(WithoutFrameworkPlugins(volcanoValidate(t)))
	volcanoMutation := UnchangedOverBounds(vcmutate.Jobs)
	for _, tc := range webhooktest.BoundsCases("fuzz") {
		t.Run(tc.Name, func(t *testing.T) {
			if len(tc.JSON) > webhooktest.APIServerMaxBody {
				t.Fatalf("the Job is %d bytes; the API server accepts at most %d", len(tc.JSON), webhooktest.APIServerMaxBody)
			}
			within := tc.Within
			var mutated, validated, volcanoResp, volcanoMutated *admissionv1.AdmissionResponse
			create := fuzzReview(admissionv1.Create, tc.JSON, nil)
			volcanoReview := admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
				UID: "fuzz", Operation: admissionv1.Create, Resource: jobsResource, Namespace: "fuzz",
				Object: runtime.RawExtension{Raw: tc.JSON},
			}}
			costs := map[string]uint64{
				"volcano's mutation":   allocated(func() { volcanoMutated = volcanoMutation(volcanoReview) }),
				"mutation":             allocated(func() { mutated = fuzzCall(t, "mutation", mutateH, create) }),
				"validation":           allocated(func() { validated = fuzzCall(t, "validation", validateH, create) }),
				"volcano's validation": allocated(func() { volcanoResp = volcano(volcanoReview) }),
			}
			// Measured as the manager serves a review (asServed). Reading it
			// is the floor: the body (LimitInFlight's buffer doubles as bytes
			// arrive, so that a stalled caller holds at most twice what it
			// sent: about 2.3 times the body allocated in all) and the
			// review's copy of the object; Volcano's own answers, given a
			// decoded review, take 3.4 to 4.3 times the Job. A Job over the
			// bounds is not decoded further; one within them is, and the
			// mutation encodes and diffs it twice.
			budget := uint64(maxAdmissionBytes + 6*len(tc.JSON))
			if within {
				budget = uint64(maxAdmissionBytes + 20*len(tc.JSON))
			}
			for what, n := range costs {
				t.Logf("%s: %d bytes allocated for a %d-byte Job", what, n, len(tc.JSON))
				if n > budget {
					t.Errorf("%s allocated %d bytes; want at most %d", what, n, budget)
				}
			}
			for what, resp := range map[string]*admissionv1.AdmissionResponse{"mutation": mutated, "volcano's mutation": volcanoMutated} {
				if !resp.Allowed || (!within && len(resp.Patch) > 0) {
					t.Errorf("%s: allowed %v, patch of %d bytes; want it left alone", what, resp.Allowed, len(resp.Patch))
				}
			}
			for what, resp := range map[string]*admissionv1.AdmissionResponse{"validation": validated, "volcano's validation": volcanoResp} {
				if what == "volcano's validation" && within && !tc.NoFramework {
					continue // within bounds: Volcano's own answer
				}
				if what == "validation" && tc.NoFramework {
					// Not ours to check (the API server does not call it).
					if !resp.Allowed {
						t.Errorf("validation of a Job without a framework plugin: %+v; want it allowed", resp.Result)
					}
					continue
				}
				if resp.Allowed || resp.Result.Code != http.StatusUnprocessableEntity {
					t.Fatalf("%s: %+v; want a 422 denial", what, resp.Result)
				}
				t.Logf("%s: denial of %d bytes", what, len(resp.Result.Message))
				if msg := resp.Result.Message; len(msg) > maxDenialBytes || !strings.Contains(msg, tc.Want) {
					t.Errorf("%s: denial of %d bytes %.300q...; want at most %d bytes containing %q", what, len(msg), msg, maxDenialBytes, tc.Want)
				}
			}
		})
	}
}

// The capped list keeps the first MaxErrors errors and counts the rest, both
// those made and those only counted.
func TestCapErrors(t *testing.T) {
	missing := func(task string) []string {
		names := make([]string, 40)
		for j := range names {
			names[j] = fmt.Sprintf("no-%s-%d", task, j)
		}
		return names
	}
	job := mkJob("cap").Task(jobtest.MakeTask("ps", 1).DependsOn(missing("ps")...).Obj()).
		Task(jobtest.MakeTask("worker", 1).DependsOn(missing("worker")...).Obj()).Plugin("tensorflow").Obj()
	errs := ValidateJob(job)
	if len(errs) != MaxErrors+1 {
		t.Fatalf("%d errors; want %d and a count", len(errs), MaxErrors)
	}
	if got, want := errs[MaxErrors].Error(), "spec: Too many: plugin tensorflow: and 30 more problems not listed; fix the ones above first"; got != want {
		t.Errorf("last error %q; want %q", got, want)
	}
	for _, e := range errs[:MaxErrors] {
		if !strings.Contains(e.Detail, "which the job does not have (tasks: ps, worker)") {
			t.Errorf("error %q", e)
		}
	}
}

// BenchmarkAdmissionOverBounds times both admissions and Volcano's wrapped
// validation on the Jobs of boundsCases: each should take well under the 50 ms
// a review may cost this process.
func BenchmarkAdmissionOverBounds(b *testing.B) {
	plugins.Register()
	mutateH, validateH := asServed(MutateService(Options{}).Handler), asServed(ValidateService().Handler)
	for _, tc := range webhooktest.BoundsCases("fuzz") {
		create := fuzzReview(admissionv1.Create, tc.JSON, nil)
		b.Run(tc.Name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				serveBody(b, mutateH, create, nil)
				serveBody(b, validateH, create, nil)
			}
		})
	}
}

// BoundVolcanoAdmissions changes what Volcano's registered /jobs/mutate and
// /jobs/validate answer through their own HTTP handlers (router.Serve), as the
// manager serves them: a Job over the bounds is left unchanged by the
// mutation (which would otherwise rewrite its 100 tasks) and denied by the
// validation, naming the bound; a Job within them gets Volcano's answers.
func TestBoundVolcanoJobAdmissions(t *testing.T) {
	plugins.Register()
	volcanoValidate(t) // gives the validation a fake client with an open queue
	services := map[string]*router.AdmissionService{}
	for _, path := range []string{VolcanoMutatePath, VolcanoValidatePath} {
		if err := router.ForEachAdmission(&options.Config{EnabledAdmission: path}, func(s *router.AdmissionService) error {
			services[path] = s
			stock := s.Func
			t.Cleanup(func() { s.Func = stock })
			return nil
		}); err != nil || services[path] == nil {
			t.Fatalf("Volcano's %s is not registered: %v", path, err)
		}
	}
	var tasks []map[string]any
	for i := 0; i <= bounds.MaxTasks; i++ {
		tasks = append(tasks, webhooktest.Task(fmt.Sprintf("t%d", i), 1))
	}
	over := webhooktest.RawJob("over", "fuzz", tasks, nil)
	within := webhooktest.RawJob("within", "fuzz", tasks[:2], nil)
	serve := func(path string, raw []byte) *admissionv1.AdmissionResponse {
		t.Helper()
		return serveBody(t, services[path].Handler, fuzzReview(admissionv1.Create, raw, nil), types.UID("fuzz"))
	}
	for _, stage := range []string{"stock", "bounded"} {
		if stage == "bounded" {
			if err := BoundVolcanoAdmissions(); err != nil {
				t.Fatal(err)
			}
		}
		mutated, validated := serve(VolcanoMutatePath, over), serve(VolcanoValidatePath, over)
		bounded := stage == "bounded"
		if got := mutated.Allowed && len(mutated.Patch) == 0; got != bounded {
			t.Errorf("%s: mutation of the Job over the bounds: allowed %v, patch of %d bytes", stage, mutated.Allowed, len(mutated.Patch))
		}
		want := BoundsDenialPrefix + "spec.tasks: Too many: 65: must have at most 64 items"
		if got := !validated.Allowed && validated.Result.Message == want; got != bounded {
			t.Errorf("%s: validation of the Job over the bounds: %+v; want %v for the denial %q", stage, validated.Result, bounded, want)
		}
		if resp := serve(VolcanoMutatePath, within); !resp.Allowed || len(resp.Patch) == 0 {
			t.Errorf("%s: mutation of a Job within the bounds: allowed %v, patch %s; want Volcano's defaults", stage, resp.Allowed, resp.Patch)
		}
		if resp := serve(VolcanoValidatePath, within); !resp.Allowed {
			t.Errorf("%s: validation of a Job within the bounds: %+v", stage, resp.Result)
		}
	}
}

// #38 L2: a review sent straight to the port whose Job names spec twice, or
// hides its tasks under "SPEC", cannot show the bounds one Job and the
// decoder another. The duplicate is denied as malformed (the API server
// never sends one); "SPEC" is no spec to either, so its 70 tasks are not
// over the bound of 64.
func TestDuplicateAndCaseVariantMembers(t *testing.T) {
	plugins.Register()
	validateH := ValidateService().Handler
	many := `[` + strings.TrimSuffix(strings.Repeat(`{"name":"t","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},`, 70), ",") + `]`
	head := `{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j","namespace":"fuzz"},`
	dup := head + `"spec":{"tasks":` + many + `,"plugins":{"pytorch":[]}},"spec":{"plugins":{"pytorch":[]}}}`
	resp := fuzzCall(t, "validation", validateH, fuzzReview(admissionv1.Create, []byte(dup), nil))
	if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, `duplicate field "spec"`) {
		t.Errorf("duplicate spec: allowed %v, result %+v; want denied as malformed", resp.Allowed, resp.Result)
	}
	hidden := head + `"spec":{"plugins":{"pytorch":[]},"tasks":[]},"SPEC":{"tasks":` + many + `}}`
	resp = fuzzCall(t, "validation", validateH, fuzzReview(admissionv1.Create, []byte(hidden), nil))
	if resp.Result != nil && strings.Contains(resp.Result.Message, "Too many") {
		t.Errorf(`tasks under "SPEC": denied over the bounds (%s); want the Job read as the decoder reads it, without them`, resp.Result.Message)
	}
}
