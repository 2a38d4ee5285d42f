// Package tensorflowsample is the tensorflow plugin's Sample (internal/sample): what
// the generated tests and the tools need to know of it, its examples that
// run for real (training.go) and the judge of what their pods print
// (judge.go). Only tests and tools import it (through
// plugins/catalog/samples); the managers do not.
package tensorflowsample

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Sample describes the tensorflow plugin to the generated tests and the
// benchmarks (sample.Sample).
var Sample = sample.Sample{
	Roles: []sample.Role{
		{Flag: "ps", Replicas: 2, Small: 1}, {Flag: "worker", Replicas: 4, Small: 2},
		{Flag: "chief", Single: true, Replicas: 1}, {Flag: "evaluator", Single: true},
	},
	ValueFlags:  []string{"port", "wait-timeout", "tf-config"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=2222", "--wait-timeout=10m", "--wait-image=busybox:1.36.1", "--wait", "--tf-config=inline", "--tf-config=reference", "--tf-config=auto"},
	BadValues:   []string{"--tf-config=file", "--tf-config=Inline"},
	// Without a ps, worker, chief or evaluator there is no TensorFlow cluster.
	Required:   [][]string{{"ps", "worker", "chief", "evaluator"}},
	Wait:       [2]string{"worker", "ps"},
	Worker:     "worker",
	Lead:       []string{"ps"},
	Check:      checkSample,
	Install:    sample.Install{Env: tensorflow.EnvTFConfig, Args: []string{"--tf-config=" + string(tensorflow.Reference)}},
	Training:   trainingExamples,
	StockFlags: []string{"ps", "worker", "chief", "evaluator", "port"},
	Hellos:     hellos,
}

// checkSample decodes TF_CONFIG as TensorFlow does and checks the pod's task
// type and index and the workers the cluster lists.
func checkSample(c sample.Pod) error {
	var tf struct {
		Cluster map[string][]string `json:"cluster"`
		Task    struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(c.Env[tensorflow.EnvTFConfig]), &tf); err != nil {
		return fmt.Errorf("%s: %w", tensorflow.EnvTFConfig, err)
	}
	if tf.Task.Type != c.Role || tf.Task.Index != c.Index {
		return fmt.Errorf("%s task %s %d, want %s %d", tensorflow.EnvTFConfig, tf.Task.Type, tf.Task.Index, c.Role, c.Index)
	}
	worker, _ := jobs.Task(c.Job, tensorflow.DefaultWorker)
	last := c.Host(worker, c.Workers-1) + ":" + strconv.Itoa(tensorflow.DefaultPort)
	if w := tf.Cluster[tensorflow.RoleWorker]; len(w) != c.Workers || w[c.Workers-1] != last {
		return fmt.Errorf("%s lists %d workers, want %d ending in %s", tensorflow.EnvTFConfig, len(w), c.Workers, last)
	}
	return nil
}
