package pytorch

import (
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"strconv"
)

// sample describes the pytorch plugin to the generated tests and the
// benchmarks (framework.Sample).
var sample = framework.Sample{
	Roles: []framework.SampleRole{{Flag: "master", Single: true, Replicas: 1}, {Flag: "worker", Replicas: 4}},
	ValueFlags: []string{"port", "nproc-per-node", "min-nodes", "max-nodes", "rdzv-backend", "max-restarts",
		"wait-timeout", "wait-master-timeout"},
	StringFlags: []string{"wait-image", "wait-master-image"},
	BoolFlags:   []string{"wait", "wait-master-port", "wait-master-enabled"},
	ValidArgs:   []string{"--port=29500", "--nproc-per-node=gpu", "--nproc-per-node=2", "--wait-master-port", "--max-restarts=3"},
	BadValues: []string{"--nproc-per-node=0", "--nproc-per-node=-2", "--nproc-per-node=gpus", "--min-nodes=0",
		"--max-nodes=0", "--max-nodes=1048577", "--max-restarts=-1", "--rdzv-backend= ",
		"--wait-master-enabled=maybe", "--wait-master-timeout=-3", "--wait-master-port=sometimes"},
	// A job of workers only is a torchrun job; one of neither is none.
	Required: [][]string{{"master", "worker"}},
	Wait:     [2]string{"worker", "master"},
	Worker:   "worker",
	Lead:     []string{"master"},
	Check:    checkSample,
}

// checkSample checks RANK: 0 on the master, 1 + index on a worker.
func checkSample(c framework.SampleCheck) error {
	rank := 0
	if c.Role == "worker" {
		rank = c.Index + 1
	}
	return framework.WantEnv(c.Env, EnvRank, strconv.Itoa(rank))
}
