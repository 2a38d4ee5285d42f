package webhook

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// The partial-GPU warnings of a Job of many GPU tasks with long names stay
// within what the API server returns whole (issue #38, L5): at most
// maxWarnings named, each name cut to 63 runes, then a count.
func TestPartialGPUWarningsBounded(t *testing.T) {
	for _, tc := range []struct {
		tasks    int
		nameLen  int
		wantLen  int // warnings
		wantLast string
	}{
		{tasks: 1, nameLen: 5, wantLen: 1},
		{tasks: maxWarnings, nameLen: 5, wantLen: maxWarnings},
		{tasks: maxWarnings + 1, nameLen: 5, wantLen: maxWarnings + 1, wantLast: "and 1 more GPU tasks with minAvailable < replicas"},
		{tasks: bounds.MaxTasks, nameLen: 5000, wantLen: maxWarnings + 1, wantLast: fmt.Sprintf("and %d more GPU tasks with minAvailable < replicas", bounds.MaxTasks-maxWarnings)},
	} {
		t.Run(fmt.Sprintf("%d tasks, names of %d", tc.tasks, tc.nameLen), func(t *testing.T) {
			w := jobtest.MakeJob("gpu").Plugin("tensorflow")
			for i := 0; i < tc.tasks; i++ {
				name := fmt.Sprintf("t%d-", i) + strings.Repeat("é", tc.nameLen)
				task := jobtest.MakeTask(name, 4).MinAvailable(1).Obj()
				task.Template.Spec.Containers[0].Resources.Limits = v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
				w.Task(task)
			}
			_, warnings := MutateJob(w.Obj(), Options{})
			if len(warnings) != tc.wantLen {
				t.Fatalf("%d warnings; want %d", len(warnings), tc.wantLen)
			}
			total := 0
			for _, s := range warnings {
				total += len([]rune(s))
			}
			if total > 4096 {
				t.Errorf("warnings of %d runes; the API server keeps 4096 whole", total)
			}
			if tc.wantLast != "" {
				if diff := cmp.Diff(tc.wantLast, warnings[len(warnings)-1]); diff != "" {
					t.Errorf("last warning (-want +got):\n%s", diff)
				}
			}
		})
	}
}
