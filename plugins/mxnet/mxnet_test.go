package mxnet

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// runPod runs OnJobAdd and then OnPodCreate, each on a fresh plugin instance as
// Volcano's controller does, and returns the pod.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, New, Name, job, task, index)
}

// dmlc is the env a pod of role gets, in order; workerID < 0 leaves out
// DMLC_WORKER_ID.
func dmlc(role, uri, port, numServer, numWorker string, workerID int) []v1.EnvVar {
	env := []v1.EnvVar{
		{Name: EnvRole, Value: role},
		{Name: EnvRootURI, Value: uri},
		{Name: EnvRootPort, Value: port},
		{Name: EnvNumServer, Value: numServer},
		{Name: EnvNumWorker, Value: numWorker},
		{Name: EnvUseKubernetes, Value: "1"},
	}
	if workerID >= 0 {
		env = append(env, v1.EnvVar{Name: EnvWorkerID, Value: strconv.Itoa(workerID)})
	}
	return env
}

func TestEnv(t *testing.T) {
	mk := jobtest.MakeTask
	full := jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("server", 2).Obj()).
		Task(mk("worker", 3).Obj()).Task(mk("tensorboard", 1).Obj()).Plugin(Name).Obj()
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  []v1.EnvVar // nil: nothing injected
	}{
		"scheduler": {
			job:  full,
			task: "scheduler",
			want: dmlc("scheduler", "mx-scheduler-0.mx.default.svc.cluster.local", "9091", "2", "3", -1),
		},
		"server 1": {
			job:   full,
			task:  "server",
			index: 1,
			want:  dmlc("server", "mx-scheduler-0.mx.default.svc.cluster.local", "9091", "2", "3", -1),
		},
		"worker 0": {
			job:  full,
			task: "worker",
			want: dmlc("worker", "mx-scheduler-0.mx.default.svc.cluster.local", "9091", "2", "3", 0),
		},
		"worker 2": {
			job:   full,
			task:  "worker",
			index: 2,
			want:  dmlc("worker", "mx-scheduler-0.mx.default.svc.cluster.local", "9091", "2", "3", 2),
		},
		"no server task: DMLC_NUM_SERVER=0": {
			job:   jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			task:  "worker",
			index: 1,
			want:  dmlc("worker", "mx-scheduler-0.mx.default.svc.cluster.local", "9091", "0", "2", 1),
		},
		"server task without replicas counts as none": {
			job: jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("server", 0).Obj()).
				Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			task: "scheduler",
			want: dmlc("scheduler", "mx-scheduler-0.mx.default.svc.cluster.local", "9091", "0", "2", -1),
		},
		"renamed roles and port": {
			job: jobtest.MakeJob("mx").Task(mk("sched", 1).Obj()).Task(mk("ps", 1).Obj()).Task(mk("trainer", 2).Obj()).
				Plugin(Name, "--scheduler=sched", "--server=ps", "--worker=trainer", "--port=9000").Obj(),
			task:  "trainer",
			index: 1,
			want:  dmlc("worker", "mx-sched-0.mx.default.svc.cluster.local", "9000", "1", "2", 1),
		},
		"renamed server": {
			job: jobtest.MakeJob("mx").Task(mk("sched", 1).Obj()).Task(mk("ps", 1).Obj()).Task(mk("trainer", 2).Obj()).
				Plugin(Name, "--scheduler=sched", "--server=ps", "--worker=trainer", "--port=9000").Obj(),
			task: "ps",
			want: dmlc("server", "mx-sched-0.mx.default.svc.cluster.local", "9000", "1", "2", -1),
		},
		"template hostname and subdomain of the scheduler are honoured": {
			job: jobtest.MakeJob("mx").Task(mk("scheduler", 1).Hostname("root").Subdomain("net").Obj()).
				Task(mk("worker", 1).Subdomain("net").Obj()).Plugin(Name).Obj(),
			task: "worker",
			want: dmlc("worker", "root.net.default.svc.cluster.local", "9091", "0", "1", 0),
		},
		"mxjob-port on the scheduler overrides --port": {
			job: jobtest.MakeJob("mx").Task(mk("scheduler", 1).Port(PortName, 9991).Obj()).
				Task(mk("worker", 1).Obj()).Plugin(Name, "--port=9000").Obj(),
			task: "worker",
			want: dmlc("worker", "mx-scheduler-0.mx.default.svc.cluster.local", "9991", "0", "1", 0),
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
	job := jobtest.MakeJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).
		Task(jobtest.MakeTask("worker", 2).Env(EnvRootURI, "10.0.0.1").Env(EnvWorkerID, "7").
			Container("sidecar").InitContainer("prepare").Obj()).
		Plugin(Name).Obj()
	pod := runPod(t, job, "worker", 1)

	want := []v1.EnvVar{
		{Name: EnvRootURI, Value: "10.0.0.1"},
		{Name: EnvWorkerID, Value: "7"},
		{Name: EnvRole, Value: "worker"},
		{Name: EnvRootPort, Value: "9091"},
		{Name: EnvNumServer, Value: "0"},
		{Name: EnvNumWorker, Value: "2"},
		{Name: EnvUseKubernetes, Value: "1"},
	}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Env); diff != "" {
		t.Errorf("first container env (-want +got), the user's values must stay and not be duplicated:\n%s", diff)
	}
	others := dmlc("worker", "mx-scheduler-0.mx.default.svc.cluster.local", "9091", "0", "2", 1)
	for _, c := range []v1.Container{pod.Spec.Containers[1], pod.Spec.InitContainers[1]} {
		if diff := cmp.Diff(others, c.Env); diff != "" {
			t.Errorf("container %s env (-want +got):\n%s", c.Name, diff)
		}
	}
}

func TestSchedulerPort(t *testing.T) {
	mk := jobtest.MakeTask
	job := func(scheduler *jobtest.TaskWrapper, args ...string) *batch.Job {
		return jobtest.MakeJob("mx").Task(scheduler.Obj()).Task(mk("server", 1).Obj()).Task(mk("worker", 2).Obj()).
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
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9091, Protocol: v1.ProtocolTCP}},
		},
		"--port moves it": {
			job:  job(mk("scheduler", 1), "--port=9000"),
			task: "scheduler",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9000, Protocol: v1.ProtocolTCP}},
		},
		"the user's port of that number is left as it is": {
			job:  job(mk("scheduler", 1).Port("dmlc", 9091)),
			task: "scheduler",
			want: []v1.ContainerPort{{Name: "dmlc", ContainerPort: 9091}},
		},
		"the user's mxjob-port is kept": {
			job:  job(mk("scheduler", 1).Port(PortName, 9991)),
			task: "scheduler",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 9991}},
		},
		"servers open no port": {job: job(mk("scheduler", 1)), task: "server"},
		"workers open no port": {job: job(mk("scheduler", 1)), task: "worker"},
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
	mxJob := func(args ...string) *batch.Job {
		return jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("server", 1).InitContainer("user-init").Obj()).
			Task(mk("worker", 2).InitContainer("user-init").Obj()).Plugin(Name, args...).Obj()
	}
	defaults := wait.Options{Enabled: true, Timeout: wait.DefaultTimeout}
	schedulerTarget := []wait.Target{{Host: "mx-scheduler-0.mx.default.svc.cluster.local", Port: 9091}}
	cases := map[string]struct {
		job     *batch.Job
		task    string
		targets []wait.Target // nil: no wait container
		opts    wait.Options
	}{
		"worker waits for the scheduler": {job: mxJob(), task: "worker", targets: schedulerTarget, opts: defaults},
		"server waits for the scheduler": {job: mxJob(), task: "server", targets: schedulerTarget, opts: defaults},
		"scheduler does not wait":        {job: mxJob(), task: "scheduler"},
		"--wait=false switches it off":   {job: mxJob("--wait=false"), task: "worker"},
		"--wait=false, server":           {job: mxJob("--wait=false"), task: "server"},
		"timeout and image are passed on": {
			job:     mxJob("--wait-timeout=30", "--wait-image=registry.local/busybox:1"),
			task:    "worker",
			targets: schedulerTarget,
			opts:    wait.Options{Enabled: true, Timeout: 30 * time.Second, Image: "registry.local/busybox:1"},
		},
		"renamed scheduler, its hostname and port": {
			job: jobtest.MakeJob("mx").Task(mk("sched", 1).Hostname("root").Subdomain("net").Obj()).
				Task(mk("worker", 2).InitContainer("user-init").Obj()).Plugin(Name, "--scheduler=sched", "--port=9000").Obj(),
			task:    "worker",
			targets: []wait.Target{{Host: "root.net.default.svc.cluster.local", Port: 9000}},
			opts:    defaults,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, 0)
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
			wantTarget := tc.targets[0].Host + ":" + strconv.Itoa(tc.targets[0].Port)
			gotTarget := ""
			for _, e := range pod.Spec.InitContainers[0].Env {
				if e.Name == wait.TargetsEnv {
					gotTarget = e.Value
				}
			}
			if gotTarget != wantTarget {
				t.Errorf("%s = %q, want %q", wait.TargetsEnv, gotTarget, wantTarget)
			}
		})
	}
}
