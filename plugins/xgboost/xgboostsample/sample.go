// Package xgboostsample is the xgboost plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, its examples that
// run for real (training.go) and the judge of what their pods print
// (judge.go). Only tests and tools import it (through
// plugins/catalog/samples); the managers do not.
package xgboostsample

import (
	"fmt"
	"strconv"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
)

// Sample describes the plugin to the generated tests and the benchmarks: a
// base Job of one master and four workers.
var Sample = sample.Sample{
	Roles: []sample.Role{
		{Flag: "master", Single: true, Replicas: 1, Small: 1},
		{Flag: "worker", Replicas: 4, Small: 2},
	},
	ValueFlags:  []string{"port", "wait-timeout"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=9999", "--port=29500", "--wait-timeout=5m", "--wait"},
	// A port written with a trailing space or as its name, as YAML and
	// XGBoostJob's xgboostjob-port invite.
	BadValues: []string{"--port=9999 ", "--port=xgboostjob-port", "--master= ", "--worker="},
	Required:  [][]string{{"master"}},
	Wait:      [2]string{"worker", "master"},
	Worker:    "worker",
	Lead:      []string{"master"},
	Check:     checkSample,
	Install:   sample.Install{Env: xgboost.EnvMasterAddr},
	Training:  trainingExamples,
	Hellos:    hellos,
}

// checkSample checks a pod's rank (RANK and DMLC_TASK_ID: master 0, worker
// i → i+1), the world size the tracker waits for (DMLC_NUM_WORKER), and the
// tracker's address (DMLC_TRACKER_URI: the master pod's DNS name, on the
// master its own IP).
func checkSample(c sample.Pod) error {
	rank := 0
	if c.Role == "worker" {
		rank = c.Index + 1
	}
	// The Job's own --master, should it rename the task.
	a, _ := xgboost.ParseArgs(c.Job.Spec.Plugins[xgboost.Name], nil)
	master, ok := jobs.Task(c.Job, a.Master)
	if !ok {
		return fmt.Errorf("the job has no master task %q", a.Master)
	}
	tracker := c.Host(master, 0)
	if c.Role == "master" {
		tracker = sample.OwnIP(c.Env, xgboost.EnvPodIP)
	}
	for _, want := range []struct{ name, value string }{
		{xgboost.EnvRank, strconv.Itoa(rank)},
		{xgboost.EnvTaskID, strconv.Itoa(rank)},
		{xgboost.EnvNumWorker, strconv.Itoa(1 + c.Workers)},
		{xgboost.EnvTrackerURI, tracker},
	} {
		if got, set := c.Env[want.name]; !set || got != want.value {
			return fmt.Errorf("%s %d: %s = %q (set: %v), want %q", c.Role, c.Index, want.name, got, set, want.value)
		}
	}
	return nil
}
