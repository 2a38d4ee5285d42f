package paddle

import (
	"fmt"
	"strconv"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// sample describes the plugin to the generated tests and the benchmarks:
// the base Job runs in parameter-server mode (one master, two workers), so
// that both roles and the workers' wait for master 0 are exercised.
var sample = framework.Sample{
	Roles: []framework.SampleRole{
		{Flag: "master", Replicas: 1},
		{Flag: "worker", Replicas: 2},
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
}

// check verifies a benchmarked pod: PADDLE_MASTER (the rank-0 pod's own
// address, or the DNS name of the rank-0 pod), PADDLE_NNODES, PADDLE_JOB_ID,
// and the parameter-server count of its role.
func check(c framework.SampleCheck) error {
	a, errs := ParseArgs(c.Job.Spec.Plugins[Name], c.Job)
	if len(errs) > 0 {
		return fmt.Errorf("arguments: %v", errs.ToAggregate())
	}
	rank0, ps := rank0Task(a, c.Job)
	t, _ := jobs.Task(c.Job, rank0)
	port := strconv.Itoa(jobs.NamedPort(t, PortName, a.Port))
	task := a.Worker
	if c.Role == "master" {
		task = a.Master
	}
	master := c.Host(t, 0) + ":" + port
	if task == rank0 && c.Index == 0 {
		// The rank-0 pod's own IP.
		master = framework.OwnIP(c.Env, EnvPodIP) + ":" + port
	}
	nnodes := c.Workers
	if ps {
		nnodes += jobs.Replicas(c.Job, a.Master)
	}
	want := map[string]string{
		EnvMaster: master,
		EnvNNodes: strconv.Itoa(nnodes),
		EnvJobID:  c.Job.Name,
	}
	if ps && task == a.Master {
		want[EnvServerNum] = "1"
	} else if ps {
		want[EnvTrainerNum] = "1"
	}
	for _, name := range []string{EnvMaster, EnvNNodes, EnvJobID, EnvServerNum, EnvTrainerNum} {
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
