package dasksample

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/dask"
)

// The lines of example/dask/dask_digits.py (the client), and the line
// distributed 2022.12's worker logs once the scheduler accepted it
// (distributed/worker.py), which names the address it was given.
var (
	daskConnectedLine = regexp.MustCompile(`(?m)^client: connected to the scheduler at (\S+) \(DASK_SCHEDULER_ADDRESS=(\S*)\)$`)
	daskWorkersLine   = regexp.MustCompile(`(?m)^client: (\d+) workers: (.*)$`)
	daskPartLine      = regexp.MustCompile(`(?m)^client: part (\d+) \(rows \d+-\d+\) held and computed by (\S+) \((\S+)\)$`)
	daskResultLine    = regexp.MustCompile(`(?m)^client: result OK: .* \(max diff (\S+)\); test accuracy ([0-9.]+) on \d+ held-out digits$`)
	daskFailedLine    = regexp.MustCompile(`(?m)^client: FAILED: .*$`)
	daskRegistered    = regexp.MustCompile(`(?m)Registered to:\s+(\S+)$`)
)

// judgeDask judges a run of example/dask/dask-digits.yaml. The client found
// the scheduler from DASK_SCHEDULER_ADDRESS alone, which names the scheduler
// pod; it saw exactly the Job's worker pods, by the names DASK_WORKER_NAME
// gave them and at their pod IPs when known; every worker registered with the
// scheduler at that same address (`dask worker` was given none); each
// worker held and computed one part of the data; and the result matches the
// local computation within 1e-9 with a test accuracy of at least 0.9.
func judgeDask(run training.Run) (string, error) {
	var client, scheduler *corev1.Pod
	var workers []*corev1.Pod
	for _, pod := range run.Pods {
		if training.FailedOnItsOwn(pod) {
			return "", fmt.Errorf("pod %s failed", pod.Name)
		}
		switch pod.Annotations[batch.TaskSpecKey] {
		case "scheduler":
			scheduler = pod
		case "worker":
			workers = append(workers, pod)
		case "client":
			client = pod
		}
	}
	if client == nil || scheduler == nil || len(workers) == 0 {
		return "", fmt.Errorf("the Job has no client, scheduler or worker pod")
	}
	log := run.Logs[client.Name]
	if m := daskFailedLine.FindString(log); m != "" {
		return "", fmt.Errorf("pod %s: %s", client.Name, m)
	}
	injected := kubeutil.EnvOf(client, training.ContainerOf(client))[dask.EnvSchedulerAddress]
	if !strings.HasPrefix(injected, "tcp://"+scheduler.Name+".") {
		return "", fmt.Errorf("the client was injected %s=%q, which does not name the scheduler pod %s", dask.EnvSchedulerAddress, injected, scheduler.Name)
	}
	connected := daskConnectedLine.FindStringSubmatch(log)
	if connected == nil {
		return "", fmt.Errorf("the client never connected to the scheduler")
	}
	if connected[2] != injected {
		return "", fmt.Errorf("the client ran with %s=%q, its pod was injected %q", dask.EnvSchedulerAddress, connected[2], injected)
	}

	// The workers the scheduler knew, by address and name.
	listed := daskWorkersLine.FindStringSubmatch(log)
	if listed == nil {
		return "", fmt.Errorf("the client never saw its workers")
	}
	if listed[1] != strconv.Itoa(len(workers)) {
		return "", fmt.Errorf("the client saw %s workers, the Job has %d", listed[1], len(workers))
	}
	byName := map[string]*corev1.Pod{}
	for _, w := range workers {
		byName[w.Name] = w
	}
	addrOf := map[string]string{} // worker pod name -> Dask address
	for _, entry := range strings.Fields(listed[2]) {
		addr, name, _ := strings.Cut(entry, "=")
		pod, ok := byName[name]
		switch {
		case !ok:
			return "", fmt.Errorf("the client saw a worker named %q, which is not a worker pod of the Job", name)
		case addrOf[name] != "":
			return "", fmt.Errorf("two workers are named %s", name)
		case pod.Status.PodIP != "" && !strings.HasPrefix(addr, "tcp://"+pod.Status.PodIP+":"):
			return "", fmt.Errorf("worker %s is at %s, its pod's IP is %s", name, addr, pod.Status.PodIP)
		}
		addrOf[name] = addr
	}
	for _, w := range workers {
		if addrOf[w.Name] == "" {
			return "", fmt.Errorf("worker pod %s is not among the client's workers", w.Name)
		}
		reg := daskRegistered.FindStringSubmatch(run.Logs[w.Name])
		if reg == nil {
			return "", fmt.Errorf("worker pod %s never registered with the scheduler", w.Name)
		}
		if want := kubeutil.EnvOf(w, training.ContainerOf(w))[dask.EnvSchedulerAddress]; reg[1] != want {
			return "", fmt.Errorf("worker pod %s registered to %s, not to its %s %s", w.Name, reg[1], dask.EnvSchedulerAddress, want)
		}
	}

	// Each worker held and computed one part.
	computed := map[string]string{} // worker pod name -> part
	for _, m := range daskPartLine.FindAllStringSubmatch(log, -1) {
		part, addr, name := m[1], m[2], m[3]
		if addrOf[name] != addr {
			return "", fmt.Errorf("part %s was computed by %s (%s), which is not that worker's address %q", part, addr, name, addrOf[name])
		}
		if computed[name] != "" {
			return "", fmt.Errorf("worker %s computed parts %s and %s", name, computed[name], part)
		}
		computed[name] = part
	}
	names := make([]string, 0, len(workers))
	for _, w := range workers {
		if computed[w.Name] == "" {
			return "", fmt.Errorf("worker %s computed no part of the data", w.Name)
		}
		names = append(names, fmt.Sprintf("%s at %s", w.Name, addrOf[w.Name]))
	}
	slices.Sort(names)

	result := daskResultLine.FindStringSubmatch(log)
	if result == nil {
		return "", fmt.Errorf("the client never reported a result")
	}
	if diff, err := strconv.ParseFloat(result[1], 64); err != nil || diff > 1e-9 {
		return "", fmt.Errorf("the workers' normal equations differ from the local ones by %s, want at most 1e-9", result[1])
	}
	if accuracy, err := strconv.ParseFloat(result[2], 64); err != nil || accuracy < 0.9 {
		return "", fmt.Errorf("test accuracy %s on the digits, want at least 0.9", result[2])
	}
	return fmt.Sprintf("the client and %d workers (%s) found the scheduler at %s from %s alone; each worker held and computed its part; "+
		"normal equations match the local ones (max diff %s), test accuracy %s",
		len(workers), strings.Join(names, ", "), injected, dask.EnvSchedulerAddress, result[1], result[2]), nil
}
