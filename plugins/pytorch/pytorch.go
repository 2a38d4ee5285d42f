// Package pytorch is the pytorch job plugin: it gives every pod of a PyTorch Job
// the variables torch.distributed reads (MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
// RANK for init_method="env://") and those torchrun reads (PET_*, the
// environment form of torch.distributed.run's flags, as Kubeflow's PyTorchJob
// sets them), including torchrun's elastic rendezvous, and holds workers back
// until the master's address resolves.
package pytorch

import (
	"strconv"
	"strings"

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
	Name = "pytorch"
	// PortName names the port opened on the containers (as Volcano's in-tree plugin).
	PortName = "pytorchjob-port"
)

// Variables the plugin sets.
const (
	EnvMasterAddr       = "MASTER_ADDR"
	EnvMasterPort       = "MASTER_PORT"
	EnvWorldSize        = "WORLD_SIZE"
	EnvRank             = "RANK"
	EnvPetMasterAddr    = "PET_MASTER_ADDR"
	EnvPetMasterPort    = "PET_MASTER_PORT"
	EnvPetNNodes        = "PET_NNODES"
	EnvPetNodeRank      = "PET_NODE_RANK"
	EnvPetNprocPerNode  = "PET_NPROC_PER_NODE"
	EnvPetRdzvBackend   = "PET_RDZV_BACKEND"
	EnvPetRdzvEndpoint  = "PET_RDZV_ENDPOINT"
	EnvPetRdzvID        = "PET_RDZV_ID"
	EnvPetMaxRestarts   = "PET_MAX_RESTARTS"
	EnvPetRdzvConf      = "PET_RDZV_CONF"
	EnvPythonUnbuffered = "PYTHONUNBUFFERED"
)

// PyTorch roles.
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the pytorch plugin to the rest of the project
// (plugins.Frameworks).
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin).WithStock(&framework.Stock{})

// describe: workers wait for the master's address (for pod 0 of the workers
// without a master task, which is then rank 0); the master's completion ends
// training, the workers' when there is no master task. Elastic jobs
// gang-schedule the elastic minimum of pods.
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job, framework.Role{Name: RoleMaster, Task: a.Master}, framework.Role{Name: RoleWorker, Task: a.Worker})
	hasMaster, hasWorker := jobs.Present(job, a.Master), jobs.Present(job, a.Worker)
	rank0 := a.Worker
	if hasMaster {
		rank0 = a.Master
	}
	if a.Wait.Enabled && hasWorker {
		port := 0
		if a.WaitMasterPort {
			t, _ := jobs.Task(job, rank0)
			port = jobs.NamedPort(t, PortName, a.Port)
		}
		d.AddWaits(job, rank0, port, true, a.Worker)
	}
	if hasMaster || hasWorker {
		d.Completion = rank0
	}
	if a.Elastic() && hasWorker {
		masters, workers := 0, jobs.Replicas(job, a.Worker)
		if hasMaster {
			masters = jobs.Replicas(job, a.Master)
		}
		lo, _ := a.NodeRange(masters + workers)
		d.ElasticTask, d.ElasticMin = a.Worker, int32(min(max(lo-masters, 0), workers))
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
	master, worker string
	// hasMaster is false for a worker-only job: worker ranks start at 0.
	hasMaster bool
	port      int32
	// common is every variable that is the same on all pods.
	common []v1.EnvVar
	// waiters is the workers' init container, from describe's wait edge
	// (worker 0 does not wait when it is the master: a worker-only job).
	waiters framework.Waiters
	// rdzvEndpoint is the c10d rendezvous endpoint the plugin injects; empty
	// unless the job is elastic with the c10d backend, whose store the
	// endpoint's pod must host (see setRdzvHost).
	rdzvEndpoint string
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	masterTask, _ := jobs.Task(job, a.Master)
	hasMaster := jobs.Present(job, a.Master)
	if !hasMaster {
		masterTask, _ = jobs.Task(job, a.Worker)
	}
	pods := jobs.Replicas(job, a.Worker)
	if hasMaster {
		pods += int(masterTask.Replicas)
	}
	worldSize := pods
	if n, err := strconv.Atoi(a.NprocPerNode); err == nil {
		worldSize = pods * n
	}
	addr := jobs.Host(job, masterTask, 0)
	// A container port named PortName on the master overrides --port, as in
	// Kubeflow's PyTorchJob.
	masterPort := jobs.NamedPort(masterTask, PortName, a.Port)
	port := strconv.Itoa(masterPort)
	nnodes := strconv.Itoa(pods)
	if a.Elastic() {
		min, max := a.NodeRange(pods)
		nnodes = strconv.Itoa(min) + ":" + strconv.Itoa(max)
	}
	common := []v1.EnvVar{
		{Name: EnvMasterAddr, Value: addr},
		{Name: EnvMasterPort, Value: port},
		{Name: EnvWorldSize, Value: strconv.Itoa(worldSize)},
		{Name: EnvPetMasterAddr, Value: addr},
		{Name: EnvPetMasterPort, Value: port},
		{Name: EnvPetNNodes, Value: nnodes},
		{Name: EnvPetNprocPerNode, Value: a.NprocPerNode},
		{Name: EnvPythonUnbuffered, Value: "1"},
	}
	if a.Elastic() {
		common = append(common,
			v1.EnvVar{Name: EnvPetRdzvBackend, Value: a.RdzvBackend},
			v1.EnvVar{Name: EnvPetRdzvEndpoint, Value: addr + ":" + port},
			v1.EnvVar{Name: EnvPetRdzvID, Value: string(job.UID)},
			v1.EnvVar{Name: EnvPetMaxRestarts, Value: strconv.Itoa(a.MaxRestarts)},
		)
	}
	p := &plan{master: a.Master, worker: a.Worker, hasMaster: hasMaster, port: int32(masterPort), common: common,
		waiters: framework.NewWaiters(job, describe(a, job).Waits, a.Wait)}
	if a.Elastic() && a.RdzvBackend == c10dBackend {
		p.rdzvEndpoint = addr + ":" + port
	}
	return p, nil
}

// OnPodCreate sets the master address and port, world size and this pod's rank
// (master 0, worker i → i+1; worker i → i when there is no master task) and the
// matching PET_* variables on every container of master and worker pods, opens
// the master port, and adds the wait container to workers. Invalid arguments
// inject nothing and are reported as an InvalidPluginArguments event on the Job.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok {
		return nil
	}
	task := jobs.PodTask(pod)
	isMaster := pl.hasMaster && task == pl.master
	if !isMaster && task != pl.worker {
		return nil
	}
	index, err := jobs.PodIndex(pod)
	if err != nil {
		return err
	}
	rank := index
	if !isMaster && pl.hasMaster {
		rank = index + 1
	}
	r := strconv.Itoa(rank)
	env := make([]v1.EnvVar, 0, len(pl.common)+2)
	env = append(env, pl.common...)
	env = append(env, v1.EnvVar{Name: EnvRank, Value: r}, v1.EnvVar{Name: EnvPetNodeRank, Value: r})
	inject.Env(pod, env...)
	if pl.rdzvEndpoint != "" {
		// The endpoint is master pod 0, or worker pod 0 without a master task.
		setRdzvHost(pod, pl.rdzvEndpoint, isMaster || (!pl.hasMaster && index == 0))
	}
	inject.Port(pod, PortName, pl.port)
	pl.waiters.AddTo(pod, task, index)
	return nil
}

// c10dBackend is torchrun's default rendezvous backend, whose store one of
// the agents hosts itself (etcd and etcd-v2 use an external etcd).
const c10dBackend = "c10d"

// isHostKey is the c10d backend's rendezvous option that says whether this
// agent hosts the TCP store at the endpoint.
const isHostKey = "is_host"

// setRdzvHost tells torchrun in each container of pod whether it hosts the
// c10d rendezvous store at endpoint ("host:port"): is_host=1 or is_host=0 in
// PET_RDZV_CONF (torchrun's --rdzv-conf, "key=value,..."), appended to the
// user's own value. Without is_host, torchrun hosts only when the endpoint's
// host is its machine's host name or one of its addresses, and a pod's
// "<hostname>.<subdomain>" name is neither: no agent would serve the store
// and every one would give up (issue 17, pytorch/pytorch#73380).
//
// A container is left alone when it would not use this store (the user set
// another PET_RDZV_BACKEND or PET_RDZV_ENDPOINT), when its PET_RDZV_CONF
// already names is_host, and when that variable comes from valueFrom, which
// cannot be merged. A --rdzv-conf on the command line replaces the variable
// altogether; the user then writes is_host there.
func setRdzvHost(pod *v1.Pod, endpoint string, host bool) {
	flag := isHostKey + "=0"
	if host {
		flag = isHostKey + "=1"
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if v, ok := literalEnv(c, EnvPetRdzvBackend); !ok || v != c10dBackend {
				continue
			}
			if v, ok := literalEnv(c, EnvPetRdzvEndpoint); !ok || v != endpoint {
				continue
			}
			j := envIndex(c, EnvPetRdzvConf)
			if j < 0 {
				inject.ContainerEnv(c, v1.EnvVar{Name: EnvPetRdzvConf, Value: flag})
				continue
			}
			user := c.Env[j]
			if user.ValueFrom != nil || confHasKey(user.Value, isHostKey) {
				continue
			}
			merged := flag
			if v := strings.TrimSpace(user.Value); v != "" {
				merged = v + "," + flag
			}
			// A fresh slice: the template's may share the old one's array.
			env := make([]v1.EnvVar, len(c.Env))
			copy(env, c.Env)
			env[j].Value = merged
			c.Env = env
		}
	}
}

// envIndex returns the index of the variable name in c's env, or -1.
func envIndex(c *v1.Container, name string) int {
	for i, e := range c.Env {
		if e.Name == name {
			return i
		}
	}
	return -1
}

// literalEnv returns the value of c's variable name, and false when c does
// not set it or takes it from valueFrom.
func literalEnv(c *v1.Container, name string) (string, bool) {
	i := envIndex(c, name)
	if i < 0 || c.Env[i].ValueFrom != nil {
		return "", false
	}
	return c.Env[i].Value, true
}

// confHasKey reports whether a torchrun rendezvous configuration
// ("key=value,...", spaces around keys ignored, as torchrun parses it) sets key.
func confHasKey(conf, key string) bool {
	for _, kv := range strings.Split(conf, ",") {
		k, _, _ := strings.Cut(kv, "=")
		if strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}
