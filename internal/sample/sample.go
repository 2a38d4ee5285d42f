// Package sample holds the Sample type: what the project's generated tests and
// its tools need to know of a framework beyond its framework.Framework (its
// role flags, flags, valid and bad arguments, the roles a benchmark scales, a
// check of an injected pod, and its examples that run for real with their
// judges). Each framework's Sample lives in a package of its own beside the
// plugin (plugins/<framework>/<framework>sample), paired with the framework by
// plugins/catalog/samples, so that neither manager links any of it.
package sample

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// Sample describes a framework to the project's generated tests and
// tools: the malformed and edited Jobs of webhook/webhooktest (and so the fuzz
// corpus), the plugin benchmarks of test/bench, the sweep's jobs, the install
// test's, and the real-node Jobs of make demo and the e2e suite. Each framework's sample package fills its own, so that
// adding a framework needs no line in those tests and tools: they range over
// samples.Frameworks.
type Sample struct {
	// Roles are the plugin's role flags (flags that name a task), in the
	// order of its Args, each with whether the role is played by one pod and
	// the replicas of its task in the generated base Job (0: the base Job
	// has no such task; the role is optional).
	Roles []Role
	// ValueFlags need a non-empty value (integers, durations, choices);
	// StringFlags take a value that may be empty; BoolFlags take none.
	// Together with Roles' flags they are every flag the plugin parses
	// (a test checks them against ParseArgs).
	ValueFlags, StringFlags, BoolFlags []string
	// ValidArgs are arguments the plugin accepts on any Job of the base
	// shape, whatever its names (no --wait=false: the generated
	// launch-order defects need the waits).
	ValidArgs []string
	// BadValues are arguments of the plugin's own flags that it must deny on
	// any Job. Out-of-range ports and bad --wait and --wait-timeout values
	// are generated for every plugin and need not be listed.
	BadValues []string
	// Required lists sets of role flags: dropping the tasks of any one set
	// from the base Job makes the plugin deny the Job.
	Required [][]string
	// Wait is one launch-order edge of the plugin as role flags: the pods of
	// Wait[0] wait for those of Wait[1]. Zero when the plugin imposes none.
	Wait [2]string
	// Worker is the role flag of the role a benchmark scales to N pods;
	// Lead are the role flags of the benchmarked Job's other tasks, one pod
	// each (none for a Job of workers only).
	Worker string
	Lead   []string
	// Check returns an error unless the pod in c got what the plugin must
	// inject, so that a benchmark cannot measure a plugin that did nothing
	// or the wrong thing. Its messages name the variable and both values.
	Check func(c Pod) error
	// Install is the framework's Job in make test-install.
	Install Install
	// Training are the framework's examples that run for real on the real
	// node (training, or a contract check where Debian packages no
	// framework), each with its judge, in the order make demo runs them
	// (samples.Examples).
	Training []training.Example
	// StockFlags are the flags of Volcano's in-tree plugin of the
	// framework's name (pkg/controllers/job/plugins/distributed-framework,
	// the same in v1.15.1 and v1.14.1) that an example marked Stock may give
	// (make startup); none when Volcano has no such plugin.
	StockFlags []string
	// Hellos are the framework's examples that run as written on public
	// images (its minimal example, and others of its plugin such as
	// README's), for the e2e suite (samples.Hellos).
	Hellos []training.Hello
}

// Install is what make test-install (hack/installtest) needs besides the
// roles to run a framework's Job on the real node: one busybox pod for each
// role of the small Job (Role.Small), the pods that the framework's
// description has others wait for on a port listening there, the others
// checking that the plugin set Env.
type Install struct {
	// Env is a variable the plugin sets in every pod of the small Job that
	// no other pod waits for.
	Env string
	// Args are the plugin's arguments besides --wait-image, for what the
	// install test must exercise beyond the defaults (tensorflow's
	// ConfigMap, pytorch's wait for the master's port).
	Args []string
}

// Role is a role flag of a Sample.
type Role struct {
	// Flag is the flag that names the role's task; its default is the task's
	// name in the base Job.
	Flag string
	// Single is set for a role of exactly one pod (a master, a scheduler).
	Single bool
	// Replicas is the replicas of the role's task in the base Job; 0: none.
	Replicas int32
	// Small is the role's pods in the framework's small Job, the one make
	// sweep creates by the hundred (3 or 4 pods in all); 0: the small Job
	// has no such task.
	Small int32
}

// Pod is one pod of a benchmarked Job after the plugin ran, as Sample.Check
// examines it.
type Pod struct {
	Job *batch.Job
	Pod *v1.Pod
	// Role is the role flag of the pod's task; Index the pod's index in it.
	Role  string
	Index int
	// Workers is the replicas of the Sample's Worker role.
	Workers int
	// Env is the pod's first container's environment as the kubelet
	// resolves it (ConfigMap references included).
	Env map[string]string
	// ConfigMaps are the ConfigMaps the plugin created, by name.
	ConfigMaps map[string]*v1.ConfigMap
	// InTree: the pod is of Volcano's in-tree plugin (the benchmarks run
	// the same check on it), which names hosts <hostname>.<subdomain>.
	InTree bool
}

// Host returns the host the plugin must name the index-th pod of task by:
// jobs.Host, or with InTree Volcano's <hostname>.<subdomain>.
func (c Pod) Host(task *batch.TaskSpec, index int) string {
	h := jobs.Host(c.Job, task, index)
	if c.InTree {
		return strings.TrimSuffix(h, jobs.Domain("").Qualifier(c.Job))
	}
	return h
}

// Flags returns every flag of the Sample: the role flags, then ValueFlags,
// StringFlags and BoolFlags.
func (s *Sample) Flags() []string {
	var out []string
	for _, r := range s.Roles {
		out = append(out, r.Flag)
	}
	out = append(out, s.ValueFlags...)
	out = append(out, s.StringFlags...)
	return append(out, s.BoolFlags...)
}

// RoleFlags returns the role flags of the Sample, in order.
func (s *Sample) RoleFlags() []string {
	out := make([]string, len(s.Roles))
	for i, r := range s.Roles {
		out[i] = r.Flag
	}
	return out
}

// RequiredAlone reports whether the plugin cannot do without flag's role
// alone: one of Required is that flag by itself.
func (s *Sample) RequiredAlone(flag string) bool {
	for _, set := range s.Required {
		if len(set) == 1 && set[0] == flag {
			return true
		}
	}
	return false
}

// OwnIP is what a pod's variable that refers to its own IP as $(name) holds:
// env[name] where env was resolved as the kubelet does, else the reference
// $(name) itself (a literal environment, nothing resolved the downward API).
func OwnIP(env map[string]string, name string) string {
	if ip := env[name]; ip != "" {
		return ip
	}
	return "$(" + name + ")"
}

// WantEnv returns an error unless env holds name with the value want; the
// message names the variable and both values.
func WantEnv(env map[string]string, name, want string) error {
	if got, ok := env[name]; !ok || got != want {
		return fmt.Errorf("%s = %q (set: %v), want %q", name, got, ok, want)
	}
	return nil
}
