package pytorchsample

import (
	"regexp"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
)

// digits is an example of example/pytorch/train_digits.py (what, the Job's
// file) in a world of minWorld to maxWorld ranks, judged by
// training.JudgeDigits; stock: make startup runs it under Volcano's stock
// controller manager too.
func digits(what, file string, minWorld, maxWorld int, elastic, stock bool) training.Example {
	return training.Example{
		Framework: pytorch.Name, What: what, File: file, Stock: stock, ConfigMap: "pytorch-digits",
		Programs: []string{"example/pytorch/train_digits.py"}, Container: "pytorch",
		Judge: training.JudgeDigits(minWorld, maxWorld, elastic), Joined: training.Joined{Line: training.DigitsJoinedLine},
	}
}

// trainingExamples train on the digits with DDP over env://, torchrun and
// elastic torchrun. Volcano's in-tree plugin runs the first only: the
// torchrun examples need the PET_* variables it does not set (and the
// worker-only one a master task).
var trainingExamples = []training.Example{
	digits("DDP with env://, master and 2 workers", "example/pytorch/pytorch-digits-ddp.yaml", 3, 3, false, true),
	digits("torchrun from the PET_* variables only, worker-only", "example/pytorch/pytorch-digits-torchrun.yaml", 3, 3, false, false),
	digits("elastic torchrun with c10d, --min-nodes=2 --max-nodes=3", "example/pytorch/pytorch-digits-elastic.yaml", 2, 3, true, false),
}

// hellos is example/pytorch/pytorch.yaml: every rank joins the master.
var hellos = []training.Hello{{
	Source: "example/pytorch/pytorch.yaml", Name: "pytorch-dist", Container: "pytorch",
	Success: regexp.MustCompile(`(?m)^rank [0-2]: OK, (all 3 ranks joined at|joined the master at) pytorch-dist-master-0\.pytorch-dist` + training.Qualified + `:23456`), Tasks: []string{"master", "worker"}, PerPod: 1,
}}
