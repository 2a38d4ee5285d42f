package webhook

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

var jobsResource = metav1.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"}

// review wraps a Job (and the old one for UPDATE) as the API server sends it.
func review(t testing.TB, op admissionv1.Operation, job, old *batch.Job) admissionv1.AdmissionReview {
	t.Helper()
	req := &admissionv1.AdmissionRequest{
		UID:       types.UID("review-" + job.Name),
		Kind:      metav1.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"},
		Resource:  jobsResource,
		Name:      job.Name,
		Namespace: job.Namespace,
		Operation: op,
		Object:    runtime.RawExtension{Raw: mustJSON(t, job)},
	}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: mustJSON(t, old)}
	}
	return admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// applyPatch applies a JSON patch from an admission response to job, as the
// API server does, and returns the result (job itself when patch is empty).
func applyPatch(t testing.TB, job *batch.Job, patch []byte) *batch.Job {
	t.Helper()
	if len(patch) == 0 {
		return job.DeepCopy()
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("decoding patch %s: %v", patch, err)
	}
	raw, err := p.Apply(mustJSON(t, job))
	if err != nil {
		t.Fatalf("applying patch %s: %v", patch, err)
	}
	out := &batch.Job{}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// errorStrings renders field errors as the denial message lists them.
func errorStrings(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// checkContains fails unless there is one error per substring, in order, each
// containing its substring.
func checkContains(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	got := errorStrings(errs)
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("error %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

// mkJob is jobtest.MakeJob without a resourceVersion, as a Job is on CREATE; jobtest.MakeJob
// gives each Job a fresh one, which would make equal Jobs differ.
func mkJob(name string) *jobtest.JobWrapper { return jobtest.MakeJob(name).ResourceVersion("") }
