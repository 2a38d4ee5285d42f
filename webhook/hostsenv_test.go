package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	. "github.com/vcplugins/framework-plugins/pkg/testing"
)

// A framework Job whose svc VC_<TASK>_HOSTS would pass MAX_ARG_STRLEN is
// admitted with a warning naming the variable (its pods get none:
// guard.DropOversizedHostVariables), through both admissions as the API
// server calls them: the pytorch Job of 2,048 workers named
// llama-70b-sft-run-20261204-a1 (146,362 bytes) that was denied, and the
// same Job named resnet50-dist without a warning. A Job that names svc
// itself is treated the same.
func TestSvcHostsOverArgStrlenWarned(t *testing.T) {
	const want = "plugin svc: environment variable VC_WORKER_HOSTS would be 146362 bytes (NAME=value and NUL), more than the 131072 bytes Linux allows one (MAX_ARG_STRLEN): the pods get no VC_WORKER_HOSTS; the file /etc/volcano/worker.host and the framework's own variables list the hosts"
	for _, tc := range []struct {
		name     string
		svc      bool
		warnings []string
	}{
		{"llama-70b-sft-run-20261204-a1", false, []string{want}},
		{"llama-70b-sft-run-20261204-a1", true, []string{want}},
		{"resnet50-dist", false, nil},
	} {
		w := mkJob(tc.name).Task(MakeTask("master", 1).Obj()).Task(MakeTask("worker", 2048).Obj()).Plugin("pytorch")
		if tc.svc {
			w = w.Plugin("svc")
		}
		_, _, resp := admissionCost(t, w.Obj())
		if !resp.Allowed {
			t.Fatalf("%s (svc named: %v): denied: %v", tc.name, tc.svc, resp.Result)
		}
		if diff := cmp.Diff(tc.warnings, resp.Warnings); diff != "" {
			t.Errorf("%s (svc named: %v): warnings (-want +got):\n%s", tc.name, tc.svc, diff)
		}
	}
	// More variables over than listed: a count.
	w := mkJob(strings.Repeat("l", 40))
	for _, task := range []string{"a", "b", "c", "d"} {
		w = w.Task(MakeTask(task, 2048).Obj())
	}
	got := SvcHostsWarnings(w.Plugin("svc").Obj())
	if len(got) != maxHostWarnings+1 || got[maxHostWarnings] != "and 2 more such variables" {
		t.Errorf("four variables over: %q", got)
	}
}
