// Package jaxsample is the jax plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, its examples that
// run for real (training.go) and the judge of what their pods print
// (judge.go). Only tests and tools import it (through
// plugins/catalog/samples); the managers do not.
package jaxsample

import (
	"fmt"
	"strconv"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins/jax"
)

// Sample describes the jax plugin to the generated tests and the benchmarks
// (sample.Sample): one worker task of 4 processes.
var Sample = sample.Sample{
	Roles:       []sample.Role{{Flag: "worker", Replicas: 4, Small: 3}},
	ValueFlags:  []string{"port", "wait-timeout"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=6666", "--port=1234", "--wait-timeout=5m", "--wait-image=busybox:1.36.1", "--wait"},
	BadValues:   []string{"--worker=", "--port=coordinator", "--port=6666.0"},
	Required:    [][]string{{"worker"}},
	// No edge between tasks: processes 1 to N-1 wait for pod 0 of their own
	// task, which admission's launch-order graph leaves out.
	Wait:     [2]string{},
	Worker:   "worker",
	Check:    checkSample,
	Install:  sample.Install{Env: jax.EnvJAXCoordinatorAddress},
	Training: trainingExamples,
	Hellos:   hellos,
}

// checkSample checks a worker pod's process id (both spellings), the number
// of processes and the coordinator's address against the Job.
func checkSample(c sample.Pod) error {
	a, errs := jax.ParseArgs(c.Job.Spec.Plugins[jax.Name], c.Job)
	if len(errs) > 0 {
		return fmt.Errorf("the benchmarked Job's arguments do not parse: %v", errs.ToAggregate())
	}
	host, port := jax.Coordinator(c.Job, a)
	want := []struct{ name, value string }{
		{jax.EnvJAXProcessID, strconv.Itoa(c.Index)},
		{jax.EnvProcessID, strconv.Itoa(c.Index)},
		{jax.EnvJAXNumProcesses, strconv.Itoa(c.Workers)},
		{jax.EnvJAXCoordinatorAddress, host + ":" + strconv.Itoa(port)},
	}
	for _, w := range want {
		if got, ok := c.Env[w.name]; !ok || got != w.value {
			return fmt.Errorf("%s pod %d: %s = %q (set: %v), want %q", c.Role, c.Index, w.name, got, ok, w.value)
		}
	}
	return nil
}
