package mxnetsample

import (
	"regexp"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
)

// dmlcJoined matches dmlc_check.py's first registration at the scheduler,
// and a server's or worker's listing from the scheduler (ps-lite's start-up
// done).
var dmlcJoined = regexp.MustCompile(`^(?:scheduler: registered (?:server|worker) \S+$|(?:server|worker) \d+: the scheduler listed \d+ nodes$)`)

// trainingExamples is the DMLC_* contract check (Debian packages no MXNet).
var trainingExamples = []training.Example{{
	Framework: mxnet.Name, What: "DMLC_* contract check: ps-lite start-up with scheduler, 2 servers and 2 workers", Contract: true,
	File: "example/mxnet/mxnet-contract.yaml", ConfigMap: "dmlc-check",
	Programs: []string{"example/mxnet/dmlc_check.py"}, Container: "mxnet",
	Judge: judgeDMLC, Joined: training.Joined{Line: dmlcJoined},
}}

// hellos is example/mxnet/mxnet.yaml: every server and worker registers
// with the scheduler.
var hellos = []training.Hello{{
	Source: "example/mxnet/mxnet.yaml", Name: "mxnet-dist", Container: "mxnet",
	Success: regexp.MustCompile(`(?m)^(scheduler: OK, 1 servers and 2 workers registered|(server|worker) mxnet-dist-(server|worker)-\d: OK, registered with the scheduler at mxnet-dist-scheduler-0\.mxnet-dist` + training.Qualified + `:9091)$`), Tasks: []string{"scheduler", "server", "worker"}, PerPod: 1,
}}
