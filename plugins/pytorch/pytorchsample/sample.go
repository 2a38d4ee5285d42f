// Package pytorchsample is the pytorch plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, and its examples that
// run for real (training.go, judged by training.JudgeDigits). Only tests and
// tools import it (through plugins/catalog/samples); the managers do not.
package pytorchsample

import (
	"strconv"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
)

// Sample describes the pytorch plugin to the generated tests and the
// benchmarks (sample.Sample).
var Sample = sample.Sample{
	Roles: []sample.Role{{Flag: "master", Single: true, Replicas: 1, Small: 1}, {Flag: "worker", Replicas: 4, Small: 3}},
	ValueFlags: []string{"port", "nproc-per-node", "min-nodes", "max-nodes", "rdzv-backend", "max-restarts",
		"wait-timeout", "wait-master-timeout"},
	StringFlags: []string{"wait-image", "wait-master-image"},
	BoolFlags:   []string{"wait", "wait-master-port", "wait-master-enabled"},
	ValidArgs:   []string{"--port=29500", "--nproc-per-node=gpu", "--nproc-per-node=2", "--wait-master-port", "--max-restarts=3"},
	BadValues: []string{"--nproc-per-node=0", "--nproc-per-node=-2", "--nproc-per-node=gpus", "--min-nodes=0",
		"--max-nodes=0", "--max-nodes=1048577", "--max-restarts=-1", "--rdzv-backend= ",
		"--wait-master-enabled=maybe", "--wait-master-timeout=-3", "--wait-master-port=sometimes"},
	// A job of workers only is a torchrun job; one of neither is none.
	Required:   [][]string{{"master", "worker"}},
	Wait:       [2]string{"worker", "master"},
	Worker:     "worker",
	Lead:       []string{"master"},
	Check:      checkSample,
	Install:    sample.Install{Env: pytorch.EnvMasterAddr, Args: []string{"--wait-master-port"}},
	Training:   trainingExamples,
	StockFlags: []string{"master", "worker", "port"},
	Hellos:     hellos,
}

// checkSample checks RANK: 0 on the master, 1 + index on a worker.
func checkSample(c sample.Pod) error {
	rank := 0
	if c.Role == "worker" {
		rank = c.Index + 1
	}
	return sample.WantEnv(c.Env, pytorch.EnvRank, strconv.Itoa(rank))
}
