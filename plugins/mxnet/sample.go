package mxnet

import (
	"strconv"

	"github.com/vcplugins/framework-plugins/pkg/framework"
)

// sample describes the mxnet plugin to the generated tests and the
// benchmarks (framework.Sample).
var sample = framework.Sample{
	Roles: []framework.SampleRole{
		{Flag: "scheduler", Single: true, Replicas: 1}, {Flag: "server", Replicas: 2}, {Flag: "worker", Replicas: 4},
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
}

// checkSample checks DMLC_ROLE and, on workers, DMLC_WORKER_ID.
func checkSample(c framework.SampleCheck) error {
	if c.Role == "worker" {
		if err := framework.WantEnv(c.Env, EnvWorkerID, strconv.Itoa(c.Index)); err != nil {
			return err
		}
	}
	return framework.WantEnv(c.Env, EnvRole, c.Role)
}
