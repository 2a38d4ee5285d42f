package samples

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
)

// Every YAML of example/ runs for real somewhere (issue #25: the examples
// only ever ran on KWOK, and the first one a user met hung): as an example of
// a Sample's Training, as one of its Hellos, or, for the GPU examples, nowhere
// but on KWOK GPU nodes. Each Hello loads, names only public images, and has
// a local image for each.
func TestEveryExampleRuns(t *testing.T) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for _, ex := range Examples() {
		runs[ex.File] = true
	}
	for _, h := range Hellos() {
		runs[h.Source] = true
		job, err := h.Load(root)
		if err != nil {
			t.Fatal(err)
		}
		if job.Name != h.Name {
			t.Errorf("%s: Job %s, want %s", h.Source, job.Name, h.Name)
		}
		for _, task := range job.Spec.Tasks {
			for _, c := range task.Template.Spec.Containers {
				if strings.HasPrefix(c.Image, "localhost/") {
					t.Errorf("%s: task %s runs local image %s; a Hello runs as written, on public images", h.Source, task.Name, c.Image)
				}
			}
		}
		if _, err := training.Localize(job); err != nil {
			t.Error(err)
		}
	}
	err = filepath.WalkDir(filepath.Join(root, "example"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if !runs[rel] && !strings.HasSuffix(rel, "-gpu.yaml") {
			t.Errorf("%s runs nowhere: add it to its framework's Sample: Training (with a judge) or Hellos", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The judged example files exist, load as Jobs of their framework, and mount
// their program's ConfigMap in the container the judge reads.
func TestExamplesLoad(t *testing.T) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range Examples() {
		job, err := training.LoadJob(root, ex.File)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := job.Spec.Plugins[ex.Framework]; !ok {
			t.Errorf("%s: no %s plugin", ex.File, ex.Framework)
		}
		cm, err := ex.ConfigMapOf(root, "ns")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range job.Spec.Tasks {
			spec := task.Template.Spec
			if len(spec.Containers) == 0 || spec.Containers[0].Name != ex.Container {
				t.Errorf("%s task %s: first container is not %s", ex.File, task.Name, ex.Container)
			}
			mounted := false
			for _, v := range spec.Volumes {
				mounted = mounted || (v.ConfigMap != nil && v.ConfigMap.Name == cm.Name)
			}
			if !mounted {
				t.Errorf("%s task %s does not mount ConfigMap %s", ex.File, task.Name, cm.Name)
			}
		}
	}
}

func TestHelloJudge(t *testing.T) {
	pod := func(name, task string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{batch.TaskSpecKey: task}}}
	}
	hello := func(source string) training.Hello { return trainingtest.Hello(t, Hellos(), source) }
	tfPods := []*corev1.Pod{pod("tf-dist-ps-0", "ps"), pod("tf-dist-worker-0", "worker"), pod("tf-dist-worker-1", "worker")}
	tfLogs := map[string]string{
		"tf-dist-ps-0":     "ps:0 serves tf-dist-ps-0.tf-dist.ns.svc.cluster.local:2222\nps:0: OK, reached and heard from 2 tasks\n",
		"tf-dist-worker-0": "worker:0: OK, reached and heard from 2 tasks\n",
		"tf-dist-worker-1": "worker:1: OK, reached and heard from 2 tasks\n",
	}
	mpiPods := []*corev1.Pod{pod("mpi-dist-master-0", "master"), pod("mpi-dist-worker-0", "worker"), pod("mpi-dist-worker-1", "worker")}
	with := func(logs map[string]string, name, log string) map[string]string {
		out := map[string]string{}
		for k, v := range logs {
			out[k] = v
		}
		out[name] = log
		return out
	}
	cases := []struct {
		name      string
		hello     training.Hello
		run       training.Run
		wantLines int
		wantErr   string
	}{
		{"every task said OK", hello("example/tensorflow/tensorflow.yaml"), training.Run{Pods: tfPods, Logs: tfLogs}, 3, ""},
		{"the ps hung: TF_CONFIG printed, port never served (issue #25)", hello("example/tensorflow/tensorflow.yaml"),
			training.Run{Pods: tfPods, Logs: with(tfLogs, "tf-dist-ps-0", `{'cluster': {'ps': ['tf-dist-ps-0.tf-dist.ns.svc.cluster.local:2222']}}`+"\n")}, 0, "pod tf-dist-ps-0 printed 0"},
		{"a task of the Job had no pod", hello("example/tensorflow/tensorflow.yaml"), training.Run{Pods: tfPods[:1], Logs: tfLogs}, 0, "no pod of task worker"},
		{"the launcher printed both ranks", hello("example/mpi/mpi.yaml"),
			training.Run{Pods: mpiPods, Logs: map[string]string{"mpi-dist-master-0": "rank 1 of 2 on mpi-dist-worker-1\nrank 0 of 2 on mpi-dist-worker-0\n"}}, 2, ""},
		{"one rank twice is not two ranks", hello("example/mpi/mpi.yaml"),
			training.Run{Pods: mpiPods, Logs: map[string]string{"mpi-dist-master-0": "rank 0 of 2 on mpi-dist-worker-0\nrank 0 of 2 on mpi-dist-worker-0\n"}}, 0, "printed 1 distinct"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines, err := tc.hello.Judge(tc.run)
			if tc.wantErr == "" {
				if err != nil || lines != tc.wantLines {
					t.Errorf("Judge = %d, %v; want %d lines", lines, err, tc.wantLines)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Judge = %d, %v; want an error with %q", lines, err, tc.wantErr)
			}
		})
	}
}

// Every contract check's program reads training.CheckTimeoutEnv, and
// WithCheckTimeout sets it in every task's program container (make demo's
// --check-timeout, make vm-test under an emulated CPU); the examples that
// train are left as written.
func TestContractChecksReadTheirTimeout(t *testing.T) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	checks := 0
	for _, ex := range Examples() {
		job, err := training.LoadJob(root, ex.File)
		if err != nil {
			t.Fatal(err)
		}
		before := job.DeepCopy()
		ex.WithCheckTimeout(job, 90*time.Minute)
		if !ex.Contract {
			if diff := cmp.Diff(before, job); diff != "" {
				t.Errorf("%s trains, yet its Job changed (-before +after):\n%s", ex.File, diff)
			}
			continue
		}
		checks++
		cm, err := ex.ConfigMapOf(root, "ns")
		if err != nil {
			t.Fatal(err)
		}
		read := false
		for _, program := range cm.Data {
			read = read || strings.Contains(program, `os.environ.get("`+training.CheckTimeoutEnv+`"`)
		}
		if !read {
			t.Errorf("%s: none of its programs %v reads %s", ex.File, ex.Programs, training.CheckTimeoutEnv)
		}
		for _, task := range job.Spec.Tasks {
			got := ""
			for _, e := range task.Template.Spec.Containers[0].Env {
				if e.Name == training.CheckTimeoutEnv {
					got = e.Value
				}
			}
			if got != "5400" {
				t.Errorf("%s task %s: %s=%q, want 5400", ex.File, task.Name, training.CheckTimeoutEnv, got)
			}
		}
	}
	if checks == 0 {
		t.Error("no example is a contract check")
	}
}
