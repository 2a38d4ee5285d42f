package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// ReadShape reads from a Job's JSON the Shape that ShapeOf reads from the
// decoded Job, whatever the JSON's strings hold, and Check reports the bounds
// each is over, once per task or plugin.
func TestShapes(t *testing.T) {
	long := strings.Repeat("x", MaxPluginArgBytes+1)
	escaped := strings.Repeat(`"\:{[`, MaxPluginArgBytes/5) // JSON longer than the value, within the bound
	tasks := func(n, deps int) []batch.TaskSpec {
		out := make([]batch.TaskSpec, n)
		for i := range out {
			out[i].Name = fmt.Sprintf("t%d", i)
			if deps > 0 {
				out[i].DependsOn = &batch.DependsOn{Name: make([]string, deps)}
			}
		}
		return out
	}
	many := map[string][]string{}
	for i := 0; i <= MaxPlugins; i++ {
		many[fmt.Sprintf(`p:{"%d"}`, i)] = []string{long}
	}
	tests := []struct {
		name    string
		tasks   []batch.TaskSpec
		plugins map[string][]string
		want    []string
	}{
		{name: "within", tasks: tasks(MaxTasks, MaxDependsOn),
			plugins: map[string][]string{"tensorflow": make([]string, MaxPluginArgs), `a"b:{`: {escaped, strings.Repeat("y", MaxPluginArgBytes)}}},
		{name: "too many tasks", tasks: tasks(MaxTasks+1, MaxDependsOn+1),
			want: []string{"spec.tasks: Too many: 65: must have at most 64 items"}},
		{name: "too many dependsOn names", tasks: tasks(2, MaxDependsOn+1),
			want: []string{"spec.tasks[0].dependsOn.name: Too many: 65: must have at most 64 items",
				"spec.tasks[1].dependsOn.name: Too many: 65: must have at most 64 items"}},
		{name: "too many plugins", plugins: many,
			want: []string{"spec.plugins: Too many: 33: must have at most 32 items"}},
		{name: "arguments", plugins: map[string][]string{
			"pytorch":               make([]string, MaxPluginArgs+1),
			"mpi":                   {"--a", long, "--b", long + "y"},
			strings.Repeat("n", 64): nil,
			"tensorflow":            {`--ps="` + long},
		}, want: []string{
			"spec.plugins[mpi][1]: Too long: the argument is 4097 bytes; a plugin argument may have at most 4096 (and 1 more arguments over it)",
			`spec.plugins: Too long: plugin name "` + strings.Repeat("n", 64) + `" is 64 bytes; a plugin name may have at most 63`,
			"spec.plugins[pytorch]: Too many: 65: must have at most 64 items",
			"spec.plugins[tensorflow][0]: Too long: the argument is 4103 bytes; a plugin argument may have at most 4096",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := &batch.Job{Spec: batch.JobSpec{Tasks: tc.tasks, Plugins: tc.plugins}}
			raw, err := json.Marshal(job)
			if err != nil {
				t.Fatal(err)
			}
			read, err := ReadShape(raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ShapeOf(job), read); diff != "" {
				t.Errorf("ShapeOf (-) and ReadShape (+) differ:\n%s", diff)
			}
			var got []string
			for _, e := range CheckBounds(job) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// JSON that is not a Job's shape is an error, as decoding it would be.
func TestReadShapeErrors(t *testing.T) {
	for _, raw := range []string{`[]`, `{"spec":{"plugins":[]}}`, `{"spec":{"tasks":{}}}`, `{"spec":{"plugins":{"a":"b"}}}`, `{`} {
		if _, err := ReadShape([]byte(raw)); err == nil {
			t.Errorf("%s: no error", raw)
		}
	}
	s, err := ReadShape([]byte(`{"spec":{"plugins":null,"tasks":null}}`))
	if err != nil || s.Tasks != 0 || s.Plugins != 0 {
		t.Errorf("nulls: %+v, %v", s, err)
	}
}

func TestAbbrev(t *testing.T) {
	if got := Abbrev("short"); got != "short" {
		t.Errorf("Abbrev(short) = %q", got)
	}
	s := "a" + strings.Repeat("é", QuoteMax) // 2 bytes each: the cut falls inside a rune
	got := Abbrev(s)
	want := "a" + strings.Repeat("é", QuoteMax/2-1) + fmt.Sprintf("... (%d bytes)", len(s))
	if got != want {
		t.Errorf("Abbrev = %q; want %q", got, want)
	}
}
