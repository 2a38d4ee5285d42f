package paddle

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

var podIP = v1.EnvVar{Name: EnvPodIP, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}

// paddleEnv is the env a pod gets, in order; count is "" in collective mode,
// else PADDLE_SERVER_NUM or PADDLE_TRAINER_NUM, which is set to 1.
func paddleEnv(master, nnodes, jobID, count string) []v1.EnvVar {
	env := []v1.EnvVar{
		podIP,
		{Name: EnvMaster, Value: master},
		{Name: EnvNNodes, Value: nnodes},
		{Name: EnvJobID, Value: jobID},
	}
	if count != "" {
		env = append(env, v1.EnvVar{Name: count, Value: "1"})
	}
	return append(env, v1.EnvVar{Name: EnvPythonUnbuffered, Value: "1"})
}

func TestEnv(t *testing.T) {
	mk := jobtest.MakeTask
	collective := jobtest.MakeJob("pd").Task(mk("worker", 3).Obj()).Task(mk("tensorboard", 1).Obj()).Plugin(Name).Obj()
	ps := jobtest.MakeJob("pd").Task(mk("master", 2).Obj()).Task(mk("worker", 3).Obj()).Plugin(Name).Obj()
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  []v1.EnvVar // nil: nothing injected
	}{
		"collective: worker 0 is rank 0 and names its own IP": {
			job:  collective,
			task: "worker",
			want: paddleEnv("$(POD_IP):36543", "3", "pd", ""),
		},
		"collective: worker 2 names worker 0": {
			job:   collective,
			task:  "worker",
			index: 2,
			want:  paddleEnv("pd-worker-0.pd.default.svc.cluster.local:36543", "3", "pd", ""),
		},
		"collective: tasks that play no role are left alone": {job: collective, task: "tensorboard"},
		"ps: master 0 is rank 0 and runs a server": {
			job:  ps,
			task: "master",
			want: paddleEnv("$(POD_IP):36543", "5", "pd", EnvServerNum),
		},
		"ps: master 1 names master 0": {
			job:   ps,
			task:  "master",
			index: 1,
			want:  paddleEnv("pd-master-0.pd.default.svc.cluster.local:36543", "5", "pd", EnvServerNum),
		},
		"ps: worker 0 is not rank 0 and runs a trainer": {
			job:  ps,
			task: "worker",
			want: paddleEnv("pd-master-0.pd.default.svc.cluster.local:36543", "5", "pd", EnvTrainerNum),
		},
		"ps: worker 2": {
			job:   ps,
			task:  "worker",
			index: 2,
			want:  paddleEnv("pd-master-0.pd.default.svc.cluster.local:36543", "5", "pd", EnvTrainerNum),
		},
		"ps: masters only": {
			job:   jobtest.MakeJob("pd").Task(mk("master", 2).Obj()).Plugin(Name).Obj(),
			task:  "master",
			index: 1,
			want:  paddleEnv("pd-master-0.pd.default.svc.cluster.local:36543", "2", "pd", EnvServerNum),
		},
		"a master task without replicas means collective mode": {
			job:   jobtest.MakeJob("pd").Task(mk("master", 0).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			task:  "worker",
			index: 1,
			want:  paddleEnv("pd-worker-0.pd.default.svc.cluster.local:36543", "2", "pd", ""),
		},
		"renamed roles and port": {
			job: jobtest.MakeJob("job").Task(mk("ps", 1).Obj()).Task(mk("trainer", 2).Obj()).
				Plugin(Name, "--master=ps", "--worker=trainer", "--port=37777").Obj(),
			task:  "trainer",
			index: 1,
			want:  paddleEnv("job-ps-0.job.default.svc.cluster.local:37777", "3", "job", EnvTrainerNum),
		},
		"a port named master on the rank-0 task overrides --port": {
			job: jobtest.MakeJob("pd").Task(mk("worker", 2).Port(PortName, 37777).Obj()).
				Plugin(Name, "--port=30000").Obj(),
			task:  "worker",
			index: 1,
			want:  paddleEnv("pd-worker-0.pd.default.svc.cluster.local:37777", "2", "pd", ""),
		},
		"a port named master on another task does not": {
			job: jobtest.MakeJob("pd").Task(mk("master", 1).Obj()).Task(mk("worker", 1).Port(PortName, 37777).Obj()).
				Plugin(Name).Obj(),
			task: "worker",
			want: paddleEnv("pd-master-0.pd.default.svc.cluster.local:36543", "2", "pd", EnvTrainerNum),
		},
		"template hostname and subdomain of the rank-0 task are honoured": {
			job: jobtest.MakeJob("pd").Task(mk("master", 1).Hostname("root").Subdomain("net").Obj()).
				Task(mk("worker", 1).Subdomain("net").Obj()).Plugin(Name).Obj(),
			task: "worker",
			want: paddleEnv("root.net.default.svc.cluster.local:36543", "2", "pd", EnvTrainerNum),
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
	job := jobtest.MakeJob("pd").Task(jobtest.MakeTask("worker", 2).Env(EnvPodIP, "10.0.0.9").Env(EnvNNodes, "2:4").
		Container("sidecar").InitContainer("prepare").Obj()).Plugin(Name).Obj()
	pod := runPod(t, job, "worker", 0)
	want := []v1.EnvVar{
		{Name: EnvPodIP, Value: "10.0.0.9"},
		{Name: EnvNNodes, Value: "2:4"},
		{Name: EnvMaster, Value: "$(POD_IP):36543"},
		{Name: EnvJobID, Value: "pd"},
		{Name: EnvPythonUnbuffered, Value: "1"},
	}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Env); diff != "" {
		t.Errorf("first container env (-want +got), the user's values must stay and not be duplicated:\n%s", diff)
	}
	others := paddleEnv("$(POD_IP):36543", "2", "pd", "")
	for _, c := range []v1.Container{pod.Spec.Containers[1], pod.Spec.InitContainers[0]} {
		if diff := cmp.Diff(others, c.Env); diff != "" {
			t.Errorf("container %s env (-want +got):\n%s", c.Name, diff)
		}
	}
}

func TestRendezvousPort(t *testing.T) {
	mk := jobtest.MakeTask
	ps := func(master *jobtest.TaskWrapper, args ...string) *batch.Job {
		return jobtest.MakeJob("pd").Task(master.Obj()).Task(mk("worker", 2).Obj()).Plugin(Name, args...).Obj()
	}
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  []v1.ContainerPort
	}{
		"the rank-0 pod opens the port": {
			job:  ps(mk("master", 2)),
			task: "master",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 36543, Protocol: v1.ProtocolTCP}},
		},
		"--port moves it": {
			job:  ps(mk("master", 2), "--port=37777"),
			task: "master",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 37777, Protocol: v1.ProtocolTCP}},
		},
		"the user's port of that number is left as it is": {
			job:  ps(mk("master", 1).Port("kv", 36543)),
			task: "master",
			want: []v1.ContainerPort{{Name: "kv", ContainerPort: 36543}},
		},
		"other masters open none":      {job: ps(mk("master", 2)), task: "master", index: 1},
		"workers open none in PS mode": {job: ps(mk("master", 1)), task: "worker"},
		"worker 0 opens it in collective mode": {
			job:  jobtest.MakeJob("pd").Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			task: "worker",
			want: []v1.ContainerPort{{Name: PortName, ContainerPort: 36543, Protocol: v1.ProtocolTCP}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, tc.index)
			if diff := cmp.Diff(tc.want, pod.Spec.Containers[0].Ports); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitForRank0(t *testing.T) {
	mk := jobtest.MakeTask
	psJob := func(args ...string) *batch.Job {
		return jobtest.MakeJob("pd").Task(mk("master", 2).InitContainer("user-init").Obj()).
			Task(mk("worker", 2).InitContainer("user-init").Obj()).Plugin(Name, args...).Obj()
	}
	collective := jobtest.MakeJob("pd").Task(mk("worker", 3).InitContainer("user-init").Obj()).Plugin(Name).Obj()
	defaults := wait.Options{Enabled: true, Timeout: wait.DefaultTimeout}
	master0 := []wait.Target{{Host: "pd-master-0.pd.default.svc.cluster.local", Port: 36543}}
	cases := map[string]struct {
		job     *batch.Job
		task    string
		index   int
		targets []wait.Target // nil: no wait container
		opts    wait.Options
	}{
		"ps: worker 0 waits for master 0":         {job: psJob(), task: "worker", targets: master0, opts: defaults},
		"ps: master 1 waits for master 0":         {job: psJob(), task: "master", index: 1, targets: master0, opts: defaults},
		"ps: master 0 does not wait":              {job: psJob(), task: "master"},
		"collective: worker 0 does not wait":      {job: collective, task: "worker"},
		"collective: worker 2 waits for worker 0": {job: collective, task: "worker", index: 2, targets: []wait.Target{{Host: "pd-worker-0.pd.default.svc.cluster.local", Port: 36543}}, opts: defaults},
		"--wait=false switches it off":            {job: psJob("--wait=false"), task: "worker"},
		"timeout, image and port are passed on": {
			job:     psJob("--wait-timeout=30", "--wait-image=registry.local/busybox:1", "--port=37777"),
			task:    "worker",
			targets: []wait.Target{{Host: "pd-master-0.pd.default.svc.cluster.local", Port: 37777}},
			opts:    wait.Options{Enabled: true, Timeout: 30 * time.Second, Image: "registry.local/busybox:1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, tc.index)
			var names []string
			for _, c := range pod.Spec.InitContainers {
				names = append(names, c.Name)
			}
			wantNames := []string{"user-init"}
			if tc.targets != nil {
				wantNames = []string{wait.ContainerName, "user-init"}
			}
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
		args []string
		want framework.Description
	}{
		"collective": {
			job: jobtest.MakeJob("pd").Task(mk("worker", 3).Obj()).Obj(),
			want: framework.Description{
				Roles:      []framework.Role{{Name: RoleWorker, Task: "worker"}},
				Waits:      []framework.Wait{{From: "worker", To: "worker", Port: 36543, FirstOnly: true}},
				Completion: "worker",
			},
		},
		"parameter server": {
			job: jobtest.MakeJob("pd").Task(mk("master", 2).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			want: framework.Description{
				Roles: []framework.Role{{Name: RoleMaster, Task: "master"}, {Name: RoleWorker, Task: "worker"}},
				Waits: []framework.Wait{
					{From: "master", To: "master", Port: 36543, FirstOnly: true},
					{From: "worker", To: "master", Port: 36543, FirstOnly: true},
				},
				Completion: "master",
			},
		},
		"no waits": {
			job:  jobtest.MakeJob("pd").Task(mk("worker", 2).Obj()).Obj(),
			args: []string{"--wait=false"},
			want: framework.Description{Roles: []framework.Role{{Name: RoleWorker, Task: "worker"}}, Completion: "worker"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Framework.Describe(tc.args, tc.job)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b func() []framework.SizedEnv) bool { return (a == nil) == (b == nil) })); diff != "" {
				t.Errorf("Describe (-want +got):\n%s", diff)
			}
		})
	}
}
