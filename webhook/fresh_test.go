package webhook

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// Admission simulates pods from the spec it is given, never from a plan
// cached for the same UID and generation: a denied UPDATE and the corrected
// one that follows share both, and the second used to be checked against the
// first one's plan. (plugins/mpi's TestUncachedPlanFollowsTheJob checks the
// uncached builder admission uses on a plan that a size check cannot see.)
func TestAdmissionPlansAreFresh(t *testing.T) {
	at := func(w *jobtest.JobWrapper) *batch.Job {
		job := w.Obj()
		job.Generation = 2
		return job
	}
	tests := []struct {
		name             string
		old, first, then *batch.Job
		denial           string
	}{
		{
			name:   "tensorflow: 2 workers, then 8,000",
			old:    at(mkJob("fresh-tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 1).Obj()).Plugin("tensorflow").Plugin("svc")),
			first:  at(mkJob("fresh-tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Plugin("svc")),
			then:   at(mkJob("fresh-tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 8000).Obj()).Plugin("tensorflow").Plugin("svc")),
			denial: `environment variable TF_CONFIG of pod "fresh-tf-worker-7999"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.then.UID != tc.first.UID || tc.then.Generation != tc.first.Generation {
				t.Fatal("the two specs must share UID and generation")
			}
			validate := ValidateService().Func
			if resp := validate(review(t, admissionv1.Update, tc.first, tc.old)); !resp.Allowed {
				t.Fatalf("first update denied: %v", resp.Result)
			}
			resp := validate(review(t, admissionv1.Update, tc.then, tc.old))
			if resp.Allowed || !strings.Contains(resp.Result.Message, tc.denial) {
				t.Errorf("second update: allowed %v, %v; want a denial containing %q", resp.Allowed, resp.Result, tc.denial)
			}
		})
	}
}
