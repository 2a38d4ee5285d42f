package webhook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/cache"

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

// The e2e corpus: malformed Jobs, each with one of two annotations whose
// value is a substring of the problem: expectDenied for a Job the validating
// admission denies, with the substring in the denial; expectWarned for one
// whose problems are all in framework arguments Volcano's own admission
// accepts (asStock), which it admits with the substring in a warning.
const (
	corpusDir    = "../test/e2e/testdata/invalid"
	expectDenied = "e2e.vcplugins.io/expect-denied"
	expectWarned = "e2e.vcplugins.io/expect-warned"
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
// and ValidateJob reports its expected problem. An expect-denied Job is denied
// by the validating admission with that message: the API server would deny it
// with that message and no other webhook's. An expect-warned Job is admitted,
// with ArgumentsWarning first and the problem in a later warning.
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
	var denied, warned int
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
			wantDenied, isDenied := job.Annotations[expectDenied]
			wantWarned, isWarned := job.Annotations[expectWarned]
			want := wantDenied + wantWarned
			if isDenied == isWarned || want == "" {
				t.Fatalf("annotations %v; want exactly one of %s and %s, not empty", job.Annotations, expectDenied, expectWarned)
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
				t.Fatalf("ValidateJob accepts it; want a problem containing %q", want)
			}
			if msg := errs.ToAggregate().Error(); !strings.Contains(msg, want) {
				t.Errorf("ValidateJob's problems %q do not contain %q", msg, want)
			}
			resp := ValidateService().Func(review(t, admissionv1.Create, mutated, nil))
			if isDenied {
				denied++
				if resp.Allowed || !strings.Contains(resp.Result.Message, want) {
					t.Errorf("the validating admission answered allowed %v, %+v; want a denial containing %q", resp.Allowed, resp.Result, want)
				}
				return
			}
			warned++
			if !resp.Allowed {
				t.Fatalf("the validating admission denies it: %v; want it admitted with a warning containing %q", resp.Result.Message, want)
			}
			if len(resp.Warnings) < 2 || resp.Warnings[0] != ArgumentsWarning || !slices.ContainsFunc(resp.Warnings[1:], func(w string) bool {
				return strings.Contains(w, want)
			}) {
				t.Errorf("warnings %q; want ArgumentsWarning first and one containing %q", resp.Warnings, want)
			}
		})
	}
	t.Logf("%d Jobs denied, %d admitted with warnings", denied, warned)
}
