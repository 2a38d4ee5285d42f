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
//
// With --tf-config=inline every pod's spec holds the whole TF_CONFIG. With
// --tf-config=reference the "cluster" JSON, the bulk of every TF_CONFIG and
// the same for all pods, is stored once per Job in a ConfigMap the Job
// controls (ConfigMapName, key ClusterKey); each container gets EnvCluster
// from that key and then TF_CONFIG as
// {"cluster":$(TF_CONFIG_CLUSTER),"task":{...},"environment":"cloud"}: the
// kubelet replaces $(NAME) by the value of a variable declared earlier in the
// same container (dependent environment variables,
// k8s.io/kubernetes/pkg/kubelet makeEnvironmentVariables), so the process
// sees the same bytes as with --tf-config=inline. The expansion is one pass
// over TF_CONFIG's own value: a value taken from a ConfigMap is never
// expanded, nor is what a reference expands to, and the rest of TF_CONFIG is
// constant text, a role name and digits, with no "$".
//
// The default, --tf-config=auto, is inline while the cluster JSON is at most
// AutoInlineMaxBytes and reference above (Args.Mode): a small Job is spared
// the ConfigMap, a large one the cluster in every pod.
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
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
)

const (
	// Name is the plugin's name in a Job's plugins stanza.
	Name = "tensorflow"
	// EnvTFConfig is the variable TensorFlow reads its cluster from.
	EnvTFConfig = "TF_CONFIG"
	// PortName names the opened container port. A container port of this name in
	// a task's template overrides --port for that role (Kubeflow TFJob's convention).
	PortName = "tfjob-port"
	// EnvCluster holds the cluster JSON by reference (Args.Mode); TF_CONFIG
	// refers to it.
	EnvCluster = "TF_CONFIG_CLUSTER"
	// ConfigMapSuffix makes the name of the cluster ConfigMap: <job>-tf-cluster
	// in the Job's namespace (see ConfigMapName).
	ConfigMapSuffix = "-tf-cluster"
	// ClusterKey is the ConfigMap key of the cluster JSON.
	ClusterKey = "cluster"
)

// TensorFlow role names, as TF_CONFIG spells them.
const (
	RolePS        = "ps"
	RoleWorker    = "worker"
	RoleChief     = "chief"
	RoleEvaluator = "evaluator"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// clusterCM is the cluster ConfigMap's lifecycle (ownedcm.Hooks): only
// distributed jobs whose mode is or resolves to reference (Args.Mode) have
// one.
var clusterCM = ownedcm.Hooks[*plan]{
	Kept: ownedcm.Kept{Plugin: Name, Purpose: "the cluster in every pod's TF_CONFIG", Name: ConfigMapName},
	Data: func(p *plan) (map[string]string, *ownedcm.Synced) {
		if !p.reference || !p.distributed {
			return nil, &p.clusterSynced
		}
		return map[string]string{ClusterKey: p.cluster}, &p.clusterSynced
	},
}

// ConfigMapName returns the name of the job's cluster ConfigMap:
// <job>-tf-cluster, in the Job's namespace.
func ConfigMapName(job *batch.Job) string { return job.Name + ConfigMapSuffix }

// Framework describes the tensorflow plugin to the rest of the project
// (plugins.Frameworks).
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin).WithStock(&framework.Stock{})

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
	// reference: TF_CONFIG refers to EnvCluster, from the ConfigMap: the
	// job's Args.Mode is Reference (given, or auto for a large cluster).
	reference bool
	// clusterSynced is when the cluster ConfigMap was last found or made to
	// match this plan (reference only). It is the plan's one mutable field.
	clusterSynced ownedcm.Synced
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
	for _, r := range a.roles() {
		task, ok := jobs.PresentTask(job, r.Task)
		if !ok {
			continue
		}
		p.roles[r.Task] = r.Name
		p.ports[r.Name] = jobs.NamedPort(task, PortName, a.Port)
		if r.Name != RoleEvaluator {
			cluster[r.Name] = jobs.Hosts(job, task, p.ports[r.Name])
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
	// The JSON at hand is what ClusterSize computes (Args.Mode).
	p.reference = a.modeFor(len(raw)) == Reference
	p.waiters = framework.NewWaiters(job, describe(a, job).Waits, a.Wait)
	return p, nil
}

// OnPodCreate sets TF_CONFIG on every container of a pod of a distributed job
// (more than one pod in all), opens its role's port, and adds the wait container
// to chief, worker and evaluator pods when the job has ps. Pods of tasks that
// play no role are left alone, and so is a container that sets TF_CONFIG
// itself. By reference (Args.Mode) a container gets EnvCluster from the
// ConfigMap and TF_CONFIG referring to it; one that declares EnvCluster itself
// gets the inline TF_CONFIG, since the reference would expand to its value.
// Invalid arguments inject nothing and are reported as an
// InvalidPluginArguments event on the Job.
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
	if pl.reference {
		pl.addReference(pod, ConfigMapName(job), role, index)
	} else {
		inject.Env(pod, v1.EnvVar{Name: EnvTFConfig, Value: pl.tfConfig(pl.cluster, role, index)})
	}
	if role != RoleEvaluator {
		inject.Port(pod, PortName, int32(pl.ports[role]))
	}
	pl.waiters.AddTo(pod, task, index)
	return nil
}

// addReference gives every container without TF_CONFIG the variable
// EnvCluster from the ConfigMap and, after it, the TF_CONFIG that refers to
// it; the kubelet expands a reference only to a variable declared earlier.
func (p *plan) addReference(pod *v1.Pod, configMap, role string, index int) {
	cluster := v1.EnvVar{Name: EnvCluster, ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: configMap},
		Key:                  ClusterKey,
	}}}
	ref := v1.EnvVar{Name: EnvTFConfig, Value: p.tfConfig("$("+EnvCluster+")", role, index)}
	var inline *v1.EnvVar
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			switch {
			case hasEnv(c, EnvTFConfig):
			case hasEnv(c, EnvCluster):
				if inline == nil {
					inline = &v1.EnvVar{Name: EnvTFConfig, Value: p.tfConfig(p.cluster, role, index)}
				}
				inject.ContainerEnv(c, *inline)
			default:
				inject.ContainerEnv(c, cluster, ref)
			}
		}
	}
}

func hasEnv(c *v1.Container, name string) bool {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return true
		}
	}
	return false
}

// OnJobAdd checks the arguments (reporting problems on the Job), marks the
// Job in status.controlledResources and, by reference (Args.Mode), creates
// or updates the cluster ConfigMap (ConfigMapName), controlled by the Job,
// before any pod exists: the kubelet does not start a container whose
// configMapKeyRef it cannot resolve (CreateContainerConfigError). A
// ConfigMap of that name that the Job does not control is left as it is,
// reported as a PluginConfigMapConflict event and returned as a
// *ConflictError, so that Volcano creates none of the Job's pods (it
// retries, then terminates the Job). API errors are returned so that
// Volcano retries. After the first success for a spec revision it skips the
// API for ownedcm.Recheck.
func (p *Plugin) OnJobAdd(job *batch.Job) error {
	return clusterCM.OnJobAdd(&p.Base, job)
}

// OnJobUpdate rewrites the cluster ConfigMap when it no longer matches the
// Job (a new spec revision) and recreates it if it is gone, reading it at
// most once per ownedcm.Recheck. Errors as OnJobAdd.
func (p *Plugin) OnJobUpdate(job *batch.Job) error {
	return clusterCM.OnJobUpdate(&p.Base, job)
}

// OnJobDelete deletes the cluster ConfigMap when the Job controls it (a
// missing one is fine; another owner's is left alone and reported, not
// returned) and removes the plugin's mark. It does not depend on the
// arguments or the mode: a Job switched to inline, or whose spec shrank
// under auto's limit, loses its old ConfigMap too. Idempotent.
func (p *Plugin) OnJobDelete(job *batch.Job) error {
	return clusterCM.OnJobDelete(&p.Base, job)
}

// ConflictError is what the hooks return while the cluster ConfigMap's name
// is taken by a ConfigMap the Job does not control.
type ConflictError = ownedcm.ConflictError

// The parts of a TF_CONFIG value around the cluster JSON, role and index.
const (
	tfConfigHead     = `{"cluster":`
	tfConfigTask     = `,"task":{"type":"`
	tfConfigIndex    = `","index":`
	tfConfigTail     = `},"environment":"cloud"}`
	tfConfigFixedLen = len(tfConfigHead) + len(tfConfigTask) + len(tfConfigIndex) + len(tfConfigTail)
)

// tfConfig renders a pod's TF_CONFIG around cluster: the shared cluster JSON
// (inline), the bulk of it and the same for every pod, or the reference
// $(EnvCluster). One concatenation, one allocation of the value's size.
func (p *plan) tfConfig(cluster, role string, index int) string {
	return tfConfigHead + cluster + tfConfigTask + role + tfConfigIndex + strconv.Itoa(index) + tfConfigTail
}

// TFConfigSize returns the length in bytes of the TF_CONFIG value the
// index-th pod of the task named task sees, as OnPodCreate writes it inline
// or as the kubelet expands it by reference (the same bytes, so whatever
// Args.Mode resolves to), or 0 when that pod gets none (its task plays no
// role, or the job is not distributed). It computes it from the names and
// replica counts, without building the cluster spec, so that admission can
// measure Jobs of any size. a must be ParseArgs' result for job, without
// errors.
func TFConfigSize(job *batch.Job, a *Args, task string, index int) int {
	clusterLen, rolePods, roleOf := clusterSize(job, a, task)
	if roleOf == "" || rolePods <= 1 {
		return 0
	}
	return tfConfigFixedLen + clusterLen + len(roleOf) + len(strconv.Itoa(index))
}
