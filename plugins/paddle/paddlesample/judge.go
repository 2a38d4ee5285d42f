package paddlesample

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
)

// paddleDoneLine is the last line of example/paddle/paddle_check.py on a node
// that started up: mode, rank, nodes, host, job id, the rendezvous's address,
// the host serving it, the nodes in rank order, and what it reached.
var paddleDoneLine = regexp.MustCompile(`(?m)^paddle (collective|ps) rank (\d+) of (\d+) on (\S+): OK, job (\S+), rendezvous (\S+):(\d+) hosted by (\S+), nodes (\S+); (.*)$`)

// paddleNode is what one pod of paddle_check.py printed.
type paddleNode struct {
	pod                   *corev1.Pod
	mode, host, job, addr string
	port, host0, nodes    string
	rank, n               int
	reached               string
}

// judgePaddle judges example/paddle/paddle_check.py: no node found a
// mismatch; every pod started up, in the mode its variables select, as a
// distinct rank of as many nodes as the Job has pods, under the job id it was
// given; every node saw the same nodes, which are the Job's pods; rank 0 is
// the pod the plugin told to serve the rendezvous (PADDLE_MASTER=$(POD_IP):port),
// serving it at its pod IP, and every other pod's PADDLE_MASTER names rank 0.
func judgePaddle(run training.Run) (string, error) {
	pods, logs := run.Pods, run.Logs
	if err := training.NoMismatch(pods, logs); err != nil {
		return "", err
	}
	var nodes []paddleNode
	hosts := map[string]bool{}
	var serving *corev1.Pod
	for _, pod := range pods {
		env := kubeutil.EnvOf(pod, training.ContainerOf(pod))
		m := paddleDoneLine.FindStringSubmatch(logs[pod.Name])
		if m == nil {
			return "", fmt.Errorf("pod %s never finished: it did not start up with every other node", pod.Name)
		}
		n := paddleNode{pod: pod, mode: m[1], host: m[4], job: m[5], addr: m[6], port: m[7], host0: m[8], nodes: m[9], reached: m[10]}
		n.rank, _ = strconv.Atoi(m[2])
		n.n, _ = strconv.Atoi(m[3])
		host := pod.Spec.Hostname
		if host == "" {
			host = pod.Name
		}
		mode := "collective"
		if env[paddle.EnvServerNum] != "" || env[paddle.EnvTrainerNum] != "" {
			mode = "ps"
		}
		switch {
		case n.host != host:
			return "", fmt.Errorf("pod %s ran on host %s, want %s", pod.Name, n.host, host)
		case n.mode != mode:
			return "", fmt.Errorf("pod %s started up in %s mode, its variables select %s mode", pod.Name, n.mode, mode)
		case n.job != env[paddle.EnvJobID]:
			return "", fmt.Errorf("pod %s ran in job %s, was injected %s=%q", pod.Name, n.job, paddle.EnvJobID, env[paddle.EnvJobID])
		case n.n != len(pods):
			return "", fmt.Errorf("pod %s started up with %d nodes, the Job has %d pods", pod.Name, n.n, len(pods))
		}
		if strings.HasPrefix(env[paddle.EnvMaster], "$("+paddle.EnvPodIP+"):") {
			if serving != nil {
				return "", fmt.Errorf("pods %s and %s were both told to serve the rendezvous", serving.Name, pod.Name)
			}
			serving = pod
		}
		hosts[host] = true
		nodes = append(nodes, n)
	}
	if serving == nil {
		return "", fmt.Errorf("no pod was told to serve the rendezvous (%s=$(%s):<port>)", paddle.EnvMaster, paddle.EnvPodIP)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].rank < nodes[j].rank })
	rank0 := nodes[0]
	for i, n := range nodes {
		switch {
		case n.rank != i:
			return "", fmt.Errorf("ranks %v: want each of 0 to %d once", ranksOf(nodes), len(nodes)-1)
		case n.nodes != rank0.nodes || n.addr != rank0.addr || n.port != rank0.port || n.host0 != rank0.host0 || n.job != rank0.job || n.mode != rank0.mode:
			return "", fmt.Errorf("pod %s saw nodes %s, rendezvous %s:%s hosted by %s in job %s (%s); pod %s saw %s, %s:%s, %s, %s (%s)",
				n.pod.Name, n.nodes, n.addr, n.port, n.host0, n.job, n.mode, rank0.pod.Name, rank0.nodes, rank0.addr, rank0.port, rank0.host0, rank0.job, rank0.mode)
		}
	}
	if rank0.pod != serving {
		return "", fmt.Errorf("rank 0 is pod %s, but the plugin told pod %s to serve the rendezvous", rank0.pod.Name, serving.Name)
	}
	if rank0.host0 != rank0.host {
		return "", fmt.Errorf("rank 0 (%s) says the rendezvous is hosted by %s", rank0.host, rank0.host0)
	}
	if ip := serving.Status.PodIP; ip != "" && rank0.addr != ip {
		return "", fmt.Errorf("the rendezvous was served at %s, pod %s's IP is %s", rank0.addr, serving.Name, ip)
	}
	for _, n := range nodes[1:] {
		master := kubeutil.EnvOf(n.pod, training.ContainerOf(n.pod))[paddle.EnvMaster]
		if want := rank0.host + "."; !strings.HasPrefix(master, want) || !strings.HasSuffix(master, ":"+rank0.port) {
			return "", fmt.Errorf("pod %s was injected %s=%q, which does not name rank 0 (%s, port %s)", n.pod.Name, paddle.EnvMaster, master, rank0.host, rank0.port)
		}
	}
	seen := strings.Split(rank0.nodes, ",")
	for _, h := range seen {
		if !hosts[h] {
			return "", fmt.Errorf("the nodes %s include %s, which is not a pod of the Job", rank0.nodes, h)
		}
	}
	var members []string
	for _, n := range nodes {
		members = append(members, fmt.Sprintf("%d=%s", n.rank, n.host))
	}
	return fmt.Sprintf("%d nodes (%s) started up in %s mode at the rendezvous %s:%s served by rank 0; rank 0: %s",
		len(nodes), strings.Join(members, " "), rank0.mode, rank0.addr, rank0.port, rank0.reached), nil
}

func ranksOf(nodes []paddleNode) []int {
	out := make([]int, len(nodes))
	for i, n := range nodes {
		out[i] = n.rank
	}
	return out
}
