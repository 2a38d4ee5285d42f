package tensorflow

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// runPod runs OnJobAdd and then OnPodCreate, each on a fresh plugin instance
// as Volcano's controller does, against a fresh API, and returns the pod and
// the API (which holds the cluster ConfigMap by reference).
// The Job gets a UID of its own: the plan cache keys on it, and a cached
// plan remembers having synced its ConfigMap.
func runPod(t *testing.T, job *batch.Job, task string, index int) (*v1.Pod, *fake.Clientset) {
	t.Helper()
	job.UID = types.UID(fmt.Sprintf("%s-%d", t.Name(), runs.Add(1)))
	kube := fake.NewSimpleClientset()
	client := pluginsinterface.PluginClientset{KubeClients: kube}
	if err := New(client, job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
		t.Fatalf("OnJobAdd: %v", err)
	}
	pod := jobtest.MakePod(job, task, index).Obj()
	if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(pod, job); err != nil {
		t.Fatalf("OnPodCreate: %v", err)
	}
	return pod, kube
}

// withMode returns job with --tf-config=mode appended to the plugin's arguments.
func withMode(job *batch.Job, mode TFConfigMode) *batch.Job {
	job = job.DeepCopy()
	job.Spec.Plugins[Name] = append(job.Spec.Plugins[Name], "--tf-config="+string(mode))
	return job
}

var runs atomic.Int64

// modes are the --tf-config values; the tests' jobs are small enough that
// Auto resolves to Inline (TestMode has larger ones).
var modes = []TFConfigMode{Inline, Reference, Auto}

func TestTFConfig(t *testing.T) {
	mk := jobtest.MakeTask
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  string // "" means no TF_CONFIG
	}{
		"ps and workers, worker 1": {
			job:   jobtest.MakeJob("tf").Task(mk("ps", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			task:  "worker",
			index: 1,
			want:  `{"cluster":{"ps":["tf-ps-0.tf.default.svc.cluster.local:2222"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222","tf-worker-1.tf.default.svc.cluster.local:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}`,
		},
		"ps pod": {
			job:  jobtest.MakeJob("tf").Task(mk("ps", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			task: "ps",
			want: `{"cluster":{"ps":["tf-ps-0.tf.default.svc.cluster.local:2222"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222","tf-worker-1.tf.default.svc.cluster.local:2222"]},"task":{"type":"ps","index":0},"environment":"cloud"}`,
		},
		"chief, workers and evaluator: the evaluator stays out of cluster": {
			job: jobtest.MakeJob("tf").Task(mk("chief", 1).Obj()).Task(mk("worker", 1).Obj()).
				Task(mk("evaluator", 1).Obj()).Plugin(Name).Obj(),
			task: "evaluator",
			want: `{"cluster":{"chief":["tf-chief-0.tf.default.svc.cluster.local:2222"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222"]},"task":{"type":"evaluator","index":0},"environment":"cloud"}`,
		},
		"chief pod": {
			job: jobtest.MakeJob("tf").Task(mk("chief", 1).Obj()).Task(mk("worker", 1).Obj()).
				Task(mk("evaluator", 1).Obj()).Plugin(Name).Obj(),
			task: "chief",
			want: `{"cluster":{"chief":["tf-chief-0.tf.default.svc.cluster.local:2222"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222"]},"task":{"type":"chief","index":0},"environment":"cloud"}`,
		},
		"one pod in all gets no TF_CONFIG": {
			job:  jobtest.MakeJob("tf").Task(mk("worker", 1).Obj()).Plugin(Name).Obj(),
			task: "worker",
		},
		"upstream spellings: renamed roles and port": {
			job: jobtest.MakeJob("tf").Task(mk("pserver", 1).Obj()).Task(mk("trainer", 1).Obj()).
				Plugin(Name, "--port=5000", "--worker=trainer", "--ps=pserver").Obj(),
			task: "trainer",
			want: `{"cluster":{"ps":["tf-pserver-0.tf.default.svc.cluster.local:5000"],"worker":["tf-trainer-0.tf.default.svc.cluster.local:5000"]},"task":{"type":"worker","index":0},"environment":"cloud"}`,
		},
		"single-dash flag with separate value": {
			job:  jobtest.MakeJob("tf").Task(mk("worker", 2).Obj()).Plugin(Name, "-port", "3000").Obj(),
			task: "worker",
			want: `{"cluster":{"worker":["tf-worker-0.tf.default.svc.cluster.local:3000","tf-worker-1.tf.default.svc.cluster.local:3000"]},"task":{"type":"worker","index":0},"environment":"cloud"}`,
		},
		"tfjob-port on a role overrides --port for that role": {
			job: jobtest.MakeJob("tf").Task(mk("ps", 1).Port(PortName, 3333).Obj()).Task(mk("worker", 1).Obj()).
				Plugin(Name).Obj(),
			task: "worker",
			want: `{"cluster":{"ps":["tf-ps-0.tf.default.svc.cluster.local:3333"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"}`,
		},
		"template hostname and subdomain are honoured": {
			job: jobtest.MakeJob("tf").Task(mk("ps", 1).Hostname("params").Subdomain("net").Obj()).
				Task(mk("worker", 1).Subdomain("net").Obj()).Plugin(Name).Obj(),
			task: "worker",
			want: `{"cluster":{"ps":["params.net.default.svc.cluster.local:2222"],"worker":["tf-worker-0.net.default.svc.cluster.local:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"}`,
		},
		"one worker beside a task with no role is not distributed": {
			job:  jobtest.MakeJob("tf").Task(mk("worker", 1).Obj()).Task(mk("tensorboard", 1).Obj()).Plugin(Name).Obj(),
			task: "worker",
		},
		"tasks that play no role are left alone": {
			job:  jobtest.MakeJob("tf").Task(mk("worker", 2).Obj()).Task(mk("tensorboard", 1).Obj()).Plugin(Name).Obj(),
			task: "tensorboard",
		},
	}
	for name, tc := range cases {
		for _, mode := range modes {
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				pod, kube := runPod(t, withMode(tc.job, mode), tc.task, tc.index)
				got := processEnv(t, kube, pod, 0)[EnvTFConfig]
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("TF_CONFIG the process sees (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestUserSettingsWin(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			job := jobtest.MakeJob("tf").
				Task(jobtest.MakeTask("worker", 2).Env(EnvTFConfig, "mine").Port("http", 2222).
					Container("sidecar").InitContainer("prepare").Obj()).
				Plugin(Name, "--tf-config="+string(mode)).Obj()
			pod, _ := runPod(t, job, "worker", 0)

			if got := jobtest.Env(pod, 0)[EnvTFConfig]; got != "mine" {
				t.Errorf("user TF_CONFIG overwritten: %q", got)
			}
			if n := jobtest.CountEnv(pod.Spec.Containers[0].Env, EnvCluster); n != 0 {
				t.Errorf("%s given to a container that sets TF_CONFIG itself", EnvCluster)
			}
			if n := jobtest.CountEnv(pod.Spec.Containers[0].Env, EnvTFConfig); n != 1 {
				t.Errorf("TF_CONFIG appears %d times in the first container", n)
			}
			for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers[1]) {
				if jobtest.CountEnv(c.Env, EnvTFConfig) != 1 {
					t.Errorf("container %s: TF_CONFIG missing", c.Name)
				}
			}
			wantPorts := []v1.ContainerPort{{Name: "http", ContainerPort: 2222}}
			if diff := cmp.Diff(wantPorts, pod.Spec.Containers[0].Ports); diff != "" {
				t.Errorf("first container ports (-want +got):\n%s", diff)
			}
			if len(pod.Spec.Containers[1].Ports) != 0 {
				t.Errorf("sidecar ports = %v, want none: the pod declares 2222 already", pod.Spec.Containers[1].Ports)
			}
		})
	}
}

func TestPortOpened(t *testing.T) {
	job := jobtest.MakeJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin(Name, "--port=4000").Obj()
	pod, _ := runPod(t, job, "worker", 1)
	want := []v1.ContainerPort{{Name: PortName, ContainerPort: 4000, Protocol: v1.ProtocolTCP}}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
}

func TestWaitForPS(t *testing.T) {
	mk := jobtest.MakeTask
	withPS := func(args ...string) *batch.Job {
		return jobtest.MakeJob("tf").Task(mk("ps", 2).Obj()).Task(mk("worker", 2).InitContainer("user-init").Obj()).
			Task(mk("chief", 1).Obj()).Plugin(Name, args...).Obj()
	}
	cases := map[string]struct {
		job      *batch.Job
		task     string
		wantWait bool
	}{
		"worker waits for ps":          {job: withPS(), task: "worker", wantWait: true},
		"chief waits for ps":           {job: withPS(), task: "chief", wantWait: true},
		"ps does not wait":             {job: withPS(), task: "ps"},
		"--wait=false switches it off": {job: withPS("--wait=false"), task: "worker"},
		"no ps, nothing to wait for":   {job: jobtest.MakeJob("tf").Task(mk("worker", 2).Obj()).Plugin(Name).Obj(), task: "worker"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod, _ := runPod(t, tc.job, tc.task, 0)
			hasWait := len(pod.Spec.InitContainers) > 0 && pod.Spec.InitContainers[0].Name == wait.ContainerName
			if hasWait != tc.wantWait {
				t.Fatalf("wait container present = %v, want %v (init containers %v)", hasWait, tc.wantWait, pod.Spec.InitContainers)
			}
			if !hasWait {
				return
			}
			want := wait.Container([]wait.Target{{Host: "tf-ps-0.tf.default.svc.cluster.local", Port: 2222}, {Host: "tf-ps-1.tf.default.svc.cluster.local", Port: 2222}}, wait.Options{Enabled: true, Timeout: wait.DefaultTimeout})
			if diff := cmp.Diff(want, pod.Spec.InitContainers[0]); diff != "" {
				t.Errorf("wait container (-want +got):\n%s", diff)
			}
			if tc.task == "worker" && pod.Spec.InitContainers[1].Name != "user-init" {
				t.Errorf("user init container must follow the wait container: %v", pod.Spec.InitContainers)
			}
		})
	}
}
