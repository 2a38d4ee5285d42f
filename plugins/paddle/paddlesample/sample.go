// Package paddlesample is the paddle plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, its examples that
// run for real (training.go) and the judge of what their pods print
// (judge.go). Only tests and tools import it (through
// plugins/catalog/samples); the managers do not.
package paddlesample

import (
	"fmt"
	"strconv"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
)

// Sample describes the plugin to the generated tests and the benchmarks:
// the base Job runs in parameter-server mode (one master, two workers), so
// that both roles and the workers' wait for master 0 are exercised.
var Sample = sample.Sample{
	Roles: []sample.Role{
		{Flag: "master", Replicas: 1},
		{Flag: "worker", Replicas: 2, Small: 3},
	},
	ValueFlags:  []string{"port", "wait-timeout"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=37777", "--wait-timeout=5m"},
	BadValues:   []string{"--master=", "--worker= ", "--port=master"},
	// Without either task there is no node to launch.
	Required: [][]string{{"master", "worker"}},
	Wait:     [2]string{"worker", "master"},
	Worker:   "worker",
	Lead:     []string{"master"},
	Check:    check,
	Install:  sample.Install{Env: paddle.EnvMaster},
	Training: trainingExamples,
	Hellos:   hellos,
}

// check verifies a benchmarked pod: PADDLE_MASTER (the rank-0 pod's own
// address, or the DNS name of the rank-0 pod), PADDLE_NNODES, PADDLE_JOB_ID,
// and the parameter-server count of its role.
func check(c sample.Pod) error {
	a, errs := paddle.ParseArgs(c.Job.Spec.Plugins[paddle.Name], c.Job)
	if len(errs) > 0 {
		return fmt.Errorf("arguments: %v", errs.ToAggregate())
	}
	rank0, ps := paddle.Rank0Task(a, c.Job)
	t, _ := jobs.Task(c.Job, rank0)
	port := strconv.Itoa(jobs.NamedPort(t, paddle.PortName, a.Port))
	task := a.Worker
	if c.Role == "master" {
		task = a.Master
	}
	master := c.Host(t, 0) + ":" + port
	if task == rank0 && c.Index == 0 {
		// The rank-0 pod's own IP.
		master = sample.OwnIP(c.Env, paddle.EnvPodIP) + ":" + port
	}
	nnodes := c.Workers
	if ps {
		nnodes += jobs.Replicas(c.Job, a.Master)
	}
	want := map[string]string{
		paddle.EnvMaster: master,
		paddle.EnvNNodes: strconv.Itoa(nnodes),
		paddle.EnvJobID:  c.Job.Name,
	}
	if ps && task == a.Master {
		want[paddle.EnvServerNum] = "1"
	} else if ps {
		want[paddle.EnvTrainerNum] = "1"
	}
	for _, name := range []string{paddle.EnvMaster, paddle.EnvNNodes, paddle.EnvJobID, paddle.EnvServerNum, paddle.EnvTrainerNum} {
		w, expected := want[name]
		got, set := c.Env[name]
		switch {
		case expected && got != w:
			return fmt.Errorf("%s pod %d: %s=%q, want %q", c.Role, c.Index, name, got, w)
		case !expected && set:
			return fmt.Errorf("%s pod %d: %s=%q, want it unset", c.Role, c.Index, name, got)
		}
	}
	return nil
}
