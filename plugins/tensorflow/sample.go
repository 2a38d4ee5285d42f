package tensorflow

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// sample describes the tensorflow plugin to the generated tests and the
// benchmarks (framework.Sample).
var sample = framework.Sample{
	Roles: []framework.SampleRole{
		{Flag: "ps", Replicas: 2}, {Flag: "worker", Replicas: 4},
		{Flag: "chief", Single: true, Replicas: 1}, {Flag: "evaluator", Single: true},
	},
	ValueFlags:  []string{"port", "wait-timeout", "tf-config"},
	StringFlags: []string{"wait-image"},
	BoolFlags:   []string{"wait"},
	ValidArgs:   []string{"--port=2222", "--wait-timeout=10m", "--wait-image=busybox:1.36.1", "--wait", "--tf-config=inline", "--tf-config=reference", "--tf-config=auto"},
	BadValues:   []string{"--tf-config=file", "--tf-config=Inline"},
	// Without a ps, worker, chief or evaluator there is no TensorFlow cluster.
	Required: [][]string{{"ps", "worker", "chief", "evaluator"}},
	Wait:     [2]string{"worker", "ps"},
	Worker:   "worker",
	Lead:     []string{"ps"},
	Check:    checkSample,
}

// checkSample decodes TF_CONFIG as TensorFlow does and checks the pod's task
// type and index and the workers the cluster lists.
func checkSample(c framework.SampleCheck) error {
	var tf struct {
		Cluster map[string][]string `json:"cluster"`
		Task    struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(c.Env[EnvTFConfig]), &tf); err != nil {
		return fmt.Errorf("%s: %w", EnvTFConfig, err)
	}
	if tf.Task.Type != c.Role || tf.Task.Index != c.Index {
		return fmt.Errorf("%s task %s %d, want %s %d", EnvTFConfig, tf.Task.Type, tf.Task.Index, c.Role, c.Index)
	}
	worker, _ := jobs.Task(c.Job, DefaultWorker)
	last := c.Host(worker, c.Workers-1) + ":" + strconv.Itoa(DefaultPort)
	if w := tf.Cluster[RoleWorker]; len(w) != c.Workers || w[c.Workers-1] != last {
		return fmt.Errorf("%s lists %d workers, want %d ending in %s", EnvTFConfig, len(w), c.Workers, last)
	}
	return nil
}
