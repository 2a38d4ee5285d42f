// Package dasksample is the dask plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, its examples that
// run for real (training.go) and the judge of what their pods print
// (judge.go). Only tests and tools import it (through
// plugins/catalog/samples); the managers do not.
package dasksample

import (
	"fmt"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/dask"
)

// Sample describes the dask plugin to the generated tests and benchmarks:
// a base Job of one scheduler, 2 workers and one client.
var Sample = sample.Sample{
	Roles: []sample.Role{
		{Flag: "scheduler", Single: true, Replicas: 1, Small: 1},
		{Flag: "worker", Replicas: 2, Small: 2},
		{Flag: "client", Single: true, Replicas: 1, Small: 1},
	},
	ValueFlags:  []string{"port", "wait-timeout"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=8786", "--wait-timeout=5m", "--wait-image=busybox:1.36.1", "--wait"},
	BadValues:   []string{"--port=tcp-comm", "--scheduler=", "--worker=", "--client="},
	Required:    [][]string{{"scheduler"}, {"worker"}, {"client"}},
	Wait:        [2]string{"worker", "scheduler"},
	Worker:      "worker",
	Lead:        []string{"scheduler", "client"},
	Check:       checkSample,
	Install:     sample.Install{Env: dask.EnvSchedulerAddress},
	Training:    trainingExamples,
	Hellos:      hellos,
}

// checkSample checks a benchmarked pod: every role has the scheduler's
// address (pod 0 of the scheduler task, the port of the Job's arguments or
// the scheduler's tcp-comm port), and each worker its own pod name.
func checkSample(c sample.Pod) error {
	a, errs := dask.ParseArgs(c.Job.Spec.Plugins[dask.Name], c.Job)
	if len(errs) > 0 {
		return fmt.Errorf("dask: the benchmarked Job's arguments: %v", errs.ToAggregate())
	}
	scheduler, _ := jobs.Task(c.Job, a.Scheduler)
	want := dask.SchedulerAddress(c.Host(scheduler, 0), jobs.NamedPort(scheduler, dask.PortName, a.Port))
	if got := c.Env[dask.EnvSchedulerAddress]; got != want {
		return fmt.Errorf("dask: %s pod %d: %s=%q, want %q", c.Role, c.Index, dask.EnvSchedulerAddress, got, want)
	}
	got, set := c.Env[dask.EnvWorkerName]
	if c.Role != "worker" {
		if set {
			return fmt.Errorf("dask: %s pod %d: %s=%q, want it unset (workers only)", c.Role, c.Index, dask.EnvWorkerName, got)
		}
		return nil
	}
	if want := jobs.PodName(c.Job.Name, a.Worker, c.Index); got != want {
		return fmt.Errorf("dask: worker pod %d: %s=%q, want %q", c.Index, dask.EnvWorkerName, got, want)
	}
	return nil
}
