package bounds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	"volcano.sh/apis/pkg/client/clientset/versioned/scheme"
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
	// withTemplate returns tasks(n, 0) whose templates edit sets.
	withTemplate := func(n int, edit func(i int, t *v1.PodTemplateSpec)) []batch.TaskSpec {
		out := tasks(n, 0)
		for i := range out {
			edit(i, &out[i].Template)
		}
		return out
	}
	containers := func(n int) []v1.Container { return make([]v1.Container, n) }
	env := func(n int) []v1.EnvVar { return make([]v1.EnvVar, n) }
	strs := func(n int) []string { return make([]string, n) }
	labels := func(n int) map[string]string {
		m := map[string]string{}
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("l%d", i)] = ""
		}
		return m
	}
	many := map[string][]string{}
	for i := 0; i <= MaxPlugins; i++ {
		many[fmt.Sprintf(`p:{"%d"}`, i)] = []string{long}
	}
	tests := []struct {
		name     string
		tasks    []batch.TaskSpec
		plugins  map[string][]string
		replicas []int32 // of the first tasks
		want     []string
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
		{name: "templates within", tasks: withTemplate(4, func(i int, t *v1.PodTemplateSpec) {
			t.Spec.Containers = containers(1)
			c := &t.Spec.Containers[0]
			switch i { // each at MaxTemplateEntries
			case 0:
				c.Env, c.Args = env(MaxEnv), strs(MaxArgs-1)
			case 1:
				c.Command, c.EnvFrom, c.Ports, c.VolumeMounts = strs(MaxArgs), make([]v1.EnvFromSource, MaxEnvFrom), make([]v1.ContainerPort, MaxPorts), make([]v1.VolumeMount, 767)
			case 2:
				t.Spec.InitContainers, t.Spec.Containers = containers(MaxContainers), containers(MaxContainers-1)
				t.Spec.Volumes, t.Spec.Tolerations = make([]v1.Volume, MaxVolumes), make([]v1.Toleration, MaxListEntries)
				t.Labels, t.Annotations = labels(MaxListEntries), labels(897)
			}
		})},
		{name: "container lists", tasks: withTemplate(2, func(i int, t *v1.PodTemplateSpec) {
			t.Spec.Containers = containers(2)
			c := &t.Spec.Containers[1]
			if i == 0 {
				c.Env = env(MaxEnv + 1)
				return
			}
			c.EnvFrom, c.Args, c.Command = make([]v1.EnvFromSource, MaxEnvFrom+1), strs(MaxArgs+1), strs(MaxArgs+2)
			c.Ports, c.VolumeMounts = make([]v1.ContainerPort, MaxPorts+1), make([]v1.VolumeMount, MaxVolumeMounts+1)
		}), want: []string{
			"spec.tasks[0].template.spec.containers[1].env: Too many: 2049: must have at most 2048 items",
			"spec.tasks[1].template.spec.containers[1].command: Too many: 2050: must have at most 2048 items (and 4 more lists of the template over their bounds)",
			"spec.tasks[1].template: Too many: 6408: the pod template's lists and maps have 6408 entries in all; a template may have at most 4096",
		}},
		{name: "containers, volumes and other lists", tasks: withTemplate(5, func(i int, t *v1.PodTemplateSpec) {
			switch i {
			case 0:
				t.Spec.Containers = containers(MaxContainers + 1)
			case 1:
				t.Spec.InitContainers = containers(MaxContainers + 1)
				t.Spec.InitContainers[3].Env = env(MaxEnv + 1)
			case 2:
				t.Spec.Volumes = make([]v1.Volume, MaxVolumes+1)
			case 3:
				t.Spec.Tolerations = make([]v1.Toleration, MaxListEntries+1)
			case 4:
				t.Annotations = labels(MaxListEntries + 1)
			}
		}), want: []string{
			"spec.tasks[0].template.spec.containers: Too many: 65: must have at most 64 items",
			"spec.tasks[1].template.spec.initContainers[3].env: Too many: 2049: must have at most 2048 items (and 1 more lists of the template over their bounds)",
			"spec.tasks[2].template.spec.volumes: Too many: 1025: must have at most 1024 items",
			"spec.tasks[3].template.spec.tolerations: Too many: 1025: must have at most 1024 items",
			"spec.tasks[4].template.metadata.annotations: Too many: 1025: must have at most 1024 items",
		}},
		{name: "entries of all templates", tasks: withTemplate(5, func(i int, t *v1.PodTemplateSpec) {
			t.Spec.Containers = containers(1)
			t.Spec.Containers[0].Args, t.Spec.Containers[0].Command = strs(MaxArgs), strs(MaxArgs-1)
		}), want: []string{
			"spec.tasks: Too many: 20480: the tasks' pod templates have 20480 list and map entries in all; a job may have at most 16384",
		}},
		{name: "replicas times template bytes", tasks: withTemplate(2, func(i int, t *v1.PodTemplateSpec) {
			// 300 pods of a 1 MiB template and 1,000 of a small one: over
			// MaxPodTemplateBytes, which 256 of the large would not be.
			t.Spec.Containers = containers(1)
			if i == 0 {
				t.Annotations = map[string]string{"a": strings.Repeat("x", 1<<20)}
			}
		}), replicas: []int32{300, 1000}, want: []string{
			"spec.tasks: Too long: the job's 1300 pods would carry 315330800 bytes of pod templates (each task's replicas times its template's JSON bytes plus 512); a job may carry at most 268435456 (MaxPodTemplateBytes), as Volcano's controller builds all of a job's pods in memory at once: use fewer replicas or a smaller template",
		}},
		{name: "replicas times template bytes, within", tasks: withTemplate(2, func(i int, t *v1.PodTemplateSpec) {
			t.Spec.Containers = containers(1)
			if i == 0 {
				t.Annotations = map[string]string{"a": strings.Repeat("x", 1<<20)}
			}
		}), replicas: []int32{255, -3}},
		{name: "templates of too many tasks", tasks: withTemplate(MaxTasks+1, func(i int, t *v1.PodTemplateSpec) {
			t.Spec.Containers = containers(MaxContainers + 1)
		}), want: []string{"spec.tasks: Too many: 65: must have at most 64 items"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := &batch.Job{Spec: batch.JobSpec{Tasks: tc.tasks, Plugins: tc.plugins}}
			for i, r := range tc.replicas {
				job.Spec.Tasks[i].Replicas = r
			}
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
			for _, e := range Check(job) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// ReadShape counts what the API machinery would decode, however the JSON is
// written: whitespace, escaped keys, nulls, and lists and maps the Job type
// does not know (which count against MaxListEntries).
func TestReadTemplateJSON(t *testing.T) {
	list := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	tests := []struct {
		name, template string
		want           TemplateShape
	}{
		{"null", `null`, TemplateShape{}},
		{"empty", `{}`, TemplateShape{}},
		{"no spec", `{"metadata":{"labels":{"a":"b","c":"d"}}}`, TemplateShape{Entries: 2}},
		{"whitespace and nulls", " {\n\t\"spec\" : { \"containers\" : [ { \"env\" : [ null , {\"name\":\"a\"} ] , \"args\": null } ] } } ",
			TemplateShape{Entries: 3}},
		{"escaped keys", `{"sp\u0065c":{"containers":[{"\u0065nv":` + list(MaxEnv+1, `{}`) + `}]}}`,
			TemplateShape{Entries: MaxEnv + 2, Over: ListShape{Path: "spec.containers[0].env", Entries: MaxEnv + 1, Max: MaxEnv}, OverLists: 1}},
		{"strings holding JSON", `{"spec":{"containers":[{"args":["]}\"[{",",,,",":{\\"]}]}}`, TemplateShape{Entries: 4}},
		{"an unknown list", `{"spec":{"containers":[{"widgets":` + list(MaxListEntries+1, `1`) + `}]}}`,
			TemplateShape{Entries: MaxListEntries + 2, Over: ListShape{Path: "spec.containers[0].widgets", Entries: MaxListEntries + 1, Max: MaxListEntries}, OverLists: 1}},
		{"env of a pod, not a container", `{"spec":{"env":` + list(MaxListEntries+1, `{}`) + `}}`,
			TemplateShape{Entries: MaxListEntries + 1, Over: ListShape{Path: "spec.env", Entries: MaxListEntries + 1, Max: MaxListEntries}, OverLists: 1}},
		{"a long key", `{"spec":{"` + strings.Repeat("k", 300) + `":` + list(MaxListEntries+1, `0`) + `}}`,
			TemplateShape{Entries: MaxListEntries + 1, Over: ListShape{Path: "spec." + jobs.Abbrev(strings.Repeat("k", 300)), Entries: MaxListEntries + 1, Max: MaxListEntries}, OverLists: 1}},
		{"a struct of many members", `{"spec":{` + strings.TrimPrefix(strings.Repeat(`,"x":0`, MaxListEntries+1), ",") + `}}`,
			TemplateShape{Over: ListShape{Path: "spec", Entries: MaxListEntries + 1, Max: MaxListEntries}, OverLists: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"spec":{"tasks":[{"name":"a","template":` + tc.template + `}]}}`
			s, err := ReadShape([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			// Bytes: the template as written without whitespace.
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(tc.template)); err != nil {
				t.Fatal(err)
			}
			tc.want.Bytes = compact.Len()
			if diff := cmp.Diff([]TemplateShape{tc.want}, s.Templates); diff != "" {
				t.Errorf("templates (-want +got):\n%s", diff)
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
	// Duplicates where the shape reads: malformed.
	for _, raw := range []string{
		`{"spec":{"tasks":[{"name":"a"}]},"spec":{}}`,
		`{"spec":{"tasks":[],"tasks":[{"name":"a"}]}}`,
		`{"spec":{"tasks":[{"dependsOn":{"name":["a"]},"dependsOn":{}}]}}`,
	} {
		var dup *DuplicateFieldError
		if _, err := ReadShape([]byte(raw)); !errors.As(err, &dup) {
			t.Errorf("%s: error %v, want a *DuplicateFieldError", raw, err)
		}
	}
	s, err := ReadShape([]byte(`{"spec":{"plugins":null,"tasks":null}}`))
	if err != nil || s.Tasks != 0 || s.Plugins != 0 {
		t.Errorf("nulls: %+v, %v", s, err)
	}
}

// Names match case-sensitively, as the API machinery decodes: 70 tasks under
// "SPEC" or "Tasks" are no tasks to the decoder, and none to the bounds;
// 70 under "spec" after an empty "Spec" are 70 to both (encoding/json's
// case-insensitive match let the later "Spec" hide them).
func TestReadShapeCaseSensitive(t *testing.T) {
	many := `[` + strings.TrimSuffix(strings.Repeat(`{"name":"t"},`, 70), ",") + `]`
	for _, tc := range []struct {
		raw  string
		want int
	}{
		{`{"SPEC":{"tasks":` + many + `}}`, 0},
		{`{"spec":{"Tasks":` + many + `}}`, 0},
		{`{"spec":{"tasks":` + many + `},"Spec":{}}`, 70},
		{`{"Spec":{},"spec":{"tasks":` + many + `}}`, 70},
	} {
		s, err := ReadShape([]byte(tc.raw))
		if err != nil {
			t.Errorf("%.40s...: %v", tc.raw, err)
			continue
		}
		job := &batch.Job{}
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(`{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",`+tc.raw[1:]), nil, job); err != nil {
			t.Fatal(err)
		}
		if s.Tasks != tc.want || len(job.Spec.Tasks) != tc.want {
			t.Errorf("%.40s...: shape has %d tasks, the decoder %d, want %d", tc.raw, s.Tasks, len(job.Spec.Tasks), tc.want)
		}
	}
}
