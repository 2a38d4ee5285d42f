// Package tensorflow is the tensorflow job plugin: it gives every pod of a
// distributed TensorFlow Job the TF_CONFIG that TensorFlow's TFConfigClusterResolver
// and tf.distribute strategies read, opens the server port, and holds chief,
// workers and evaluator back until the parameter servers answer.
//
// TF_CONFIG contract (tensorflow/python/distribute/multi_worker_util.py and
// cluster_resolver/tfconfig_cluster_resolver.py): "cluster" maps the roles chief,
// worker and ps to "host:port" lists; "task" names this process's role and index.
// The evaluator runs beside the training cluster, not in it: multi_worker_util
// allows it to be missing from the cluster spec and at most one evaluator, so it
// is left out of "cluster" and only gets its "task".
package tensorflow

import (
	"encoding/json"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/inject"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

const (
	// Name is the plugin's name in a Job's plugins stanza.
	Name = "tensorflow"
	// EnvTFConfig is the variable TensorFlow reads its cluster from.
	EnvTFConfig = "TF_CONFIG"
	// PortName names the opened container port. A container port of this name in
	// a task's template overrides --port for that role (Kubeflow TFJob's convention).
	PortName = "tfjob-port"
)

// TensorFlow role names, as TF_CONFIG spells them.
const (
	RolePS        = "ps"
	RoleWorker    = "worker"
	RoleChief     = "chief"
	RoleEvaluator = "evaluator"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the tensorflow plugin to the rest of the project
// (plugins.Frameworks).
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin)

// describe: chief, workers and evaluator wait for every ps; the chief's
// completion ends training, the workers' when there is no chief.
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job,
		framework.Role{Name: RoleChief, Task: a.Chief},
		framework.Role{Name: RoleWorker, Task: a.Worker},
		framework.Role{Name: RolePS, Task: a.PS},
		framework.Role{Name: RoleEvaluator, Task: a.Evaluator})
	if ps, ok := jobs.Task(job, a.PS); ok && a.Wait.Enabled {
		d.AddWaits(job, a.PS, jobs.NamedPort(ps, PortName, a.Port), false, a.Chief, a.Worker, a.Evaluator)
	}
	switch {
	case jobs.Present(job, a.Chief):
		d.Completion = a.Chief
	case jobs.Present(job, a.Worker):
		d.Completion = a.Worker
	}
	d.Sizes = func() []framework.SizedEnv {
		var out []framework.SizedEnv
		for _, r := range d.Roles {
			index := jobs.Replicas(job, r.Task) - 1
			if n := TFConfigSize(job, a, r.Task, index); n > 0 {
				out = append(out, framework.SizedEnv{Name: EnvTFConfig, Task: r.Task, Index: index, ValueLen: n})
			}
		}
		return out
	}
	return d
}

// Plugin implements Volcano's PluginInterface. Volcano builds one per hook call.
type Plugin struct {
	framework.Base[*plan]
}

// New builds the plugin with the Job's arguments for it (Framework.New): the
// builder registered with Volcano's plugin factory.
func New(client pluginsinterface.PluginClientset, arguments []string) pluginsinterface.PluginInterface {
	return Framework.New(client, arguments)
}

// plan is what one Job revision's pods share.
type plan struct {
	// roles maps a task name to its TensorFlow role.
	roles map[string]string
	// ports maps a role to its port.
	ports map[string]int
	// cluster is the JSON of TF_CONFIG's "cluster" object.
	cluster string
	// distributed is false when one pod in all plays a role: it gets no TF_CONFIG.
	distributed bool
	// waiters are the init containers of chief, workers and evaluator, from
	// describe's wait edges: none when the job has no ps or waiting is off.
	waiters framework.Waiters
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	p := &plan{
		roles: map[string]string{},
		ports: map[string]int{},
	}
	cluster := map[string][]string{}
	for role, taskName := range map[string]string{RolePS: a.PS, RoleWorker: a.Worker, RoleChief: a.Chief, RoleEvaluator: a.Evaluator} {
		if !jobs.Present(job, taskName) {
			continue
		}
		task, _ := jobs.Task(job, taskName)
		p.roles[taskName] = role
		p.ports[role] = jobs.NamedPort(task, PortName, a.Port)
		if role != RoleEvaluator {
			cluster[role] = jobs.Hosts(job, task, p.ports[role])
		}
	}
	// Only pods that play a role count: a single worker beside a TensorBoard
	// task is not a distributed job.
	rolePods := 0
	for taskName := range p.roles {
		rolePods += jobs.Replicas(job, taskName)
	}
	p.distributed = rolePods > 1
	raw, err := json.Marshal(cluster)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "plugins").Key(Name), err)}
	}
	p.cluster = string(raw)
	p.waiters = framework.NewWaiters(job, describe(a, job).Waits, a.Wait)
	return p, nil
}

// OnPodCreate sets TF_CONFIG on every container of a pod of a distributed job
// (more than one pod in all), opens its role's port, and adds the wait container
// to chief, worker and evaluator pods when the job has ps. Pods of tasks that
// play no role are left alone. Invalid arguments inject nothing and are reported
// as an InvalidPluginArguments event on the Job.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok || !pl.distributed {
		return nil
	}
	task := jobs.PodTask(pod)
	role, ok := pl.roles[task]
	if !ok {
		return nil
	}
	index, err := jobs.PodIndex(pod)
	if err != nil {
		return err
	}
	inject.Env(pod, v1.EnvVar{Name: EnvTFConfig, Value: pl.tfConfig(role, index)})
	if role != RoleEvaluator {
		inject.Port(pod, PortName, int32(pl.ports[role]))
	}
	pl.waiters.AddTo(pod, task, index)
	return nil
}

// The parts of a TF_CONFIG value around the cluster JSON, role and index.
const (
	tfConfigHead     = `{"cluster":`
	tfConfigTask     = `,"task":{"type":"`
	tfConfigIndex    = `","index":`
	tfConfigTail     = `},"environment":"cloud"}`
	tfConfigFixedLen = len(tfConfigHead) + len(tfConfigTask) + len(tfConfigIndex) + len(tfConfigTail)
)

// tfConfig renders a pod's TF_CONFIG around the shared cluster JSON, which is
// the bulk of it and the same for every pod: one concatenation, one
// allocation of the value's size, so a job's pods cost time and memory
// linear in its TF_CONFIG bytes.
func (p *plan) tfConfig(role string, index int) string {
	return tfConfigHead + p.cluster + tfConfigTask + role + tfConfigIndex + strconv.Itoa(index) + tfConfigTail
}

// TFConfigSize returns the length in bytes of the TF_CONFIG value OnPodCreate
// gives the index-th pod of the task named task, or 0 when that pod gets none
// (its task plays no role, or the job is not distributed). It computes it from
// the names and replica counts, without building the cluster spec, so that
// admission can measure Jobs of any size. a must be ParseArgs' result for job,
// without errors.
func TFConfigSize(job *batch.Job, a *Args, task string, index int) int {
	roleOf := ""
	rolePods, clusterLen, members := 0, 0, 0
	// The cluster JSON's keys in the order json.Marshal sorts them.
	for _, r := range []struct{ role, task string }{{RoleChief, a.Chief}, {RoleEvaluator, a.Evaluator}, {RolePS, a.PS}, {RoleWorker, a.Worker}} {
		if !jobs.Present(job, r.task) {
			continue
		}
		t, _ := jobs.Task(job, r.task)
		if r.task == task {
			roleOf = r.role
		}
		n := int(t.Replicas)
		rolePods += n
		if r.role == RoleEvaluator {
			continue
		}
		// "role":["host:port",...]
		clusterLen += len(r.role) + 3 + 2 + (n - 1) + hostsJSONLen(job, t, jobs.NamedPort(t, PortName, a.Port))
		members++
	}
	if roleOf == "" || rolePods <= 1 {
		return 0
	}
	clusterLen += 2 + max(members-1, 0) // braces and commas
	return tfConfigFixedLen + clusterLen + len(roleOf) + len(strconv.Itoa(index))
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
