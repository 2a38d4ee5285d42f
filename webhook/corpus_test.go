package webhook

import (
	"k8s.io/client-go/tools/cache"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcfake "volcano.sh/apis/pkg/client/clientset/versioned/fake"
	schedulinglisters "volcano.sh/apis/pkg/client/listers/scheduling/v1beta1"
	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	_ "volcano.sh/volcano/pkg/webhooks/admission/jobs/validate"
	"volcano.sh/volcano/pkg/webhooks/router"

	"github.com/vcplugins/framework-plugins/plugins"
)

// The e2e corpus: malformed Jobs, each with the substring of its denial.
const (
	corpusDir        = "../test/e2e/testdata/invalid"
	expectAnnotation = "e2e.vcplugins.io/expect-denied"
)

// volcanoValidate returns Volcano's own job validation (/jobs/validate), with
// an open "default" queue to find.
func volcanoValidate(t testing.TB) router.AdmitFunc {
	t.Helper()
	var admit router.AdmitFunc
	queue := &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Status:     schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateOpen},
	}
	err := router.ForEachAdmission(&options.Config{EnabledAdmission: "/jobs/validate"}, func(s *router.AdmissionService) error {
		s.Config.VolcanoClient = vcfake.NewSimpleClientset(queue)
		// Volcano v1.14+ reads the Job's queue from the lister its manager
		// syncs before serving (cmd/vc-webhook-manager).
		queues := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{router.QueueParentIndexName: router.QueueParentIndexFunc})
		if err := queues.Add(queue); err != nil {
			return err
		}
		s.Config.QueueLister = schedulinglisters.NewQueueLister(queues)
		admit = s.Func
		return nil
	})
	if err != nil || admit == nil {
		t.Fatalf("Volcano's /jobs/validate is not registered: %v", err)
	}
	return admit
}

// Every Job of the corpus gets through both mutations and Volcano's own
// validation (the binary registers this project's plugins, so mxnet is known),
// and is denied by ValidateJob with its expected message: the API server would
// deny it with that message and no other webhook's.
func TestInvalidCorpus(t *testing.T) {
	plugins.Register()
	volcanoAdmit := volcanoValidate(t)
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("%d files in %s, want at least 40", len(files), corpusDir)
	}
	seen := map[string]string{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			job := &batch.Job{}
			if err := yaml.UnmarshalStrict(raw, job); err != nil {
				t.Fatalf("not a Job: %v", err)
			}
			if job.APIVersion != "batch.volcano.sh/v1alpha1" || job.Kind != "Job" || job.Namespace != "" {
				t.Errorf("apiVersion %q, kind %q, namespace %q; want a namespace-less batch.volcano.sh/v1alpha1 Job", job.APIVersion, job.Kind, job.Namespace)
			}
			if other, dup := seen[job.Name]; dup {
				t.Errorf("job name %s is also used by %s", job.Name, other)
			}
			seen[job.Name] = file
			want := job.Annotations[expectAnnotation]
			if want == "" {
				t.Fatalf("no %s annotation", expectAnnotation)
			}
			if !UsesFrameworks(job) {
				t.Fatalf("uses no framework plugin")
			}

			// As the API server handles a create: mutations in configuration
			// name order, then the validations.
			job.Namespace = "e2e"
			mutated := volcanoMutate(t, oursMutate(t, job))
			if resp := volcanoAdmit(review(t, admissionv1.Create, mutated, nil)); !resp.Allowed {
				t.Fatalf("Volcano's own job validation denies it, so the e2e denial could be its: %v", resp.Result.Message)
			}
			errs := ValidateJob(mutated)
			if len(errs) == 0 {
				t.Fatalf("ValidateJob accepts it; want a denial containing %q", want)
			}
			if msg := errs.ToAggregate().Error(); !strings.Contains(msg, want) {
				t.Errorf("denial %q does not contain %q", msg, want)
			}
			resp := ValidateService().Func(review(t, admissionv1.Create, mutated, nil))
			if resp.Allowed || !strings.Contains(resp.Result.Message, want) {
				t.Errorf("the validating admission answered %+v", resp.Result)
			}
		})
	}
}
