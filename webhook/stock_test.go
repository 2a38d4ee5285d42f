package webhook

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// asStock: the Job uses only framework plugins Volcano has in-tree, and mpi's
// master task as Volcano's parser reads it exists.
func TestAsStock(t *testing.T) {
	launcher := func(args ...string) *batch.Job {
		return mkJob("mpi").Task(jobtest.MakeTask("launcher", 1).Obj()).Task(jobtest.MakeTask("w", 2).Obj()).Plugin("mpi", args...).Obj()
	}
	tests := []struct {
		name string
		job  *batch.Job
		want bool
	}{
		{"tensorflow only", mkJob("tf").Task(jobtest.MakeTask("trainer", 2).Obj()).Plugin("tensorflow", "--bogus").Obj(), true},
		{"pytorch only", mkJob("pt").Task(jobtest.MakeTask("trainer", 2).Obj()).Plugin("pytorch", "--master=boss").Obj(), true},
		{"tensorflow and pytorch", mkJob("two").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Plugin("pytorch").Obj(), true},
		{"with Volcano's other plugins", mkJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).
			Plugin("tensorflow").Plugin("svc").Plugin("ssh").Plugin("env").Obj(), true},
		{"mpi, default master present", mkJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Plugin("mpi").Obj(), true},
		{"mpi, --master present", launcher("--master=launcher", "--worker=nosuch"), true},
		{"mpi, --master after --port", launcher("--port=0", "--master=launcher"), true},
		{"mpi, default master missing", launcher(), false},
		{"mpi, --master missing", launcher("--master=boss"), false},
		{"mpi, an unknown flag before --master: Volcano reads master, missing",
			launcher("--slots-per-worker=2", "--master=launcher"), false},
		{"mpi, an unknown flag before --master: Volcano reads master, present",
			mkJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("launcher", 1).Obj()).
				Plugin("mpi", "--slots-per-worker=2", "--master=launcher").Obj(), true},
		{"mpi, a positional argument before --master", launcher("w", "--master=launcher"), false},
		{"mpi and tensorflow", mkJob("two").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
			Plugin("mpi").Plugin("tensorflow").Obj(), true},
		{"tensorflow and mxnet", mkJob("two").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Plugin("mxnet").Obj(), false},
		{"mxnet only", mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Plugin("mxnet").Obj(), false},
		{"xgboost only", mkJob("xg").Task(jobtest.MakeTask("master", 1).Obj()).Plugin("xgboost").Obj(), false},
		// Vacuous: validateJob returns before it asks.
		{"no framework plugin", mkJob("plain").Task(jobtest.MakeTask("main", 1).Obj()).Plugin("svc").Obj(), true},
	}
	got, want := map[string]bool{}, map[string]bool{}
	for _, tc := range tests {
		got[tc.name], want[tc.name] = asStock(tc.job), tc.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("asStock (-want +got):\n%s", diff)
	}
}

// argumentWarnings: ArgumentsWarning, then at most maxWarnings problems, each
// at most maxWarningRunes runes, then a count of the rest.
func TestArgumentWarnings(t *testing.T) {
	p := field.NewPath("spec", "plugins").Key("tensorflow")
	problems := func(n int) field.ErrorList {
		var errs field.ErrorList
		for i := range n {
			errs = append(errs, field.Invalid(p.Index(i), fmt.Sprintf("--x%d", i), "plugin tensorflow: unknown flag"))
		}
		return errs
	}
	// A detail of 1,200 multi-byte runes: the error is over maxWarningRunes.
	long := field.Invalid(p.Index(0), "--ps=x", "plugin tensorflow: "+strings.Repeat("é日", 600))
	// Problems of 900 runes: three fit in maxWarningsRunes with the first
	// warning, the fourth does not.
	big := func(n int) field.ErrorList {
		var errs field.ErrorList
		for i := range n {
			e := field.Invalid(p.Index(i), "", "x")
			e.Detail = strings.Repeat("x", 900-utf8.RuneCountInString(e.Error())+1)
			errs = append(errs, e)
		}
		return errs
	}
	exact := field.Invalid(p, "", "日")
	exact.Detail = strings.Repeat("日", maxWarningRunes-utf8.RuneCountInString(exact.Error())+1)

	tests := []struct {
		name string
		errs field.ErrorList
		want []string
	}{
		{"none", nil, nil},
		{"one", problems(1), append([]string{ArgumentsWarning}, errorStrings(problems(1))...)},
		{"twelve: all listed", problems(12), append([]string{ArgumentsWarning}, errorStrings(problems(12))...)},
		{"thirteen: twelve and a count", problems(13),
			append(append([]string{ArgumentsWarning}, errorStrings(problems(12))...), "and 1 more problems")},
		{"twenty: twelve and a count", problems(20),
			append(append([]string{ArgumentsWarning}, errorStrings(problems(12))...), "and 8 more problems")},
		{"a long one is cut on a rune", field.ErrorList{long},
			[]string{ArgumentsWarning, string([]rune(long.Error())[:maxWarningRunes-3]) + "..."}},
		{"one of exactly maxWarningRunes is whole", field.ErrorList{exact}, []string{ArgumentsWarning, exact.Error()}},
		{"as many as fit in maxWarningsRunes, then a count", big(5),
			append(append([]string{ArgumentsWarning}, errorStrings(big(3))...), "and 2 more problems")},
		// The API server drops a warning with a control character.
		{"control characters are escaped", field.ErrorList{field.Invalid(p.Index(0), "--bogus\n=1", "plugin tensorflow: unknown flag --bogus\n\t\x00")},
			[]string{ArgumentsWarning, `spec.plugins[tensorflow][0]: Invalid value: "--bogus\n=1": plugin tensorflow: unknown flag --bogus\n\t\x00`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := argumentWarnings(tc.errs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("argumentWarnings (-want +got):\n%s", diff)
			}
			for _, w := range got[min(1, len(got)):] {
				if n := utf8.RuneCountInString(w); n > maxWarningRunes || !utf8.ValidString(w) {
					t.Errorf("warning of %d runes (valid UTF-8: %v): %q", n, utf8.ValidString(w), w)
				}
			}
			// The API server writes each as a Warning header, or drops it.
			for _, w := range got {
				if _, err := utilnet.NewWarningHeader(299, "-", w); err != nil {
					t.Errorf("warning %q: %v", w, err)
				}
			}
		})
	}
	if n := utf8.RuneCountInString(exact.Error()); n != maxWarningRunes {
		t.Errorf("the exact case has %d runes, want %d", n, maxWarningRunes)
	}
	if n := utf8.RuneCountInString(long.Error()); n <= maxWarningRunes {
		t.Errorf("the long case has %d runes, want more than %d", n, maxWarningRunes)
	}
}

// A Job Volcano's admission accepts is admitted with warnings only when its
// argument problems are all it has: shape, launch-order and limit problems are
// still denied, whatever its arguments, and the denial then lists the argument
// problems too, first (reason arguments), as ValidateJob does. A plugin whose
// arguments do not parse adds no wait and no environment, so those cannot be
// over a limit or in a cycle.
func TestStockJobsDeniedBeyondArguments(t *testing.T) {
	tf := func(ps *jobtest.TaskWrapper, args ...string) *batch.Job {
		return mkJob("tf").Task(ps.Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow", args...).Plugin("svc").Obj()
	}
	pt := func(name string, args ...string) *batch.Job {
		return mkJob(name).Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("pytorch", args...).Plugin("svc").Obj()
	}
	tests := []struct {
		name   string
		job    *batch.Job
		reason string
		denial string // a substring of the denial; allowed when empty
		// warned is a substring of an argument problem: in the warnings
		// when admitted, in the denial when denied.
		warned string
	}{{
		name: "a launch-order cycle", job: tf(jobtest.MakeTask("ps", 1).DependsOn("worker")),
		reason: metrics.ReasonLaunchOrder, denial: "launch-order cycle: ps waits for worker (dependsOn), worker waits for ps (tensorflow --wait)",
	}, {
		name: "a dependsOn cycle and an argument problem",
		job: mkJob("tf").Task(jobtest.MakeTask("ps", 1).DependsOn("worker").Obj()).Task(jobtest.MakeTask("worker", 2).DependsOn("ps").Obj()).
			Plugin("tensorflow", "--port=0").Plugin("svc").Obj(),
		reason: metrics.ReasonArguments, denial: "launch-order cycle: ps waits for worker (dependsOn), worker waits for ps (dependsOn)",
		warned: "--port=0: must be between 1 and 65535",
	}, {
		// A plugin whose arguments do not parse adds no wait container, so
		// there is no cycle to deny: admitted, with the warning.
		name: "a cycle through the wait of a plugin whose arguments do not parse", job: tf(jobtest.MakeTask("ps", 1).DependsOn("worker"), "--port=0"),
		reason: metrics.ReasonNone, warned: "--port=0: must be between 1 and 65535",
	}, {
		name: "dependsOn a missing task and an argument problem", job: tf(jobtest.MakeTask("ps", 1).DependsOn("nosuch"), "--bogus"),
		reason: metrics.ReasonArguments, denial: `task "ps" depends on task "nosuch", which the job does not have`,
		warned: "unknown flag --bogus",
	}, {
		name: "TF_CONFIG over MAX_ARG_STRLEN", job: tfConfigJob(longName("tf", 40), 1, 4000),
		reason: metrics.ReasonLimits, denial: "environment variable TF_CONFIG of pod",
	}, {
		name: "hostnames over 63 characters and an argument problem", job: pt(longName("pt", 60), "--nproc-per-node=0"),
		reason: metrics.ReasonArguments, denial: "a pod hostname is a DNS label of at most 63",
		warned: "--nproc-per-node=0",
	}, {
		name: "mpi: hostnames over 63 characters and an argument problem",
		job: mkJob(longName("mpi", 55)).Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 1000).Obj()).
			Plugin("mpi", "--port=0").Plugin("svc").Plugin("ssh").Obj(),
		reason: metrics.ReasonArguments, denial: "a pod hostname is a DNS label of at most 63",
		warned: "--port=0: must be between 1 and 65535",
	}, {
		name: "a shape problem", job: tf(jobtest.MakeTask("ps", 1).MinAvailable(2), "--bogus"),
		reason: metrics.ReasonShape, denial: "must not be greater than the task's replicas",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !asStock(tc.job) {
				t.Fatal("not a Job Volcano's admission accepts; the test has lost its point")
			}
			errs, reason, warned := validateJob(tc.job, true)
			if reason != tc.reason || (tc.denial == "") != (len(errs) == 0) || !strings.Contains(fmt.Sprint(errorStrings(errs)), tc.denial) {
				t.Errorf("validateJob(job, true): reason %s, errors %v; want reason %s and an error containing %q", reason, errs, tc.reason, tc.denial)
			}
			switch {
			case tc.denial != "" && len(warned) > 0:
				t.Errorf("validateJob(job, true) denies and warns of %v; a denial lists every problem", warned)
			case tc.denial != "" && !strings.Contains(fmt.Sprint(errorStrings(errs)), tc.warned):
				t.Errorf("validateJob(job, true): errors %v; want the argument problem %q among them", errs, tc.warned)
			case tc.denial == "" && !strings.Contains(fmt.Sprint(errorStrings(warned)), tc.warned):
				t.Errorf("validateJob(job, true) warned of %v; want %q", warned, tc.warned)
			}
			// Every problem is still ValidateJob's.
			all := ValidateJob(tc.job).ToAggregate().Error()
			for _, want := range []string{tc.denial, tc.warned} {
				if !strings.Contains(all, want) {
					t.Errorf("ValidateJob: %s; want it to contain %q", all, want)
				}
			}
			resp := ValidateService().Func(review(t, admissionv1.Create, tc.job, nil))
			if tc.denial == "" {
				if !resp.Allowed || len(resp.Warnings) < 2 || !strings.Contains(strings.Join(resp.Warnings[1:], "\n"), tc.warned) {
					t.Errorf("the validating admission answered allowed %v, %v, warnings %q; want allowed with a warning containing %q",
						resp.Allowed, resp.Result, resp.Warnings, tc.warned)
				}
				return
			}
			if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, tc.denial) || !strings.Contains(resp.Result.Message, tc.warned) || len(resp.Warnings) > 0 {
				t.Errorf("the validating admission answered allowed %v, %v, warnings %q; want a denial containing %q and %q, no warnings",
					resp.Allowed, resp.Result, resp.Warnings, tc.denial, tc.warned)
			}
		})
	}
}
