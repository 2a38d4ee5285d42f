package paddlesample

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
)

func TestJudgePaddle(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/paddle/paddle-contract.yaml")
	job, pods := trainingtest.Pods(t, ex, paddle.New)
	for i, p := range pods {
		p.Status.PodIP = fmt.Sprintf("10.245.0.%d", i+2)
	}
	nodes := fmt.Sprintf("%[1]s-worker-0,%[1]s-worker-1,%[1]s-worker-2", job.Name)
	line := func(rank int, host, extra string) string {
		return fmt.Sprintf("paddle collective rank %d of 3 on %s: OK, job %s, rendezvous 10.245.0.2:36543 hosted by %s-worker-0, nodes %s; %s\n",
			rank, host, job.Name, job.Name, nodes, extra)
	}
	good := func() map[string]string {
		return map[string]string{
			pods[0].Name: pods[0].Name + ": serves the rendezvous at 10.245.0.2:36543\n" + line(0, pods[0].Name, "2 nodes reached the collective master 10.245.0.2:40000"),
			pods[1].Name: line(1, pods[1].Name, "reached the collective master 10.245.0.2:40000"),
			pods[2].Name: line(2, pods[2].Name, "reached the collective master 10.245.0.2:40000"),
		}
	}
	trainingtest.JudgeEdits(t, ex, pods, good, []trainingtest.LogEdit{
		{Name: "every node started up with rank 0 serving"},
		{
			Name: "a node found a variable the launcher would not take",
			Edit: func(l map[string]string) {
				l[pods[2].Name] = "MISMATCH x: PADDLE_NNODES='' is neither a positive integer N nor a range N:M\n"
			},
			WantErr: "pod " + pods[2].Name + ": MISMATCH x: PADDLE_NNODES=''",
		},
		{
			Name:    "a node never finished",
			Edit:    func(l map[string]string) { l[pods[1].Name] = "" },
			WantErr: "pod " + pods[1].Name + " never finished",
		},
		{
			Name: "two nodes claim one rank",
			Edit: func(l map[string]string) {
				l[pods[2].Name] = line(1, pods[2].Name, "reached the collective master 10.245.0.2:40000")
			},
			WantErr: "ranks [0 1 1]",
		},
		{
			Name: "rank 0 is not the pod told to serve",
			Edit: func(l map[string]string) {
				l[pods[0].Name] = line(1, pods[0].Name, "x")
				l[pods[1].Name] = line(0, pods[1].Name, "x")
			},
			WantErr: "rank 0 is pod " + pods[1].Name + ", but the plugin told pod " + pods[0].Name,
		},
		{
			Name: "the rendezvous was served at another address",
			Edit: func(l map[string]string) {
				for k, v := range l {
					l[k] = strings.ReplaceAll(v, "rendezvous 10.245.0.2:", "rendezvous 10.245.0.9:")
				}
			},
			WantErr: "the rendezvous was served at 10.245.0.9, pod " + pods[0].Name + "'s IP is 10.245.0.2",
		},
		{
			Name: "fewer nodes than pods",
			Edit: func(l map[string]string) {
				for k, v := range l {
					l[k] = strings.ReplaceAll(v, " of 3 on ", " of 2 on ")
				}
			},
			WantErr: "started up with 2 nodes, the Job has 3 pods",
		},
		{
			Name: "a node saw other nodes",
			Edit: func(l map[string]string) {
				l[pods[2].Name] = strings.Replace(l[pods[2].Name], nodes, nodes+",stranger", 1)
			},
			WantErr: "pod " + pods[2].Name + " saw nodes",
		},
		{
			Name: "the nodes are not the Job's pods",
			Edit: func(l map[string]string) {
				for k, v := range l {
					l[k] = strings.ReplaceAll(v, nodes, nodes+",stranger")
				}
			},
			WantErr: "include stranger, which is not a pod of the Job",
		},
		{
			Name: "another job id",
			Edit: func(l map[string]string) {
				l[pods[1].Name] = strings.Replace(l[pods[1].Name], "job "+job.Name, "job other", 1)
			},
			WantErr: "ran in job other",
		},
		{
			Name: "parameter-server mode although the variables select collective",
			Edit: func(l map[string]string) {
				l[pods[1].Name] = strings.Replace(l[pods[1].Name], "paddle collective", "paddle ps", 1)
			},
			WantErr: "started up in ps mode, its variables select collective mode",
		},
	})
}

// The hello example's success lines, as its script prints them in a pod of
// each rank, and what must not pass for them.
func TestPaddleHello(t *testing.T) {
	h := trainingtest.Hello(t, Sample.Hellos, "example/paddle/paddle.yaml")
	pod := func(i int) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("paddle-dist-worker-%d", i), Annotations: map[string]string{batch.TaskSpecKey: "worker"}}}
	}
	pods := []*corev1.Pod{pod(0), pod(1), pod(2)}
	node := func(i int) string {
		return fmt.Sprintf("node paddle-dist-worker-%d: OK, registered at the rendezvous paddle-dist-worker-0.paddle-dist.ns.svc.cluster.local:36543 of job paddle-dist with 3 nodes\n", i)
	}
	good := map[string]string{
		"paddle-dist-worker-0": "registered paddle-dist-worker-2\nregistered paddle-dist-worker-1\nrank 0 paddle-dist-worker-0: OK, served the rendezvous at 10.244.1.7:36543 to 2 nodes of job paddle-dist\n",
		"paddle-dist-worker-1": node(1),
		"paddle-dist-worker-2": node(2),
	}
	if lines, err := h.Judge(training.Run{Pods: pods, Logs: good}); err != nil || lines != 3 {
		t.Errorf("Judge = %d, %v; want 3 lines", lines, err)
	}
	for name, log := range map[string]string{
		"rank 0 served fewer nodes":         strings.Replace(good["paddle-dist-worker-0"], "to 2 nodes", "to 1 nodes", 1),
		"rank 0 served at a DNS name":       strings.Replace(good["paddle-dist-worker-0"], "10.244.1.7", "paddle-dist-worker-0.paddle-dist.ns.svc.cluster.local", 1),
		"rank 0 exited with the node count": "registered paddle-dist-worker-2\nrank 0: only 2 of 3 nodes registered\n",
	} {
		logs := map[string]string{"paddle-dist-worker-0": log, "paddle-dist-worker-1": node(1), "paddle-dist-worker-2": node(2)}
		if _, err := h.Judge(training.Run{Pods: pods, Logs: logs}); err == nil {
			t.Errorf("%s: Judge passed", name)
		}
	}
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/paddle/paddle-contract.yaml": {
			Joined: []string{
				"paddle-check-worker-0: serves the rendezvous at 10.88.0.5:36543 (PADDLE_MASTER=paddle-check-worker-0.paddle-check.ns.svc.cluster.local:36543)",
				"paddle collective rank 2 of 3 on paddle-check-worker-2: OK, job paddle-check, rendezvous 10.88.0.5:36543 hosted by a, nodes a,b,c; x",
			},
			Listening: []string{"paddle-check-worker-0: serves the rendezvous at 10.88.0.5:36543 (PADDLE_MASTER=paddle-check-worker-0.paddle-check.ns.svc.cluster.local:36543)"},
		},
	})
}
