package pytorch

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, New, Name, job, task, index)
}

func TestEnv(t *testing.T) {
	mk := jobtest.MakeTask
	masterWorkers := func(args ...string) *batch.Job {
		return jobtest.MakeJob("pt").Task(mk("master", 1).Obj()).Task(mk("worker", 3).Obj()).Plugin(Name, args...).Obj()
	}
	base := func(addr, world, nnodes, nproc, rank string) map[string]string {
		return map[string]string{
			"MASTER_ADDR": addr, "MASTER_PORT": "23456", "WORLD_SIZE": world, "RANK": rank,
			"PET_MASTER_ADDR": addr, "PET_MASTER_PORT": "23456", "PET_NNODES": nnodes, "PET_NODE_RANK": rank,
			"PET_NPROC_PER_NODE": nproc, "PYTHONUNBUFFERED": "1",
		}
	}
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  map[string]string
	}{
		"master":             {job: masterWorkers(), task: "master", want: base("pt-master-0.pt.default.svc.cluster.local", "4", "4", "auto", "0")},
		"worker 2 is rank 3": {job: masterWorkers(), task: "worker", index: 2, want: base("pt-master-0.pt.default.svc.cluster.local", "4", "4", "auto", "3")},
		"integer nproc multiplies the world size": {
			job: masterWorkers("--nproc-per-node=8"), task: "worker", want: base("pt-master-0.pt.default.svc.cluster.local", "32", "4", "8", "1"),
		},
		"gpu nproc keeps world size in pods": {
			job: masterWorkers("--nproc-per-node=gpu"), task: "worker", want: base("pt-master-0.pt.default.svc.cluster.local", "4", "4", "gpu", "1"),
		},
		"worker-only job: worker 0 is rank 0 and the master": {
			job:  jobtest.MakeJob("pt").Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			task: "worker", index: 1, want: base("pt-worker-0.pt.default.svc.cluster.local", "2", "2", "auto", "1"),
		},
		"upstream spellings": {
			job: jobtest.MakeJob("pt").Task(mk("chief", 1).Obj()).Task(mk("trainer", 1).Obj()).
				Plugin(Name, "--master=chief", "--worker=trainer", "--port=30000").Obj(),
			task: "trainer",
			want: map[string]string{
				"MASTER_ADDR": "pt-chief-0.pt.default.svc.cluster.local", "MASTER_PORT": "30000", "WORLD_SIZE": "2", "RANK": "1",
				"PET_MASTER_ADDR": "pt-chief-0.pt.default.svc.cluster.local", "PET_MASTER_PORT": "30000", "PET_NNODES": "2", "PET_NODE_RANK": "1",
				"PET_NPROC_PER_NODE": "auto", "PYTHONUNBUFFERED": "1",
			},
		},
		"elastic": {
			job:  masterWorkers("--min-nodes=2", "--max-nodes=8", "--rdzv-backend=etcd-v2", "--max-restarts=5"),
			task: "worker", index: 0,
			want: func() map[string]string {
				m := base("pt-master-0.pt.default.svc.cluster.local", "4", "2:8", "auto", "1")
				m["PET_RDZV_BACKEND"] = "etcd-v2"
				m["PET_RDZV_ENDPOINT"] = "pt-master-0.pt.default.svc.cluster.local:23456"
				m["PET_RDZV_ID"] = "uid-pt"
				m["PET_MAX_RESTARTS"] = "5"
				return m
			}(),
		},
		"elastic with only a maximum": {
			job: masterWorkers("--max-nodes=6"), task: "master",
			want: func() map[string]string {
				m := base("pt-master-0.pt.default.svc.cluster.local", "4", "4:6", "auto", "0")
				m["PET_RDZV_BACKEND"] = "c10d"
				m["PET_RDZV_CONF"] = "is_host=1"
				m["PET_RDZV_ENDPOINT"] = "pt-master-0.pt.default.svc.cluster.local:23456"
				m["PET_RDZV_ID"] = "uid-pt"
				m["PET_MAX_RESTARTS"] = "3"
				return m
			}(),
		},
		"pytorchjob-port on the master overrides --port": {
			job: jobtest.MakeJob("pt").Task(mk("master", 1).Port(PortName, 29500).Obj()).
				Task(mk("worker", 1).Obj()).Plugin(Name).Obj(),
			task: "worker",
			want: map[string]string{
				"MASTER_ADDR": "pt-master-0.pt.default.svc.cluster.local", "MASTER_PORT": "29500", "WORLD_SIZE": "2", "RANK": "1",
				"PET_MASTER_ADDR": "pt-master-0.pt.default.svc.cluster.local", "PET_MASTER_PORT": "29500", "PET_NNODES": "2", "PET_NODE_RANK": "1",
				"PET_NPROC_PER_NODE": "auto", "PYTHONUNBUFFERED": "1",
			},
		},
		"template hostname and subdomain": {
			job: jobtest.MakeJob("pt").Task(mk("master", 1).Hostname("boss").Subdomain("net").Obj()).
				Task(mk("worker", 1).Obj()).Plugin(Name).Obj(),
			task: "worker", want: base("boss.net.default.svc.cluster.local", "2", "2", "auto", "1"),
		},
		// Volcano since v1.12 counts the master and worker tasks only: a
		// TensorBoard task is no rank.
		"WORLD_SIZE counts master and worker pods only": {
			job: jobtest.MakeJob("pt").Task(mk("tensorboard", 2).Obj()).Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).
				Task(mk("loader", 1).Obj()).Plugin(Name).Obj(),
			task: "worker", index: 1, want: base("pt-master-0.pt.default.svc.cluster.local", "3", "3", "auto", "2"),
		},
		"tasks that play no role are left alone": {
			job:  jobtest.MakeJob("pt").Task(mk("worker", 2).Obj()).Task(mk("tensorboard", 1).Obj()).Plugin(Name).Obj(),
			task: "tensorboard", want: map[string]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, tc.index)
			if diff := cmp.Diff(tc.want, jobtest.Env(pod, 0)); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserEnvWinsAndInitContainersGetEnv(t *testing.T) {
	job := jobtest.MakeJob("pt").
		Task(jobtest.MakeTask("master", 1).Env("MASTER_PORT", "1234").InitContainer("prepare").Obj()).
		Task(jobtest.MakeTask("worker", 1).Obj()).Plugin(Name, "--wait=false").Obj()
	pod := runPod(t, job, "master", 0)
	env := pod.Spec.Containers[0].Env
	if env[0].Name != "MASTER_PORT" || env[0].Value != "1234" {
		t.Errorf("user MASTER_PORT changed: %v", env[0])
	}
	n := 0
	for _, e := range env {
		if e.Name == "MASTER_PORT" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("MASTER_PORT appears %d times", n)
	}
	if got := jobtest.Env(&v1.Pod{Spec: v1.PodSpec{Containers: pod.Spec.InitContainers}}, 0)["RANK"]; got != "0" {
		t.Errorf("user init container RANK = %q, want 0", got)
	}
	want := []v1.ContainerPort{{Name: PortName, ContainerPort: 23456, Protocol: v1.ProtocolTCP}}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
}

func TestWaitForMaster(t *testing.T) {
	mk := jobtest.MakeTask
	withMaster := func(args ...string) *batch.Job {
		return jobtest.MakeJob("pt").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name, args...).Obj()
	}
	workerOnly := jobtest.MakeJob("pt").Task(mk("worker", 3).Obj()).Plugin(Name).Obj()
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  *v1.Container
	}{
		"worker waits for the master's name": {
			job: withMaster(), task: "worker",
			want: ptr(wait.Container([]wait.Target{{Host: "pt-master-0.pt.default.svc.cluster.local"}}, wait.Options{Enabled: true, Timeout: wait.DefaultTimeout})),
		},
		"and for its port when asked": {
			job: withMaster("--wait-master-port"), task: "worker", index: 1,
			want: ptr(wait.Container([]wait.Target{{Host: "pt-master-0.pt.default.svc.cluster.local", Port: 23456}}, wait.Options{Enabled: true, Timeout: wait.DefaultTimeout})),
		},
		// Volcano v1.14+ waits for the master's port (nc -z) when a Job
		// writes --wait-master-*: so does a Job that writes any of them here.
		"upstream wait flags wait for the master's port": {
			job: withMaster("--wait-master-enabled=true", "--wait-master-timeout=120", "--wait-master-image=busybox:1.35"), task: "worker",
			want: ptr(wait.Container([]wait.Target{{Host: "pt-master-0.pt.default.svc.cluster.local", Port: 23456}}, wait.Options{Enabled: true, Timeout: 120 * time.Second, Image: "busybox:1.35"})),
		},
		"--wait-master-enabled alone: the port, upstream's 300 s": {
			job: withMaster("--wait-master-enabled"), task: "worker", index: 1,
			want: ptr(wait.Container([]wait.Target{{Host: "pt-master-0.pt.default.svc.cluster.local", Port: 23456}}, wait.Options{Enabled: true, Timeout: 300 * time.Second})),
		},
		"--wait-master-timeout alone: the port": {
			job: withMaster("--wait-master-timeout=30"), task: "worker",
			want: ptr(wait.Container([]wait.Target{{Host: "pt-master-0.pt.default.svc.cluster.local", Port: 23456}}, wait.Options{Enabled: true, Timeout: 30 * time.Second})),
		},
		"--wait-master-image alone: the port": {
			job: withMaster("--wait-master-image=mirror/busybox"), task: "worker",
			want: ptr(wait.Container([]wait.Target{{Host: "pt-master-0.pt.default.svc.cluster.local", Port: 23456}}, wait.Options{Enabled: true, Timeout: 300 * time.Second, Image: "mirror/busybox"})),
		},
		"upstream flags and --port: that port": {
			job: withMaster("--port=29500", "--wait-master-enabled=true"), task: "worker",
			want: ptr(wait.Container([]wait.Target{{Host: "pt-master-0.pt.default.svc.cluster.local", Port: 29500}}, wait.Options{Enabled: true, Timeout: 300 * time.Second})),
		},
		"upstream flags in a worker-only job: worker 0's port": {
			job: jobtest.MakeJob("pt").Task(mk("worker", 3).Obj()).Plugin(Name, "--wait-master-enabled").Obj(), task: "worker", index: 2,
			want: ptr(wait.Container([]wait.Target{{Host: "pt-worker-0.pt.default.svc.cluster.local", Port: 23456}}, wait.Options{Enabled: true, Timeout: 300 * time.Second})),
		},
		"the master does not wait":            {job: withMaster(), task: "master"},
		"--wait-master-enabled=false":         {job: withMaster("--wait-master-enabled=false"), task: "worker"},
		"worker-only: worker 0 is the master": {job: workerOnly, task: "worker"},
		"worker-only: worker 1 waits for worker 0": {
			job: workerOnly, task: "worker", index: 1,
			want: ptr(wait.Container([]wait.Target{{Host: "pt-worker-0.pt.default.svc.cluster.local"}}, wait.Options{Enabled: true, Timeout: wait.DefaultTimeout})),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, tc.index)
			var got *v1.Container
			if len(pod.Spec.InitContainers) > 0 {
				got = &pod.Spec.InitContainers[0]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("wait container (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestRendezvousHost checks who hosts torchrun's c10d rendezvous store: the
// pod at PET_RDZV_ENDPOINT says so in PET_RDZV_CONF (is_host=1), every other
// pod says it does not (is_host=0), merged with the user's own PET_RDZV_CONF
// and never overriding a user's is_host. torchrun's own guess (endpoint host
// equal to the machine's host name or address) fails for a pod's FQDN.
func TestRendezvousHost(t *testing.T) {
	mk := jobtest.MakeTask
	elastic := func(master, worker *jobtest.TaskWrapper, args ...string) *batch.Job {
		j := jobtest.MakeJob("pt")
		if master != nil {
			j = j.Task(master.Obj())
		}
		return j.Task(worker.Obj()).Plugin(Name, append([]string{"--min-nodes=2", "--max-nodes=3"}, args...)...).Obj()
	}
	unset := "<unset>"
	cases := map[string]struct {
		job   *batch.Job
		task  string
		index int
		want  string
	}{
		"the master hosts":         {job: elastic(mk("master", 1), mk("worker", 2)), task: "master", want: "is_host=1"},
		"worker 0 does not host":   {job: elastic(mk("master", 1), mk("worker", 2)), task: "worker", want: "is_host=0"},
		"worker 1 does not host":   {job: elastic(mk("master", 1), mk("worker", 2)), task: "worker", index: 1, want: "is_host=0"},
		"worker-only: worker 0":    {job: elastic(nil, mk("worker", 3)), task: "worker", want: "is_host=1"},
		"worker-only: worker 2":    {job: elastic(nil, mk("worker", 3)), task: "worker", index: 2, want: "is_host=0"},
		"merged with the user's":   {job: elastic(mk("master", 1).Env("PET_RDZV_CONF", "read_timeout=120"), mk("worker", 2)), task: "master", want: "read_timeout=120,is_host=1"},
		"an empty user value":      {job: elastic(mk("master", 1).Env("PET_RDZV_CONF", " "), mk("worker", 2)), task: "master", want: "is_host=1"},
		"the user's is_host wins":  {job: elastic(mk("master", 1), mk("worker", 2).Env("PET_RDZV_CONF", "timeout=9, is_host = true"), "--max-nodes=3"), task: "worker", want: "timeout=9, is_host = true"},
		"not elastic":              {job: jobtest.MakeJob("pt").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(), task: "master", want: unset},
		"etcd backend":             {job: elastic(mk("master", 1), mk("worker", 2), "--rdzv-backend=etcd-v2"), task: "master", want: unset},
		"user's own backend":       {job: elastic(mk("master", 1).Env("PET_RDZV_BACKEND", "etcd"), mk("worker", 2)), task: "master", want: unset},
		"user's own endpoint":      {job: elastic(mk("master", 1).Env("PET_RDZV_ENDPOINT", "store:2379"), mk("worker", 2)), task: "master", want: unset},
		"pytorchjob-port override": {job: elastic(mk("master", 1).Port(PortName, 29400), mk("worker", 2)), task: "master", want: "is_host=1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, tc.index)
			got, ok := jobtest.Env(pod, 0)[EnvPetRdzvConf]
			if !ok {
				got = unset
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", EnvPetRdzvConf, diff)
			}
		})
	}
}

// TestRendezvousHostUserValueFrom checks that a PET_RDZV_CONF the user takes
// from elsewhere (valueFrom) is left alone: it cannot be merged.
func TestRendezvousHostUserValueFrom(t *testing.T) {
	task := jobtest.MakeTask("master", 1)
	from := &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "conf", LocalObjectReference: v1.LocalObjectReference{Name: "rdzv"}}}
	task.Template.Spec.Containers[0].Env = []v1.EnvVar{{Name: EnvPetRdzvConf, ValueFrom: from}}
	job := jobtest.MakeJob("pt").Task(task.Obj()).Task(jobtest.MakeTask("worker", 1).Obj()).Plugin(Name, "--min-nodes=1").Obj()
	pod := runPod(t, job, "master", 0)
	var got []v1.EnvVar
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == EnvPetRdzvConf {
			got = append(got, e)
		}
	}
	if diff := cmp.Diff([]v1.EnvVar{{Name: EnvPetRdzvConf, ValueFrom: from}}, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", EnvPetRdzvConf, diff)
	}
}
