package paddlesample

import (
	"regexp"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
)

// paddle_check.py: rank 0 serves the rendezvous; the others print nothing
// before their verdict.
var (
	paddleServes = regexp.MustCompile(`^\S+: serves the rendezvous at `)
	paddleJoined = regexp.MustCompile(`^(?:\S+: serves the rendezvous at |paddle \w+ rank \d+ of \d+ on \S+: OK)`)
)

// trainingExamples is the PADDLE_* contract check (Debian packages no
// PaddlePaddle).
var trainingExamples = []training.Example{{
	Framework: paddle.Name, What: "PADDLE_* contract check: the launcher's rendezvous and collective start-up with 3 workers", Contract: true,
	File: "example/paddle/paddle-contract.yaml", ConfigMap: "paddle-check",
	Programs: []string{"example/paddle/paddle_check.py"}, Container: "paddle",
	Judge: judgePaddle, Joined: training.Joined{Line: paddleJoined}, Listening: paddleServes,
}}

// hellos is example/paddle/paddle.yaml: rank 0 serves the rendezvous, the
// other nodes register there.
var hellos = []training.Hello{{
	Source: "example/paddle/paddle.yaml", Name: "paddle-dist", Container: "paddle",
	Success: regexp.MustCompile(`(?m)^(rank 0 paddle-dist-worker-0: OK, served the rendezvous at [0-9a-f.:]+:36543 to 2 nodes of job paddle-dist|node paddle-dist-worker-[12]: OK, registered at the rendezvous paddle-dist-worker-0\.paddle-dist` + training.Qualified + `:36543 of job paddle-dist with 3 nodes)$`), Tasks: []string{"worker"}, PerPod: 1,
}}
