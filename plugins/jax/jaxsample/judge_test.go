package jaxsample

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/jax"
)

func TestJudgeJAX(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/jax/jax-contract.yaml")
	job, pods := trainingtest.Pods(t, ex, jax.New)
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	for i, p := range pods {
		p.Status.PodIP = fmt.Sprintf("10.245.0.%d", i+2)
	}
	address := fmt.Sprintf("%s-worker-0.%s.ns.svc.cluster.local:6666", job.Name, job.Name)
	if got := kubeutil.EnvOf(pods[0], ex.Container)[jax.EnvJAXCoordinatorAddress]; got != address {
		t.Fatalf("%s = %q, want %q", jax.EnvJAXCoordinatorAddress, got, address)
	}
	registered := func(id int) string {
		return fmt.Sprintf("coordinator: registered process %d of 3 from %s (%s)\n", id, pods[id].Status.PodIP, pods[id].Name)
	}
	released := func(id int) string {
		return fmt.Sprintf("process %d of 3: OK, registered with the coordinator at %s\n", id, address)
	}
	good := func() map[string]string {
		return map[string]string{
			pods[0].Name: "process 0 of 3: coordinator serves [::]:6666 for " + address + "\n" +
				registered(0) + registered(2) + registered(1) +
				"process 0 of 3: OK, all 3 processes registered at " + address + "\n",
			pods[1].Name: released(1),
			pods[2].Name: released(2),
		}
	}
	trainingtest.JudgeEdits(t, ex, pods, good, []trainingtest.LogEdit{
		{Name: "every process registered and was released"},
		{
			Name: "a process found a mismatch",
			Edit: func(l map[string]string) {
				l[pods[2].Name] = "MISMATCH PROCESS_ID=1, JAX_PROCESS_ID=2\n"
			},
			WantErr: "pod " + pods[2].Name + ": MISMATCH PROCESS_ID=1",
		},
		{
			Name:    "process 0 never finished",
			Edit:    func(l map[string]string) { l[pods[0].Name] = registered(0) + registered(1) },
			WantErr: "process 0 (pod " + pods[0].Name + ") never finished",
		},
		{
			Name: "process 0 waited for another number of processes",
			Edit: func(l map[string]string) {
				l[pods[0].Name] = strings.ReplaceAll(l[pods[0].Name], "of 3", "of 2")
				l[pods[0].Name] = strings.Replace(l[pods[0].Name], "all 3", "all 2", 1)
			},
			WantErr: "process 0 waited for 2 processes, the Job has 3 pods",
		},
		{
			Name: "process 0 coordinated elsewhere",
			Edit: func(l map[string]string) {
				l[pods[0].Name] = strings.Replace(l[pods[0].Name], "registered at "+address, "registered at 10.0.0.1:6666", 1)
			},
			WantErr: "process 0 coordinated at 10.0.0.1:6666",
		},
		{
			Name: "a pod registered under another pod's id",
			Edit: func(l map[string]string) {
				l[pods[0].Name] = strings.Replace(l[pods[0].Name], registered(2), strings.Replace(registered(2), "process 2", "process 1", 1), 1)
			},
			WantErr: "registered as process 1",
		},
		{
			Name: "a registration came from another pod's address",
			Edit: func(l map[string]string) {
				l[pods[0].Name] = strings.Replace(l[pods[0].Name], "from "+pods[1].Status.PodIP, "from 10.245.0.99", 1)
			},
			WantErr: "process 1 registered from 10.245.0.99, but its pod " + pods[1].Name + " has IP " + pods[1].Status.PodIP,
		},
		{
			Name: "a process registered twice",
			Edit: func(l map[string]string) {
				l[pods[0].Name] = strings.Replace(l[pods[0].Name], registered(2), registered(1), 1)
			},
			WantErr: "process 1 registered twice",
		},
		{
			Name: "a registration from outside the Job",
			Edit: func(l map[string]string) {
				l[pods[0].Name] = strings.Replace(l[pods[0].Name], "("+pods[2].Name+")", "(elsewhere)", 1)
			},
			WantErr: "host elsewhere, which is no pod of the Job",
		},
		{
			Name: "a process was never released",
			Edit: func(l map[string]string) {
				l[pods[1].Name] = "process 1 of 3: registered at " + address + ", but not all 3 processes did within 180s\n"
			},
			WantErr: "pod " + pods[1].Name + " (process 1) was never released",
		},
		{
			Name:    "a pod ran as another process",
			Edit:    func(l map[string]string) { l[pods[2].Name] = released(1) },
			WantErr: "pod " + pods[2].Name + " ran as process 1 of 3",
		},
	})
	// Without the pod injected as process 0.
	bare := []*corev1.Pod{pods[1].DeepCopy(), pods[2].DeepCopy()}
	if _, err := ex.Judge(training.Run{Pods: bare, Logs: good()}); err == nil || !strings.Contains(err.Error(), "no pod has JAX_PROCESS_ID=0") {
		t.Errorf("Judge without process 0 = %v", err)
	}
}

// The hello's Success matches the success line of each process of
// example/jax/jax.yaml's script, and none of the lines of a failed or
// misplaced process.
func TestJAXHelloSuccess(t *testing.T) {
	h := trainingtest.Hello(t, Sample.Hellos, "example/jax/jax.yaml")
	for _, line := range []string{
		"process 0 of 3: OK, all 3 processes registered at jax-dist-worker-0.jax-dist.ns.svc.cluster.local:6666",
		"process 1 of 3: OK, registered with the coordinator at jax-dist-worker-0.jax-dist.ns.svc.cluster.local:6666",
		"process 2 of 3: OK, registered with the coordinator at jax-dist-worker-0.jax-dist.ns.svc.cluster.local:6666",
	} {
		if !h.Success.MatchString(line) {
			t.Errorf("Success %q does not match %q", h.Success, line)
		}
	}
	for _, line := range []string{
		"process 1 of 3: the coordinator at jax-dist-worker-0.jax-dist.ns.svc.cluster.local:6666 never released it",
		"MISMATCH process 1 of 2: JAX_* say ('jax-dist-worker-0.jax-dist.ns.svc.cluster.local:6666', 2, 1), JAXJob's ('jax-dist-worker-0.jax-dist.ns.svc.cluster.local:6666', 2, 0)",
		"process 1 of 2: OK, registered with the coordinator at jax-dist-worker-0.jax-dist.ns.svc.cluster.local:6666",
		"process 1 of 3: OK, registered with the coordinator at jax-dist-worker-1.jax-dist.ns.svc.cluster.local:6666",
	} {
		if h.Success.MatchString(line) {
			t.Errorf("Success %q matches %q", h.Success, line)
		}
	}
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/jax/jax-contract.yaml": {
			Joined: []string{
				"process 0 of 3: coordinator serves [::]:6666 for jax-contract-check-worker-0.jax-contract-check.ns.svc.cluster.local:6666",
				"process 2 of 3: OK, registered with the coordinator at jax-contract-check-worker-0.jax-contract-check.ns.svc.cluster.local:6666",
			},
			Listening: []string{"process 0 of 3: coordinator serves [::]:6666 for jax-contract-check-worker-0.jax-contract-check.ns.svc.cluster.local:6666"},
			Neither:   []string{"process 1 of 3: the coordinator at a:6666 unreachable: refused"},
		},
	})
}
