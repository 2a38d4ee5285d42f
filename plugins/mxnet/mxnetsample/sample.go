// Package mxnetsample is the mxnet plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, its examples that
// run for real (training.go) and the judge of what their pods print
// (judge.go). Only tests and tools import it (through
// plugins/catalog/samples); the managers do not.
package mxnetsample

import (
	"strconv"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
)

// Sample describes the mxnet plugin to the generated tests and the
// benchmarks (sample.Sample).
var Sample = sample.Sample{
	Roles: []sample.Role{
		{Flag: "scheduler", Single: true, Replicas: 1, Small: 1}, {Flag: "server", Replicas: 2, Small: 1}, {Flag: "worker", Replicas: 4, Small: 2},
	},
	ValueFlags:  []string{"port", "wait-timeout"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=9091", "--wait-timeout=5m"},
	Required:    [][]string{{"scheduler"}, {"worker"}},
	Wait:        [2]string{"worker", "scheduler"},
	Worker:      "worker",
	Lead:        []string{"scheduler"},
	Check:       checkSample,
	Install:     sample.Install{Env: mxnet.EnvRole},
	Training:    trainingExamples,
	Hellos:      hellos,
}

// checkSample checks DMLC_ROLE and, on workers, DMLC_WORKER_ID.
func checkSample(c sample.Pod) error {
	if c.Role == "worker" {
		if err := sample.WantEnv(c.Env, mxnet.EnvWorkerID, strconv.Itoa(c.Index)); err != nil {
			return err
		}
	}
	return sample.WantEnv(c.Env, mxnet.EnvRole, c.Role)
}
