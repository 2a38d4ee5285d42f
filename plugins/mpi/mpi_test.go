package mpi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// standard returns a job "mpi" with one master and two workers and the plugin's
// arguments.
func standard(args ...string) *jobtest.JobWrapper {
	return jobtest.MakeJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).
		Task(jobtest.MakeTask("worker", 2).Obj()).Plugin(Name, args...)
}

// fresh gives job a UID of its own (the test's name): the package's per-job
// cache is keyed by UID and resourceVersion, which builder jobs otherwise share.
func fresh(t *testing.T, job *batch.Job) *batch.Job {
	job.UID = types.UID(t.Name())
	return job
}

func clientset(kube *fake.Clientset) pluginsinterface.PluginClientset {
	return pluginsinterface.PluginClientset{KubeClients: kube}
}

// runPod runs OnJobAdd and then OnPodCreate, each on a fresh plugin instance as
// Volcano's controller does, and returns the pod.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	fresh(t, job)
	return jobtest.RunPod(t, New, Name, job, task, index)
}

// configMapOf returns the job's hostfile ConfigMap.
func configMapOf(t *testing.T, kube *fake.Clientset, job *batch.Job) *v1.ConfigMap {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(job.Namespace).Get(context.Background(), job.Name+"-mpi-hostfile", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("hostfile ConfigMap: %v", err)
	}
	return cm
}

func TestHostfile(t *testing.T) {
	mk := jobtest.MakeTask
	cases := map[string]struct {
		job  *batch.Job
		want string
	}{
		"open mpi by default": {
			job:  standard().Obj(),
			want: "mpi-worker-0.mpi.default.svc.cluster.local slots=1\nmpi-worker-1.mpi.default.svc.cluster.local slots=1\n",
		},
		"intel": {
			job:  standard("--mpi-implementation=intel").Obj(),
			want: "mpi-worker-0.mpi.default.svc.cluster.local:1\nmpi-worker-1.mpi.default.svc.cluster.local:1\n",
		},
		"mpich": {
			job:  standard("--mpi-implementation=mpich").Obj(),
			want: "mpi-worker-0.mpi.default.svc.cluster.local:1\nmpi-worker-1.mpi.default.svc.cluster.local:1\n",
		},
		"slots from the worker's nvidia GPUs": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 2).GPU(4).Obj()).Plugin(Name).Obj(),
			want: "mpi-worker-0.mpi.default.svc.cluster.local slots=4\nmpi-worker-1.mpi.default.svc.cluster.local slots=4\n",
		},
		"slots from another GPU resource": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 1).Resource("amd.com/gpu", "2").Obj()).
				Plugin(Name, "--mpi-implementation=mpich").Obj(),
			want: "mpi-worker-0.mpi.default.svc.cluster.local:2\n",
		},
		"GPUs of a sidecar do not count": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).
				Task(sidecarResource(mk("worker", 1), "nvidia.com/gpu", "2")).Plugin(Name).Obj(),
			want: "mpi-worker-0.mpi.default.svc.cluster.local slots=1\n",
		},
		"--slots-per-worker wins over GPUs": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 2).GPU(4).Obj()).
				Plugin(Name, "--slots-per-worker=2", "--mpi-implementation=intel").Obj(),
			want: "mpi-worker-0.mpi.default.svc.cluster.local:2\nmpi-worker-1.mpi.default.svc.cluster.local:2\n",
		},
		"launcher as worker: the master first, with its own GPUs": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(2).Obj()).Task(mk("worker", 2).GPU(8).Obj()).
				Plugin(Name, "--launcher-as-worker").Obj(),
			want: "mpi-master-0.mpi.default.svc.cluster.local slots=2\nmpi-worker-0.mpi.default.svc.cluster.local slots=8\nmpi-worker-1.mpi.default.svc.cluster.local slots=8\n",
		},
		"launcher as worker: a CPU master has one slot": {
			job:  standard("--launcher-as-worker", "--mpi-implementation=intel").Obj(),
			want: "mpi-master-0.mpi.default.svc.cluster.local:1\nmpi-worker-0.mpi.default.svc.cluster.local:1\nmpi-worker-1.mpi.default.svc.cluster.local:1\n",
		},
		"launcher as worker with --slots-per-worker": {
			job:  standard("--launcher-as-worker", "--slots-per-worker=3").Obj(),
			want: "mpi-master-0.mpi.default.svc.cluster.local slots=3\nmpi-worker-0.mpi.default.svc.cluster.local slots=3\nmpi-worker-1.mpi.default.svc.cluster.local slots=3\n",
		},
		"launcher as worker, no worker task": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(1).Obj()).Plugin(Name, "--launcher-as-worker").Obj(),
			want: "mpi-master-0.mpi.default.svc.cluster.local slots=1\n",
		},
		// Master-only MPI (Volcano v1.15): the launcher lists itself with its
		// own slots, without --launcher-as-worker.
		"master-only: the launcher with its GPUs": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(4).Obj()).Plugin(Name).Obj(),
			want: "mpi-master-0.mpi.default.svc.cluster.local slots=4\n",
		},
		"master-only, intel, --slots-per-worker": {
			job: jobtest.MakeJob("mpi").Task(mk("launcher", 1).Obj()).Task(mk("worker", 0).Obj()).
				Plugin(Name, "--master=launcher", "--mpi-implementation=intel", "--slots-per-worker=8").Obj(),
			want: "mpi-launcher-0.mpi.default.svc.cluster.local:8\n",
		},
		"template subdomain is honoured": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Subdomain("net").Obj()).Plugin(Name).Obj(),
			want: "mpi-worker-0.net.default.svc.cluster.local slots=1\nmpi-worker-1.net.default.svc.cluster.local slots=1\n",
		},
		"template hostname is one host for all replicas": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 3).Hostname("node").Subdomain("net").Obj()).
				Plugin(Name).Obj(),
			want: "node.net.default.svc.cluster.local slots=1\n",
		},
		"upstream spellings": {
			job: jobtest.MakeJob("mpi").Task(mk("mpimaster", 1).Obj()).Task(mk("mpiworker", 2).Obj()).
				Plugin(Name, "--master=mpimaster", "--worker=mpiworker", "--port=2222").Obj(),
			want: "mpi-mpiworker-0.mpi.default.svc.cluster.local slots=1\nmpi-mpiworker-1.mpi.default.svc.cluster.local slots=1\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewSimpleClientset()
			fresh(t, tc.job)
			if err := New(clientset(kube), tc.job.Spec.Plugins[Name]).OnJobAdd(tc.job); err != nil {
				t.Fatalf("OnJobAdd: %v", err)
			}
			// The other key, the wait targets, is TestWaitForWorkers'.
			got := configMapOf(t, kube, tc.job).Data[HostfileKey]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hostfile (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMasterEnv(t *testing.T) {
	mk := jobtest.MakeTask
	openMPI := func(hosts, slots, port string) []v1.EnvVar {
		return []v1.EnvVar{
			{Name: "MPI_HOST", Value: hosts},
			{Name: "OMPI_MCA_orte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
			{Name: "OMPI_MCA_orte_set_default_slots", Value: slots},
			{Name: "OMPI_MCA_plm_rsh_args", Value: "-p " + port + " -o ConnectionAttempts=10"},
			{Name: "PRTE_MCA_prte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "PRTE_MCA_prte_keep_fqdn_hostnames", Value: "true"},
			{Name: "PRTE_MCA_prte_set_default_slots", Value: slots},
			{Name: "PRTE_MCA_plm_ssh_args", Value: "-p " + port + " -o ConnectionAttempts=10"},
		}
	}
	noGPU := []v1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: ""}, {Name: "NVIDIA_DRIVER_CAPABILITIES", Value: ""}}
	workers := "mpi-worker-0.mpi.default.svc.cluster.local,mpi-worker-1.mpi.default.svc.cluster.local"
	cases := map[string]struct {
		job  *batch.Job
		want []v1.EnvVar
	}{
		"open mpi, CPU master": {
			job:  standard().Obj(),
			want: append(openMPI(workers, "1", "22"), noGPU...),
		},
		"intel": {
			job: standard("--mpi-implementation=intel", "--slots-per-worker=4").Obj(),
			want: append([]v1.EnvVar{
				{Name: "MPI_HOST", Value: workers},
				{Name: "I_MPI_HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
				{Name: "I_MPI_HYDRA_BOOTSTRAP", Value: "ssh"},
				{Name: "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", Value: "-p 22 -o ConnectionAttempts=10"},
				{Name: "I_MPI_PERHOST", Value: "4"},
				{Name: "I_MPI_HYDRA_IFACE", Value: "eth0"},
			}, noGPU...),
		},
		"mpich": {
			job: standard("--mpi-implementation=mpich", "--port=2022").Obj(),
			want: append([]v1.EnvVar{
				{Name: "MPI_HOST", Value: workers},
				{Name: "HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
				{Name: "HYDRA_LAUNCHER_EXTRA_ARGS", Value: "-p 2022 -o ConnectionAttempts=10"},
				{Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: "-p 2022 -o ConnectionAttempts=10"},
				{Name: "HYDRA_IFACE", Value: "eth0"},
			}, noGPU...),
		},
		"a GPU master keeps its GPUs": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(1).Obj()).Task(mk("worker", 2).GPU(2).Obj()).Plugin(Name).Obj(),
			want: openMPI(workers, "2", "22"),
		},
		"a GPU in any container of the master counts": {
			job: jobtest.MakeJob("mpi").Task(sidecarResource(mk("master", 1), "example.com/gpu", "1")).Task(mk("worker", 2).Obj()).
				Plugin(Name).Obj(),
			want: openMPI(workers, "1", "22"),
		},
		"launcher as worker: listed first, GPUs not hidden": {
			job:  standard("--launcher-as-worker").Obj(),
			want: openMPI("mpi-master-0.mpi.default.svc.cluster.local,"+workers, "1", "22"),
		},
		"launcher as worker without workers": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(4).Obj()).Plugin(Name, "--launcher-as-worker").Obj(),
			want: openMPI("mpi-master-0.mpi.default.svc.cluster.local", "4", "22"),
		},
		"master-only: ranks on the launcher's slots, GPUs not hidden": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(2).Obj()).Plugin(Name).Obj(),
			want: openMPI("mpi-master-0.mpi.default.svc.cluster.local", "2", "22"),
		},
		"master-only, CPU launcher: one slot, CPU not hidden from its own ranks": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Plugin(Name).Obj(),
			want: openMPI("mpi-master-0.mpi.default.svc.cluster.local", "1", "22"),
		},
		"the ssh plugin's --ssh-port without --port": {
			job:  standard().Plugin("ssh", "--ssh-port=2222").Obj(),
			want: append(openMPI(workers, "1", "2222"), noGPU...),
		},
		"upstream spellings": {
			job: jobtest.MakeJob("mpi").Task(mk("mpimaster", 1).Obj()).Task(mk("mpiworker", 3).Obj()).
				Plugin(Name, "--master=mpimaster", "--worker=mpiworker", "--port=2222").Obj(),
			want: append(openMPI("mpi-mpiworker-0.mpi.default.svc.cluster.local,mpi-mpiworker-1.mpi.default.svc.cluster.local,mpi-mpiworker-2.mpi.default.svc.cluster.local", "1", "2222"), noGPU...),
		},
		"template hostname listed once, as Volcano's in-tree plugin": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Hostname("w").Obj()).
				Plugin(Name).Obj(),
			want: append(openMPI("w.mpi.default.svc.cluster.local", "1", "22"), noGPU...),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.job.Spec.Tasks[0].Name, 0)
			if diff := cmp.Diff(tc.want, pod.Spec.Containers[0].Env); diff != "" {
				t.Errorf("master env (-want +got):\n%s", diff)
			}
		})
	}
}

// sidecarResource adds a second container "sidecar" requesting quantity of
// resource to the task.
func sidecarResource(w *jobtest.TaskWrapper, name v1.ResourceName, quantity string) batch.TaskSpec {
	task := w.Container("sidecar").Obj()
	task.Template.Spec.Containers[1].Resources.Requests = v1.ResourceList{name: resource.MustParse(quantity)}
	return task
}

func TestMasterAndWorkerPods(t *testing.T) {
	mode := int32(0o444)
	wantVolumes := []v1.Volume{{
		Name: "mpi-hostfile",
		VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "mpi-mpi-hostfile"},
			Items:                []v1.KeyToPath{{Key: "hostfile", Path: "hostfile"}, {Key: "wait-targets", Path: "wait-targets"}},
			DefaultMode:          &mode,
		}},
	}}
	wantMounts := []v1.VolumeMount{{Name: "mpi-hostfile", MountPath: "/etc/mpi", ReadOnly: true}}
	sshPort := []v1.ContainerPort{{Name: "mpijob-port", ContainerPort: 22, Protocol: v1.ProtocolTCP}}

	t.Run("master mounts the hostfile and opens no port", func(t *testing.T) {
		pod := runPod(t, standard().Obj(), "master", 0)
		if diff := cmp.Diff(wantVolumes, pod.Spec.Volumes); diff != "" {
			t.Errorf("volumes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantMounts, pod.Spec.Containers[0].VolumeMounts); diff != "" {
			t.Errorf("mounts (-want +got):\n%s", diff)
		}
		if len(pod.Spec.Containers[0].Ports) != 0 {
			t.Errorf("master ports: %v", pod.Spec.Containers[0].Ports)
		}
	})
	t.Run("workers open the ssh port and get no hostfile", func(t *testing.T) {
		pod := runPod(t, standard("--mpi-implementation=intel").Obj(), "worker", 1)
		if diff := cmp.Diff(sshPort, pod.Spec.Containers[0].Ports); diff != "" {
			t.Errorf("worker ports (-want +got):\n%s", diff)
		}
		if len(pod.Spec.Volumes) != 0 || len(pod.Spec.Containers[0].VolumeMounts) != 0 {
			t.Errorf("worker got volumes %v, mounts %v", pod.Spec.Volumes, pod.Spec.Containers[0].VolumeMounts)
		}
		if len(pod.Spec.Containers[0].Env) != 0 || len(pod.Spec.InitContainers) != 0 {
			t.Errorf("worker got env %v, init containers %v", pod.Spec.Containers[0].Env, pod.Spec.InitContainers)
		}
	})
	t.Run("upstream port", func(t *testing.T) {
		job := jobtest.MakeJob("mpi").Task(jobtest.MakeTask("mpimaster", 1).Obj()).Task(jobtest.MakeTask("mpiworker", 2).Obj()).
			Plugin(Name, "--master=mpimaster", "--worker=mpiworker", "--port=2222").Obj()
		pod := runPod(t, job, "mpiworker", 0)
		want := []v1.ContainerPort{{Name: "mpijob-port", ContainerPort: 2222, Protocol: v1.ProtocolTCP}}
		if diff := cmp.Diff(want, pod.Spec.Containers[0].Ports); diff != "" {
			t.Errorf("worker ports (-want +got):\n%s", diff)
		}
	})
	t.Run("the ssh plugin's --ssh-port is the workers' port", func(t *testing.T) {
		pod := runPod(t, standard().Plugin("ssh", "--ssh-port=2222").Obj(), "worker", 1)
		want := []v1.ContainerPort{{Name: "mpijob-port", ContainerPort: 2222, Protocol: v1.ProtocolTCP}}
		if diff := cmp.Diff(want, pod.Spec.Containers[0].Ports); diff != "" {
			t.Errorf("worker ports (-want +got):\n%s", diff)
		}
	})
	t.Run("master-only: the launcher opens the port, as with --launcher-as-worker", func(t *testing.T) {
		pod := runPod(t, jobtest.MakeJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Plugin(Name).Obj(), "master", 0)
		if diff := cmp.Diff(sshPort, pod.Spec.Containers[0].Ports); diff != "" {
			t.Errorf("master ports (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantVolumes, pod.Spec.Volumes); diff != "" {
			t.Errorf("volumes (-want +got):\n%s", diff)
		}
	})
	t.Run("launcher as worker opens the port on the master too", func(t *testing.T) {
		pod := runPod(t, standard("--launcher-as-worker").Obj(), "master", 0)
		if diff := cmp.Diff(sshPort, pod.Spec.Containers[0].Ports); diff != "" {
			t.Errorf("master ports (-want +got):\n%s", diff)
		}
	})
	t.Run("tasks that play no role are left alone", func(t *testing.T) {
		job := standard().Task(jobtest.MakeTask("monitor", 1).Obj()).Obj()
		pod := runPod(t, job, "monitor", 0)
		want := jobtest.MakePod(job, "monitor", 0).Obj()
		if diff := cmp.Diff(want, pod); diff != "" {
			t.Errorf("pod changed (-want +got):\n%s", diff)
		}
	})
}

// TestDNSSearchPath: with Intel MPI and MPICH, the master's and the workers'
// pods search the Service domain of the job's subdomain, so that the
// launcher's short host name (what Hydra's proxies connect back to) resolves.
func TestDNSSearchPath(t *testing.T) {
	mk := jobtest.MakeTask
	searches := func(s ...string) *v1.PodDNSConfig { return &v1.PodDNSConfig{Searches: s} }
	cases := map[string]struct {
		job  *batch.Job
		task string
		want *v1.PodDNSConfig
	}{
		"openmpi: no change": {job: standard().Obj(), task: "worker"},
		"mpich master": {
			job: standard("--mpi-implementation=mpich").Namespace("team-a").Obj(), task: "master",
			want: searches("mpi.team-a.svc.cluster.local"),
		},
		"mpich worker": {
			job: standard("--mpi-implementation=mpich").Namespace("team-a").Obj(), task: "worker",
			want: searches("mpi.team-a.svc.cluster.local"),
		},
		"intel with another cluster domain": {
			job: standard("--mpi-implementation=intel", "--cluster-domain=k8s.corp.example").Obj(), task: "worker",
			want: searches("mpi.default.svc.k8s.corp.example"),
		},
		"a task's own subdomain, the master's first": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).Subdomain("ctl").Obj()).Task(mk("worker", 2).Obj()).
				Plugin(Name, "--mpi-implementation=mpich").Obj(),
			task: "worker",
			want: searches("ctl.default.svc.cluster.local", "mpi.default.svc.cluster.local"),
		},
		"the user's dnsConfig is kept and the domain added after it": {
			job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).
				Task(mk("worker", 2).DNSSearches("corp.example", "mpi.default.svc.cluster.local").Obj()).
				Plugin(Name, "--mpi-implementation=mpich").Obj(),
			task: "worker",
			want: searches("corp.example", "mpi.default.svc.cluster.local"),
		},
		"other tasks: no change": {
			job: standard("--mpi-implementation=mpich").Task(mk("monitor", 1).Obj()).Obj(), task: "monitor",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := runPod(t, tc.job, tc.task, 0)
			if diff := cmp.Diff(tc.want, pod.Spec.DNSConfig); diff != "" {
				t.Errorf("dnsConfig of %s-0 (-want +got):\n%s", tc.task, diff)
			}
		})
	}
}

func TestUserSettingsWin(t *testing.T) {
	job := jobtest.MakeJob("mpi").
		Task(jobtest.MakeTask("master", 1).Env("MPI_HOST", "mine").Env("OMPI_MCA_plm_rsh_args", "-o Port=2200").
			Container("sidecar").InitContainer("prepare").Obj()).
		Task(jobtest.MakeTask("worker", 2).Port("ssh", 22).Obj()).
		Plugin(Name).Obj()
	userMount := v1.VolumeMount{Name: "own", MountPath: "/etc/mpi"}
	job.Spec.Tasks[0].Template.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{userMount}

	master := runPod(t, job, "master", 0)
	env := jobtest.Env(master, 0)
	if env["MPI_HOST"] != "mine" || env["OMPI_MCA_plm_rsh_args"] != "-o Port=2200" {
		t.Errorf("user variables overwritten: MPI_HOST=%q OMPI_MCA_plm_rsh_args=%q", env["MPI_HOST"], env["OMPI_MCA_plm_rsh_args"])
	}
	for _, c := range append(append([]v1.Container{}, master.Spec.InitContainers...), master.Spec.Containers...) {
		if c.Name == wait.ContainerName {
			continue
		}
		for _, name := range []string{"MPI_HOST", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_default_hostfile"} {
			if n := jobtest.CountEnv(c.Env, name); n != 1 {
				t.Errorf("container %s: %s appears %d times", c.Name, name, n)
			}
		}
	}
	if diff := cmp.Diff([]v1.VolumeMount{userMount}, master.Spec.Containers[1].VolumeMounts); diff != "" {
		t.Errorf("the sidecar's own mount at /etc/mpi must stay (-want +got):\n%s", diff)
	}
	if n := len(master.Spec.Containers[0].VolumeMounts); n != 1 {
		t.Errorf("main container has %d mounts, want the hostfile", n)
	}

	worker := runPod(t, job, "worker", 0)
	wantPorts := []v1.ContainerPort{{Name: "ssh", ContainerPort: 22}}
	if diff := cmp.Diff(wantPorts, worker.Spec.Containers[0].Ports); diff != "" {
		t.Errorf("the user's own ssh port must stay alone (-want +got):\n%s", diff)
	}

	// Running the hook twice on the same pod adds nothing more.
	client := clientset(fake.NewSimpleClientset())
	if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(master, job); err != nil {
		t.Fatal(err)
	}
	if n := jobtest.CountEnv(master.Spec.Containers[0].Env, "OMPI_MCA_orte_default_hostfile"); n != 1 {
		t.Errorf("second OnPodCreate: variable appears %d times", n)
	}
	if len(master.Spec.Volumes) != 1 || countInit(master, wait.ContainerName) != 1 {
		t.Errorf("second OnPodCreate: volumes %v, init containers %v", master.Spec.Volumes, master.Spec.InitContainers)
	}
}

func countInit(pod *v1.Pod, name string) int {
	n := 0
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			n++
		}
	}
	return n
}

// The master's wait container reads the workers' ssh endpoints from the
// hostfile ConfigMap's WaitTargetsKey, mounted with the hostfile: the list
// stays out of the pod spec.
func TestWaitForWorkers(t *testing.T) {
	mk := jobtest.MakeTask
	cases := map[string]struct {
		job         *batch.Job
		task        string
		wantTargets []wait.Target // nil: no wait container
	}{
		"master waits for every worker's ssh port": {
			job:         jobtest.MakeJob("mpi").Task(mk("master", 1).InitContainer("user-init").Obj()).Task(mk("worker", 3).Obj()).Plugin(Name, "--port=2222").Obj(),
			task:        "master",
			wantTargets: []wait.Target{{Host: "mpi-worker-0.mpi.default.svc.cluster.local", Port: 2222}, {Host: "mpi-worker-1.mpi.default.svc.cluster.local", Port: 2222}, {Host: "mpi-worker-2.mpi.default.svc.cluster.local", Port: 2222}},
		},
		"launcher as worker waits for the workers only": {
			job:         standard("--launcher-as-worker").Obj(),
			task:        "master",
			wantTargets: []wait.Target{{Host: "mpi-worker-0.mpi.default.svc.cluster.local", Port: 22}, {Host: "mpi-worker-1.mpi.default.svc.cluster.local", Port: 22}},
		},
		"the ssh plugin's --ssh-port without --port": {
			job:         standard().Plugin("ssh", "--ssh-key-file-path=/home/mpiuser/.ssh", "--ssh-port=2200").Obj(),
			task:        "master",
			wantTargets: []wait.Target{{Host: "mpi-worker-0.mpi.default.svc.cluster.local", Port: 2200}, {Host: "mpi-worker-1.mpi.default.svc.cluster.local", Port: 2200}},
		},
		"master-only waits for none":              {job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Plugin(Name).Obj(), task: "master"},
		"workers do not wait":                     {job: standard().Obj(), task: "worker"},
		"--wait=false switches it off":            {job: standard("--wait=false").Obj(), task: "master"},
		"launcher as worker alone waits for none": {job: jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Plugin(Name, "--launcher-as-worker").Obj(), task: "master"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewSimpleClientset()
			job := fresh(t, tc.job)
			plugin := New(clientset(kube), job.Spec.Plugins[Name])
			if err := plugin.OnJobAdd(job); err != nil {
				t.Fatal(err)
			}
			pod := jobtest.MakePod(job, tc.task, 0).Obj()
			if err := plugin.OnPodCreate(pod, job); err != nil {
				t.Fatal(err)
			}
			hasWait := len(pod.Spec.InitContainers) > 0 && pod.Spec.InitContainers[0].Name == wait.ContainerName
			if hasWait != (tc.wantTargets != nil) {
				t.Fatalf("wait container present = %v, want %v (init containers %v)", hasWait, tc.wantTargets != nil, pod.Spec.InitContainers)
			}
			data := configMapOf(t, kube, job).Data
			if tc.task == "master" {
				// Both keys, always projected: the data always has both.
				wantItems := []v1.KeyToPath{{Key: HostfileKey, Path: HostfileKey}, {Key: WaitTargetsKey, Path: WaitTargetsKey}}
				if diff := cmp.Diff(wantItems, pod.Spec.Volumes[0].ConfigMap.Items); diff != "" {
					t.Errorf("volume items (-want +got):\n%s", diff)
				}
			}
			if !hasWait {
				if v, ok := data[WaitTargetsKey]; !ok || (v != "" && tc.task == "master") {
					t.Errorf("ConfigMap key %s = %q (present %v), want it empty without a wait container", WaitTargetsKey, v, ok)
				}
				return
			}
			want := wait.FileContainer("/etc/mpi/wait-targets", v1.VolumeMount{Name: VolumeName, MountPath: "/etc/mpi", ReadOnly: true},
				wait.Options{Enabled: true, Timeout: wait.DefaultTimeout})
			if diff := cmp.Diff(want, pod.Spec.InitContainers[0]); diff != "" {
				t.Errorf("wait container (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wait.TargetsFile(tc.wantTargets), data[WaitTargetsKey]); diff != "" {
				t.Errorf("ConfigMap key %s (-want +got):\n%s", WaitTargetsKey, diff)
			}
			if len(pod.Spec.InitContainers) > 1 && pod.Spec.InitContainers[1].Name != "user-init" {
				t.Errorf("user init container must follow the wait container: %v", pod.Spec.InitContainers)
			}
		})
	}
}

func TestJobHooksAreIdempotent(t *testing.T) {
	kube := fake.NewSimpleClientset()
	job := fresh(t, standard().Obj())
	for i := 0; i < 2; i++ {
		if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
			t.Fatalf("OnJobAdd #%d: %v", i+1, err)
		}
	}
	cms, err := kube.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 1 {
		t.Fatalf("got %d ConfigMaps, want 1", len(cms.Items))
	}
	cm := cms.Items[0]
	want := metav1.ObjectMeta{
		Name:      "mpi-mpi-hostfile",
		Namespace: "default",
		Labels:    map[string]string{"volcano.sh/job-name": "mpi"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "mpi", UID: types.UID(t.Name()),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}
	if diff := cmp.Diff(want, cm.ObjectMeta); diff != "" {
		t.Errorf("ConfigMap metadata (-want +got):\n%s", diff)
	}
	wantData := map[string]string{
		"hostfile":     "mpi-worker-0.mpi.default.svc.cluster.local slots=1\nmpi-worker-1.mpi.default.svc.cluster.local slots=1\n",
		"wait-targets": "mpi-worker-0.mpi.default.svc.cluster.local:22\nmpi-worker-1.mpi.default.svc.cluster.local:22\n",
	}
	if diff := cmp.Diff(wantData, cm.Data); diff != "" {
		t.Errorf("ConfigMap data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"plugin-mpi": "mpi"}, job.Status.ControlledResources); diff != "" {
		t.Errorf("after OnJobAdd (-want +got):\n%s", diff)
	}

	for i := 0; i < 2; i++ {
		if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobDelete(job); err != nil {
			t.Fatalf("OnJobDelete #%d: %v", i+1, err)
		}
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), "mpi-mpi-hostfile", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after OnJobDelete the ConfigMap must be gone, got %v", err)
	}
	if len(job.Status.ControlledResources) != 0 {
		t.Errorf("after OnJobDelete: %v", job.Status.ControlledResources)
	}
}

func TestOnJobUpdateRewritesHostfile(t *testing.T) {
	kube := fake.NewSimpleClientset()
	job := fresh(t, standard("--mpi-implementation=mpich").Obj())
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
		t.Fatal(err)
	}

	// A status update (new resourceVersion, same generation) within
	// ownedcm.Recheck: no API call at all.
	job.Generation = 1
	job.ResourceVersion = "1a"
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
		t.Fatal(err)
	}
	kube.ClearActions()
	job.ResourceVersion = "1b"
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
		t.Fatal(err)
	}
	if got := kube.Actions(); len(got) != 0 {
		t.Errorf("status update: %d API calls, want none: %v", len(got), got)
	}
	// Later the ConfigMap is read again, not written.
	defer func(orig func() time.Time) { hostfileCM.Now = orig }(hostfileCM.Now)
	hostfileCM.Now = func() time.Time { return time.Now().Add(ownedcm.Recheck) }
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
		t.Fatal(err)
	}
	if got := kube.Actions(); len(got) != 1 || got[0].GetVerb() != "get" {
		t.Errorf("after %s: API calls %v, want one get", ownedcm.Recheck, got)
	}

	// Scaled to three workers (a new generation of the Job).
	job.Spec.Tasks[1].Replicas = 3
	job.Generation = 2
	job.ResourceVersion = "2"
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"hostfile":     "mpi-worker-0.mpi.default.svc.cluster.local:1\nmpi-worker-1.mpi.default.svc.cluster.local:1\nmpi-worker-2.mpi.default.svc.cluster.local:1\n",
		"wait-targets": "mpi-worker-0.mpi.default.svc.cluster.local:22\nmpi-worker-1.mpi.default.svc.cluster.local:22\nmpi-worker-2.mpi.default.svc.cluster.local:22\n",
	}
	if diff := cmp.Diff(want, configMapOf(t, kube, job).Data); diff != "" {
		t.Errorf("hostfile after scaling (-want +got):\n%s", diff)
	}
	// The master's MPI_HOST follows as well.
	pod := jobtest.MakePod(job, "master", 0).Obj()
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnPodCreate(pod, job); err != nil {
		t.Fatal(err)
	}
	if got := jobtest.Env(pod, 0)["MPI_HOST"]; got != "mpi-worker-0.mpi.default.svc.cluster.local,mpi-worker-1.mpi.default.svc.cluster.local,mpi-worker-2.mpi.default.svc.cluster.local" {
		t.Errorf("MPI_HOST after scaling = %q", got)
	}

	// OnJobUpdate also recreates a hostfile that went missing, once
	// ownedcm.Recheck has passed since it last checked.
	if err := kube.CoreV1().ConfigMaps("default").Delete(context.Background(), "mpi-mpi-hostfile", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), "mpi-mpi-hostfile", metav1.GetOptions{}); err == nil {
		t.Error("recreated within the recheck interval; want it left to the next check")
	}
	hostfileCM.Now = func() time.Time { return time.Now().Add(2 * ownedcm.Recheck) }
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, configMapOf(t, kube, job).Data); diff != "" {
		t.Errorf("recreated hostfile (-want +got):\n%s", diff)
	}
}

// While a Job is Pending Volcano calls OnJobAdd on every sync: within
// ownedcm.Recheck they make no API call. OnJobDelete (also on a restart)
// makes the next OnJobAdd create the ConfigMap again.
func TestOnJobAddRepeatedAndAfterDelete(t *testing.T) {
	kube := fake.NewSimpleClientset()
	job := fresh(t, standard().Obj())
	job.Generation = 1
	add := func() {
		t.Helper()
		if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
			t.Fatal(err)
		}
	}
	add()
	kube.ClearActions()
	for i := 0; i < 3; i++ {
		job.ResourceVersion = fmt.Sprintf("sync-%d", i)
		add()
	}
	if got := kube.Actions(); len(got) != 0 {
		t.Errorf("repeated OnJobAdd: %d API calls, want none: %v", len(got), got)
	}
	if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobDelete(job); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), ConfigMapName(job), metav1.GetOptions{}); err == nil {
		t.Fatal("ConfigMap still there after OnJobDelete")
	}
	add()
	if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), ConfigMapName(job), metav1.GetOptions{}); err != nil {
		t.Errorf("OnJobAdd after OnJobDelete: %v", err)
	}
}

// A ConfigMap of the hostfile's name that the Job does not control is never
// touched, and no launcher is prepared against it: the hooks that lead to pod
// creation return a *ConflictError (Volcano then creates no pods and ends the
// Job after its retries), OnJobDelete does not, and one event names it.
func TestConfigMapOwnedByAnother(t *testing.T) {
	foreign := &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "mpi-mpi-hostfile", Namespace: "default", ResourceVersion: "7"},
		Data:       map[string]string{"hostfile": "mine slots=4\n"},
	}
	type hook func(p pluginsinterface.PluginInterface, job *batch.Job, pod *v1.Pod) error
	onJobAdd := func(p pluginsinterface.PluginInterface, job *batch.Job, _ *v1.Pod) error { return p.OnJobAdd(job) }
	onJobUpdate := func(p pluginsinterface.PluginInterface, job *batch.Job, _ *v1.Pod) error { return p.OnJobUpdate(job) }
	onJobDelete := func(p pluginsinterface.PluginInterface, job *batch.Job, _ *v1.Pod) error { return p.OnJobDelete(job) }
	onPodCreate := func(p pluginsinterface.PluginInterface, job *batch.Job, pod *v1.Pod) error {
		return p.OnPodCreate(pod, job)
	}
	cases := map[string]struct {
		// ours: the Job's own ConfigMap was checked (OnJobAdd) before the
		// foreign one replaced it, within ownedcm.Recheck.
		ours     bool
		hook     hook
		task     string
		conflict bool
	}{
		"OnJobAdd":                             {hook: onJobAdd, conflict: true},
		"OnJobUpdate":                          {hook: onJobUpdate, conflict: true},
		"OnPodCreate master":                   {hook: onPodCreate, task: "master", conflict: true},
		"OnPodCreate master after our check":   {ours: true, hook: onPodCreate, task: "master", conflict: true},
		"OnPodCreate worker":                   {hook: onPodCreate, task: "worker"},
		"OnJobDelete leaves it, without error": {hook: onJobDelete},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewSimpleClientset()
			job := fresh(t, standard().Obj())
			if tc.ours {
				if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
					t.Fatal(err)
				}
				if err := kube.CoreV1().ConfigMaps("default").Delete(context.Background(), foreign.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := kube.CoreV1().ConfigMaps("default").Create(context.Background(), foreign.DeepCopy(), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			task := tc.task
			if task == "" {
				task = "master"
			}
			pod := jobtest.MakePod(job, task, 0).Obj()
			err := tc.hook(New(clientset(kube), job.Spec.Plugins[Name]), job, pod)

			var conflict *ConflictError
			if got := errors.As(err, &conflict); got != tc.conflict || (!tc.conflict && err != nil) {
				t.Fatalf("error = %v, want a *ConflictError: %v", err, tc.conflict)
			}
			if tc.task == "master" {
				if diff := cmp.Diff(jobtest.MakePod(job, "master", 0).Obj(), pod); diff != "" {
					t.Errorf("master prepared against the foreign ConfigMap (-want +got):\n%s", diff)
				}
			}
			cm, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), foreign.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the foreign ConfigMap must stay: %v", err)
			}
			if diff := cmp.Diff(foreign.Data, cm.Data); diff != "" || cm.OwnerReferences != nil {
				t.Errorf("foreign ConfigMap changed (-want +got):\n%s%v", diff, cm.OwnerReferences)
			}
			var got []string
			for _, ev := range jobtest.Events(t, kube) {
				got = append(got, ev.Type+" "+ev.Reason+" "+ev.InvolvedObject.Name+": "+ev.Message)
			}
			var want []string
			if tc.task != "worker" {
				want = []string{"Warning " + events.ReasonConfigMapConflict + " mpi: plugin mpi: ConfigMap default/mpi-mpi-hostfile exists and is not controlled by Job mpi; rename or delete it; " +
					"it would be the launcher's hostfile, so the plugin does not overwrite it and the Job's pods are not created while it is there (Volcano retries, then terminates the Job)"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransientErrorsAreReturned(t *testing.T) {
	for _, verb := range []string{"get", "create", "update", "delete"} {
		t.Run(verb, func(t *testing.T) {
			kube := fake.NewSimpleClientset()
			job := fresh(t, standard().Obj())
			if verb == "update" || verb == "delete" {
				// Needs an existing, outdated ConfigMap of the Job.
				if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
					t.Fatal(err)
				}
				job.Spec.Tasks[1].Replicas = 3
				job.ResourceVersion = "2"
			}
			if verb == "get" {
				// A started Job's ConfigMap is read first; a new Job's is
				// created without a read (ownedcm.CreateOrApply).
				job.Status.State.Phase = batch.Running
			}
			boom := apierrors.NewServiceUnavailable("etcd is away")
			kube.PrependReactor(verb, "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, boom
			})
			var err error
			if verb == "delete" {
				err = New(clientset(kube), job.Spec.Plugins[Name]).OnJobDelete(job)
			} else {
				err = New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job)
			}
			if !errors.Is(err, boom) {
				t.Errorf("error = %v, want %v", err, boom)
			}
		})
	}
}

func TestInvalidArguments(t *testing.T) {
	kube := fake.NewSimpleClientset()
	job := fresh(t, standard("--mpi-implementation=openmpi4").Obj())
	for i := 0; i < 3; i++ {
		if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
			t.Fatalf("OnJobAdd must not return an error Volcano would retry: %v", err)
		}
		if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
			t.Fatalf("OnJobUpdate: %v", err)
		}
	}
	cms, err := kube.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 0 {
		t.Errorf("invalid arguments created %d ConfigMaps", len(cms.Items))
	}
	for _, task := range []string{"master", "worker"} {
		pod := jobtest.MakePod(job, task, 0).Obj()
		if err := New(clientset(kube), job.Spec.Plugins[Name]).OnPodCreate(pod, job); err != nil {
			t.Fatalf("OnPodCreate: %v", err)
		}
		if diff := cmp.Diff(jobtest.MakePod(job, task, 0).Obj(), pod); diff != "" {
			t.Errorf("%s pod changed despite invalid arguments (-want +got):\n%s", task, diff)
		}
	}
	evs, err := kube.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 {
		t.Fatalf("got %d events, want 1", len(evs.Items))
	}
	ev := evs.Items[0]
	want := `spec.plugins[mpi][0]: Invalid value: "--mpi-implementation=openmpi4": plugin mpi: --mpi-implementation=openmpi4: must be one of openmpi, intel, mpich`
	if ev.Type != v1.EventTypeWarning || ev.Reason != events.ReasonInvalidArguments || ev.Message != want {
		t.Errorf("event = %s %s %q, want Warning %s %q", ev.Type, ev.Reason, ev.Message, events.ReasonInvalidArguments, want)
	}
}

// TestWorkerPodCostIsConstant checks that the per-job data is computed once:
// preparing a worker pod costs the same for 2 workers as for 2000.
func TestWorkerPodCostIsConstant(t *testing.T) {
	allocs := func(workers int32) float64 {
		job := jobtest.MakeJob(fmt.Sprintf("cost-%d", workers)).Task(jobtest.MakeTask("master", 1).Obj()).
			Task(jobtest.MakeTask("worker", workers).Obj()).Plugin(Name).Obj()
		client := clientset(fake.NewSimpleClientset())
		template := jobtest.MakePod(job, "worker", 1).Obj()
		run := func() {
			pod := template.DeepCopy()
			if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(pod, job); err != nil {
				t.Fatal(err)
			}
		}
		run() // computes and caches the plan
		return testing.AllocsPerRun(20, run)
	}
	small, large := allocs(2), allocs(2000)
	if large > small {
		t.Errorf("worker OnPodCreate allocates %.0f times for 2000 workers, %.0f for 2", large, small)
	}
}

// Volcano's builder (New) reuses the plan of a Job's UID and generation;
// admission's (Framework.NewUncached) builds from the Job it is given, as a
// denied update and its corrected retry share both.
func TestUncachedPlanFollowsTheJob(t *testing.T) {
	mk := jobtest.MakeTask
	at := func(workers int32) *batch.Job {
		job := fresh(t, jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", workers).Obj()).Plugin(Name).Obj())
		job.Generation = 2
		return job
	}
	mpiHost := func(build func(pluginsinterface.PluginClientset, []string) pluginsinterface.PluginInterface, job *batch.Job) string {
		pod := jobtest.MakePod(job, "master", 0).Obj()
		if err := build(pluginsinterface.PluginClientset{}, job.Spec.Plugins[Name]).OnPodCreate(pod, job); err != nil {
			t.Fatal(err)
		}
		return jobtest.Env(pod, 0)[EnvMPIHost]
	}
	two, three := "mpi-worker-0.mpi.default.svc.cluster.local,mpi-worker-1.mpi.default.svc.cluster.local", "mpi-worker-0.mpi.default.svc.cluster.local,mpi-worker-1.mpi.default.svc.cluster.local,mpi-worker-2.mpi.default.svc.cluster.local"
	if got := mpiHost(New, at(2)); got != two {
		t.Fatalf("MPI_HOST = %q, want %q", got, two)
	}
	if got := mpiHost(New, at(3)); got != two {
		t.Errorf("cached builder: MPI_HOST = %q, want the cached plan's %q", got, two)
	}
	if got := mpiHost(Framework.NewUncached, at(3)); got != three {
		t.Errorf("uncached builder: MPI_HOST = %q, want %q", got, three)
	}
}

// The hostfile, MPI_HOST, the launcher's wait targets and the DNS search path
// name hosts in one cluster domain: --cluster-domain, else the manager's
// (jobs.SetClusterDomain).
func TestClusterDomainAgrees(t *testing.T) {
	defer func() { _ = jobs.SetClusterDomain("") }()
	type names struct {
		Hostfile, MPIHost, WaitTargets string
		Searches                       []string
	}
	want := func(domain string) names {
		w := func(i int) string { return fmt.Sprintf("mpi-worker-%d.mpi.team-a.svc.%s", i, domain) }
		return names{
			Hostfile:    w(0) + ":1\n" + w(1) + ":1\n",
			MPIHost:     w(0) + "," + w(1),
			WaitTargets: w(0) + ":22\n" + w(1) + ":22\n",
			Searches:    []string{"mpi.team-a.svc." + domain},
		}
	}
	cases := map[string]struct {
		process string // the manager's --cluster-domain
		args    []string
		want    names
	}{
		"default":               {want: want("cluster.local")},
		"the manager's domain":  {process: "corp.internal", want: want("corp.internal")},
		"--cluster-domain":      {args: []string{"--cluster-domain=k8s.corp.example"}, want: want("k8s.corp.example")},
		"--cluster-domain wins": {process: "corp.internal", args: []string{"--cluster-domain=k8s.corp.example"}, want: want("k8s.corp.example")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := jobs.SetClusterDomain(tc.process); err != nil {
				t.Fatal(err)
			}
			job := fresh(t, standard(append([]string{"--mpi-implementation=intel"}, tc.args...)...).Namespace("team-a").Obj())
			kube := fake.NewSimpleClientset()
			if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
				t.Fatalf("OnJobAdd: %v", err)
			}
			cm := configMapOf(t, kube, job)
			master := jobtest.RunPod(t, New, Name, job, "master", 0)
			got := names{Hostfile: cm.Data[HostfileKey], MPIHost: jobtest.Env(master, 0)[EnvMPIHost], WaitTargets: cm.Data[WaitTargetsKey]}
			if master.Spec.DNSConfig != nil {
				got.Searches = master.Spec.DNSConfig.Searches
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hosts (-want +got):\n%s", diff)
			}
		})
	}
}

// A hostfile that a ConfigMap cannot hold with the wait targets is written
// as ranges: the ConfigMap keeps a few bytes a task, the master's first init
// container expands them into an emptyDir at ConfigDir, where the launcher
// variables and the wait container look; what it writes (wait.ExpandRanges,
// whose script TestRangesContainerExpands runs in busybox) is exactly the
// hostfile and the wait targets of a small Job. MPI_HOST, over a MiB, is
// left out. A Job whose hostfile fits is as before (TestHostfile).
func TestHostfileRanges(t *testing.T) {
	mk := jobtest.MakeTask
	long := "llama-70b-sft-lr-sweep-7-of-32-20261204-a1b2c3"
	for name, tc := range map[string]struct {
		job           *batch.Job
		hostfileLines int
		targetLines   int
	}{
		// 2,738,890 bytes of hostfile: over a ConfigMap alone.
		"50,000 workers, no wait": {jobtest.MakeJob("big").Task(mk("master", 1).Obj()).Task(mk("worker", 50000).Obj()).Plugin(Name, "--wait=false").Obj(), 50000, 0},
		// Each fits; with the wait targets they do not.
		"11,000 workers": {jobtest.MakeJob("big").Task(mk("master", 1).Obj()).Task(mk("worker", 11000).Obj()).Plugin(Name).Obj(), 11000, 11000},
		"8,192 workers, Intel MPI, launcher as worker, 46-character name": {jobtest.MakeJob(long).Namespace("ml-training").Task(mk("master", 1).Obj()).
			Task(mk("worker", 8192).Obj()).Plugin(Name, "--mpi-implementation=intel", "--launcher-as-worker", "--slots-per-worker=8").Obj(), 8193, 8192},
	} {
		t.Run(name, func(t *testing.T) {
			job := fresh(t, tc.job)
			a, errs := ParseArgs(job.Spec.Plugins[Name], job)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			kube := fake.NewSimpleClientset()
			if err := New(clientset(kube), job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
				t.Fatal(err)
			}
			cm := configMapOf(t, kube, job)
			total := 0
			for _, v := range cm.Data {
				total += len(v)
			}
			if total > 1024 || cm.Data[HostfileKey] != "" || cm.Data[WaitTargetsKey] != "" {
				t.Errorf("ConfigMap data of %d bytes, hostfile %d, wait targets %d; want ranges of at most 1 KiB alone",
					total, len(cm.Data[HostfileKey]), len(cm.Data[WaitTargetsKey]))
			}
			hostfile := expandRangesFile(t, cm.Data[HostfileRangesKey])
			if hostfile != Hostfile(job, a) {
				t.Errorf("the expanded hostfile differs from Hostfile (%d and %d bytes)", len(hostfile), len(Hostfile(job, a)))
			}
			if n := strings.Count(hostfile, "\n"); n != tc.hostfileLines {
				t.Errorf("hostfile of %d lines, want %d", n, tc.hostfileLines)
			}
			var targets []wait.Target
			for _, w := range describe(a, job).Waits {
				targets = append(targets, framework.WaitTargets(job, w)...)
			}
			if got, want := expandRangesFile(t, cm.Data[WaitTargetRangesKey]), wait.TargetsFile(targets); got != want {
				t.Errorf("the expanded wait targets differ from wait.TargetsFile (%d and %d bytes)", len(got), len(want))
			}
			if len(targets) != tc.targetLines {
				t.Errorf("%d wait targets, want %d", len(targets), tc.targetLines)
			}

			pod := jobtest.RunPod(t, New, Name, job, "master", 0)
			if len(pod.Spec.InitContainers) == 0 || pod.Spec.InitContainers[0].Name != HostfileContainerName {
				t.Fatalf("init containers %v, want %s first", containerNames(pod.Spec.InitContainers), HostfileContainerName)
			}
			if w := countInit(pod, wait.ContainerName); (w == 1) != (tc.targetLines > 0) || (w == 1 && pod.Spec.InitContainers[1].Name != wait.ContainerName) {
				t.Errorf("init containers %v: the wait container must follow %s while the master waits", containerNames(pod.Spec.InitContainers), HostfileContainerName)
			}
			vols := map[string]v1.VolumeSource{}
			for _, v := range pod.Spec.Volumes {
				vols[v.Name] = v.VolumeSource
			}
			if vols[VolumeName].EmptyDir == nil || vols[RangesVolumeName].ConfigMap == nil || vols[RangesVolumeName].ConfigMap.Name != ConfigMapName(job) {
				t.Errorf("volumes %v: want %s an emptyDir and %s the ConfigMap", vols, VolumeName, RangesVolumeName)
			}
			c := pod.Spec.InitContainers[0]
			wantMounts := []v1.VolumeMount{{Name: RangesVolumeName, MountPath: RangesDir, ReadOnly: true}, {Name: VolumeName, MountPath: ConfigDir}}
			if diff := cmp.Diff(wantMounts, c.VolumeMounts); diff != "" {
				t.Errorf("%s's mounts (-want +got):\n%s", c.Name, diff)
			}
			for _, m := range pod.Spec.Containers[0].VolumeMounts {
				if m.Name == RangesVolumeName {
					t.Errorf("the launcher mounts the ranges")
				}
			}
			for _, e := range pod.Spec.Containers[0].Env {
				if e.Name == EnvMPIHost {
					t.Errorf("MPI_HOST of %d bytes given", len(e.Value))
				}
			}
		})
	}
}

// expandRangesFile parses a wait.RangesFile as the hostfile container's
// script reads it and returns wait.ExpandRanges of it.
func expandRangesFile(t *testing.T, file string) string {
	t.Helper()
	var ranges []wait.Range
	for _, line := range strings.Split(strings.TrimSuffix(file, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Fatalf("ranges line %q", line)
		}
		r := wait.Range{Prefix: f[1], Suffix: f[2]}
		if f[0] != "=" {
			n, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatalf("ranges line %q: %v", line, err)
			}
			r.Count, r.Indexed = n, true
		}
		ranges = append(ranges, r)
	}
	return wait.ExpandRanges(ranges)
}

func containerNames(cs []v1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
