package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// A framework Job whose svc VC_<TASK>_HOSTS would pass MAX_ARG_STRLEN is
// admitted with a warning naming the variable (its pods get none:
// guard.DropOversizedHostVariables), through both admissions as the API
// server calls them: the pytorch Job of 2,048 workers named
// llama-70b-sft-run-20261204-a1 (146,362 bytes) that was denied, and the
// same Job named resnet50-dist without a warning. A Job that names svc
// itself is treated the same.
func TestSvcHostsOverArgStrlenWarned(t *testing.T) {
	const want = "plugin svc: environment variable VC_WORKER_HOSTS would be 146362 bytes (NAME=value and NUL), more than the 131072 bytes Linux allows one (MAX_ARG_STRLEN): the pods get no VC_WORKER_HOSTS (nor a file of that name in /etc/volcano); the file /etc/volcano/worker.host and the framework's own variables list the hosts"
	for _, tc := range []struct {
		name     string
		svc      bool
		warnings []string
	}{
		{"llama-70b-sft-run-20261204-a1", false, []string{want}},
		{"llama-70b-sft-run-20261204-a1", true, []string{want}},
		{"resnet50-dist", false, nil},
	} {
		w := mkJob(tc.name).Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2048).Obj()).Plugin("pytorch")
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
		w = w.Task(jobtest.MakeTask(task, 2048).Obj())
	}
	got := SvcHostsWarnings(w.Plugin("svc").Obj())
	if len(got) != maxHostWarnings+1 || got[maxHostWarnings] != "and 2 more such variables" {
		t.Errorf("four variables over: %q", got)
	}
}

// A framework plugin's optional host variable (MPI_HOST, WORKER_ADDRS) over
// MAX_ARG_STRLEN does not refuse the Job: it is admitted with a warning that
// says what gives the hosts instead, and the plugin leaves the variable out
// of the pods; under the limit the pods get it and nothing is said.
func TestOptionalHostVariablesOverArgStrlenWarned(t *testing.T) {
	for _, tc := range []struct {
		plugin, lead, variable, instead string
	}{
		{"mpi", "master", "MPI_HOST", "the launcher's hostfile lists the hosts for mpirun"},
		{"xgboost", "master", "WORKER_ADDRS", "XGBoost's collective finds the workers through the tracker (DMLC_TRACKER_URI)"},
	} {
		for _, workers := range []int32{100, 3000} {
			job := mkJob(longName("j", 40)).Namespace("ml-training").Task(jobtest.MakeTask(tc.lead, 1).Obj()).Task(jobtest.MakeTask("worker", workers).Obj()).Plugin(tc.plugin).Obj()
			over := workers == 3000
			_, _, resp := admissionCost(t, job)
			if !resp.Allowed {
				t.Fatalf("%s, %d workers: denied: %v", tc.plugin, workers, resp.Result)
			}
			var warned []string
			for _, w := range resp.Warnings {
				if strings.Contains(w, "environment variable "+tc.variable) {
					warned = append(warned, w)
				}
			}
			switch {
			case over && (len(warned) != 1 || !strings.HasPrefix(warned[0], "plugin "+tc.plugin+": ") ||
				!strings.HasSuffix(warned[0], "the pods get no "+tc.variable+"; "+tc.instead)):
				t.Errorf("%s, %d workers: warnings %q, want one about %s", tc.plugin, workers, resp.Warnings, tc.variable)
			case !over && len(warned) > 0:
				t.Errorf("%s, %d workers: warnings %q, want none about %s", tc.plugin, workers, warned, tc.variable)
			}
			// What the controller's plugin gives the lead's pod.
			var build jobtest.Builder
			for _, f := range frameworks() {
				if f.Name == tc.plugin {
					build = f.NewUncached
				}
			}
			pod := jobtest.RunPod(t, build, tc.plugin, job, tc.lead, 0)
			if _, has := jobtest.Env(pod, 0)[tc.variable]; has == over {
				t.Errorf("%s, %d workers: the %s pod has %s: %v, want %v", tc.plugin, workers, tc.lead, tc.variable, has, !over)
			}
		}
	}
}
