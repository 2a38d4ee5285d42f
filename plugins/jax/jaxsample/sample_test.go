package jaxsample

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins/jax"
)

// baseJob is the Sample's base Job: each role's task under its flag's
// default name, with the Sample's replicas.
func baseJob(args ...string) *batch.Job {
	b := jobtest.MakeJob("jx")
	for _, r := range Sample.Roles {
		if r.Replicas > 0 {
			b.Task(jobtest.MakeTask(r.Flag, r.Replicas).Obj())
		}
	}
	return b.Plugin(jax.Name, args...).Obj()
}

// Check accepts what the plugin injects into every pod of the base Job and
// names the variable when a pod got a wrong one.
func TestSampleCheck(t *testing.T) {
	job := baseJob("--port=1234")
	workers := int(Sample.Roles[0].Replicas)
	check := func(index int, edit func(map[string]string)) error {
		pod := runPod(t, job, Sample.Worker, index)
		env := jobtest.Env(pod, 0)
		if edit != nil {
			edit(env)
		}
		return Sample.Check(sample.Pod{Job: job, Pod: pod, Role: Sample.Worker, Index: index, Workers: workers, Env: env})
	}
	for i := 0; i < workers; i++ {
		if err := check(i, nil); err != nil {
			t.Errorf("pod %d: %v", i, err)
		}
	}
	bad := map[string]func(map[string]string){
		jax.EnvJAXProcessID:    func(e map[string]string) { e[jax.EnvJAXProcessID] = "0" },
		jax.EnvProcessID:       func(e map[string]string) { delete(e, jax.EnvProcessID) },
		jax.EnvJAXNumProcesses: func(e map[string]string) { e[jax.EnvJAXNumProcesses] = "3" },
		jax.EnvJAXCoordinatorAddress: func(e map[string]string) {
			e[jax.EnvJAXCoordinatorAddress] = "jx-worker-0.jx.default.svc.cluster.local:6666"
		},
	}
	for name, edit := range bad {
		if err := check(2, edit); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("wrong %s: Check = %v, want an error naming it", name, err)
		}
	}
}

// runPod runs the jax plugin's hooks for the pod index of task and returns it.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, jax.New, jax.Name, job, task, index)
}
