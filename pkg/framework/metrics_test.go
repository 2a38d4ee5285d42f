package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// A plan is built (and counted by result) once per Job revision and
// arguments; every later lookup is a cache hit.
func TestPlanMetrics(t *testing.T) {
	build := func(args []string, _ *batch.Job) (int, field.ErrorList) {
		if len(args) > 0 && args[0] == "--bad" {
			return 0, field.ErrorList{field.Invalid(field.NewPath("spec", "plugins"), args[0], "unknown flag")}
		}
		return len(args), nil
	}
	type counts struct{ Valid, Invalid, Hits float64 }
	read := func() counts {
		return counts{
			Valid:   testutil.ToFloat64(metrics.PlanBuilds.WithLabelValues("pytorch", metrics.PlanValid)),
			Invalid: testutil.ToFloat64(metrics.PlanBuilds.WithLabelValues("pytorch", metrics.PlanInvalid)),
			Hits:    testutil.ToFloat64(metrics.PlanCacheHits.WithLabelValues("pytorch")),
		}
	}
	job := jobtest.MakeJob("pt").Obj()
	cases := map[string]struct {
		calls []func(d *Definition[int])
		want  counts
	}{
		"built once, then hits": {
			calls: []func(d *Definition[int]){
				func(d *Definition[int]) { b := d.Base(nil, nil); b.Plan(job) },
				func(d *Definition[int]) { b := d.Base(nil, nil); b.Plan(job) },
				func(d *Definition[int]) { b := d.Base(nil, nil); b.Plan(job) },
			},
			want: counts{Valid: 1, Hits: 2},
		},
		"invalid arguments": {
			calls: []func(d *Definition[int]){
				func(d *Definition[int]) { b := d.Base(nil, []string{"--bad"}); b.Plan(job) },
				func(d *Definition[int]) { b := d.Base(nil, []string{"--bad"}); b.Plan(job) },
			},
			want: counts{Invalid: 1, Hits: 1},
		},
		"new arguments, new build": {
			calls: []func(d *Definition[int]){
				func(d *Definition[int]) { b := d.Base(nil, []string{"--a"}); b.Plan(job) },
				func(d *Definition[int]) { b := d.Base(nil, []string{"--b"}); b.Plan(job) },
			},
			want: counts{Valid: 2},
		},
		"admission's uncached plans are not counted": {
			calls: []func(d *Definition[int]){
				func(d *Definition[int]) { b := d.UncachedBase(nil, nil); b.Plan(job) },
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := &Definition[int]{Name: "pytorch", Build: build}
			before := read()
			for _, call := range tc.calls {
				call(d)
			}
			after := read()
			got := counts{after.Valid - before.Valid, after.Invalid - before.Invalid, after.Hits - before.Hits}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan metrics moved (-want +got):\n%s", diff)
			}
		})
	}
}
