package xgboost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	utiltesting "github.com/vcplugins/framework-plugins/pkg/testing"
)

// The e2e corpus's xgboost Jobs are denied by this plugin's own arguments
// check with the message their annotation expects (the webhook's corpus test
// runs them through admission as a whole, cycles included).
func TestInvalidCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "test", "e2e", "testdata", "invalid", "xgboost-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("%d xgboost Jobs in the corpus, want at least 4", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			job := &batch.Job{}
			if err := yaml.UnmarshalStrict(raw, job); err != nil {
				t.Fatal(err)
			}
			want := job.Annotations["e2e.vcplugins.io/expect-denied"]
			_, errs := ParseArgs(job.Spec.Plugins[Name], job)
			if got := utiltesting.ErrorString(errs); want == "" || !strings.Contains(got, want) {
				t.Errorf("errors %q, want them to contain %q", got, want)
			}
		})
	}
}
