package tensorflowsample

import (
	"regexp"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// tfServes is tf_config_check.py's "chief:0 serves HOST:PORT", printed
// right after it binds.
var tfServes = regexp.MustCompile(`^(?P<rank>\w+:\d+) serves \S+$`)

// trainingExamples is the TF_CONFIG contract check (Debian packages no
// TensorFlow), which Volcano's in-tree plugin runs too.
var trainingExamples = []training.Example{{
	Framework: tensorflow.Name, What: "TF_CONFIG contract check: chief, ps and 2 workers reach each other", Contract: true, Stock: true,
	File: "example/tensorflow/tensorflow-contract.yaml", ConfigMap: "tf-config-check",
	Programs: []string{"example/tensorflow/tf_config_check.py"}, Container: "tensorflow",
	Judge: judgeTFConfig, Joined: training.Joined{Line: tfServes}, Listening: tfServes,
}}

// hellos are README's "A Job" (tf-readme) and example/tensorflow/tensorflow.yaml.
var hellos = []training.Hello{
	{
		Source: "README.md", Name: "tf-readme", Container: "tensorflow",
		Success: regexp.MustCompile(`(?m)^(ps|worker) \d+: OK$`), Tasks: []string{"ps", "worker"}, PerPod: 1,
	},
	{
		Source: "example/tensorflow/tensorflow.yaml", Name: "tf-dist", Container: "tensorflow",
		Success: regexp.MustCompile(`(?m)^(ps|worker):\d+: OK, reached and heard from 2 tasks$`), Tasks: []string{"ps", "worker"}, PerPod: 1,
	},
}
