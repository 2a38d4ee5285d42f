package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// series is one admission counter series: path, framework, result, reason.
type series struct{ Path, Framework, Result, Reason string }

// Every request the handlers serve counts once in
// framework_plugins_admission_requests_total, with the reason of the first
// check that denied it, and is timed in
// framework_plugins_admission_duration_seconds.
func TestAdmissionMetrics(t *testing.T) {
	tf := func(ps *jobtest.TaskWrapper, args ...string) *batch.Job {
		return mkJob("tf").Task(ps.Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow", args...).Obj()
	}
	tooManyTasks := mkJob("many").Plugin("tensorflow")
	for i := 0; i <= bounds.MaxTasks; i++ {
		tooManyTasks.Task(jobtest.MakeTask("t"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26)), 1).Obj())
	}
	panicking := guard("validating", func(admissionv1.AdmissionReview, *verdict) *admissionv1.AdmissionResponse { panic("boom") })
	cases := map[string]struct {
		handler     func(http.ResponseWriter, *http.Request)
		job         *batch.Job
		body        string // sent instead of a review of job, without a content type when "-"
		want        series
		wantAllowed bool
		// wantWarnings: the validation answers with warnings.
		wantWarnings bool
	}{
		"valid, validated": {
			handler: ValidateService().Handler, job: tf(jobtest.MakeTask("ps", 1)), wantAllowed: true,
			want: series{ValidatePath, "tensorflow", metrics.ResultAllowed, metrics.ReasonNone},
		},
		"valid, mutated": {
			handler: MutateService(Options{}).Handler, job: tf(jobtest.MakeTask("ps", 1)), wantAllowed: true,
			want: series{MutatePath, "tensorflow", metrics.ResultAllowed, metrics.ReasonNone},
		},
		"no framework plugin": {
			handler: ValidateService().Handler, job: mkJob("plain").Task(jobtest.MakeTask("main", 1).Obj()).Plugin("svc").Obj(), wantAllowed: true,
			want: series{ValidatePath, metrics.FrameworkNone, metrics.ResultAllowed, metrics.ReasonNone},
		},
		"arguments": {
			handler: ValidateService().Handler,
			job:     mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet", "--port=0").Obj(),
			want:    series{ValidatePath, "mxnet", metrics.ResultDenied, metrics.ReasonArguments},
		},
		// Volcano's admission reads no tensorflow arguments: allowed, with
		// warnings, and counted as allowed for a reason (arguments).
		"arguments Volcano admits": {
			handler: ValidateService().Handler, job: tf(jobtest.MakeTask("ps", 1), "--port=0"), wantAllowed: true, wantWarnings: true,
			want: series{ValidatePath, "tensorflow", metrics.ResultAllowed, metrics.ReasonArguments},
		},
		"launch order": {
			handler: ValidateService().Handler, job: tf(jobtest.MakeTask("ps", 1).DependsOn("worker")),
			want: series{ValidatePath, "tensorflow", metrics.ResultDenied, metrics.ReasonLaunchOrder},
		},
		"shape": {
			handler: ValidateService().Handler, job: tf(jobtest.MakeTask("ps", 1).MinAvailable(2)),
			want: series{ValidatePath, "tensorflow", metrics.ResultDenied, metrics.ReasonShape},
		},
		"limits": {
			handler: ValidateService().Handler, job: mkJob("tf.v2").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Obj(),
			want: series{ValidatePath, "tensorflow", metrics.ResultDenied, metrics.ReasonLimits},
		},
		"bounds": {
			handler: ValidateService().Handler, job: tooManyTasks.Obj(),
			want: series{ValidatePath, "tensorflow", metrics.ResultDenied, metrics.ReasonBounds},
		},
		"over the bounds, mutated: left to the validation": {
			handler: MutateService(Options{}).Handler, job: tooManyTasks.Obj(), wantAllowed: true,
			want: series{MutatePath, "tensorflow", metrics.ResultAllowed, metrics.ReasonNone},
		},
		"not a review": {
			handler: ValidateService().Handler, body: `{"apiVersion":"v1","kind":"Pod"}`,
			want: series{ValidatePath, metrics.FrameworkUnknown, metrics.ResultError, metrics.ReasonBadRequest},
		},
		"no content type": {
			handler: MutateService(Options{}).Handler, body: "-",
			want: series{MutatePath, metrics.FrameworkUnknown, metrics.ResultError, metrics.ReasonBadRequest},
		},
		"panic": {
			handler: handler(ValidatePath, panicking), job: tf(jobtest.MakeTask("ps", 1)),
			want: series{ValidatePath, metrics.FrameworkUnknown, metrics.ResultError, metrics.ReasonInternal},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			counter := metrics.AdmissionRequests.WithLabelValues(tc.want.Path, tc.want.Framework, tc.want.Result, tc.want.Reason)
			before, timed := testutil.ToFloat64(counter), observations(t, tc.want.Path, tc.want.Result)
			total := testutil.CollectAndCount(metrics.AdmissionRequests)
			switch {
			case tc.body == "-":
				rec := httptest.NewRecorder()
				tc.handler(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")))
			case tc.body != "":
				serveBody(t, tc.handler, []byte(tc.body), nil)
			default:
				resp := serveReview(t, tc.handler, review(t, admissionv1.Create, tc.job, nil))
				if resp.Allowed != tc.wantAllowed {
					t.Fatalf("allowed = %v, want %v: %+v", resp.Allowed, tc.wantAllowed, resp.Result)
				}
				if tc.want.Path == ValidatePath && (len(resp.Warnings) > 0) != tc.wantWarnings {
					t.Errorf("warnings %q, want some: %v", resp.Warnings, tc.wantWarnings)
				}
			}
			if got := testutil.ToFloat64(counter) - before; got != 1 {
				t.Errorf("%+v moved by %v, want 1", tc.want, got)
			}
			// No other series was created (a created one would be the
			// request counted twice or under other labels).
			if got := testutil.CollectAndCount(metrics.AdmissionRequests); got > total+1 {
				t.Errorf("%d new series, want at most 1", got-total)
			}
			if got := observations(t, tc.want.Path, tc.want.Result) - timed; got != 1 {
				t.Errorf("duration observations of %s %s moved by %d, want 1", tc.want.Path, tc.want.Result, got)
			}
		})
	}
}

// observations returns the number of durations observed for path and result.
func observations(t *testing.T, path, result string) uint64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.AdmissionDuration.WithLabelValues(path, result).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// The labels say nothing of the Job but its framework: no series names a
// namespace, a Job or a user's plugin.
func TestAdmissionMetricsLabelsAreBounded(t *testing.T) {
	job := mkJob("secret-project").Namespace("team-x").Task(jobtest.MakeTask("main", 1).Obj()).Plugin("my-plugin", "--x").Obj()
	serveReview(t, ValidateService().Handler, review(t, admissionv1.Create, job, nil))
	ch := make(chan prometheus.Metric, 1000)
	metrics.AdmissionRequests.Collect(ch)
	close(ch)
	allowed := map[string]bool{MutatePath: true, ValidatePath: true, metrics.FrameworkNone: true, metrics.FrameworkUnknown: true,
		metrics.ResultAllowed: true, metrics.ResultDenied: true, metrics.ResultError: true,
		metrics.ReasonBounds: true, metrics.ReasonShape: true, metrics.ReasonArguments: true, metrics.ReasonLaunchOrder: true,
		metrics.ReasonLimits: true, metrics.ReasonBadRequest: true, metrics.ReasonInternal: true}
	for _, f := range metrics.Frameworks {
		allowed[f] = true
	}
	var unexpected []string
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			if !allowed[l.GetValue()] {
				unexpected = append(unexpected, l.GetName()+"="+l.GetValue())
			}
		}
	}
	if diff := cmp.Diff([]string(nil), unexpected); diff != "" {
		t.Errorf("label values outside the fixed sets (-want +got):\n%s", diff)
	}
}
