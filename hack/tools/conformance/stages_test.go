// Package conformance tests the KWOK stages of make conformance's cluster
// (hack/conformance/kwokstages.yaml) with KWOK's own stage matching, which
// the main module cannot import (KWOK pins Kubernetes libraries of its own).
package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/utils/gotpl"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"
)

// stages loads kwokstages.yaml with script.jq substituted, as
// hack/conformance's kwokConfig does.
func stages(t *testing.T) []*internalversion.Stage {
	t.Helper()
	dir := filepath.Join("..", "..", "conformance")
	yaml, err := os.ReadFile(filepath.Join(dir, "kwokstages.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(dir, "script.jq"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "kwok.yaml")
	conf := strings.ReplaceAll(string(yaml), "$SCRIPT", strings.TrimSpace(string(script)))
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := config.Load(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	return config.FilterWithType[*internalversion.Stage](objs)
}

func shPod(script string, restart corev1.RestartPolicy) *corev1.Pod {
	return &corev1.Pod{
		Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{
			Name: "c", Image: "busybox", Command: []string{"/bin/sh"}, Args: []string{"-c", script},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.2"},
	}
}

// TestStages checks which stage each of the suites' containers meets, after
// how long, and the exit code of the failing ones.
func TestStages(t *testing.T) {
	all := stages(t)
	lc, err := lifecycle.NewLifecycle(all)
	if err != nil {
		t.Fatal(err)
	}
	tf := func(role string) *corev1.Pod {
		p := shPod("", corev1.RestartPolicyNever)
		c := &p.Spec.Containers[0]
		c.Args = nil
		c.Command = []string{"sh", "-c", `PS_HOST=x; export TF_CONFIG={\"cluster\":{\"ps\":[${PS_HOST}],\"worker\":[${WORKER_HOST}]},\"task\":{\"type\":\"` +
			role + `\",\"index\":${VK_TASK_INDEX}},\"environment\":\"cloud\"}; python /var/tf_dist_mnist/dist_mnist.py --train_steps 1000`}
		return p
	}
	nginx := shPod("", corev1.RestartPolicyOnFailure)
	nginx.Spec.Containers[0].Command, nginx.Spec.Containers[0].Args = nil, nil
	pending := shPod("sleep 10s", corev1.RestartPolicyNever)
	pending.Status.Phase = corev1.PodPending
	deleted := shPod("sleep 1000", corev1.RestartPolicyOnFailure)
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	deletedFailed := shPod("sh fake.sh", corev1.RestartPolicyNever)
	deletedFailed.Status.Phase = corev1.PodFailed
	deletedFailed.DeletionTimestamp = &now

	for _, c := range []struct {
		name  string
		pod   *corev1.Pod
		stage string // "" for none: the pod keeps running
		delay time.Duration
		code  string // exit code of a failing stage
	}{
		{"sleep 10s", shPod("sleep 10s", corev1.RestartPolicyNever), "conformance-sleep-succeeded", 10 * time.Second, ""},
		{"sleep 5 OnFailure", shPod("sleep 5", corev1.RestartPolicyOnFailure), "conformance-sleep-succeeded", 5 * time.Second, ""},
		{"sleep 1000 Always", shPod("sleep 1000", corev1.RestartPolicyAlways), "", 0, ""},
		{"exit 3", shPod("sleep 10s && exit 3", corev1.RestartPolicyNever), "conformance-sleep-failed", 10 * time.Second, `"exitCode":3,`},
		{"exit 3 OnFailure", shPod("sleep 10s && exit 3", corev1.RestartPolicyOnFailure), "", 0, ""},
		{"command not found", shPod("sleep 10s && xxx", corev1.RestartPolicyNever), "conformance-sleep-failed", 10 * time.Second, `"exitCode":127,`},
		{"sleep && echo", shPod("sleep 10s && echo", corev1.RestartPolicyNever), "", 0, ""},
		{"missing script", shPod("sh fake.sh", corev1.RestartPolicyNever), "conformance-sleep-failed", 0, `"exitCode":127,`},
		{"nginx", nginx, "", 0, ""},
		{"sshd -D", shPod("mkdir -p /var/run/sshd; /usr/sbin/sshd -D;", corev1.RestartPolicyOnFailure), "", 0, ""},
		{"mpi launcher", shPod("sleep 5;\nmkdir -p /var/run/sshd; /usr/sbin/sshd;\nmpiexec --allow-run-as-root -np 2 mpi_hello_world > /home/re", corev1.RestartPolicyOnFailure), "conformance-program-done", 10 * time.Second, ""},
		{"tensorflow ps", tf("ps"), "", 0, ""},
		{"tensorflow worker", tf("worker"), "conformance-program-done", 10 * time.Second, ""},
		{"pending", pending, "", 0, ""},
		{"deleted", deleted, "conformance-pod-delete", 5 * time.Second, ""},
		{"deleted after it failed", deletedFailed, "conformance-pod-delete-ended", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := lc.Match(ctx, labels.Set{}, labels.Set{}, c.pod)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if st != nil {
				got = st.Name()
			}
			if got != c.stage {
				t.Fatalf("stage %q, want %q", got, c.stage)
			}
			if st == nil {
				return
			}
			if d, _ := st.Delay(ctx, c.pod, time.Now()); d.Round(time.Second) != c.delay {
				t.Errorf("delay %v, want %v", d, c.delay)
			}
			if c.code == "" {
				return
			}
			var tpl string
			for _, s := range all {
				if s.Name == c.stage {
					tpl = s.Spec.Next.Patches[0].Template
				}
			}
			out, err := gotpl.NewRenderer(nil).ToJSON(tpl, c.pod)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), c.code) || !strings.Contains(string(out), `"phase":"Failed"`) {
				t.Errorf("status %s, want %s and phase Failed", out, c.code)
			}
		})
	}
}
