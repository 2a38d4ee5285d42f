package tensorflow

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Defaults, the same as Volcano's in-tree tensorflow plugin's (which has no
// --tf-config: it always inlines).
const (
	DefaultPS        = "ps"
	DefaultWorker    = "worker"
	DefaultChief     = "chief"
	DefaultEvaluator = "evaluator"
	DefaultPort      = 2222
	DefaultTFConfig  = Auto
)

// AutoInlineMaxBytes is the largest cluster JSON, in bytes, that
// --tf-config=auto inlines; a larger one it stores by reference. It bounds
// ClusterSize, the "cluster" object every pod shares, not the whole
// TF_CONFIG (which adds the task, about 70 bytes).
//
// 1 KiB is 10 to 20 pods with typical names (host:port entries of 50 to 105
// bytes with namespace-qualified hosts: resnet50-train in namespace default
// with 1 ps and 20 workers is 1,537 bytes; docs/tfconfig_test.go keeps the
// table of docs/plugins/tensorflow.md equal to this code). Up to there
// a pod's inline TF_CONFIG takes at most about 850 bytes more in etcd than
// reference's two variables (about 330 bytes with their managedFields; a
// 3-pod job's inline TF_CONFIG is about 270, less), against one object fewer
// per Job: no ConfigMap to create, garbage-collect and have every kubelet
// read, and one API write fewer (issue #28). Above it the per-pod bytes
// grow with the job and reference wins.
const AutoInlineMaxBytes = 1024

// TFConfigMode is how the pods get the cluster spec in TF_CONFIG.
type TFConfigMode string

// The accepted --tf-config values.
const (
	// Auto is Inline for a job whose cluster JSON (ClusterSize) is at most
	// AutoInlineMaxBytes and Reference for a larger one (Args.Mode).
	Auto TFConfigMode = "auto"
	// Reference stores the cluster JSON once per Job in a ConfigMap
	// (ConfigMapName) and gives each pod a small TF_CONFIG that refers to it
	// through a variable the kubelet expands at container start: the pods
	// stay a few hundred bytes whatever the job's size.
	Reference TFConfigMode = "reference"
	// Inline writes the whole TF_CONFIG into every pod's spec, as Volcano's
	// in-tree plugin and Kubeflow's TFJob do: O(N) bytes per pod.
	Inline TFConfigMode = "inline"
)

// Args are the tensorflow plugin's arguments.
type Args struct {
	// PS, Worker, Chief and Evaluator name the task that plays each TensorFlow role.
	PS, Worker, Chief, Evaluator string
	// Port is the port every role listens on unless its task declares a
	// container port named PortName.
	Port int
	// TFConfig is how TF_CONFIG carries the cluster spec, as given: Auto,
	// Reference or Inline. Mode resolves Auto for a job.
	TFConfig TFConfigMode
	// Wait holds chief, workers and evaluator back until every ps answers.
	Wait wait.Options
}

// ParseArgs parses the tensorflow plugin's arguments (Volcano-style
// ["--flag=value", ...]) and, when job is not nil, checks them against it.
//
// Flags: --ps, --worker, --chief, --evaluator (task names), --port (1-65535),
// --tf-config (auto, reference or inline), --wait, --wait-timeout, --wait-image.
// It returns field errors under
// spec.plugins[tensorflow] for unknown flags, malformed values, a role flag
// naming a task that does not exist or has no replicas, two roles on one task,
// more than one chief or evaluator (TensorFlow allows at most one of each), a
// job with none of the roles, and, when the mode is or resolves to reference
// (Mode), a cluster JSON larger than a ConfigMap holds
// (ownedcm.MaxConfigMapBytes).
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.PS, "ps", DefaultPS, "name of the parameter server task")
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the worker task")
	s.NonEmpty(&a.Chief, "chief", DefaultChief, "name of the chief task")
	s.NonEmpty(&a.Evaluator, "evaluator", DefaultEvaluator, "name of the evaluator task")
	s.Port(&a.Port, "port", DefaultPort, "port the TensorFlow servers listen on")
	a.TFConfig = DefaultTFConfig
	s.Func("tf-config", fmt.Sprintf("how pods get the cluster in TF_CONFIG: auto (inline up to %d bytes of cluster JSON, reference above), reference (a ConfigMap per job) or inline (in every pod)", AutoInlineMaxBytes),
		func() string { return string(a.TFConfig) }, func(v string) error {
			switch m := TFConfigMode(v); m {
			case Auto, Reference, Inline:
				a.TFConfig = m
				return nil
			}
			return fmt.Errorf("must be %s, %s or %s", Auto, Reference, Inline)
		})
	a.Wait.AddFlags(s)
	s.Parse(argv)
	if job == nil {
		return a, s.Errors()
	}
	if !s.Distinct("ps", "worker", "chief", "evaluator") {
		return a, s.Errors()
	}
	found := s.Task(job, "ps", a.PS, false, 0) != nil
	found = s.Task(job, "worker", a.Worker, false, 0) != nil || found
	found = s.Task(job, "chief", a.Chief, false, 1) != nil || found
	found = s.Task(job, "evaluator", a.Evaluator, false, 1) != nil || found
	if !found && len(s.Errors()) == 0 {
		s.Invalid("worker", a.Worker, fmt.Sprintf(
			"the job has none of the tasks the roles name, with replicas (--ps=%s, --worker=%s, --chief=%s, --evaluator=%s); its tasks: %s",
			a.PS, a.Worker, a.Chief, a.Evaluator, jobs.TaskNames(job)))
	}
	if len(s.Errors()) == 0 && a.TFConfig != Inline {
		if size := ClusterSize(job, a); a.modeFor(size) == Reference && size > ownedcm.MaxConfigMapBytes {
			s.Invalid("tf-config", string(a.TFConfig), fmt.Sprintf(
				"the cluster spec would be %d bytes, more than the %d bytes a ConfigMap holds; use fewer replicas or shorter names",
				size, ownedcm.MaxConfigMapBytes))
		}
	}
	return a, s.Errors()
}

// Mode returns how job's pods get the cluster: a.TFConfig, with Auto
// resolved to Inline when job's cluster JSON (ClusterSize) is at most
// AutoInlineMaxBytes and to Reference above; never Auto. A spec change that
// crosses the limit changes the mode of the pods created after it. a must
// be ParseArgs' result for job.
func (a *Args) Mode(job *batch.Job) TFConfigMode {
	if a.TFConfig != Auto {
		return a.TFConfig
	}
	return a.modeFor(ClusterSize(job, a))
}

// modeFor is Mode for a job whose cluster JSON is clusterLen bytes, for
// callers that have the length already.
func (a *Args) modeFor(clusterLen int) TFConfigMode {
	switch {
	case a.TFConfig != Auto:
		return a.TFConfig
	case clusterLen <= AutoInlineMaxBytes:
		return Inline
	}
	return Reference
}

// roles returns the task each role flag names, in the order of the cluster
// JSON's keys (json.Marshal sorts them): chief, evaluator, ps, worker. The
// plan builds the cluster from it and clusterSize measures it.
func (a *Args) roles() []framework.Role {
	return []framework.Role{{Name: RoleChief, Task: a.Chief}, {Name: RoleEvaluator, Task: a.Evaluator}, {Name: RolePS, Task: a.PS}, {Name: RoleWorker, Task: a.Worker}}
}

// ClusterSize returns the length in bytes of the cluster JSON (the
// ConfigMap's ClusterKey value by reference), computed like TFConfigSize.
// Mode compares it with AutoInlineMaxBytes.
func ClusterSize(job *batch.Job, a *Args) int {
	n, _, _ := clusterSize(job, a, "")
	return n
}

// clusterSize returns the cluster JSON's length, the pods that play a role,
// and the role of task ("" if none).
func clusterSize(job *batch.Job, a *Args, task string) (clusterLen, rolePods int, roleOf string) {
	members := 0
	for _, r := range a.roles() {
		t, ok := jobs.PresentTask(job, r.Task)
		if !ok {
			continue
		}
		if r.Task == task {
			roleOf = r.Name
		}
		n := int(t.Replicas)
		rolePods += n
		if r.Name == RoleEvaluator {
			continue
		}
		// "role":["host:port",...]
		clusterLen += len(r.Name) + 3 + 2 + (n - 1) + hostsJSONLen(job, t, jobs.NamedPort(t, PortName, a.Port))
		members++
	}
	clusterLen += 2 + max(members-1, 0) // braces and commas
	return clusterLen, rolePods, roleOf
}

// hostsJSONLen is the length of the JSON strings of jobs.Hosts(job, task,
// port), quotes included. The index digits never need escaping.
func hostsJSONLen(job *batch.Job, task *batch.TaskSpec, port int) int {
	n := int(task.Replicas)
	prefix, suffix, indexed := jobs.HostParts(job, task)
	suffix += ":" + strconv.Itoa(port)
	if !indexed {
		return n * jsonStringLen(prefix+suffix)
	}
	return n*jsonStringLen(prefix+suffix) + jobs.IndexDigits(n)
}

func jsonStringLen(s string) int {
	raw, _ := json.Marshal(s)
	return len(raw)
}
