package dask

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// runPod runs OnJobAdd and then OnPodCreate, each on a fresh plugin instance as
// Volcano's controller does, and returns the pod.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, New, Name, job, task, index)
}

// daskEnv is the env a pod gets, in order; workerName "" leaves out
// DASK_WORKER_NAME.
func daskEnv(address, workerName string) []v1.EnvVar {
	env := []v1.EnvVar{{Name: EnvSchedulerAddress, Value: address}}
	if workerName != "" {
		env = append(env, v1.EnvVar{Name: EnvWorkerName, Value: workerName})
	}
	return env
}

func TestEnv(t *testing.T) {
	mk := jobtest.MakeTask
	full := jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 3).Obj()).
		Task(mk("client", 1).Obj()).Task(mk("dashboard", 1).Obj()).Plugin(Name).Obj()
	const addr = "tcp://dk-scheduler-0.dk.default.svc.cluster.local:8786"
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  []v1.EnvVar // nil: nothing injected
	}{
		"scheduler": {job: full, task: "scheduler", want: daskEnv(addr, "")},
		"worker 0":  {job: full, task: "worker", want: daskEnv(addr, "dk-worker-0")},
		"worker 2":  {job: full, task: "worker", index: 2, want: daskEnv(addr, "dk-worker-2")},
		"client":    {job: full, task: "client", want: daskEnv(addr, "")},
		"renamed roles and port": {
			job: jobtest.MakeJob("dk").Task(mk("sched", 1).Obj()).Task(mk("dask-worker", 2).Obj()).Task(mk("runner", 1).Obj()).
				Plugin(Name, "--scheduler=sched", "--worker=dask-worker", "--client=runner", "--port=9000").Obj(),
			task:  "dask-worker",
			index: 1,
			want:  daskEnv("tcp://dk-sched-0.dk.default.svc.cluster.local:9000", "dk-dask-worker-1"),
		},
		"renamed client": {
			job: jobtest.MakeJob("dk").Task(mk("sched", 1).Obj()).Task(mk("dask-worker", 2).Obj()).Task(mk("runner", 1).Obj()).
				Plugin(Name, "--scheduler=sched", "--worker=dask-worker", "--client=runner", "--port=9000").Obj(),
			task: "runner",
			want: daskEnv("tcp://dk-sched-0.dk.default.svc.cluster.local:9000", ""),
		},
		"template hostname and subdomain of the scheduler are honoured": {
			job: jobtest.MakeJob("dk").Task(mk("scheduler", 1).Hostname("sched").Subdomain("net").Obj()).
				Task(mk("worker", 1).Subdomain("net").Obj()).Task(mk("client", 1).Obj()).Plugin(Name).Obj(),
			task: "client",
			want: daskEnv("tcp://sched.net.default.svc.cluster.local:8786", ""),
		},
		"a template hostname shared by the workers leaves their names distinct": {
			job: jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Hostname("w").Obj()).
				Task(mk("client", 1).Obj()).Plugin(Name).Obj(),
			task:  "worker",
			index: 1,
			want:  daskEnv(addr, "dk-worker-1"),
		},
		"tcp-comm on the scheduler overrides --port": {
			job: jobtest.MakeJob("dk").Task(mk("scheduler", 1).Port(PortName, 8790).Obj()).
				Task(mk("worker", 1).Obj()).Task(mk("client", 1).Obj()).Plugin(Name, "--port=9000").Obj(),
			task: "worker",
			want: daskEnv("tcp://dk-scheduler-0.dk.default.svc.cluster.local:8790", "dk-worker-0"),
		},
		"tasks that play no role are left alone": {job: full, task: "dashboard"},
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
	job := jobtest.MakeJob("dk").Task(jobtest.MakeTask("scheduler", 1).Obj()).
		Task(jobtest.MakeTask("worker", 2).Env(EnvSchedulerAddress, "tls://10.0.0.1:8786").Env(EnvWorkerName, "gpu-worker").
			Container("sidecar").InitContainer("prepare").Obj()).
		Task(jobtest.MakeTask("client", 1).Obj()).
		Plugin(Name).Obj()
	pod := runPod(t, job, "worker", 1)

	want := []v1.EnvVar{
		{Name: EnvSchedulerAddress, Value: "tls://10.0.0.1:8786"},
		{Name: EnvWorkerName, Value: "gpu-worker"},
	}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Env); diff != "" {
		t.Errorf("first container env (-want +got), the user's values must stay and not be duplicated:\n%s", diff)
	}
	others := daskEnv("tcp://dk-scheduler-0.dk.default.svc.cluster.local:8786", "dk-worker-1")
	for _, c := range []v1.Container{pod.Spec.Containers[1], pod.Spec.InitContainers[1]} {
		if diff := cmp.Diff(others, c.Env); diff != "" {
			t.Errorf("container %s env (-want +got):\n%s", c.Name, diff)
		}
	}
}

func TestSchedulerPort(t *testing.T) {
	mk := jobtest.MakeTask
	job := func(scheduler *jobtest.TaskWrapper, args ...string) *batch.Job {
		return jobtest.MakeJob("dk").Task(scheduler.Obj()).Task(mk("worker", 2).Obj()).Task(mk("client", 1).Obj()).
			Plugin(Name, args...).Obj()
	}
	cases := map[string]struct {
		job  *batch.Job
		task string
		want []v1.ContainerPort
	}{
		"scheduler opens the port": {
			job:  job(mk("scheduler", 1)),
			task: "scheduler",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 8786, Protocol: v1.ProtocolTCP}},
		},
		"--port moves it": {
			job:  job(mk("scheduler", 1), "--port=9000"),
			task: "scheduler",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9000, Protocol: v1.ProtocolTCP}},
		},
		"the user's port of that number is left as it is": {
			job:  job(mk("scheduler", 1).Port("comm", 8786)),
			task: "scheduler",
			want: []v1.ContainerPort{{Name: "comm", ContainerPort: 8786}},
		},
		"the user's tcp-comm is kept": {
			job:  job(mk("scheduler", 1).Port(PortName, 8790)),
			task: "scheduler",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 8790}},
		},
		"workers open no port":     {job: job(mk("scheduler", 1)), task: "worker"},
		"the client opens no port": {job: job(mk("scheduler", 1)), task: "client"},
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

func TestWaitForScheduler(t *testing.T) {
	mk := jobtest.MakeTask
	daskJob := func(args ...string) *batch.Job {
		return jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).InitContainer("user-init").Obj()).
			Task(mk("client", 1).InitContainer("user-init").Obj()).Plugin(Name, args...).Obj()
	}
	defaults := wait.Options{Enabled: true, Timeout: wait.DefaultTimeout}
	schedulerTarget := []wait.Target{{Host: "dk-scheduler-0.dk.default.svc.cluster.local", Port: 8786}}
	cases := map[string]struct {
		job     *batch.Job
		task    string
		index   int
		targets []wait.Target // nil: no wait container
		opts    wait.Options
	}{
		"worker 0 waits for the scheduler":   {job: daskJob(), task: "worker", targets: schedulerTarget, opts: defaults},
		"worker 1 waits for the scheduler":   {job: daskJob(), task: "worker", index: 1, targets: schedulerTarget, opts: defaults},
		"the client waits for the scheduler": {job: daskJob(), task: "client", targets: schedulerTarget, opts: defaults},
		"the scheduler does not wait":        {job: daskJob(), task: "scheduler"},
		"--wait=false switches it off":       {job: daskJob("--wait=false"), task: "worker"},
		"--wait=false, client":               {job: daskJob("--wait=false"), task: "client"},
		"timeout and image are passed on": {
			job:     daskJob("--wait-timeout=30", "--wait-image=registry.local/busybox:1"),
			task:    "client",
			targets: schedulerTarget,
			opts:    wait.Options{Enabled: true, Timeout: 30 * time.Second, Image: "registry.local/busybox:1"},
		},
		"renamed scheduler, its hostname and port": {
			job: jobtest.MakeJob("dk").Task(mk("sched", 1).Hostname("root").Subdomain("net").Obj()).
				Task(mk("worker", 2).InitContainer("user-init").Obj()).Task(mk("client", 1).Obj()).
				Plugin(Name, "--scheduler=sched", "--port=9000").Obj(),
			task:    "worker",
			targets: []wait.Target{{Host: "root.net.default.svc.cluster.local", Port: 9000}},
			opts:    defaults,
		},
		"the scheduler's tcp-comm port is waited for": {
			job: jobtest.MakeJob("dk").Task(mk("scheduler", 1).Port(PortName, 8790).Obj()).
				Task(mk("worker", 2).InitContainer("user-init").Obj()).Task(mk("client", 1).Obj()).Plugin(Name).Obj(),
			task:    "worker",
			targets: []wait.Target{{Host: "dk-scheduler-0.dk.default.svc.cluster.local", Port: 8790}},
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
			if tc.task != "scheduler" {
				wantNames = append(wantNames, "user-init")
			}
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Fatalf("init containers (-want +got):\n%s", diff)
			}
			if tc.targets == nil {
				return
			}
			want := wait.Container(tc.targets, tc.opts)
			if diff := cmp.Diff(want, pod.Spec.InitContainers[0]); diff != "" {
				t.Errorf("wait container (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	mk := jobtest.MakeTask
	job := jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Obj()).Task(mk("client", 1).Obj()).Obj()
	cases := map[string]struct {
		args []string
		want framework.Description
	}{
		"workers and the client wait for the scheduler's port; the client completes": {
			want: framework.Description{
				Roles: []framework.Role{{Name: RoleScheduler, Task: "scheduler"}, {Name: RoleWorker, Task: "worker"}, {Name: RoleClient, Task: "client"}},
				Waits: []framework.Wait{
					{From: "worker", To: "scheduler", Port: 8786},
					{From: "client", To: "scheduler", Port: 8786},
				},
				Completion: "client",
			},
		},
		"--wait=false: no waits": {
			args: []string{"--wait=false", "--port=9000"},
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleScheduler, Task: "scheduler"}, {Name: RoleWorker, Task: "worker"}, {Name: RoleClient, Task: "client"}},
				Completion: "client",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Framework.Describe(tc.args, job)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b func() []framework.SizedEnv) bool { return a == nil && b == nil })); diff != "" {
				t.Errorf("Describe (-want +got):\n%s", diff)
			}
		})
	}
}
