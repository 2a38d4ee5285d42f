// Package xgboost is the xgboost job plugin: it gives every pod of a
// distributed XGBoost (or LightGBM) Job the variables Kubeflow's XGBoostJob
// sets (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, WORKER_PORT,
// WORKER_ADDRS) and those XGBoost's collective (Rabit) reads (DMLC_TRACKER_URI,
// DMLC_TRACKER_PORT, DMLC_TASK_ID, DMLC_NUM_WORKER, as Kubeflow Trainer v2
// sets them), opens the ports, and holds workers back until the tracker on
// the master accepts connections. Volcano has no in-tree xgboost plugin.
//
// The master's one pod is rank 0 and runs the Rabit tracker on MASTER_PORT
// (xgboost.tracker.RabitTracker, started by the user's program) and trains as
// a worker of the collective too; the workers are ranks 1 to n. The world is
// the master and the workers, as in XGBoostJob.
//
// Environment contract, on every container and init container of master and
// worker pods (sources: training-operator v1.9
// pkg/controller.v1/xgboost/xgboost.go SetPodEnv; trainer
// pkg/runtime/framework/plugins/xgboost/xgboost.go; xgboost v1.7.4
// rabit/src/allreduce_base.cc):
//
//   - MASTER_ADDR: DNS name of the master pod, <hostname>.<subdomain>.
//   - MASTER_PORT: --port, or the master task's container port named
//     xgboostjob-port.
//   - WORLD_SIZE: master replicas (1) plus worker replicas.
//   - RANK: 0 on the master, index+1 on worker index.
//   - PYTHONUNBUFFERED=1, as XGBoostJob sets it.
//   - WORKER_PORT and WORKER_ADDRS, only when the job has workers (XGBoostJob:
//     when WORLD_SIZE > 1), for LightGBM's machine list: the workers'
//     listening port (--port, or the worker task's xgboostjob-port) and their
//     DNS names, comma-separated in index order, without ports.
//   - DMLC_TRACKER_URI, DMLC_TRACKER_PORT: MASTER_ADDR and MASTER_PORT, where
//     the tracker listens. On the master itself DMLC_TRACKER_URI is
//     $(POD_IP), its own address, with POD_IP from the downward API
//     (status.podIP) before it: the master's Rabit joins its own tracker
//     within a second of starting, before the cluster's DNS serves the
//     master's name (seen on the real node: Rabit 1.7 then fails at once,
//     "Failed to call send: Broken pipe"), while the workers, held back
//     until the name resolves, use the name.
//   - DMLC_TASK_ID: RANK. The 1.7 tracker sorts the workers by it when
//     started with sortby="task".
//   - DMLC_NUM_WORKER: WORLD_SIZE, the tracker's n_workers.
//
// XGBoost 1.7's Rabit reads DMLC_TRACKER_URI, DMLC_TRACKER_PORT and
// DMLC_TASK_ID from the environment itself when the collective starts
// (AllreduceBase::Init); from 2.1 on the collective reads no environment and
// the program passes them to xgboost.collective.CommunicatorContext.
//
// A variable the user already set is left as it is.
package xgboost

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
	Name = "xgboost"
	// PortName names the opened container port (XGBoostJobDefaultPortName).
	// A container port of this name in the master task's template overrides
	// --port for MASTER_PORT, in the worker task's for WORKER_PORT, as in
	// XGBoostJob.
	PortName = "xgboostjob-port"
)

// XGBoost roles, as XGBoostJob's replica types (lower-cased).
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

// Environment variables the plugin sets: XGBoostJob's, then the collective's.
const (
	EnvMasterAddr       = "MASTER_ADDR"
	EnvMasterPort       = "MASTER_PORT"
	EnvWorldSize        = "WORLD_SIZE"
	EnvRank             = "RANK"
	EnvPythonUnbuffered = "PYTHONUNBUFFERED"
	EnvWorkerPort       = "WORKER_PORT"
	EnvWorkerAddrs      = "WORKER_ADDRS"
	EnvTrackerURI       = "DMLC_TRACKER_URI"
	EnvTrackerPort      = "DMLC_TRACKER_PORT"
	EnvTaskID           = "DMLC_TASK_ID"
	EnvNumWorker        = "DMLC_NUM_WORKER"
	// EnvPodIP holds the master pod's IP (downward API), which its
	// DMLC_TRACKER_URI refers to.
	EnvPodIP = "POD_IP"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the xgboost plugin to the rest of the project
// (plugins.Frameworks). Volcano's job mutation knows no xgboost; the webhook
// adds svc for it all the same.
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin)

// describe: workers wait for the master's name to resolve, not for the
// tracker's port: XGBoost 1.7's Python tracker (xgboost/tracker.py,
// RabitTracker) loops forever on a connection closed before its handshake
// (recvall reads an empty chunk without end), which is what a TCP probe is;
// Rabit's own connect retry (DMLC_WORKER_CONNECT_RETRY) covers the seconds
// between the name and the tracker. The master's completion ends training
// (XGBoostJob succeeds when its master does).
// WORKER_ADDRS lists every worker's host on every pod.
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job, framework.Role{Name: RoleMaster, Task: a.Master}, framework.Role{Name: RoleWorker, Task: a.Worker})
	_, hasMaster := jobs.PresentTask(job, a.Master)
	if !hasMaster {
		return d
	}
	d.Completion = a.Master
	if a.Wait.Enabled {
		d.AddWaits(job, a.Master, 0, true, a.Worker)
	}
	if worker, ok := jobs.PresentTask(job, a.Worker); ok {
		d.Sizes = func() []framework.SizedEnv {
			return []framework.SizedEnv{{Name: EnvWorkerAddrs, Task: a.Master, Index: 0, ValueLen: WorkerAddrsLen(job, worker),
				Optional: "XGBoost's collective finds the workers through the tracker (DMLC_TRACKER_URI)"}}
		}
	}
	return d
}

// WorkerAddrsLen is len(WORKER_ADDRS) for the worker task, computed from the
// names and the replica count: its hosts and a comma between each two.
func WorkerAddrsLen(job *batch.Job, worker *batch.TaskSpec) int {
	if worker.Replicas < 1 {
		return 0
	}
	return jobs.HostsLen(job, worker, 0) + int(worker.Replicas) - 1
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
	// masterPort is the tracker's port, workerPort the workers' (0: no workers).
	masterPort, workerPort int32
	// common is every variable that is the same on all workers; RANK and
	// DMLC_TASK_ID follow it. masterEnv is the master's: POD_IP first, the
	// tracker at $(POD_IP).
	common, masterEnv []v1.EnvVar
	// waiters is the workers' init container, from describe's wait edge.
	waiters framework.Waiters
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	// ParseArgs guarantees a master task of one replica.
	master, _ := jobs.Task(job, a.Master)
	p := &plan{master: a.Master, worker: a.Worker, masterPort: int32(jobs.NamedPort(master, PortName, a.Port))}
	addr := jobs.Host(job, master, 0)
	port := strconv.Itoa(int(p.masterPort))
	world := strconv.Itoa(1 + jobs.Replicas(job, a.Worker))
	p.common = []v1.EnvVar{
		{Name: EnvMasterAddr, Value: addr},
		{Name: EnvMasterPort, Value: port},
		{Name: EnvWorldSize, Value: world},
		{Name: EnvPythonUnbuffered, Value: "1"},
	}
	if worker, ok := jobs.PresentTask(job, a.Worker); ok {
		p.workerPort = int32(jobs.NamedPort(worker, PortName, a.Port))
		p.common = append(p.common, v1.EnvVar{Name: EnvWorkerPort, Value: strconv.Itoa(int(p.workerPort))})
		// XGBoostJob's list of every worker; XGBoost's collective reads the
		// tracker's address. One too long for a container to start is left
		// out (Description.Sizes says so).
		if !framework.OverArgLimit(EnvWorkerAddrs, WorkerAddrsLen(job, worker)) {
			p.common = append(p.common, v1.EnvVar{Name: EnvWorkerAddrs, Value: strings.Join(jobs.Hosts(job, worker, 0), ",")})
		}
	}
	tail := []v1.EnvVar{{Name: EnvTrackerPort, Value: port}, {Name: EnvNumWorker, Value: world}}
	p.masterEnv = append([]v1.EnvVar{inject.PodIPEnv(EnvPodIP)}, p.common...)
	p.masterEnv = append(append(p.masterEnv, v1.EnvVar{Name: EnvTrackerURI, Value: "$(" + EnvPodIP + ")"}), tail...)
	p.common = append(append(p.common, v1.EnvVar{Name: EnvTrackerURI, Value: addr}), tail...)
	p.waiters = framework.NewWaiters(job, describe(a, job).Waits, a.Wait)
	return p, nil
}

// OnPodCreate sets the variables of the package doc on every container of
// master and worker pods (RANK and DMLC_TASK_ID: 0 on the master, index+1 on
// worker index), opens the tracker's port on the master and WORKER_PORT on
// the workers, and adds the wait container, waiting for the tracker's port,
// to the workers. Pods of other tasks are left alone. Invalid arguments
// inject nothing and are reported as an InvalidPluginArguments event on the
// Job. It returns an error only for a worker pod without a task index.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok {
		return nil
	}
	task := jobs.PodTask(pod)
	rank, port := 0, pl.masterPort
	switch task {
	case pl.master:
	case pl.worker:
		index, err := jobs.PodIndex(pod)
		if err != nil {
			return err
		}
		rank, port = index+1, pl.workerPort
	default:
		return nil
	}
	r := strconv.Itoa(rank)
	common := pl.common
	if task == pl.master {
		common = pl.masterEnv
	}
	env := make([]v1.EnvVar, 0, len(common)+2)
	env = append(env, common...)
	env = append(env, v1.EnvVar{Name: EnvRank, Value: r}, v1.EnvVar{Name: EnvTaskID, Value: r})
	inject.Env(pod, env...)
	if port > 0 {
		inject.Port(pod, PortName, port)
	}
	if task == pl.worker {
		pl.waiters.AddTo(pod, task, rank-1)
	}
	return nil
}
