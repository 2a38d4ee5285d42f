package xgboostsample

import (
	"regexp"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
)

// xgboostJoined is train_xgboost.py's first line, once the collective is up.
var xgboostJoined = regexp.MustCompile(`^rank (?P<rank>\d+) of (?P<world>\d+) joined tracker at `)

// trainingExamples trains on sharded digits with XGBoost's collective.
var trainingExamples = []training.Example{{
	Framework: xgboost.Name, What: "XGBoost collective: the master's tracker and 3 ranks on sharded digits, one model",
	File: "example/xgboost/xgboost-digits.yaml", ConfigMap: "xgboost-digits",
	Programs: []string{"example/xgboost/train_xgboost.py"}, Container: "xgboost",
	Judge: judgeXGBoost, Joined: training.Joined{Line: xgboostJoined},
}}

// hellos is example/xgboost/xgboost.yaml: every rank joins the master's
// tracker.
var hellos = []training.Hello{{
	Source: "example/xgboost/xgboost.yaml", Name: "xgboost-dist", Container: "xgboost",
	Success: regexp.MustCompile(`(?m)^(master: OK, ranks 1 to 2 joined|rank [12] of 3: OK, joined) the tracker at xgboost-dist-master-0\.xgboost-dist` + training.Qualified + `:9999$`), Tasks: []string{"master", "worker"}, PerPod: 1,
}}
