package mxnetsample

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
)

// The scheduler's lines of dmlc_check.py.
var (
	dmlcRegistered = regexp.MustCompile(`(?m)^scheduler: registered (server|worker) (\S+)$`)
	dmlcDone       = regexp.MustCompile(`(?m)^scheduler: (\d+) servers and (\d+) workers registered \(ids ([0-9 ]+)\); every worker reached every server$`)
)

// judgeDMLC judges example/mxnet/dmlc_check.py: no node found a mismatch, and
// the scheduler saw exactly the Job's server and worker pods register (by
// their pod IPs when known) and every worker reach every server.
func judgeDMLC(run training.Run) (string, error) {
	pods, logs := run.Pods, run.Logs
	if err := training.NoMismatch(pods, logs); err != nil {
		return "", err
	}
	count := map[string]int{}
	ips := map[string]string{}
	var scheduler *corev1.Pod
	for _, pod := range pods {
		role := kubeutil.EnvOf(pod, training.ContainerOf(pod))["DMLC_ROLE"]
		count[role]++
		if role == "scheduler" {
			scheduler = pod
		} else if pod.Status.PodIP != "" {
			ips[pod.Status.PodIP] = role
		}
	}
	if scheduler == nil {
		return "", fmt.Errorf("no pod has DMLC_ROLE=scheduler")
	}
	log := logs[scheduler.Name]
	done := dmlcDone.FindStringSubmatch(log)
	if done == nil {
		return "", fmt.Errorf("the scheduler %s never finished: not every node registered, or a worker did not reach every server", scheduler.Name)
	}
	if done[1] != strconv.Itoa(count["server"]) || done[2] != strconv.Itoa(count["worker"]) {
		return "", fmt.Errorf("the scheduler waited for %s servers and %s workers, the Job has %d and %d", done[1], done[2], count["server"], count["worker"])
	}
	registered := dmlcRegistered.FindAllStringSubmatch(log, -1)
	if len(registered) != count["server"]+count["worker"] {
		return "", fmt.Errorf("%d nodes registered with the scheduler, the Job has %d servers and workers", len(registered), count["server"]+count["worker"])
	}
	for _, r := range registered {
		ip := r[2][:strings.LastIndex(r[2], ":")]
		if role, known := ips[ip]; known && role != r[1] {
			return "", fmt.Errorf("%s registered as a %s, but its pod has DMLC_ROLE=%s", r[2], r[1], role)
		}
	}
	return fmt.Sprintf("the scheduler registered %s servers and %s workers (ids %s); every worker reached every server", done[1], done[2], done[3]), nil
}
