package tensorflowsample

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/training"
)

// tfDoneLine is the last line of tf_config_check.py in a task of the cluster.
var tfDoneLine = regexp.MustCompile(`(?m)^(\w+):(\d+): reached (\d+) peers, heard from (\d+) peers, cluster (\{.*\})$`)

// judgeTFConfig judges example/tensorflow/tf_config_check.py: no task found a
// mismatch; the chief finished, having reached every other pod of the Job as
// the task TF_CONFIG names for its address and been reached by each; every
// task that finished saw the same cluster, of exactly the Job's pods, and
// claims the role and index of its own pod.
func judgeTFConfig(run training.Run) (string, error) {
	pods, logs := run.Pods, run.Logs
	if err := training.NoMismatch(pods, logs); err != nil {
		return "", err
	}
	var cluster string
	var chief []string
	for _, pod := range pods {
		m := tfDoneLine.FindStringSubmatch(logs[pod.Name])
		if m == nil {
			continue
		}
		task, index := pod.Annotations[batch.TaskSpecKey], pod.Name[strings.LastIndex(pod.Name, "-")+1:]
		if m[1] != task || m[2] != index {
			return "", fmt.Errorf("pod %s (task %s, index %s) ran as %s:%s", pod.Name, task, index, m[1], m[2])
		}
		if want := strconv.Itoa(len(pods) - 1); m[3] != want || m[4] != want {
			return "", fmt.Errorf("pod %s reached %s peers and heard from %s, want %s each (the Job has %d pods)", pod.Name, m[3], m[4], want, len(pods))
		}
		if cluster != "" && m[5] != cluster {
			return "", fmt.Errorf("pod %s saw the cluster %s, another pod %s", pod.Name, m[5], cluster)
		}
		cluster = m[5]
		if m[1] == "chief" {
			chief = m
		}
	}
	if chief == nil {
		return "", fmt.Errorf("the chief never finished: it did not reach or hear from every task")
	}
	var spec map[string][]string
	if err := json.Unmarshal([]byte(cluster), &spec); err != nil {
		return "", fmt.Errorf("the cluster the chief printed: %w", err)
	}
	var tasks []string
	for job, addrs := range spec {
		for i := range addrs {
			tasks = append(tasks, fmt.Sprintf("%s:%d", job, i))
		}
	}
	sort.Strings(tasks)
	if len(tasks) != len(pods) {
		return "", fmt.Errorf("TF_CONFIG's cluster has %d tasks (%s), the Job %d pods", len(tasks), strings.Join(tasks, " "), len(pods))
	}
	return fmt.Sprintf("%d tasks (%s): each serves on its TF_CONFIG address, the chief reached and heard from all %s others",
		len(tasks), strings.Join(tasks, " "), chief[3]), nil
}
