package xgboost

import (
	"fmt"
	"strconv"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// sample describes the plugin to the generated tests and the benchmarks: a
// base Job of one master and four workers.
var sample = framework.Sample{
	Roles: []framework.SampleRole{
		{Flag: "master", Single: true, Replicas: 1},
		{Flag: "worker", Replicas: 4},
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
}

// checkSample checks a pod's rank (RANK and DMLC_TASK_ID: master 0, worker
// i → i+1), the world size the tracker waits for (DMLC_NUM_WORKER), and the
// tracker's address (DMLC_TRACKER_URI: the master pod's DNS name, on the
// master its own IP).
func checkSample(c framework.SampleCheck) error {
	rank := 0
	if c.Role == "worker" {
		rank = c.Index + 1
	}
	// The Job's own --master, should it rename the task.
	a, _ := ParseArgs(c.Job.Spec.Plugins[Name], nil)
	master, ok := jobs.Task(c.Job, a.Master)
	if !ok {
		return fmt.Errorf("the job has no master task %q", a.Master)
	}
	tracker := c.Host(master, 0)
	if c.Role == "master" {
		tracker = framework.OwnIP(c.Env, EnvPodIP)
	}
	for _, want := range []struct{ name, value string }{
		{EnvRank, strconv.Itoa(rank)},
		{EnvTaskID, strconv.Itoa(rank)},
		{EnvNumWorker, strconv.Itoa(1 + c.Workers)},
		{EnvTrackerURI, tracker},
	} {
		if got, set := c.Env[want.name]; !set || got != want.value {
			return fmt.Errorf("%s %d: %s = %q (set: %v), want %q", c.Role, c.Index, want.name, got, set, want.value)
		}
	}
	return nil
}
