package jaxsample

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/jax"
)

// The lines of example/jax/jax_check.py: process 0's, one per registration
// and its last, and the last of every other process.
var (
	jaxRegistered  = regexp.MustCompile(`(?m)^coordinator: registered process (\d+) of (\d+) from (\S+) \((\S+)\)$`)
	jaxCoordinated = regexp.MustCompile(`(?m)^process 0 of (\d+): OK, all (\d+) processes registered at (\S+)$`)
	jaxReleased    = regexp.MustCompile(`(?m)^process (\d+) of (\d+): OK, registered with the coordinator at (\S+)$`)
)

// judgeJAX judges example/jax/jax_check.py: no process found a mismatch;
// the pod injected JAX_PROCESS_ID=0 coordinated at its
// JAX_COORDINATOR_ADDRESS and saw every pod of the Job register exactly once,
// from that pod (its hostname, and its IP when known) and under the process
// id of its index in the task; every other pod was released as that process,
// of as many as the Job has pods, at the same address.
func judgeJAX(run training.Run) (string, error) {
	pods, logs := run.Pods, run.Logs
	if err := training.NoMismatch(pods, logs); err != nil {
		return "", err
	}
	n := len(pods)
	byName := map[string]*corev1.Pod{}
	var coordinator *corev1.Pod
	for _, pod := range pods {
		byName[pod.Name] = pod
		if kubeutil.EnvOf(pod, training.ContainerOf(pod))[jax.EnvJAXProcessID] == "0" {
			coordinator = pod
		}
	}
	if coordinator == nil {
		return "", fmt.Errorf("no pod has %s=0", jax.EnvJAXProcessID)
	}
	address := kubeutil.EnvOf(coordinator, training.ContainerOf(coordinator))[jax.EnvJAXCoordinatorAddress]
	log := logs[coordinator.Name]
	done := jaxCoordinated.FindStringSubmatch(log)
	switch {
	case done == nil:
		return "", fmt.Errorf("process 0 (pod %s) never finished: not every process registered with it", coordinator.Name)
	case done[1] != strconv.Itoa(n):
		return "", fmt.Errorf("process 0 waited for %s processes, the Job has %d pods", done[1], n)
	case done[3] != address:
		return "", fmt.Errorf("process 0 coordinated at %s, its %s is %q", done[3], jax.EnvJAXCoordinatorAddress, address)
	}
	members := map[int]string{}
	for _, r := range jaxRegistered.FindAllStringSubmatch(log, -1) {
		id, _ := strconv.Atoi(r[1])
		pod := byName[r[4]] // a pod's hostname is its name (the svc plugin's)
		if pod == nil {
			return "", fmt.Errorf("process %d registered from host %s, which is no pod of the Job", id, r[4])
		}
		index, err := jobs.PodIndex(pod)
		switch {
		case err != nil:
			return "", err
		case members[id] != "":
			return "", fmt.Errorf("process %d registered twice, from pods %s and %s", id, members[id], pod.Name)
		case index != id:
			return "", fmt.Errorf("pod %s (index %d) registered as process %d", pod.Name, index, id)
		case pod.Status.PodIP != "" && r[3] != pod.Status.PodIP:
			return "", fmt.Errorf("process %d registered from %s, but its pod %s has IP %s", id, r[3], pod.Name, pod.Status.PodIP)
		}
		members[id] = pod.Name
	}
	if len(members) != n {
		return "", fmt.Errorf("%d processes registered with process 0, the Job has %d pods", len(members), n)
	}
	for _, pod := range pods {
		if pod == coordinator {
			continue
		}
		index, err := jobs.PodIndex(pod)
		if err != nil {
			return "", err
		}
		m := jaxReleased.FindStringSubmatch(logs[pod.Name])
		if m == nil {
			return "", fmt.Errorf("pod %s (process %d) was never released by the coordinator", pod.Name, index)
		}
		if want := []string{strconv.Itoa(index), strconv.Itoa(n), address}; strings.Join(m[1:], " ") != strings.Join(want, " ") {
			return "", fmt.Errorf("pod %s ran as process %s of %s at %s, want process %s of %s at %s", pod.Name, m[1], m[2], m[3], want[0], want[1], want[2])
		}
	}
	ids := make([]int, 0, n)
	for id := range members {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = fmt.Sprintf("%d=%s", id, members[id])
	}
	return fmt.Sprintf("%d processes (%s) registered with process 0's coordinator at %s, each once from its own pod",
		n, strings.Join(list, " "), address), nil
}
