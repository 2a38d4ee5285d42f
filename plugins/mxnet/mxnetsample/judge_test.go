package mxnetsample

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
)

func TestJudgeDMLC(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/mxnet/mxnet-contract.yaml")
	_, pods := trainingtest.Pods(t, ex, mxnet.New)
	for i, p := range pods {
		p.Status.PodIP = fmt.Sprintf("10.245.0.%d", i+2)
	}
	var b strings.Builder
	for _, p := range pods[1:] {
		fmt.Fprintf(&b, "scheduler: registered %s %s:4000\n", kubeutil.EnvOf(p, ex.Container)["DMLC_ROLE"], p.Status.PodIP)
	}
	registered := b.String()
	final := "scheduler: 2 servers and 2 workers registered (ids 8 9 10 11); every worker reached every server\n"
	tests := []struct {
		name, scheduler, worker, wantErr string
	}{
		{name: "every node registered and met", scheduler: registered + final},
		{
			name:      "the scheduler waited for fewer servers",
			scheduler: registered + strings.Replace(final, "2 servers", "1 servers", 1),
			wantErr:   "waited for 1 servers and 2 workers, the Job has 2 and 2",
		},
		{
			name:      "a server registered as a worker",
			scheduler: strings.Replace(registered, "registered server", "registered worker", 1) + final,
			wantErr:   "registered as a worker, but its pod has DMLC_ROLE=server",
		},
		{
			name:      "a worker found two workers with its id",
			scheduler: registered,
			worker:    "MISMATCH two workers have DMLC_WORKER_ID 0\n",
			wantErr:   ": MISMATCH two workers have DMLC_WORKER_ID 0",
		},
		{name: "the scheduler never finished", scheduler: registered, wantErr: "never finished"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs := map[string]string{pods[0].Name: tc.scheduler, pods[len(pods)-1].Name: tc.worker}
			summary, err := ex.Judge(training.Run{Pods: pods, Logs: logs})
			trainingtest.CheckJudged(t, summary, err, tc.wantErr)
		})
	}
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/mxnet/mxnet-contract.yaml": {
			Joined: []string{"scheduler: registered server 10.88.0.12:41235", "worker 9: the scheduler listed 4 nodes"},
		},
	})
}
