package xgboost

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/inject"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// runPod runs OnJobAdd and then OnPodCreate, each on a fresh plugin instance as
// Volcano's controller does, and returns the pod.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, New, Name, job, task, index)
}

// xgbEnv is the env a pod gets, in order. workerAddrs "" leaves out
// WORKER_PORT and WORKER_ADDRS (a job without workers).
func xgbEnv(addr, port, world, workerPort, workerAddrs string, rank int) []v1.EnvVar {
	env := []v1.EnvVar{
		{Name: EnvMasterAddr, Value: addr},
		{Name: EnvMasterPort, Value: port},
		{Name: EnvWorldSize, Value: world},
		{Name: EnvPythonUnbuffered, Value: "1"},
	}
	if workerAddrs != "" {
		env = append(env, v1.EnvVar{Name: EnvWorkerPort, Value: workerPort}, v1.EnvVar{Name: EnvWorkerAddrs, Value: workerAddrs})
	}
	return append(env,
		v1.EnvVar{Name: EnvTrackerURI, Value: addr},
		v1.EnvVar{Name: EnvTrackerPort, Value: port},
		v1.EnvVar{Name: EnvNumWorker, Value: world},
		v1.EnvVar{Name: EnvRank, Value: strconv.Itoa(rank)},
		v1.EnvVar{Name: EnvTaskID, Value: strconv.Itoa(rank)},
	)
}

// xgbMasterEnv is xgbEnv of the master: POD_IP first, the tracker at
// $(POD_IP).
func xgbMasterEnv(addr, port, world, workerPort, workerAddrs string) []v1.EnvVar {
	env := append([]v1.EnvVar{inject.PodIPEnv(EnvPodIP)}, xgbEnv(addr, port, world, workerPort, workerAddrs, 0)...)
	for i := range env {
		if env[i].Name == EnvTrackerURI {
			env[i].Value = "$(" + EnvPodIP + ")"
		}
	}
	return env
}

func TestEnv(t *testing.T) {
	mk := jobtest.MakeTask
	full := jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Task(mk("worker", 3).Obj()).
		Task(mk("tensorboard", 1).Obj()).Plugin(Name).Obj()
	const addrs = "xgb-worker-0.xgb.default.svc.cluster.local,xgb-worker-1.xgb.default.svc.cluster.local,xgb-worker-2.xgb.default.svc.cluster.local"
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  []v1.EnvVar // nil: nothing injected
	}{
		"master is rank 0": {
			job:  full,
			task: "master",
			want: xgbMasterEnv("xgb-master-0.xgb.default.svc.cluster.local", "9999", "4", "9999", addrs),
		},
		"worker 0 is rank 1": {
			job:  full,
			task: "worker",
			want: xgbEnv("xgb-master-0.xgb.default.svc.cluster.local", "9999", "4", "9999", addrs, 1),
		},
		"worker 2 is rank 3": {
			job:   full,
			task:  "worker",
			index: 2,
			want:  xgbEnv("xgb-master-0.xgb.default.svc.cluster.local", "9999", "4", "9999", addrs, 3),
		},
		"master alone: world of 1, no WORKER_*": {
			job:  jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Plugin(Name).Obj(),
			task: "master",
			want: xgbMasterEnv("xgb-master-0.xgb.default.svc.cluster.local", "9999", "1", "", ""),
		},
		"worker task without replicas counts as none": {
			job:  jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Task(mk("worker", 0).Obj()).Plugin(Name).Obj(),
			task: "master",
			want: xgbMasterEnv("xgb-master-0.xgb.default.svc.cluster.local", "9999", "1", "", ""),
		},
		"renamed roles and port": {
			job: jobtest.MakeJob("xgb").Task(mk("tracker", 1).Obj()).Task(mk("trainer", 2).Obj()).
				Plugin(Name, "--master=tracker", "--worker=trainer", "--port=29500").Obj(),
			task:  "trainer",
			index: 1,
			want:  xgbEnv("xgb-tracker-0.xgb.default.svc.cluster.local", "29500", "3", "29500", "xgb-trainer-0.xgb.default.svc.cluster.local,xgb-trainer-1.xgb.default.svc.cluster.local", 2),
		},
		"template hostname and subdomain are honoured": {
			job: jobtest.MakeJob("xgb").Task(mk("master", 1).Hostname("tracker").Subdomain("net").Obj()).
				Task(mk("worker", 2).Subdomain("net").Obj()).Plugin(Name).Obj(),
			task: "worker",
			want: xgbEnv("tracker.net.default.svc.cluster.local", "9999", "3", "9999", "xgb-worker-0.net.default.svc.cluster.local,xgb-worker-1.net.default.svc.cluster.local", 1),
		},
		"xgboostjob-port on the master sets MASTER_PORT, on the workers WORKER_PORT": {
			job: jobtest.MakeJob("xgb").Task(mk("master", 1).Port(PortName, 9991).Obj()).
				Task(mk("worker", 1).Port(PortName, 9992).Obj()).Plugin(Name, "--port=9000").Obj(),
			task: "worker",
			want: xgbEnv("xgb-master-0.xgb.default.svc.cluster.local", "9991", "2", "9992", "xgb-worker-0.xgb.default.svc.cluster.local", 1),
		},
		"tasks that play no role are left alone": {
			job:  full,
			task: "tensorboard",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, tc.index)
			for _, c := range append(pod.Spec.Containers, pod.Spec.InitContainers...) {
				if c.Name == wait.ContainerName {
					continue
				}
				if diff := cmp.Diff(tc.want, c.Env); diff != "" {
					t.Errorf("container %s env (-want +got):\n%s", c.Name, diff)
				}
			}
			if tc.want == nil && (len(pod.Spec.InitContainers) > 0 || len(pod.Spec.Containers[0].Ports) > 0) {
				t.Errorf("pod of a task without role changed: init containers %v, ports %v", pod.Spec.InitContainers, pod.Spec.Containers[0].Ports)
			}
		})
	}
}

func TestUserSettingsWin(t *testing.T) {
	job := jobtest.MakeJob("xgb").Task(jobtest.MakeTask("master", 1).Obj()).
		Task(jobtest.MakeTask("worker", 2).Env(EnvTrackerURI, "10.0.0.1").Env(EnvRank, "7").
			Container("sidecar").InitContainer("prepare").Obj()).
		Plugin(Name).Obj()
	pod := runPod(t, job, "worker", 1)

	want := []v1.EnvVar{
		{Name: EnvTrackerURI, Value: "10.0.0.1"},
		{Name: EnvRank, Value: "7"},
		{Name: EnvMasterAddr, Value: "xgb-master-0.xgb.default.svc.cluster.local"},
		{Name: EnvMasterPort, Value: "9999"},
		{Name: EnvWorldSize, Value: "3"},
		{Name: EnvPythonUnbuffered, Value: "1"},
		{Name: EnvWorkerPort, Value: "9999"},
		{Name: EnvWorkerAddrs, Value: "xgb-worker-0.xgb.default.svc.cluster.local,xgb-worker-1.xgb.default.svc.cluster.local"},
		{Name: EnvTrackerPort, Value: "9999"},
		{Name: EnvNumWorker, Value: "3"},
		{Name: EnvTaskID, Value: "2"},
	}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Env); diff != "" {
		t.Errorf("first container env (-want +got), the user's values must stay and not be duplicated:\n%s", diff)
	}
	others := xgbEnv("xgb-master-0.xgb.default.svc.cluster.local", "9999", "3", "9999", "xgb-worker-0.xgb.default.svc.cluster.local,xgb-worker-1.xgb.default.svc.cluster.local", 2)
	for _, c := range []v1.Container{pod.Spec.Containers[1], pod.Spec.InitContainers[1]} {
		if diff := cmp.Diff(others, c.Env); diff != "" {
			t.Errorf("container %s env (-want +got):\n%s", c.Name, diff)
		}
	}
}

// Every pod of a plan shares its variables' backing array: one pod's RANK
// must not show up in another's env.
func TestPodsDoNotShareRank(t *testing.T) {
	job := jobtest.MakeJob("xgb").Task(jobtest.MakeTask("master", 1).Obj()).
		Task(jobtest.MakeTask("worker", 3).Obj()).Plugin(Name).Obj()
	client := pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}
	var pods []*v1.Pod
	for i := 0; i < 3; i++ {
		pod := jobtest.MakePod(job, "worker", i).Obj()
		if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(pod, job); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod)
	}
	for i, pod := range pods {
		env := jobtest.Env(pod, 0)
		if env[EnvRank] != strconv.Itoa(i+1) || env[EnvTaskID] != strconv.Itoa(i+1) {
			t.Errorf("worker %d: RANK %q, DMLC_TASK_ID %q, want %d", i, env[EnvRank], env[EnvTaskID], i+1)
		}
	}
}

func TestPorts(t *testing.T) {
	mk := jobtest.MakeTask
	job := func(master, worker *jobtest.TaskWrapper, args ...string) *batch.Job {
		return jobtest.MakeJob("xgb").Task(master.Obj()).Task(worker.Obj()).Plugin(Name, args...).Obj()
	}
	cases := map[string]struct {
		job  *batch.Job
		task string
		want []v1.ContainerPort
	}{
		"the master opens the tracker's port": {
			job:  job(mk("master", 1), mk("worker", 2)),
			task: "master",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9999, Protocol: v1.ProtocolTCP}},
		},
		"workers open WORKER_PORT": {
			job:  job(mk("master", 1), mk("worker", 2)),
			task: "worker",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9999, Protocol: v1.ProtocolTCP}},
		},
		"--port moves both": {
			job:  job(mk("master", 1), mk("worker", 2), "--port=9000"),
			task: "worker",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9000, Protocol: v1.ProtocolTCP}},
		},
		"the user's port of that number is left as it is": {
			job:  job(mk("master", 1).Port("tracker", 9999), mk("worker", 2)),
			task: "master",
			want: []v1.ContainerPort{{Name: "tracker", ContainerPort: 9999}},
		},
		"the user's xgboostjob-port is kept": {
			job:  job(mk("master", 1).Port(PortName, 9991), mk("worker", 2)),
			task: "master",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9991}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, 0)
			if diff := cmp.Diff(tc.want, pod.Spec.Containers[0].Ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitForTracker(t *testing.T) {
	mk := jobtest.MakeTask
	xgbJob := func(args ...string) *batch.Job {
		return jobtest.MakeJob("xgb").Task(mk("master", 1).InitContainer("user-init").Obj()).
			Task(mk("worker", 2).InitContainer("user-init").Obj()).Plugin(Name, args...).Obj()
	}
	defaults := wait.Options{Enabled: true, Timeout: wait.DefaultTimeout}
	// The master's name only: a TCP probe would hang XGBoost 1.7's tracker.
	tracker := []wait.Target{{Host: "xgb-master-0.xgb.default.svc.cluster.local"}}
	cases := map[string]struct {
		job     *batch.Job
		task    string
		index   int
		targets []wait.Target // nil: no wait container
		opts    wait.Options
	}{
		"worker 0 waits for the tracker":  {job: xgbJob(), task: "worker", targets: tracker, opts: defaults},
		"worker 1 waits for the tracker":  {job: xgbJob(), task: "worker", index: 1, targets: tracker, opts: defaults},
		"the master does not wait":        {job: xgbJob(), task: "master"},
		"--wait=false switches it off":    {job: xgbJob("--wait=false"), task: "worker"},
		"--port is not probed":            {job: xgbJob("--port=29500"), task: "worker", targets: tracker, opts: defaults},
		"timeout and image are passed on": {job: xgbJob("--wait-timeout=30", "--wait-image=registry.local/busybox:1"), task: "worker", targets: tracker, opts: wait.Options{Enabled: true, Timeout: 30 * time.Second, Image: "registry.local/busybox:1"}},
		"the master's xgboostjob-port is not probed either": {
			job: jobtest.MakeJob("xgb").Task(mk("master", 1).Port(PortName, 9991).Obj()).
				Task(mk("worker", 2).InitContainer("user-init").Obj()).Plugin(Name).Obj(),
			task:    "worker",
			targets: tracker,
			opts:    defaults,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, tc.index)
			var names []string
			for _, c := range pod.Spec.InitContainers {
				names = append(names, c.Name)
			}
			var wantNames []string
			if tc.targets != nil {
				wantNames = append(wantNames, wait.ContainerName)
			}
			wantNames = append(wantNames, "user-init")
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Fatalf("init containers (-want +got):\n%s", diff)
			}
			if tc.targets == nil {
				return
			}
			if diff := cmp.Diff(wait.Container(tc.targets, tc.opts), pod.Spec.InitContainers[0]); diff != "" {
				t.Errorf("wait container (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	mk := jobtest.MakeTask
	cases := map[string]struct {
		job  *batch.Job
		want framework.Description
	}{
		"master and workers": {
			job: jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleMaster, Task: "master"}, {Name: RoleWorker, Task: "worker"}},
				Waits:      []framework.Wait{{From: "worker", To: "master", FirstOnly: true}},
				Completion: "master",
			},
		},
		"master alone": {
			job: jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Plugin(Name).Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleMaster, Task: "master"}},
				Completion: "master",
			},
		},
		"--wait=false: no edge": {
			job: jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name, "--wait=false").Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleMaster, Task: "master"}, {Name: RoleWorker, Task: "worker"}},
				Completion: "master",
			},
		},
		"the master's xgboostjob-port: still a wait for the name only": {
			job: jobtest.MakeJob("xgb").Task(mk("master", 1).Port(PortName, 9991).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleMaster, Task: "master"}, {Name: RoleWorker, Task: "worker"}},
				Waits:      []framework.Wait{{From: "worker", To: "master", FirstOnly: true}},
				Completion: "master",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Framework.Describe(tc.job.Spec.Plugins[Name], tc.job)
			sizes := got.Sizes
			got.Sizes = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
			worker := len(got.Roles) > 1
			if (sizes != nil) != worker {
				t.Fatalf("Sizes set: %v, want it exactly when the job has workers", sizes != nil)
			}
			if !worker {
				return
			}
			// The computed size is the built value's.
			pod := runPod(t, tc.job, "master", 0)
			built := jobtest.Env(pod, 0)[EnvWorkerAddrs]
			if diff := cmp.Diff([]framework.SizedEnv{{Name: EnvWorkerAddrs, Task: "master", ValueLen: len(built),
				Optional: "XGBoost's collective finds the workers through the tracker (DMLC_TRACKER_URI)"}}, sizes()); diff != "" {
				t.Errorf("sizes (-want +got):\n%s", diff)
			}
		})
	}
}

// WorkerAddrsLen is the built WORKER_ADDRS' length across the powers of ten
// and with a template hostname.
func TestWorkerAddrsLen(t *testing.T) {
	for _, n := range []int32{1, 9, 10, 11, 100, 1234} {
		for _, hostname := range []string{"", "shared"} {
			w := jobtest.MakeTask("worker", n)
			if hostname != "" {
				w.Hostname(hostname)
			}
			job := jobtest.MakeJob("xgb").Task(jobtest.MakeTask("master", 1).Obj()).Task(w.Obj()).Plugin(Name).Obj()
			pod := runPod(t, job, "master", 0)
			built := jobtest.Env(pod, 0)[EnvWorkerAddrs]
			if got := WorkerAddrsLen(job, &job.Spec.Tasks[1]); got != len(built) {
				t.Errorf("%d workers, hostname %q: WorkerAddrsLen %d, built %d", n, hostname, got, len(built))
			}
			if strings.Count(built, ",") != int(n)-1 {
				t.Errorf("%d workers: WORKER_ADDRS has %d commas", n, strings.Count(built, ","))
			}
		}
	}
}
