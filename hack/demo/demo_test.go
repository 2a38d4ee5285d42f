package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// The examples must load strictly into Volcano Jobs: make demo submits them.
func TestLoadExamples(t *testing.T) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	examples, err := loadExamples(root, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) != len(frameworks) {
		t.Fatalf("got %d examples, want %d", len(examples), len(frameworks))
	}
	for _, ex := range examples {
		if _, ok := ex.job.Spec.Plugins[ex.framework]; !ok {
			t.Errorf("%s: plugin %s is not enabled", ex.file, ex.framework)
		}
		if ex.job.Namespace != "demo" || ex.job.Name == "" || len(ex.job.Spec.Tasks) == 0 {
			t.Errorf("%s: namespace %q, name %q, %d tasks", ex.file, ex.job.Namespace, ex.job.Name, len(ex.job.Spec.Tasks))
		}
	}
}

func TestSortedPodsAndAddedEnv(t *testing.T) {
	job := &batch.Job{Spec: batch.JobSpec{Tasks: []batch.TaskSpec{{Name: "ps"}, {Name: "worker"}}}}
	pod := func(name, task string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{batch.TaskSpecKey: task}}}
	}
	r := &run{example: &example{job: job}, pods: map[string]*corev1.Pod{}}
	for _, p := range []*corev1.Pod{pod("j-worker-10", "worker"), pod("j-worker-2", "worker"), pod("j-ps-0", "ps")} {
		r.pods[p.Name] = p
	}
	var got []string
	for _, p := range sortedPods(r) {
		got = append(got, p.Name)
	}
	if want := []string{"j-ps-0", "j-worker-2", "j-worker-10"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("sortedPods = %v, want %v", got, want)
	}

	tmpl := &corev1.Container{Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}}}
	c := corev1.Container{Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}, {Name: "TF_CONFIG", Value: "{}"}, {Name: "VC_PS_NUM", Value: "1"}}}
	added := addedEnv(c, tmpl)
	if len(added) != 2 || added[0].Name != "TF_CONFIG" || !volcanoEnv(added[1].Name) {
		t.Errorf("addedEnv = %v", added)
	}
}

// Nothing the demo imports logs at init: Volcano's vgpu device package (a
// dependency of its job plugin factory) logs "init kubeclient in hamivgpu
// failed" on stderr when ~/.kube/config is missing, before the demo's first
// line. The binary runs with -h, in a HOME without .kube and no KUBECONFIG.
func TestNoInitTimeLogs(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "demo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-h")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo -h: %v\n%s", err, stderr.String())
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	if !strings.HasPrefix(first, "Usage of ") || strings.Contains(stderr.String(), "hamivgpu") {
		t.Errorf("demo -h: stderr must start with the usage and hold no init-time log; got:\n%s", stderr.String())
	}
}

// A run that ended well shows the end of its longest log (the pod that
// prints the results); one that failed shows more of its first failed pod's
// log, where the framework's own warnings come before a traceback.
func TestLogToShow(t *testing.T) {
	job := &batch.Job{Spec: batch.JobSpec{Tasks: []batch.TaskSpec{{Name: "master"}, {Name: "worker"}}}}
	pod := func(name, task string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{batch.TaskSpecKey: task}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	numbered := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	newRun := func(ok bool) *run {
		r := &run{example: &example{job: job}, ok: ok, pods: map[string]*corev1.Pod{}, podLogs: map[string]string{
			"j-master-0": numbered(100), "j-worker-0": "", "j-worker-1": numbered(70),
		}}
		for _, p := range []*corev1.Pod{pod("j-master-0", "master", corev1.PodRunning), pod("j-worker-0", "worker", corev1.PodFailed), pod("j-worker-1", "worker", corev1.PodFailed)} {
			r.pods[p.Name] = p
		}
		return r
	}
	for _, tc := range []struct {
		name               string
		ok                 bool
		wantPod, wantWhat  string
		wantFirst, wantLen int
	}{
		{"completed: the longest log, its last 14 lines", true, "j-master-0", "last 14 lines of the log", 87, logLines},
		{"failed: the first failed pod that printed, its last 60 lines", false, "j-worker-1", "last 60 lines of the log", 11, failedLogLines},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotPod, lines, what := logToShow(newRun(tc.ok))
			if gotPod != tc.wantPod || what != tc.wantWhat || len(lines) != tc.wantLen || lines[0] != fmt.Sprintf("line %d", tc.wantFirst) {
				t.Errorf("logToShow = %s, %d lines from %q, %q; want %s, %d lines from \"line %d\", %q", gotPod, len(lines), lines[0], what, tc.wantPod, tc.wantLen, tc.wantFirst, tc.wantWhat)
			}
		})
	}
}

// --at-once splits the Jobs into groups in their order, every Job in exactly
// one group.
func TestGroupsOf(t *testing.T) {
	var examples []*example
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		examples = append(examples, &example{job: &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: name}}})
	}
	for _, tc := range []struct {
		n    int
		want [][]string
	}{
		{0, [][]string{{"a", "b", "c", "d", "e"}}},
		{-1, [][]string{{"a", "b", "c", "d", "e"}}},
		{1, [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}},
		{2, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}},
		{5, [][]string{{"a", "b", "c", "d", "e"}}},
		{9, [][]string{{"a", "b", "c", "d", "e"}}},
	} {
		var got [][]string
		for _, group := range groupsOf(examples, tc.n) {
			var names []string
			for _, ex := range group {
				names = append(names, ex.job.Name)
			}
			got = append(got, names)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("groupsOf(%d) (-want +got):\n%s", tc.n, diff)
		}
	}
}
