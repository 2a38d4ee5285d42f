package bounds

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// h3Job is the Job of security review r4's H3: no framework plugin, 3,000,000
// pods of a one-container template, named by generateName.
const h3Job = `{"plugins":{"svc":[],"ssh":[]},"minAvailable":1,"tasks":[{"name":"t","replicas":3000000,"minAvailable":1,"template":{"spec":{"containers":[{"name":"a","image":"b"}]}}}]}`

// templateOf returns a one-container template whose JSON has exactly n bytes
// (n at least its size without the padding, about 130), padded with an annotation.
func templateOf(t *testing.T, n int) v1.PodTemplateSpec {
	t.Helper()
	tpl := v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"pad": ""}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: "train:latest"}}}}
	base := templateShapeOf(&tpl).Bytes
	tpl.Annotations["pad"] = strings.Repeat("x", n-base)
	if got := templateShapeOf(&tpl).Bytes; got != n {
		t.Fatalf("template of %d bytes, want %d", got, n)
	}
	return tpl
}

// The bounds on what Volcano's controller builds for a Job's pods, for every
// Job: MaxReplicas pods, and replicas × (template bytes + PodOverheadBytes)
// within MaxPodTemplateBytes. The H3 Job is over both (and the ssh bound),
// large Jobs people run are within.
func TestPodBounds(t *testing.T) {
	task := func(name string, replicas int32, bytes int) batch.TaskSpec {
		return batch.TaskSpec{Name: name, Replicas: replicas, Template: templateOf(t, bytes)}
	}
	job := func(plugins map[string][]string, tasks ...batch.TaskSpec) string {
		raw, err := json.Marshal(&batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Spec: batch.JobSpec{Tasks: tasks, Plugins: plugins}})
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	replicas := func(n int) string {
		return fmt.Sprintf("spec.tasks: Invalid value: %d: the job asks for %d pods in all (the sum of its tasks' replicas); a job may have at most 100000 (MaxReplicas), as Volcano's controller builds all of a job's pods and starts a goroutine for each at once", n, n)
	}
	podBytes := func(pods, bytes int) string {
		return fmt.Sprintf("spec.tasks: Too long: the job's %d pods would carry %d bytes of pod templates (each task's replicas times its template's JSON bytes plus 512); a job may carry at most 268435456 (MaxPodTemplateBytes), as Volcano's controller builds all of a job's pods in memory at once: use fewer replicas or a smaller template", pods, bytes)
	}
	pytorch := map[string][]string{"pytorch": nil, "svc": nil}
	tests := []struct {
		name string
		raw  string
		want []string
		// decoded is Check's errors when they differ: the decoded
		// Job encodes its template with empty fields the JSON left out.
		decoded []string
	}{
		{name: "H3: 3,000,000 pods of a tiny template", raw: `{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"generateName":"h3-"},"spec":` + h3Job + `}`, want: []string{
			replicas(3000000),
			// The template's JSON is 50 bytes.
			podBytes(3000000, 3000000*(50+512)),
		}, decoded: []string{replicas(3000000), podBytes(3000000, 3000000*(79+512))}},
		{name: "10,000 pods of a 26 KB template", raw: job(nil, task("worker", 10000, 26000))},
		{name: "framework: 100,000 pods of a 2 KB template", raw: job(pytorch, task("master", 1, 2000), task("worker", 99999, 2000))},
		{name: "framework: 100,000 pods of the largest template", raw: job(pytorch, task("master", 1, 2172), task("worker", 99999, 2172))},
		{name: "100,001 pods", raw: job(nil, task("master", 1, 200), task("worker", 100000, 200)), want: []string{replicas(100001)}},
		{name: "100,000 pods of a template 1 byte over", raw: job(nil, task("worker", 100000, 2173)), want: []string{podBytes(100000, 100000*(2173+512))}},
		{name: "500,000 pods", raw: job(nil, task("worker", 500000, 200)), want: []string{replicas(500000), podBytes(500000, 500000*(200+512))}},
		{name: "60,000 pods of a 4 KB template", raw: job(nil, task("worker", 60000, 4000)), want: []string{podBytes(60000, 60000*(4000+512))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read, err := ReadShape([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range read.Check() {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadShape(...).Check() (-want +got):\n%s", diff)
			}
			var job batch.Job
			if err := json.Unmarshal([]byte(tc.raw), &job); err != nil {
				t.Fatal(err)
			}
			got = nil
			for _, e := range Check(&job) {
				got = append(got, e.Error())
			}
			want := tc.want
			if tc.decoded != nil {
				want = tc.decoded
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

// CheckReplicas words its error as Shape.Check does.
func TestCheckReplicas(t *testing.T) {
	job := &batch.Job{Spec: batch.JobSpec{Tasks: []batch.TaskSpec{{Replicas: MaxReplicas}, {Replicas: 1}, {Replicas: -5}}}}
	var got []string
	for _, e := range CheckReplicas(job) {
		got = append(got, e.Error())
	}
	want := []string{"spec.tasks: Invalid value: 100001: the job asks for 100001 pods in all (the sum of its tasks' replicas); a job may have at most 100000 (MaxReplicas), as Volcano's controller builds all of a job's pods and starts a goroutine for each at once"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckReplicas (-want +got):\n%s", diff)
	}
	job.Spec.Tasks[1].Replicas = 0
	if errs := CheckReplicas(job); errs != nil {
		t.Errorf("CheckReplicas of %d pods: %v", MaxReplicas, errs)
	}
}

// ReadShape splits spec.tasks however the JSON is written, and reads only the
// first MaxTasks (what follows is counted, not decoded).
func TestReadShapeTasks(t *testing.T) {
	tests := []struct {
		raw       string
		tasks     int
		templates int // the tasks read
	}{
		{`[]`, 0, 0},
		{` [ ] `, 0, 0},
		{`[ {"name":"a,]"} , {"name":"\"],[{"}, null ]`, 3, 3},
		{`[{"name":"x","template":{"spec":{"containers":[{"args":["]",","]}]}}},{}]`, 2, 2},
		{`[` + strings.Repeat(`{"name":"t"},`, MaxTasks) + `1, "not a task", [{}]]`, MaxTasks + 3, MaxTasks},
	}
	for _, tc := range tests {
		s, err := ReadShape([]byte(`{"spec":{"tasks":` + tc.raw + `}}`))
		if err != nil {
			t.Errorf("%.60s: %v", tc.raw, err)
			continue
		}
		if s.Tasks != tc.tasks || len(s.Templates) != tc.templates || len(s.Replicas) != tc.templates {
			t.Errorf("%.60s: %d tasks, %d templates, %d replicas; want %d tasks, %d read", tc.raw, s.Tasks, len(s.Templates), len(s.Replicas), tc.tasks, tc.templates)
		}
	}
	// Within the first MaxTasks, a task is decoded: a number is an error.
	if _, err := ReadShape([]byte(`{"spec":{"tasks":[{},1]}}`)); err == nil {
		t.Errorf("a number as a task: no error")
	}
}
