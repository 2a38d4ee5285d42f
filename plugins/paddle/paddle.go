// Package paddle is the paddle job plugin: it gives every pod of a distributed
// PaddlePaddle Job the variables Paddle's launcher (python -m
// paddle.distributed.launch) reads in place of its flags, so that the same
// command with no distributed arguments starts every node, opens the
// launcher's rendezvous port on the rank-0 pod, and holds the other pods back
// until that port answers. Volcano has no in-tree paddle plugin; the contract
// follows Kubeflow's PaddleJob controller (training-operator v1.9,
// pkg/controller.v1/paddlepaddle/envvar.go), checked against the launcher
// itself (PaddlePaddle/Paddle, python/paddle/distributed/launch/).
//
// Modes. Without a master task the Job runs in collective mode and worker 0
// is the rank-0 pod; with one it runs in parameter-server mode and master 0
// is (PaddleJob: "If the master is null, run in Collective mode").
//
// Environment contract, on every container and init container of the pods of
// both roles:
//
//   - POD_IP: the pod's IP (downward API, status.podIP). The launcher reads it
//     as --host (context/args_envs.py) and then takes it for the node's own
//     address (plugins/__init__.py, rewrite_host_ip).
//   - PADDLE_MASTER (--master): the launcher's HTTP rendezvous, host:port. On
//     the rank-0 pod "$(POD_IP):<port>", which the kubelet expands; on every
//     other pod "<rank-0 pod's DNS name>:<port>". The launcher serves the
//     rendezvous only where the host part is 127.0.0.1 or, as a string, the
//     node's own address (controllers/master.py, HTTPMaster.lazy_init): a DNS
//     name on rank 0 would leave it unserved, hence the pod IP there.
//   - PADDLE_NNODES (--nnodes): the pods of both roles.
//   - PADDLE_JOB_ID (--job_id): the Job's name; the launcher keys the
//     rendezvous by it.
//   - PADDLE_SERVER_NUM=1 on masters, PADDLE_TRAINER_NUM=1 on workers, in
//     parameter-server mode only (--server_num, --trainer_num: the launcher
//     runs in PS mode when either is set, controllers/ps.py).
//   - PYTHONUNBUFFERED=1, as PaddleJob sets it.
//
// A variable the user already set is left as it is.
package paddle

import (
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
	Name = "paddle"
	// PortName names the rendezvous port opened on the rank-0 pod. A
	// container port of this name in the rank-0 pod's task overrides --port
	// (Kubeflow PaddleJob's PaddleJobDefaultPortName).
	PortName = "master"
)

// PaddleJob's replica types, as the plugin's roles.
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

// Environment variables the plugin sets (Kubeflow PaddleJob's, and POD_IP,
// which Paddle's launcher reads as --host).
const (
	EnvMaster           = "PADDLE_MASTER"
	EnvNNodes           = "PADDLE_NNODES"
	EnvJobID            = "PADDLE_JOB_ID"
	EnvServerNum        = "PADDLE_SERVER_NUM"
	EnvTrainerNum       = "PADDLE_TRAINER_NUM"
	EnvPodIP            = "POD_IP"
	EnvPythonUnbuffered = "PYTHONUNBUFFERED"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the paddle plugin to the rest of the project
// (plugins.Frameworks). Volcano's job mutation knows no paddle; the webhook
// adds svc for it all the same.
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin)

// Rank0Task returns the task whose pod 0 hosts the rendezvous: the master
// task in parameter-server mode, else the worker task.
func Rank0Task(a *Args, job *batch.Job) (task string, ps bool) {
	if jobs.Present(job, a.Master) {
		return a.Master, true
	}
	return a.Worker, false
}

// describe: every pod but the rank-0 pod waits for the rendezvous port; the
// master task's completion ends training in parameter-server mode, the
// worker task's in collective mode (PaddleJob's UpdateJobStatus).
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job, framework.Role{Name: RoleMaster, Task: a.Master}, framework.Role{Name: RoleWorker, Task: a.Worker})
	rank0, _ := Rank0Task(a, job)
	t, ok := jobs.PresentTask(job, rank0)
	if !ok {
		return d
	}
	if a.Wait.Enabled {
		d.AddWaits(job, rank0, jobs.NamedPort(t, PortName, a.Port), true, a.Master, a.Worker)
	}
	d.Completion = rank0
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
	// roles maps a task name to its role.
	roles map[string]string
	// rank0 is the task whose pod 0 hosts the rendezvous.
	rank0 string
	// env maps a role to the variables its pods other than the rank-0 pod
	// get; rank0Env is the rank-0 pod's.
	env      map[string][]v1.EnvVar
	rank0Env []v1.EnvVar
	port     int
	// waiters are the init containers of the pods that wait, from describe's
	// wait edges: none when waiting is off.
	waiters framework.Waiters
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	rank0, ps := Rank0Task(a, job)
	// ParseArgs guarantees one of the two tasks, and Rank0Task picks a present one.
	t, _ := jobs.Task(job, rank0)
	p := &plan{
		roles: map[string]string{},
		rank0: rank0,
		env:   map[string][]v1.EnvVar{},
		port:  jobs.NamedPort(t, PortName, a.Port),
	}
	nnodes := 0
	for _, r := range []struct{ task, role string }{{a.Master, RoleMaster}, {a.Worker, RoleWorker}} {
		if jobs.Present(job, r.task) {
			p.roles[r.task] = r.role
			nnodes += jobs.Replicas(job, r.task)
		}
	}
	port := strconv.Itoa(p.port)
	podIP := inject.PodIPEnv(EnvPodIP)
	// POD_IP comes first: the kubelet expands $(POD_IP) only from variables
	// defined earlier in the list.
	build := func(master, role string) []v1.EnvVar {
		env := []v1.EnvVar{
			podIP,
			{Name: EnvMaster, Value: master},
			{Name: EnvNNodes, Value: strconv.Itoa(nnodes)},
			{Name: EnvJobID, Value: job.Name},
		}
		if ps {
			// One server or one trainer per pod, as PaddleJob sets them.
			if role == RoleMaster {
				env = append(env, v1.EnvVar{Name: EnvServerNum, Value: "1"})
			} else {
				env = append(env, v1.EnvVar{Name: EnvTrainerNum, Value: "1"})
			}
		}
		return append(env, v1.EnvVar{Name: EnvPythonUnbuffered, Value: "1"})
	}
	others := jobs.Host(job, t, 0) + ":" + port
	for _, role := range p.roles {
		p.env[role] = build(others, role)
	}
	p.rank0Env = build("$("+EnvPodIP+"):"+port, p.roles[rank0])
	p.waiters = framework.NewWaiters(job, describe(a, job).Waits, a.Wait)
	return p, nil
}

// OnPodCreate sets the variables of the package doc on every container of a
// master or worker pod, opens the rendezvous port on the rank-0 pod, and adds
// the wait container, waiting for that port, to every other pod. Pods of
// tasks that play no role are left alone. Invalid arguments inject nothing
// and are reported as an InvalidPluginArguments event on the Job. It returns
// an error only for a pod without a task index.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok {
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
	if task == pl.rank0 && index == 0 {
		inject.Env(pod, pl.rank0Env...)
		inject.Port(pod, PortName, int32(pl.port))
		return nil
	}
	inject.Env(pod, pl.env[role]...)
	pl.waiters.AddTo(pod, task, index)
	return nil
}
