package lines_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	schedulinglisters "volcano.sh/apis/pkg/client/listers/scheduling/v1beta1"
	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	"volcano.sh/volcano/pkg/webhooks/router"

	// The line's admissions, registered with Volcano's router.
	"github.com/vcplugins/framework-plugins/internal/jobtest"
	_ "github.com/vcplugins/framework-plugins/lines/admissions"
	"github.com/vcplugins/framework-plugins/webhook"
)

// Volcano's own /jobs/validate of this line, behind webhook.CapBody as the
// webhook manager serves it: a body over the cap is answered 413 and never
// reaches Volcano (whose v1.14.1 router reads any body whole), whether the
// request announces its length or streams it; a body within it reaches
// Volcano whole and gets its answer.
func TestVolcanoPathsBodyCap(t *testing.T) {
	var volcano *router.AdmissionService
	if err := router.ForEachAdmission(&options.Config{EnabledAdmission: "/jobs/validate"}, func(s *router.AdmissionService) error {
		volcano = s
		queues := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		if err := queues.Add(&schedulingv1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Status:     schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateOpen},
		}); err != nil {
			return err
		}
		s.Config.QueueLister = schedulinglisters.NewQueueLister(queues)
		return nil
	}); err != nil || volcano == nil {
		t.Fatalf("Volcano's /jobs/validate is not registered: %v", err)
	}
	job := jobtest.MakeJob("capped").Task(jobtest.MakeTask("main", 1).Obj()).Obj()
	within := reviewJSON(t, job)
	pad := func(n int) []byte { return append(bytes.Repeat([]byte(" "), n-len(within)), within...) } // valid JSON of n bytes
	for _, tc := range []struct {
		name      string
		body      []byte
		chunked   bool
		wantCode  int
		wantReach bool
	}{
		{"within, announced", within, false, http.StatusOK, true},
		{"within, chunked", within, true, http.StatusOK, true},
		{"exactly the cap", pad(webhook.VolcanoMaxBody), false, http.StatusOK, true},
		{"over, announced", pad(webhook.VolcanoMaxBody + 1), false, http.StatusRequestEntityTooLarge, false},
		{"over, chunked", pad(webhook.VolcanoMaxBody + 1), true, http.StatusRequestEntityTooLarge, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reached := false
			h := webhook.CapBody(webhook.VolcanoMaxBody, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached = true
				volcano.Handler(w, r)
			}))
			var body io.Reader = bytes.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: ContentLength -1
			}
			req := httptest.NewRequest(http.MethodPost, "/jobs/validate", body)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode || reached != tc.wantReach {
				t.Fatalf("code %d, Volcano reached %v; want %d, %v (%.200s)", rec.Code, reached, tc.wantCode, tc.wantReach, rec.Body.String())
			}
			if tc.wantReach {
				var got admissionv1.AdmissionReview
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Response == nil || !got.Response.Allowed {
					t.Fatalf("Volcano's answer: %v, %.300s", err, rec.Body.String())
				}
			}
		})
	}
}

// reviewJSON is the AdmissionReview of a CREATE of job, as the API server
// sends it.
func reviewJSON(t *testing.T, job *batch.Job) []byte {
	t.Helper()
	job.Namespace = "default"
	obj, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       "capped",
			Kind:      metav1.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"},
			Resource:  metav1.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"},
			Name:      job.Name,
			Namespace: job.Namespace,
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: obj},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
