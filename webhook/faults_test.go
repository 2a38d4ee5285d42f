package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// Jobs whose numbers or names are malformed are denied with field errors
// before any plugin parser or pod simulation runs; Volcano's svc.GenerateHosts
// used to panic on negative replicas ("makeslice: cap out of range").
func TestShapeDeniedBeforeSimulation(t *testing.T) {
	tf := func(worker batch.TaskSpec) *jobtest.JobWrapper {
		return mkJob("tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(worker).Plugin("tensorflow").Plugin("svc")
	}
	tests := []struct {
		name string
		job  *batch.Job
		want []string
	}{
		{"negative replicas", tf(jobtest.MakeTask("worker", -1).Obj()).Obj(),
			[]string{"spec.tasks[1].replicas: Invalid value: -1: plugin tensorflow: must be greater than or equal to 0"}},
		{"negative replicas, mpi", mkJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", -3).Obj()).
			Plugin("mpi").Plugin("svc").Plugin("ssh").Obj(),
			[]string{"spec.tasks[1].replicas: Invalid value: -3: plugin mpi: must be greater than or equal to 0"}},
		{"most negative replicas, pytorch elastic", mkJob("pt").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", -2147483648).Obj()).
			Plugin("pytorch", "--min-nodes=1").Plugin("svc").Obj(),
			[]string{"spec.tasks[1].replicas: Invalid value: -2147483648: plugin pytorch: must be greater than or equal to 0"}},
		{"negative minAvailable", tf(jobtest.MakeTask("worker", 2).MinAvailable(-1).Obj()).Obj(),
			[]string{"spec.tasks[1].minAvailable: Invalid value: -1: plugin tensorflow: must be greater than or equal to 0"}},
		{"minAvailable above replicas", tf(jobtest.MakeTask("worker", 2).MinAvailable(3).Obj()).Obj(),
			[]string{"spec.tasks[1].minAvailable: Invalid value: 3: plugin tensorflow: must not be greater than the task's replicas (2)"}},
		{"job minAvailable negative", tf(jobtest.MakeTask("worker", 2).Obj()).MinAvailable(-5).Obj(),
			[]string{"spec.minAvailable: Invalid value: -5: plugin tensorflow: must be greater than or equal to 0"}},
		{"job minAvailable above the total", tf(jobtest.MakeTask("worker", 2).Obj()).MinAvailable(4).Obj(),
			[]string{"spec.minAvailable: Invalid value: 4: plugin tensorflow: must not be greater than the total replicas of the tasks (3)"}},
		{"duplicate task names", tf(jobtest.MakeTask("ps", 2).Obj()).Obj(),
			[]string{`spec.tasks[1].name: Duplicate value: "ps": plugin tensorflow: task names must be unique`}},
		{"task name not a DNS label", tf(jobtest.MakeTask("Worker_1", 2).Obj()).Plugin("tensorflow", "--worker=Worker_1").Obj(),
			[]string{`spec.tasks[1].name: Invalid value: "Worker_1": plugin tensorflow: a task name must be a DNS label: ` +
				`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, errorStrings(ValidateJob(tc.job))); diff != "" {
				t.Errorf("ValidateJob (-want +got):\n%s", diff)
			}
			// The mutation leaves such a Job alone.
			if got, _ := MutateJob(tc.job, Options{}); tc.job.Spec.Tasks[1].Replicas < 0 {
				if diff := cmp.Diff(tc.job, got); diff != "" {
					t.Errorf("MutateJob changed a job with negative replicas (-before +after):\n%s", diff)
				}
			}
			// Through the HTTP handlers, as the API server calls them.
			mutated := serveReview(t, MutateService(Options{}).Handler, review(t, admissionv1.Create, tc.job, nil))
			if !mutated.Allowed {
				t.Errorf("mutation denied: %v", mutated.Result)
			}
			resp := serveReview(t, ValidateService().Handler, review(t, admissionv1.Create, tc.job, nil))
			if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusUnprocessableEntity {
				t.Fatalf("validation response %+v; want a 422 denial", resp)
			}
			if !strings.Contains(resp.Result.Message, tc.want[0]) {
				t.Errorf("denial %q does not contain %q", resp.Result.Message, tc.want[0])
			}
		})
	}
}

// serveReview posts an AdmissionReview to an admission's HTTP handler and
// returns its response; anything but a 200 with a response of the request's
// UID fails the test.
func serveReview(t testing.TB, h func(http.ResponseWriter, *http.Request), ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	t.Helper()
	return serveBody(t, h, mustJSON(t, ar), ar.Request.UID)
}

func serveBody(t testing.TB, h func(http.ResponseWriter, *http.Request), body []byte, uid any) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	out := admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("response %s: %v", rec.Body, err)
	}
	if out.Response == nil || out.Kind != "AdmissionReview" || out.APIVersion != "admission.k8s.io/v1" {
		t.Fatalf("response %s; want an admission.k8s.io/v1 AdmissionReview with a response", rec.Body)
	}
	if uid != nil && out.Response.UID != uid {
		t.Errorf("response UID %q, want %q", out.Response.UID, uid)
	}
	return out.Response
}

// A panic in an admission is a denial naming what was being checked, never a
// dropped connection or an HTTP error the API server reports as a failed call.
func TestAdmissionRecoversPanics(t *testing.T) {
	job := mkJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Obj()
	ar := review(t, admissionv1.Create, job, nil)
	panicking := guard("validating", func(admissionv1.AdmissionReview, *verdict) *admissionv1.AdmissionResponse {
		var m map[string]int
		m["boom"]++
		return nil
	})
	want := &admissionv1.AdmissionResponse{Allowed: false, Result: denial(
		"plugin admission: internal error: validating Job default/tf on CREATE: assignment to entry in nil map").Result}
	if diff := cmp.Diff(want, panicking.routerFunc()(ar)); diff != "" {
		t.Errorf("Func (-want +got):\n%s", diff)
	}
	want.UID = ar.Request.UID
	if diff := cmp.Diff(want, serveReview(t, handler(ValidatePath, panicking), ar)); diff != "" {
		t.Errorf("Handler (-want +got):\n%s", diff)
	}

	// Reviews that Volcano's router.Serve would dereference a nil request of.
	for name, body := range map[string]string{
		"no request":     `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
		"not a review":   `{"apiVersion":"v1","kind":"Pod"}`,
		"truncated JSON": `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1"`,
	} {
		for _, svc := range [](func(http.ResponseWriter, *http.Request)){MutateService(Options{}).Handler, ValidateService().Handler} {
			if resp := serveBody(t, svc, []byte(body), nil); resp.Allowed || resp.Result == nil || resp.Result.Message == "" {
				t.Errorf("%s: response %+v; want a denial", name, resp)
			}
		}
	}
	rec := httptest.NewRecorder()
	ValidateService().Handler(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")))
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("no content type: HTTP %d, want 415", rec.Code)
	}
}

// LimitInFlight serves max requests at once and answers the next 429 with
// Retry-After at once, without queueing it; a slot freed serves again.
func TestLimitInFlight(t *testing.T) {
	const max = 3
	release := make(chan struct{})
	entered := make(chan struct{}, max)
	h := LimitInFlight(max, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	done := make(chan int, max)
	for i := 0; i < max; i++ {
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
			done <- rec.Code
		}()
		<-entered
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("request %d: code %d, Retry-After %q; want 429, 1", max+1, rec.Code, rec.Header().Get("Retry-After"))
	}
	close(release)
	for i := 0; i < max; i++ {
		if code := <-done; code != http.StatusOK {
			t.Errorf("a request within the limit got %d", code)
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("after the slots were freed: %d, want 200", rec.Code)
	}
}

// A caller that announces a body of the largest size and sends a few bytes
// costs the handler no buffer of the announced size; and a body
// LimitInFlight has read already is handed on without a copy.
func TestReadWithinGrowsWithArrivingBytes(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.ContentLength = MaxReviewBytes
	var got []byte
	var err error
	bytesAllocated := allocated(func() {
		// What net/http's body returns when the connection ends early.
		r.Body = io.NopCloser(io.MultiReader(strings.NewReader("{}"), errReader{io.ErrUnexpectedEOF}))
		got, _, err = readWithin(httptest.NewRecorder(), r, MaxReviewBytes, nil)
	})
	if err == nil {
		t.Fatalf("a body shorter than announced read as %q without an error", got)
	}
	if bytesAllocated > 2*bodyFirst {
		t.Errorf("%d bytes allocated for 2 bytes that arrived of %d announced; want at most %d", bytesAllocated, MaxReviewBytes, 2*bodyFirst)
	}

	read := []byte(`{"kind":"AdmissionReview"}`)
	r.Body = &bodyReader{b: read}
	if got, _, err = readWithin(httptest.NewRecorder(), r, MaxReviewBytes, nil); err != nil || &got[0] != &read[0] {
		t.Errorf("a body read in advance: %q, %v; want the same bytes, not a copy", got, err)
	}
	r.Body = &bodyReader{b: read}
	if _, _, err = readWithin(httptest.NewRecorder(), r, int64(len(read)-1), nil); !errors.Is(err, errTooLarge) {
		t.Errorf("a body read in advance, over the cap: %v; want errTooLarge", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
