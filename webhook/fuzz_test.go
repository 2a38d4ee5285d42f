package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcmutate "volcano.sh/volcano/pkg/webhooks/admission/jobs/mutate"
	"volcano.sh/volcano/pkg/webhooks/router"
	"volcano.sh/volcano/pkg/webhooks/schema"

	"github.com/vcplugins/framework-plugins/internal/webhooktest"
	"github.com/vcplugins/framework-plugins/plugins"
)

// maxResponseTime bounds one admission call in the fuzz test. The webhook's
// timeout is 10 s; admission of any Job takes milliseconds.
const maxResponseTime = 2 * time.Second

// FuzzAdmission feeds generated Jobs through both admissions' HTTP handlers,
// as the API server calls them: the mutation on the raw AdmissionReview of a
// CREATE, its patch applied to the raw object, then the validation of the
// result on CREATE and as an UPDATE of the original. It fails on a panic
// (recovered ones included: an internal-error denial), a response that is not
// a 200 with an AdmissionReview, a patch that does not apply (which the API
// server reports as an internal error), and a call over maxResponseTime. The
// patched Job also goes through Volcano's job validation as the manager wraps
// it (fuzzVolcano).
//
// The validation of the create must answer as validateJob(job, true) says of
// the decoded Job within the bounds: allowed if and only if it returns no
// errors, with warnings (ArgumentsWarning first) if and only if it returns
// warned problems.
//
// Inputs are a Job (JSON) and choices for the generator of package
// webhooktest, which the e2e suite shares (test/e2e/malformed_test.go). With an
// empty Job the choices make a malformed Job (webhooktest.Malformed: one of the
// framework plugins, one defect), and the validation must also deny it, or,
// for a defect in the arguments of a Job Volcano's own admission accepts
// (Kind.Arguments, asStock), admit it with warnings.
// Otherwise they edit the Job (webhooktest.Edit: task counts and names,
// replicas, negative and huge included, minAvailable, null or missing
// templates and plugin lists, plugin arguments drawn from the plugins' real
// flags, pod template lists around and far over their bounds); an input that
// is not a JSON object starts from a generated Job. The
// seeds are the e2e corpus of invalid Jobs, the valid examples, and every
// defect of every plugin.
//
//	go test -run XXX -fuzz FuzzAdmission -fuzztime 60s ./webhook/
func FuzzAdmission(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{"../test/e2e/testdata/invalid/*.yaml", "../test/e2e/testdata/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		seeds = append(seeds, files...)
	}
	for i, file := range seeds {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		f.Add(js, []byte{})
		f.Add(js, []byte{byte(i), 1, byte(i), 3, 0, 7, 2, byte(i * 7), 11, 4})
	}
	f.Add([]byte("null"), []byte{0, 2, 1, 0, 2, 5, 0})
	f.Add([]byte("{}"), []byte{2, 6, 4, 1, 8, 6, 0, 2, 12, 1})
	f.Add([]byte("[]"), []byte{3, 8, 10, 0, 0, 1, 5, 1, 0, 12, 0})
	// Malformed Jobs: the first two choices pick the plugin and the defect.
	for p := range webhooktest.Plugins {
		for k := range webhooktest.Kinds {
			f.Add([]byte{}, []byte{byte(p), byte(k), byte(3*p + k), 1, byte(k), 7, 2, 0, byte(p), 5, 3, 1})
		}
	}

	mutateH, validateH := asServed(MutateService(Options{}).Handler), asServed(ValidateService().Handler)
	volcanoH := DeniedOverBounds(WithoutFrameworkPlugins(volcanoValidate(f)))
	volcanoMutateH := UnchangedOverBounds(vcmutate.Jobs)
	f.Fuzz(func(t *testing.T, base, choices []byte) {
		c := webhooktest.Bytes(choices)
		var gen webhooktest.Case
		if len(base) == 0 {
			gen = webhooktest.Malformed(c)
		} else {
			gen = webhooktest.Edit(base, c)
		}
		if m, ok := gen.Job["metadata"].(map[string]any); ok {
			m["namespace"] = "fuzz"
			m["uid"] = "uid-fuzz"
			m["generation"] = 2
		}
		raw := gen.JSON()
		if raw == nil {
			t.Skip()
		}
		create := fuzzReview(admissionv1.Create, raw, nil)
		mutated := fuzzCall(t, "mutation", mutateH, create)
		if !mutated.Allowed {
			// Only a Job that does not decode is denied by the mutation.
			return
		}
		patched := raw
		if len(mutated.Patch) > 0 {
			p, err := jsonpatch.DecodePatch(mutated.Patch)
			if err != nil {
				t.Fatalf("patch %s: %v", mutated.Patch, err)
			}
			if patched, err = p.Apply(raw); err != nil {
				t.Fatalf("patch %s does not apply to %s: %v", mutated.Patch, raw, err)
			}
		}
		created := fuzzCall(t, "validation of the create", validateH, fuzzReview(admissionv1.Create, patched, nil))
		fuzzCall(t, "validation of an update", validateH, fuzzReview(admissionv1.Update, patched, raw))
		fuzzVolcano(t, volcanoH, admissionv1.Create, patched, nil)
		// Direct callers choose the operation and the oldObject: Volcano's
		// job admissions, as served, answer any of them in time.
		op := []admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect}[c.IntN(4)]
		old := [][]byte{nil, raw, patched}[c.IntN(3)]
		fuzzVolcano(t, volcanoH, op, patched, old)
		fuzzVolcano(t, volcanoMutateH, op, raw, old)
		checkVerdict(t, gen, patched, created)
		if gen.MustDeny() && created.Allowed && (!gen.Kind.Warned() || len(created.Warnings) == 0) {
			t.Fatalf("%s: allowed with warnings %q, want denied (or warned, for a defect of the arguments or host lists over a limit): %s", gen, created.Warnings, patched)
		}
	})
}

// checkVerdict checks the validating admission's answer to the CREATE of the
// Job object against validateJob(job, true) of the Job it decodes: allowed if
// and only if there are no errors; warnings, ArgumentsWarning first, if and
// only if there are warned problems, each one the API server can write.
// Objects over the bounds or that do not decode are answered before
// validateJob runs and are not checked here.
func checkVerdict(t *testing.T, gen webhooktest.Case, object []byte, resp *admissionv1.AdmissionResponse) {
	t.Helper()
	if errs, _ := overBounds(object); len(errs) > 0 {
		return
	}
	job, err := schema.DecodeJob(runtime.RawExtension{Raw: object}, jobsResource)
	if err != nil {
		return
	}
	errs, _, warned := validateJob(job, true)
	switch {
	case resp.Allowed != (len(errs) == 0):
		t.Fatalf("%s: allowed %v, but validateJob(job, true) has %d errors %v: %s", gen, resp.Allowed, len(errs), errs, object)
	case !resp.Allowed && len(resp.Warnings) > 0:
		t.Fatalf("%s: denied with warnings %q: %s", gen, resp.Warnings, object)
	case resp.Allowed && !slices.Equal(resp.Warnings, slices.Concat(argumentWarnings(warned), droppedEnvWarnings(job), SvcHostsWarnings(job))):
		t.Fatalf("%s: allowed with warnings %q, but validateJob(job, true) warned of %v, droppedEnvWarnings of %q and SvcHostsWarnings of %q: %s",
			gen, resp.Warnings, warned, droppedEnvWarnings(job), SvcHostsWarnings(job), object)
	case len(warned) > 0 && resp.Warnings[0] != ArgumentsWarning:
		t.Fatalf("%s: first warning %q, want ArgumentsWarning: %s", gen, resp.Warnings[0], object)
	case len(warned) > 0 && !asStock(job):
		t.Fatalf("%s: validateJob(job, true) warned of %v on a Job Volcano's admission does not accept: %s", gen, warned, object)
	}
	// The API server writes each warning as a Warning header, or drops it.
	for _, w := range resp.Warnings {
		if _, err := utilnet.NewWarningHeader(299, "-", w); err != nil {
			t.Fatalf("%s: warning %q would be dropped: %v: %s", gen, w, err, object)
		}
	}
}

// fuzzVolcano runs one of Volcano's job admissions, as vc-webhook-manager
// wraps it (DeniedOverBounds, UnchangedOverBounds), on op of a Job (old: the
// oldObject, or nil), and the structure bounds on that review (BoundStructure;
// the Job bounds are within them): its answer must come within
// maxResponseTime and a denial be at most maxDenialBytes. Its own message
// grows with the square of the Job's template errors; the bounds and the
// capped template validation keep it short.
func fuzzVolcano(t *testing.T, volcano router.AdmitFunc, op admissionv1.Operation, object, old []byte) {
	t.Helper()
	ar := admissionv1.AdmissionReview{}
	review := fuzzReview(op, object, old)
	if err := json.Unmarshal(review, &ar); err != nil {
		t.Fatal(err)
	}
	if over, ok := structureOver(review); !ok || over != "" {
		t.Errorf("a generated review is over the structure bounds (%v): %s", ok, over)
	}
	start := time.Now()
	resp := volcano(ar)
	if d := time.Since(start); d > maxResponseTime {
		t.Errorf("Volcano's admission of a %s took %v, more than %v", op, d, maxResponseTime)
	}
	if !resp.Allowed && resp.Result != nil && len(resp.Result.Message) > maxDenialBytes {
		t.Errorf("Volcano's admission of a %s: a denial of %d bytes: %.300s...", op, len(resp.Result.Message), resp.Result.Message)
	}
}

// fuzzCall posts ar to an admission handler and checks the answer.
// asServed is h as the webhook manager serves it: behind LimitInFlight
// (NewServer), which reads the body first, without a limit on requests.
func asServed(h func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
	return LimitInFlight(0, http.HandlerFunc(h)).ServeHTTP
}

func fuzzCall(t *testing.T, what string, h func(http.ResponseWriter, *http.Request), ar []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(ar)))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	h(rec, req)
	if d := time.Since(start); d > maxResponseTime {
		t.Errorf("%s took %v, more than %v", what, d, maxResponseTime)
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", what, rec.Code, rec.Body)
	}
	out := admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("%s: response %s: %v", what, rec.Body, err)
	}
	resp := out.Response
	if resp.UID != "fuzz" {
		t.Errorf("%s: response UID %q", what, resp.UID)
	}
	if !resp.Allowed {
		if resp.Result == nil || resp.Result.Message == "" {
			t.Fatalf("%s: denial without a message: %+v", what, resp)
		}
		if resp.Result.Code >= 500 || strings.Contains(resp.Result.Message, InternalErrorPrefix) {
			t.Fatalf("%s: %d %s", what, resp.Result.Code, resp.Result.Message)
		}
	}
	return resp
}

func fuzzReview(op admissionv1.Operation, object, old []byte) []byte {
	req := &admissionv1.AdmissionRequest{
		UID:       "fuzz",
		Kind:      metav1.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"},
		Resource:  jobsResource,
		Namespace: "fuzz",
		Operation: op,
		Object:    runtime.RawExtension{Raw: object},
	}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: old}
	}
	raw, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	return raw
}

// generatedCases is how many of webhooktest.Cases TestGeneratedJobs checks: as
// many as the e2e suite sends and more (Cases(n)[i] does not depend on n).
const generatedCases = 1024

// Every Job webhooktest.Cases makes is denied by the framework validation, as
// the API server would run it (our mutation on the raw object, Volcano's
// mutation, then the validation), with a message naming the plugin; except a
// defect of the arguments (Kind.Arguments) of a Job Volcano's own admission
// accepts (asStock: tensorflow, pytorch, mpi with its master), which is
// admitted, as Volcano admits it, with ArgumentsWarning and warnings naming
// the plugin. ValidateJob still reports every defect. The Jobs the generator
// starts from (webhooktest.Valid) are allowed by both our validation and
// Volcano's, without warnings, so that the denials and warnings are the
// defects'. Each Job is far below the API server's request limit.
func TestGeneratedJobs(t *testing.T) {
	plugins.Register()
	if webhooktest.MaxReplicas != MaxReplicas {
		t.Fatalf("webhooktest.MaxReplicas = %d, MaxReplicas = %d", webhooktest.MaxReplicas, MaxReplicas)
	}
	volcanoAdmit := volcanoValidate(t)
	mutateH := MutateService(Options{}).Handler
	// admit runs both mutations and both validations on a generated Job and
	// returns their answers.
	admit := func(t *testing.T, gen webhooktest.Case) (job *batch.Job, ours, volcano *admissionv1.AdmissionResponse) {
		t.Helper()
		m := gen.Job["metadata"].(map[string]any)
		m["namespace"] = "e2e"
		raw := gen.JSON()
		if len(raw) > 256<<10 {
			t.Errorf("%s: %d bytes", gen, len(raw))
		}
		mutated := fuzzCall(t, "mutation", mutateH, fuzzReview(admissionv1.Create, raw, nil))
		if !mutated.Allowed {
			t.Fatalf("%s: our mutation denies it: %s", gen, mutated.Result.Message)
		}
		patched := raw
		if len(mutated.Patch) > 0 {
			p, err := jsonpatch.DecodePatch(mutated.Patch)
			if err != nil {
				t.Fatal(err)
			}
			if patched, err = p.Apply(raw); err != nil {
				t.Fatalf("%s: patch %s does not apply: %v", gen, mutated.Patch, err)
			}
		}
		job = &batch.Job{}
		if err := json.Unmarshal(patched, job); err != nil {
			t.Fatalf("%s: %v", gen, err)
		}
		job = volcanoMutate(t, job)
		return job, ValidateService().Func(review(t, admissionv1.Create, job, nil)), volcanoAdmit(review(t, admissionv1.Create, job, nil))
	}

	for _, plugin := range webhooktest.Plugins {
		for seed := range uint64(50) {
			gen := webhooktest.Valid(plugin, webhooktest.Seeded(seed))
			_, ours, volcano := admit(t, gen)
			if !ours.Allowed || !volcano.Allowed {
				t.Errorf("%s (seed %d): denied, want allowed: ours %v, Volcano's %v\n%s", gen, seed, ours.Result, volcano.Result, gen.JSON())
			}
			if len(ours.Warnings) > 0 {
				t.Errorf("%s (seed %d): warnings %q, want none\n%s", gen, seed, ours.Warnings, gen.JSON())
			}
		}
	}

	alsoVolcano, warned := map[webhooktest.Kind]int{}, map[string]int{}
	for i, gen := range webhooktest.Cases(generatedCases) {
		job, ours, volcano := admit(t, gen)
		if len(ValidateJob(job)) == 0 && gen.Kind != webhooktest.KindTooLarge {
			t.Errorf("case %d, %s: ValidateJob reports nothing:\n%s", i, gen, gen.JSON())
		}
		switch {
		case ours.Allowed && gen.Kind == webhooktest.KindTooLarge:
			// Host lists over a limit: admitted with warnings that say what
			// the pods get instead, each naming its plugin.
			if len(ours.Warnings) == 0 || !slices.ContainsFunc(ours.Warnings, namesPlugin.MatchString) {
				t.Errorf("case %d, %s: allowed with warnings %q, want warnings that name a plugin:\n%s", i, gen, ours.Warnings, gen.JSON())
			}
			warned[gen.Plugin+" "+string(gen.Kind)]++
		case ours.Allowed && (!gen.Kind.Arguments() || !asStock(job)):
			t.Errorf("case %d, %s: allowed with warnings %q, want denied:\n%s", i, gen, ours.Warnings, gen.JSON())
		case ours.Allowed && !volcano.Allowed && strings.Contains(volcano.Result.Message, "mpi master task"):
			// Volcano may deny it for other reasons (a null template), but
			// not for the one argument check it has.
			t.Errorf("case %d, %s: allowed as Volcano admits it, but Volcano's validation denies its mpi arguments: %v\n%s", i, gen, volcano.Result, gen.JSON())
		case ours.Allowed && (len(ours.Warnings) < 2 || ours.Warnings[0] != ArgumentsWarning):
			t.Errorf("case %d, %s: allowed with warnings %q, want ArgumentsWarning and the problems", i, gen, ours.Warnings)
		case ours.Allowed && !slices.ContainsFunc(ours.Warnings[1:], namesPlugin.MatchString):
			t.Errorf("case %d, %s: warnings %q name no plugin", i, gen, ours.Warnings)
		case ours.Allowed:
			warned[gen.Plugin+" "+string(gen.Kind)]++
		case len(ours.Warnings) > 0:
			t.Errorf("case %d, %s: denied with warnings %q", i, gen, ours.Warnings)
		case !namesPlugin.MatchString(ours.Result.Message):
			// The plugin that finds the defect: the Job's, another framework
			// plugin that claims the same task, or svc.
			t.Errorf("case %d, %s: denial %q names no plugin", i, gen, ours.Result.Message)
		}
		if !volcano.Allowed {
			alsoVolcano[gen.Kind]++
		}
	}
	t.Logf("%d malformed Jobs denied or warned; admitted with warnings, by plugin and defect: %v; Volcano's validation also denies, by defect: %v",
		generatedCases, warned, alsoVolcano)
}

var namesPlugin = regexp.MustCompile(`\bplugin (` + strings.Join(plugins.Names(), "|") + `|` + svcPlugin + `): `)

// The generator's flag lists (the plugins' Samples) are the plugins' flags.
func TestGeneratorFlags(t *testing.T) {
	for _, plugin := range webhooktest.Plugins {
		for _, flag := range webhooktest.Flags(plugin) {
			for _, e := range plugins.Lookup(plugin).Describe([]string{"--" + flag + "=1"}, nil).Errs {
				if strings.Contains(e.Detail, "unknown flag") {
					t.Errorf("%s: %v", plugin, e)
				}
			}
		}
	}
}
