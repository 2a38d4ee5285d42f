package jax

import (
	"regexp"
	"strings"
	"testing"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/framework"
)

// baseJob is the Sample's base Job: each role's task under its flag's
// default name, with the Sample's replicas.
func baseJob(args ...string) *batch.Job {
	b := jobtest.MakeJob("jx")
	for _, r := range sample.Roles {
		if r.Replicas > 0 {
			b.Task(jobtest.MakeTask(r.Flag, r.Replicas).Obj())
		}
	}
	return b.Plugin(Name, args...).Obj()
}

var acceptedFlags = regexp.MustCompile(`accepted flags: (.*)$`)

// Check accepts what the plugin injects into every pod of the base Job and
// names the variable when a pod got a wrong one.
func TestSampleCheck(t *testing.T) {
	job := baseJob("--port=1234")
	workers := int(sample.Roles[0].Replicas)
	check := func(index int, edit func(map[string]string)) error {
		pod := runPod(t, job, sample.Worker, index)
		env := jobtest.Env(pod, 0)
		if edit != nil {
			edit(env)
		}
		return sample.Check(framework.SampleCheck{Job: job, Pod: pod, Role: sample.Worker, Index: index, Workers: workers, Env: env})
	}
	for i := 0; i < workers; i++ {
		if err := check(i, nil); err != nil {
			t.Errorf("pod %d: %v", i, err)
		}
	}
	bad := map[string]func(map[string]string){
		EnvJAXProcessID:    func(e map[string]string) { e[EnvJAXProcessID] = "0" },
		EnvProcessID:       func(e map[string]string) { delete(e, EnvProcessID) },
		EnvJAXNumProcesses: func(e map[string]string) { e[EnvJAXNumProcesses] = "3" },
		EnvJAXCoordinatorAddress: func(e map[string]string) {
			e[EnvJAXCoordinatorAddress] = "jx-worker-0.jx.default.svc.cluster.local:6666"
		},
	}
	for name, edit := range bad {
		if err := check(2, edit); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("wrong %s: Check = %v, want an error naming it", name, err)
		}
	}
}
