package tensorflowsample

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

func TestJudgeTFConfig(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/tensorflow/tensorflow-contract.yaml")
	job, pods := trainingtest.Pods(t, ex, tensorflow.New)
	cluster := fmt.Sprintf(`{"chief": ["%[1]s-chief-0.%[1]s:2222"], "ps": ["%[1]s-ps-0.%[1]s:2222"], "worker": ["%[1]s-worker-0.%[1]s:2222", "%[1]s-worker-1.%[1]s:2222"]}`, job.Name)
	done := func(task string, peers int, cluster string) string {
		return fmt.Sprintf("%s serves x:2222\n%s: reached %d peers, heard from %d peers, cluster %s\n", task, task, peers, peers, cluster)
	}
	good := func() map[string]string {
		return map[string]string{
			pods[0].Name: done("chief:0", 3, cluster), pods[1].Name: done("ps:0", 3, cluster),
			pods[2].Name: done("worker:0", 3, cluster), pods[3].Name: "worker:1 serves x:2222\n",
		}
	}
	trainingtest.JudgeEdits(t, ex, pods, good, []trainingtest.LogEdit{
		{Name: "the chief and two others finished, one was stopped"},
		{
			Name: "a task found its address is another pod",
			Edit: func(l map[string]string) {
				l[pods[3].Name] += "MISMATCH worker:1: my address x resolves to y, not to this pod\n"
			},
			WantErr: "pod " + pods[3].Name + ": MISMATCH worker:1: my address",
		},
		{
			Name:    "a pod ran as another index",
			Edit:    func(l map[string]string) { l[pods[2].Name] = done("worker:1", 3, cluster) },
			WantErr: "ran as worker:1",
		},
		{
			Name:    "the chief never finished",
			Edit:    func(l map[string]string) { l[pods[0].Name] = "chief:0 serves x:2222\n" },
			WantErr: "the chief never finished",
		},
		{
			Name: "TF_CONFIG's cluster is larger than the job",
			Edit: func(l map[string]string) {
				big := strings.Replace(cluster, `"ps": [`, `"ps": ["extra:1", `, 1)
				for name, log := range l {
					l[name] = strings.ReplaceAll(log, cluster, big)
				}
			},
			WantErr: "TF_CONFIG's cluster has 5 tasks",
		},
	})
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/tensorflow/tensorflow-contract.yaml": {
			Joined:    []string{"chief:0 serves tf-config-check-chief-0.tf-config-check.ns.svc.cluster.local:2222"},
			Listening: []string{"ps:0 serves tf-config-check-ps-0.tf-config-check.ns.svc.cluster.local:2222"},
			Neither:   []string{"MISMATCH chief:0 is not in the cluster {}"},
		},
	})
}
