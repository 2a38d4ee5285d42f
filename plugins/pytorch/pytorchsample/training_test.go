package pytorchsample

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
)

// digitsLog is what train_digits.py prints as rank of world, ending with
// losses and verdict.
func digitsLog(rank, world int, losses []string, verdict string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rank %d of %d joined on host-%d\n", rank, world, rank)
	if rank == 0 {
		for i, l := range losses {
			fmt.Fprintf(&b, "epoch %d loss %s\n", i+1, l)
		}
		b.WriteString("test accuracy 0.9644\n")
	}
	fmt.Fprintf(&b, "rank %d: parameters %s across %d ranks (checksum 12.5)\n", rank, verdict, world)
	return b.String()
}

func TestJudgeDigits(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/pytorch/pytorch-digits-ddp.yaml")
	_, pods := trainingtest.Pods(t, ex, pytorch.New)
	falling := []string{"1.9000", "0.4000", "0.1500"}
	// logs gives each pod the log of the rank its injected RANK says.
	logs := func(edit func(rank int) (int, []string, string)) map[string]string {
		out := map[string]string{}
		for _, p := range pods {
			var rank int
			fmt.Sscan(kubeutil.EnvOf(p, ex.Container)["RANK"], &rank)
			r, losses, verdict := edit(rank)
			out[p.Name] = digitsLog(r, 3, losses, verdict)
		}
		return out
	}
	tests := []struct {
		name    string
		logs    map[string]string
		wantErr string
	}{
		{name: "every rank trained and agrees", logs: logs(func(r int) (int, []string, string) { return r, falling, "agree" })},
		{
			name:    "a pod trained as another rank than injected",
			logs:    logs(func(r int) (int, []string, string) { return (r + 1) % 3, falling, "agree" }),
			wantErr: "trained as rank 1 but was injected RANK=\"0\"",
		},
		{
			name:    "the ranks disagree",
			logs:    logs(func(r int) (int, []string, string) { return r, falling, "DIFFER from rank 0" }),
			wantErr: "final parameters DIFFER from rank 0",
		},
		{
			name:    "the loss did not fall",
			logs:    logs(func(r int) (int, []string, string) { return r, []string{"1.9", "1.8"}, "agree" }),
			wantErr: "loss went from 1.9 to 1.8",
		},
		{
			name:    "a rank never finished",
			logs:    map[string]string{pods[0].Name: digitsLog(0, 3, falling, "agree")},
			wantErr: "never finished training",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			summary, err := ex.Judge(training.Run{Pods: pods, Logs: tc.logs})
			trainingtest.CheckJudged(t, summary, err, tc.wantErr)
		})
	}
}

func TestJudgeDigitsElastic(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/pytorch/pytorch-digits-elastic.yaml")
	_, pods := trainingtest.Pods(t, ex, pytorch.New)
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	falling := []string{"1.9000", "0.4000"}
	// Two pods trained (ranks swapped against their pod order), one came late.
	logs := map[string]string{pods[0].Name: digitsLog(1, 2, nil, "agree"), pods[1].Name: digitsLog(0, 2, falling, "agree"), pods[2].Name: ""}
	summary, err := ex.Judge(training.Run{Pods: pods, Logs: logs})
	trainingtest.CheckJudged(t, summary, err, "")
	delete(logs, pods[1].Name)
	_, err = ex.Judge(training.Run{Pods: pods, Logs: logs})
	trainingtest.CheckJudged(t, "", err, "rank 0 of 2 never joined")
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/pytorch/pytorch-digits-ddp.yaml": {
			Joined: []string{"rank 0 of 3 joined on pytorch-digits-ddp-master-0"},
		},
		"example/pytorch/pytorch-digits-torchrun.yaml": {
			Joined: []string{"[default0]:rank 2 of 3 joined on pytorch-digits-torchrun-worker-2"},
		},
		"example/pytorch/pytorch-digits-elastic.yaml": {
			Joined:  []string{"[default0]:rank 1 of 2 joined on e-worker-0"},
			Neither: []string{"INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers."},
		},
	})
}
