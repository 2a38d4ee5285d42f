package jax

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

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

// jaxEnv is the env a worker pod gets, in order: coordinator host and port,
// number of processes and this pod's process id.
func jaxEnv(host, port, n string, id int) []v1.EnvVar {
	pid := strconv.Itoa(id)
	return []v1.EnvVar{
		{Name: EnvJAXCoordinatorAddress, Value: host + ":" + port},
		{Name: EnvJAXNumProcesses, Value: n},
		{Name: EnvJAXProcessID, Value: pid},
		{Name: EnvCoordinatorAddress, Value: host},
		{Name: EnvCoordinatorPort, Value: port},
		{Name: EnvNumProcesses, Value: n},
		{Name: EnvProcessID, Value: pid},
		{Name: EnvPythonUnbuffered, Value: "1"},
	}
}

func TestEnv(t *testing.T) {
	mk := jobtest.MakeTask
	three := jobtest.MakeJob("jx").Task(mk("worker", 3).Obj()).Task(mk("tensorboard", 1).Obj()).Plugin(Name).Obj()
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  []v1.EnvVar // nil: nothing injected
	}{
		"process 0": {job: three, task: "worker", want: jaxEnv("jx-worker-0.jx.default.svc.cluster.local", "6666", "3", 0)},
		"process 1": {job: three, task: "worker", index: 1, want: jaxEnv("jx-worker-0.jx.default.svc.cluster.local", "6666", "3", 1)},
		"process 2": {job: three, task: "worker", index: 2, want: jaxEnv("jx-worker-0.jx.default.svc.cluster.local", "6666", "3", 2)},
		"a single process": {
			job:  jobtest.MakeJob("jx").Task(mk("worker", 1).Obj()).Plugin(Name).Obj(),
			task: "worker",
			want: jaxEnv("jx-worker-0.jx.default.svc.cluster.local", "6666", "1", 0),
		},
		"renamed worker and --port": {
			job:   jobtest.MakeJob("jx").Task(mk("trainer", 2).Obj()).Plugin(Name, "--worker=trainer", "--port=1234").Obj(),
			task:  "trainer",
			index: 1,
			want:  jaxEnv("jx-trainer-0.jx.default.svc.cluster.local", "1234", "2", 1),
		},
		"jaxjob-port on the worker overrides --port": {
			job:   jobtest.MakeJob("jx").Task(mk("worker", 2).Port(PortName, 7777).Obj()).Plugin(Name, "--port=1234").Obj(),
			task:  "worker",
			index: 1,
			want:  jaxEnv("jx-worker-0.jx.default.svc.cluster.local", "7777", "2", 1),
		},
		"template subdomain is honoured": {
			job:   jobtest.MakeJob("jx").Task(mk("worker", 2).Subdomain("net").Obj()).Plugin(Name).Obj(),
			task:  "worker",
			index: 1,
			want:  jaxEnv("jx-worker-0.net.default.svc.cluster.local", "6666", "2", 1),
		},
		"tasks that play no role are left alone": {job: three, task: "tensorboard"},
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

// Every container and init container gets the variables; a variable the user
// set stays as it is and is not duplicated.
func TestUserSettingsWin(t *testing.T) {
	job := jobtest.MakeJob("jx").
		Task(jobtest.MakeTask("worker", 2).Env(EnvJAXCoordinatorAddress, "10.0.0.1:1234").Env(EnvProcessID, "7").
			Container("sidecar").InitContainer("prepare").Obj()).
		Plugin(Name).Obj()
	pod := runPod(t, job, "worker", 1)

	want := []v1.EnvVar{
		{Name: EnvJAXCoordinatorAddress, Value: "10.0.0.1:1234"},
		{Name: EnvProcessID, Value: "7"},
		{Name: EnvJAXNumProcesses, Value: "2"},
		{Name: EnvJAXProcessID, Value: "1"},
		{Name: EnvCoordinatorAddress, Value: "jx-worker-0.jx.default.svc.cluster.local"},
		{Name: EnvCoordinatorPort, Value: "6666"},
		{Name: EnvNumProcesses, Value: "2"},
		{Name: EnvPythonUnbuffered, Value: "1"},
	}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Env); diff != "" {
		t.Errorf("first container env (-want +got), the user's values must stay and not be duplicated:\n%s", diff)
	}
	others := jaxEnv("jx-worker-0.jx.default.svc.cluster.local", "6666", "2", 1)
	for _, c := range []v1.Container{pod.Spec.Containers[1], pod.Spec.InitContainers[1]} {
		if diff := cmp.Diff(others, c.Env); diff != "" {
			t.Errorf("container %s env (-want +got):\n%s", c.Name, diff)
		}
	}
}

func TestCoordinatorPort(t *testing.T) {
	mk := jobtest.MakeTask
	job := func(worker *jobtest.TaskWrapper, args ...string) *batch.Job {
		return jobtest.MakeJob("jx").Task(worker.Obj()).Plugin(Name, args...).Obj()
	}
	cases := map[string]struct {
		job   *batch.Job
		index int
		want  []v1.ContainerPort
	}{
		"process 0 opens the port": {
			job:  job(mk("worker", 3)),
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 6666, Protocol: v1.ProtocolTCP}},
		},
		"so do the others": {
			job:   job(mk("worker", 3)),
			index: 2,
			want:  []v1.ContainerPort{{Name: PortName, ContainerPort: 6666, Protocol: v1.ProtocolTCP}},
		},
		"--port moves it": {
			job:  job(mk("worker", 3), "--port=1234"),
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 1234, Protocol: v1.ProtocolTCP}},
		},
		"the user's port of that number is left as it is": {
			job:  job(mk("worker", 3).Port("grpc", 6666)),
			want: []v1.ContainerPort{{Name: "grpc", ContainerPort: 6666}},
		},
		"the user's jaxjob-port is kept": {
			job:  job(mk("worker", 3).Port(PortName, 7777)),
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 7777}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, "worker", tc.index)
			if diff := cmp.Diff(tc.want, pod.Spec.Containers[0].Ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitForProcessZero(t *testing.T) {
	mk := jobtest.MakeTask
	jxJob := func(replicas int32, args ...string) *batch.Job {
		return jobtest.MakeJob("jx").Task(mk("worker", replicas).InitContainer("user-init").Obj()).Plugin(Name, args...).Obj()
	}
	defaults := wait.Options{Enabled: true, Timeout: wait.DefaultTimeout}
	coordinator := []wait.Target{{Host: "jx-worker-0.jx.default.svc.cluster.local", Port: 6666}}
	cases := map[string]struct {
		job     *batch.Job
		index   int
		targets []wait.Target // nil: no wait container
		opts    wait.Options
	}{
		"process 1 waits for process 0's port": {job: jxJob(3), index: 1, targets: coordinator, opts: defaults},
		"process 2 too":                        {job: jxJob(3), index: 2, targets: coordinator, opts: defaults},
		"process 0 does not wait":              {job: jxJob(3)},
		"a single process does not wait":       {job: jxJob(1)},
		"--wait=false switches it off":         {job: jxJob(3, "--wait=false"), index: 1},
		"timeout, image and port are passed on": {
			job:     jxJob(3, "--wait-timeout=30", "--wait-image=registry.local/busybox:1", "--port=1234"),
			index:   1,
			targets: []wait.Target{{Host: "jx-worker-0.jx.default.svc.cluster.local", Port: 1234}},
			opts:    wait.Options{Enabled: true, Timeout: 30 * time.Second, Image: "registry.local/busybox:1"},
		},
		"the jaxjob-port is waited for": {
			job: jobtest.MakeJob("jx").Task(mk("worker", 2).Port(PortName, 7777).InitContainer("user-init").Obj()).
				Plugin(Name).Obj(),
			index:   1,
			targets: []wait.Target{{Host: "jx-worker-0.jx.default.svc.cluster.local", Port: 7777}},
			opts:    defaults,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, "worker", tc.index)
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
		"processes 1 to N-1 wait for pod 0 of their task; all of them complete": {
			job: jobtest.MakeJob("jx").Task(mk("worker", 3).Obj()).Plugin(Name).Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleWorker, Task: "worker"}},
				Waits:      []framework.Wait{{From: "worker", To: "worker", Port: 6666, FirstOnly: true}},
				Completion: "worker",
			},
		},
		"renamed, on the jaxjob-port": {
			job: jobtest.MakeJob("jx").Task(mk("trainer", 2).Port(PortName, 7777).Obj()).Plugin(Name, "--worker=trainer").Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleWorker, Task: "trainer"}},
				Waits:      []framework.Wait{{From: "trainer", To: "trainer", Port: 7777, FirstOnly: true}},
				Completion: "trainer",
			},
		},
		"no wait with --wait=false": {
			job: jobtest.MakeJob("jx").Task(mk("worker", 3).Obj()).Plugin(Name, "--wait=false").Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleWorker, Task: "worker"}},
				Completion: "worker",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Framework.Describe(tc.job.Spec.Plugins[Name], tc.job)
			if diff := cmp.Diff(tc.want, got, cmpDescription); diff != "" {
				t.Errorf("Describe (-want +got):\n%s", diff)
			}
		})
	}
	bad := jobtest.MakeJob("jx").Task(mk("main", 1).Obj()).Plugin(Name).Obj()
	if d := Framework.Describe(bad.Spec.Plugins[Name], bad); len(d.Errs) != 1 || d.Roles != nil || d.Waits != nil || d.Completion != "" {
		t.Errorf("Describe of a Job without the worker task = %+v, want one error and nothing else", d)
	}
}

// cmpDescription compares Descriptions without their Sizes function (the
// plugin sets no host list).
var cmpDescription = cmp.Comparer(func(a, b func() []framework.SizedEnv) bool { return a == nil && b == nil })

func TestPodWithoutIndex(t *testing.T) {
	job := jobtest.MakeJob("jx").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin(Name).Obj()
	pod := jobtest.MakePod(job, "worker", 0).Obj()
	delete(pod.Annotations, batch.TaskIndex)
	pod.Name = "jx-worker-x"
	client := pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}
	if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(pod, job); err == nil {
		t.Errorf("OnPodCreate of a worker pod without index: no error")
	}
}
