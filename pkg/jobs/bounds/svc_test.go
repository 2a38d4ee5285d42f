package bounds

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"
)

// The svc plugin's keys, written in svc.go, are the line's Volcano's.
func TestSvcKeys(t *testing.T) {
	want := []string{svc.ConfigMapTaskHostFmt, svc.EnvTaskHostFmt, svc.EnvHostNumFmt}
	if diff := cmp.Diff(want, []string{SvcTaskHostFmt, SvcEnvTaskHostFmt, SvcEnvHostNumFmt}); diff != "" {
		t.Errorf("(-Volcano's +ours):\n%s", diff)
	}
}
