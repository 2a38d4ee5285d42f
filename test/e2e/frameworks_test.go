package e2e

import (
	"context"
	"encoding/json"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// The wait container every framework plugin adds, as the controller of the
// local cluster (--wait-image=localcluster.WaitImage) makes it.
const (
	waitContainer        = "wait-for-dependencies"
	waitImage            = localcluster.WaitImage
	waitTimeoutSeconds   = "600"
	waitTargetsVariable  = "WAIT_TARGETS"
	waitFileVariable     = "WAIT_TARGETS_FILE"
	waitTimeoutVariable  = "WAIT_TIMEOUT_SECONDS"
	annotationExpectDeny = "e2e.vcplugins.io/expect-denied"
	// annotationExpectWarn marks a Job of testdata/invalid that Volcano's own
	// admission accepts: ours admits it too, with this in a warning.
	annotationExpectWarn = "e2e.vcplugins.io/expect-warned"
)

// containsSubstring reports whether one of list contains sub.
func containsSubstring(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// exampleFiles are the examples of the frameworks (plugins.Frameworks),
// example/<name>/<name>.yaml relative to the module root.
var exampleFiles = func() []string {
	var out []string
	for _, name := range plugins.Names() {
		out = append(out, path.Join("example", name, name+".yaml"))
	}
	return out
}()

func loadExamples() []*batch.Job {
	out := make([]*batch.Job, len(exampleFiles))
	for i, f := range exampleFiles {
		out[i] = framework.LoadJob(f)
	}
	return out
}

// wantPod is what a plugin must have written into one pod of an example.
type wantPod struct {
	name      string
	container string
	// env is the container's whole literal environment (the examples set none
	// of their own; svc's valueFrom variables are not literal).
	env map[string]string
	// port is the named port the plugin opens on the first container ("" none).
	portName string
	port     int32
	// waitTargets is the WAIT_TARGETS of the wait container, which must be the
	// pod's first (and only) init container; "" means no init container.
	waitTargets string
	// waitFile, if set, is the wait container's WAIT_TARGETS_FILE instead: its
	// targets are waitTargets, one per line, in the ConfigMap it mounts there
	// (which a completed Job's plugins have deleted: the ownership spec reads
	// it).
	waitFile string
}

// Expected hosts are <hostname>.<subdomain>.{ns}.svc.cluster.local: the
// plugins name the Job's namespace, which each spec creates; inNamespace
// puts it in place of {ns}.
const nsPlaceholder = "{ns}"

// inNamespace returns s with the namespace ns in place of {ns}.
func inNamespace(s, ns string) string { return strings.ReplaceAll(s, nsPlaceholder, ns) }

// inNamespaceEnv is inNamespace on every value of env.
func inNamespaceEnv(env map[string]string, ns string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = inNamespace(v, ns)
	}
	return out
}

// The cluster in TF_CONFIG of the tensorflow example (tf-dist: 1 ps, 2
// workers, port 2222): 111 bytes plus 3 times .<namespace>.svc.cluster.local
// (some 230 in a spec's namespace), so the default --tf-config=auto inlines
// it (tensorflow.AutoInlineMaxBytes).
const tfCluster = `{"ps":["tf-dist-ps-0.tf-dist.{ns}.svc.cluster.local:2222"],"worker":["tf-dist-worker-0.tf-dist.{ns}.svc.cluster.local:2222","tf-dist-worker-1.tf-dist.{ns}.svc.cluster.local:2222"]}`

// tfConfig is the TF_CONFIG of a pod of a tensorflow job with that cluster
// JSON, or, with tensorflow.Reference's spelling, the reference to it.
func tfConfig(cluster, role, index string) string {
	return `{"cluster":` + cluster + `,"task":{"type":"` + role + `","index":` + index + `},"environment":"cloud"}`
}

// tfConfigPodBound is issue 15's 2 KB per pod, applied to the bytes
// TF_CONFIG and TF_CONFIG_CLUSTER take in a pod as etcd stores it
// (localcluster.EnvBytes) with --tf-config=reference: whole pods are ~8 KB
// at any job size, most of it Kubernetes', Volcano's and the wait
// container's (docs/dev/performance.md, "What a pod costs in etcd").
const tfConfigPodBound = 2000

// storedPod is a pod's size in etcd and TF_CONFIG's share of it.
type storedPod struct{ size, tfConfig int }

// tfReference is what the pod spec holds in place of the cluster JSON by
// reference: --tf-config=reference, or the default auto for a cluster JSON
// over tensorflow.AutoInlineMaxBytes.
const tfReference = "$(" + tensorflow.EnvCluster + ")"

// pytorchEnv is the environment of a pod of the pytorch example (pytorch-dist:
// 1 master, 2 workers, port 23456) with that rank.
func pytorchEnv(rank string) map[string]string {
	return map[string]string{
		"MASTER_ADDR":        "pytorch-dist-master-0.pytorch-dist.{ns}.svc.cluster.local",
		"MASTER_PORT":        "23456",
		"WORLD_SIZE":         "3",
		"RANK":               rank,
		"PET_MASTER_ADDR":    "pytorch-dist-master-0.pytorch-dist.{ns}.svc.cluster.local",
		"PET_MASTER_PORT":    "23456",
		"PET_NNODES":         "3",
		"PET_NODE_RANK":      rank,
		"PET_NPROC_PER_NODE": "auto",
		"PYTHONUNBUFFERED":   "1",
	}
}

// mxnetEnv is the environment of a pod of the mxnet example (mxnet-dist: 1
// scheduler, 1 server, 2 workers, port 9091).
func mxnetEnv(role, workerID string) map[string]string {
	env := map[string]string{
		"DMLC_ROLE":           role,
		"DMLC_PS_ROOT_URI":    "mxnet-dist-scheduler-0.mxnet-dist.{ns}.svc.cluster.local",
		"DMLC_PS_ROOT_PORT":   "9091",
		"DMLC_NUM_SERVER":     "1",
		"DMLC_NUM_WORKER":     "2",
		"DMLC_USE_KUBERNETES": "1",
	}
	if workerID != "" {
		env["DMLC_WORKER_ID"] = workerID
	}
	return env
}

// xgboostEnv is the environment of a pod of the xgboost example
// (xgboost-dist: 1 master, 2 workers, port 9999) of that rank.
func xgboostEnv(rank string) map[string]string {
	return map[string]string{
		"MASTER_ADDR":       "xgboost-dist-master-0.xgboost-dist.{ns}.svc.cluster.local",
		"MASTER_PORT":       "9999",
		"WORLD_SIZE":        "3",
		"PYTHONUNBUFFERED":  "1",
		"WORKER_PORT":       "9999",
		"WORKER_ADDRS":      "xgboost-dist-worker-0.xgboost-dist.{ns}.svc.cluster.local,xgboost-dist-worker-1.xgboost-dist.{ns}.svc.cluster.local",
		"DMLC_TRACKER_URI":  "xgboost-dist-master-0.xgboost-dist.{ns}.svc.cluster.local",
		"DMLC_TRACKER_PORT": "9999",
		"DMLC_NUM_WORKER":   "3",
		"RANK":              rank,
		"DMLC_TASK_ID":      rank,
	}
}

// xgboostMasterEnv is the literal environment of the master of the xgboost
// example: its tracker at its own address, $(POD_IP) (POD_IP comes from the
// downward API).
func xgboostMasterEnv() map[string]string {
	env := xgboostEnv("0")
	env["DMLC_TRACKER_URI"] = "$(POD_IP)"
	return env
}

// daskEnv is the environment of a pod of the dask example (dask-dist: 1
// scheduler, 2 workers, 1 client, port 8786); workerName "" for the scheduler
// and the client.
func daskEnv(workerName string) map[string]string {
	env := map[string]string{"DASK_SCHEDULER_ADDRESS": "tcp://dask-dist-scheduler-0.dask-dist.{ns}.svc.cluster.local:8786"}
	if workerName != "" {
		env["DASK_WORKER_NAME"] = workerName
	}
	return env
}

// paddleEnv is the literal environment of a pod of the paddle example
// (paddle-dist: 3 workers, collective, port 36543) with that PADDLE_MASTER;
// POD_IP comes from the downward API.
func paddleEnv(master string) map[string]string {
	return map[string]string{
		"PADDLE_MASTER":    master,
		"PADDLE_NNODES":    "3",
		"PADDLE_JOB_ID":    "paddle-dist",
		"PYTHONUNBUFFERED": "1",
	}
}

// jaxEnv is the environment of a pod of the jax example (jax-dist: 3
// workers, port 6666) with that process id.
func jaxEnv(id string) map[string]string {
	return map[string]string{
		"JAX_COORDINATOR_ADDRESS": "jax-dist-worker-0.jax-dist.{ns}.svc.cluster.local:6666",
		"JAX_NUM_PROCESSES":       "3",
		"JAX_PROCESS_ID":          id,
		"COORDINATOR_ADDRESS":     "jax-dist-worker-0.jax-dist.{ns}.svc.cluster.local",
		"COORDINATOR_PORT":        "6666",
		"NUM_PROCESSES":           "3",
		"PROCESS_ID":              id,
		"PYTHONUNBUFFERED":        "1",
	}
}

// The mpi example (mpi-dist: 1 master, 2 workers, sshd on 2222, no GPUs).
const (
	mpiHostfile    = "mpi-dist-worker-0.mpi-dist.{ns}.svc.cluster.local slots=1\nmpi-dist-worker-1.mpi-dist.{ns}.svc.cluster.local slots=1\n"
	mpiSSHArgs     = "-p 2222 -o ConnectionAttempts=10"
	mpiHostfileDir = "/etc/mpi"
	// The master's wait container reads its targets from the same ConfigMap.
	mpiWaitTargets     = "mpi-dist-worker-0.mpi-dist.{ns}.svc.cluster.local:2222 mpi-dist-worker-1.mpi-dist.{ns}.svc.cluster.local:2222"
	mpiWaitTargetsPath = mpiHostfileDir + "/wait-targets"
)

var mpiMasterEnv = map[string]string{
	"MPI_HOST":                          "mpi-dist-worker-0.mpi-dist.{ns}.svc.cluster.local,mpi-dist-worker-1.mpi-dist.{ns}.svc.cluster.local",
	"OMPI_MCA_orte_default_hostfile":    "/etc/mpi/hostfile",
	"OMPI_MCA_orte_keep_fqdn_hostnames": "true",
	"OMPI_MCA_orte_set_default_slots":   "1",
	"OMPI_MCA_plm_rsh_args":             mpiSSHArgs,
	"PRTE_MCA_prte_default_hostfile":    "/etc/mpi/hostfile",
	"PRTE_MCA_prte_keep_fqdn_hostnames": "true",
	"PRTE_MCA_prte_set_default_slots":   "1",
	"PRTE_MCA_plm_ssh_args":             mpiSSHArgs,
	// The master requests no GPU: the NVIDIA runtime must not expose any.
	"NVIDIA_VISIBLE_DEVICES":     "",
	"NVIDIA_DRIVER_CAPABILITIES": "",
}

// wantExamples maps each example Job to its pods, in PodsOf order.
var wantExamples = map[string][]wantPod{
	"tf-dist": {
		{name: "tf-dist-ps-0", container: "tensorflow", env: map[string]string{"TF_CONFIG": tfConfig(tfCluster, "ps", "0")},
			portName: "tfjob-port", port: 2222},
		{name: "tf-dist-worker-0", container: "tensorflow", env: map[string]string{"TF_CONFIG": tfConfig(tfCluster, "worker", "0")},
			portName: "tfjob-port", port: 2222, waitTargets: "tf-dist-ps-0.tf-dist.{ns}.svc.cluster.local:2222"},
		{name: "tf-dist-worker-1", container: "tensorflow", env: map[string]string{"TF_CONFIG": tfConfig(tfCluster, "worker", "1")},
			portName: "tfjob-port", port: 2222, waitTargets: "tf-dist-ps-0.tf-dist.{ns}.svc.cluster.local:2222"},
	},
	"pytorch-dist": {
		{name: "pytorch-dist-master-0", container: "pytorch", env: pytorchEnv("0"), portName: "pytorchjob-port", port: 23456},
		{name: "pytorch-dist-worker-0", container: "pytorch", env: pytorchEnv("1"), portName: "pytorchjob-port", port: 23456,
			waitTargets: "pytorch-dist-master-0.pytorch-dist.{ns}.svc.cluster.local"},
		{name: "pytorch-dist-worker-1", container: "pytorch", env: pytorchEnv("2"), portName: "pytorchjob-port", port: 23456,
			waitTargets: "pytorch-dist-master-0.pytorch-dist.{ns}.svc.cluster.local"},
	},
	"mpi-dist": {
		{name: "mpi-dist-master-0", container: "mpi", env: mpiMasterEnv,
			waitTargets: mpiWaitTargets, waitFile: mpiWaitTargetsPath},
		{name: "mpi-dist-worker-0", container: "mpi", env: map[string]string{}, portName: "mpijob-port", port: 2222},
		{name: "mpi-dist-worker-1", container: "mpi", env: map[string]string{}, portName: "mpijob-port", port: 2222},
	},
	"mxnet-dist": {
		{name: "mxnet-dist-scheduler-0", container: "mxnet", env: mxnetEnv("scheduler", ""), portName: "mxjob-port", port: 9091},
		{name: "mxnet-dist-server-0", container: "mxnet", env: mxnetEnv("server", ""),
			waitTargets: "mxnet-dist-scheduler-0.mxnet-dist.{ns}.svc.cluster.local:9091"},
		{name: "mxnet-dist-worker-0", container: "mxnet", env: mxnetEnv("worker", "0"),
			waitTargets: "mxnet-dist-scheduler-0.mxnet-dist.{ns}.svc.cluster.local:9091"},
		{name: "mxnet-dist-worker-1", container: "mxnet", env: mxnetEnv("worker", "1"),
			waitTargets: "mxnet-dist-scheduler-0.mxnet-dist.{ns}.svc.cluster.local:9091"},
	},
	"xgboost-dist": {
		{name: "xgboost-dist-master-0", container: "xgboost", env: xgboostMasterEnv(), portName: "xgboostjob-port", port: 9999},
		{name: "xgboost-dist-worker-0", container: "xgboost", env: xgboostEnv("1"), portName: "xgboostjob-port", port: 9999,
			waitTargets: "xgboost-dist-master-0.xgboost-dist.{ns}.svc.cluster.local"},
		{name: "xgboost-dist-worker-1", container: "xgboost", env: xgboostEnv("2"), portName: "xgboostjob-port", port: 9999,
			waitTargets: "xgboost-dist-master-0.xgboost-dist.{ns}.svc.cluster.local"},
	},
	"dask-dist": {
		{name: "dask-dist-scheduler-0", container: "dask", env: daskEnv(""), portName: "tcp-comm", port: 8786},
		{name: "dask-dist-worker-0", container: "dask", env: daskEnv("dask-dist-worker-0"),
			waitTargets: "dask-dist-scheduler-0.dask-dist.{ns}.svc.cluster.local:8786"},
		{name: "dask-dist-worker-1", container: "dask", env: daskEnv("dask-dist-worker-1"),
			waitTargets: "dask-dist-scheduler-0.dask-dist.{ns}.svc.cluster.local:8786"},
		{name: "dask-dist-client-0", container: "dask", env: daskEnv(""),
			waitTargets: "dask-dist-scheduler-0.dask-dist.{ns}.svc.cluster.local:8786"},
	},
	"paddle-dist": {
		{name: "paddle-dist-worker-0", container: "paddle", env: paddleEnv("$(POD_IP):36543"), portName: "master", port: 36543},
		{name: "paddle-dist-worker-1", container: "paddle", env: paddleEnv("paddle-dist-worker-0.paddle-dist.{ns}.svc.cluster.local:36543"),
			waitTargets: "paddle-dist-worker-0.paddle-dist.{ns}.svc.cluster.local:36543"},
		{name: "paddle-dist-worker-2", container: "paddle", env: paddleEnv("paddle-dist-worker-0.paddle-dist.{ns}.svc.cluster.local:36543"),
			waitTargets: "paddle-dist-worker-0.paddle-dist.{ns}.svc.cluster.local:36543"},
	},
	"jax-dist": {
		{name: "jax-dist-worker-0", container: "jax", env: jaxEnv("0"), portName: "jaxjob-port", port: 6666},
		{name: "jax-dist-worker-1", container: "jax", env: jaxEnv("1"), portName: "jaxjob-port", port: 6666,
			waitTargets: "jax-dist-worker-0.jax-dist.{ns}.svc.cluster.local:6666"},
		{name: "jax-dist-worker-2", container: "jax", env: jaxEnv("2"), portName: "jaxjob-port", port: 6666,
			waitTargets: "jax-dist-worker-0.jax-dist.{ns}.svc.cluster.local:6666"},
	},
}

// expectPod checks one pod against what its plugin must have written.
func expectPod(pod *corev1.Pod, want wantPod) {
	GinkgoHelper()
	Expect(cmp.Diff(inNamespaceEnv(want.env, pod.Namespace), framework.EnvOf(pod, want.container))).To(BeEmpty(),
		"literal env of container %s of pod %s (-want +got)", want.container, pod.Name)
	if want.portName != "" {
		Expect(pod.Spec.Containers[0].Ports).To(ContainElement(corev1.ContainerPort{
			Name: want.portName, ContainerPort: want.port, Protocol: corev1.ProtocolTCP,
		}), "ports of pod %s", pod.Name)
	}
	if want.waitTargets == "" {
		Expect(framework.InitContainerNames(pod)).To(BeEmpty(), "init containers of pod %s", pod.Name)
		return
	}
	Expect(framework.InitContainerNames(pod)).To(Equal([]string{waitContainer}), "init containers of pod %s", pod.Name)
	wait := pod.Spec.InitContainers[0]
	Expect(wait.Image).To(Equal(waitImage), "wait image of pod %s", pod.Name)
	wantEnv := map[string]string{waitTargetsVariable: inNamespace(want.waitTargets, pod.Namespace), waitTimeoutVariable: waitTimeoutSeconds}
	if want.waitFile != "" {
		wantEnv = map[string]string{waitFileVariable: want.waitFile, waitTimeoutVariable: waitTimeoutSeconds}
	}
	Expect(framework.EnvOf(pod, waitContainer)).To(Equal(wantEnv), "wait container env of pod %s", pod.Name)
}

// ownedObject is an object a Job's plugins create, read through get.
type ownedObject struct {
	kind, name string
	get        func(ctx context.Context) (metav1.Object, error)
}

type ownedObjects []ownedObject

func (objs ownedObjects) add(kind, name string, get func(ctx context.Context) (metav1.Object, error)) ownedObjects {
	return append(objs, ownedObject{kind: kind, name: name, get: get})
}

// tfMode is the --tf-config mode the tensorflow plugin uses for job's pods:
// its argument, auto resolved by the job's size (tensorflow.Args.Mode).
func tfMode(job *batch.Job) tensorflow.TFConfigMode {
	GinkgoHelper()
	a, errs := tensorflow.ParseArgs(job.Spec.Plugins[tensorflow.Name], job)
	Expect(errs).To(BeEmpty(), "tensorflow arguments of Job %s", job.Name)
	return a.Mode(job)
}

// pluginObjects lists what svc (Service, hosts ConfigMap, NetworkPolicy), ssh
// (Secret), mpi (hostfile ConfigMap) and tensorflow (cluster ConfigMap, by
// reference only: tfMode) create for a Job, as its plugins say.
func pluginObjects(f *framework.Framework, job *batch.Job) ownedObjects {
	ns := f.Namespace
	cms := func(name string) func(ctx context.Context) (metav1.Object, error) {
		return func(ctx context.Context) (metav1.Object, error) {
			return f.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		}
	}
	var out ownedObjects
	out = out.add("Service", job.Name, func(ctx context.Context) (metav1.Object, error) {
		return f.Kube.CoreV1().Services(ns).Get(ctx, job.Name, metav1.GetOptions{})
	})
	out = out.add("ConfigMap", job.Name+"-svc", cms(job.Name+"-svc"))
	out = out.add("NetworkPolicy", job.Name, func(ctx context.Context) (metav1.Object, error) {
		return f.Kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, job.Name, metav1.GetOptions{})
	})
	if _, ok := job.Spec.Plugins["ssh"]; ok {
		out = out.add("Secret", job.Name+"-ssh", func(ctx context.Context) (metav1.Object, error) {
			return f.Kube.CoreV1().Secrets(ns).Get(ctx, job.Name+"-ssh", metav1.GetOptions{})
		})
	}
	if _, ok := job.Spec.Plugins[mpi.Name]; ok {
		out = out.add("ConfigMap", mpi.ConfigMapName(job), cms(mpi.ConfigMapName(job)))
	}
	if _, ok := job.Spec.Plugins[tensorflow.Name]; ok && tfMode(job) == tensorflow.Reference {
		out = out.add("ConfigMap", tensorflow.ConfigMapName(job), cms(tensorflow.ConfigMapName(job)))
	}
	return out
}

// podConfig is what a framework plugin decides about a pod, for comparing two
// Jobs: containers' literal env, ports and mounts, init containers, volumes,
// hostname. The service account token volume (random name) is left out, and
// init containers' mounts too: whether svc, which Volcano may run before or
// after the framework plugin, also mounts its ConfigMap into the wait
// container depends on that order.
type podConfig struct {
	Name, Hostname, Subdomain string
	InitContainers            []containerConfig
	Containers                []containerConfig
	Volumes                   []corev1.Volume
}

type containerConfig struct {
	Name, Image     string
	Command         []string
	Env             map[string]string
	Ports           []corev1.ContainerPort
	Mounts          []corev1.VolumeMount `json:",omitempty"`
	SecurityContext *corev1.SecurityContext
}

const tokenVolumePrefix = "kube-api-access-"

func configOf(pod *corev1.Pod) podConfig {
	c := podConfig{Name: pod.Name, Hostname: pod.Spec.Hostname, Subdomain: pod.Spec.Subdomain}
	conv := func(ct corev1.Container, mounts bool) containerConfig {
		cc := containerConfig{Name: ct.Name, Image: ct.Image, Command: ct.Command, Env: framework.EnvOf(pod, ct.Name),
			Ports: ct.Ports, SecurityContext: ct.SecurityContext}
		if mounts {
			for _, m := range ct.VolumeMounts {
				if !strings.HasPrefix(m.Name, tokenVolumePrefix) {
					cc.Mounts = append(cc.Mounts, m)
				}
			}
			sort.Slice(cc.Mounts, func(i, j int) bool { return cc.Mounts[i].Name < cc.Mounts[j].Name })
		}
		return cc
	}
	for _, ct := range pod.Spec.InitContainers {
		c.InitContainers = append(c.InitContainers, conv(ct, false))
	}
	for _, ct := range pod.Spec.Containers {
		c.Containers = append(c.Containers, conv(ct, true))
	}
	for _, v := range pod.Spec.Volumes {
		if !strings.HasPrefix(v.Name, tokenVolumePrefix) {
			c.Volumes = append(c.Volumes, v)
		}
	}
	sort.Slice(c.Volumes, func(i, j int) bool { return c.Volumes[i].Name < c.Volumes[j].Name })
	return c
}

// renderConfig renders a pod's configuration as indented JSON with the Job's
// name replaced by as, so that the pods of two Jobs compare equal when they
// differ only in the Job's name.
func renderConfig(pod *corev1.Pod, jobName, as string) string {
	data, err := json.MarshalIndent(configOf(pod), "", "  ")
	Expect(err).NotTo(HaveOccurred())
	return strings.ReplaceAll(string(data), jobName, as)
}

var _ = Describe("Framework plugins in the real job controller", func() {
	f := framework.New("frameworks")

	It("inject the exact configuration of each role and index into the pods of the examples, which complete on KWOK",
		func(ctx SpecContext) {
			jobs := f.CreateJobs(ctx, loadExamples()...)
			for _, job := range jobs {
				f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
			}
			for _, job := range jobs {
				By("checking the pods of " + job.Name)
				want := wantExamples[job.Name]
				Expect(want).NotTo(BeEmpty(), "no expectations for example Job %s", job.Name)
				pods := f.PodsOf(job)
				names := make([]string, len(want))
				for i, w := range want {
					names[i] = w.name
				}
				Expect(framework.PodNames(pods)).To(Equal(names), "pods of Job %s", job.Name)
				for i, pod := range pods {
					Expect(pod.Spec.NodeName).NotTo(BeEmpty(), "pod %s was never bound", pod.Name)
					expectPod(pod, want[i])
				}
			}

			By("checking the hostfile volume of the MPI master")
			mpiJob := jobs[2]
			Expect(mpiJob.Name).To(Equal("mpi-dist"))
			master := f.PodsOf(mpiJob)[0]
			mode := int32(0o444)
			Expect(framework.Volumes(master)).To(HaveKeyWithValue("mpi-hostfile", corev1.Volume{
				Name: "mpi-hostfile",
				VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "mpi-dist-mpi-hostfile"},
					Items:                []corev1.KeyToPath{{Key: "hostfile", Path: "hostfile"}, {Key: "wait-targets", Path: "wait-targets"}},
					DefaultMode:          &mode,
				}},
			}))
			for _, c := range []string{"mpi", waitContainer} {
				Expect(kubeutil.ContainerOf(master, c).VolumeMounts).To(ContainElement(corev1.VolumeMount{
					Name: "mpi-hostfile", MountPath: mpiHostfileDir, ReadOnly: true,
				}), "mounts of container %s", c)
			}
			for _, worker := range f.PodsOf(mpiJob)[1:] {
				Expect(framework.Volumes(worker)).NotTo(HaveKey("mpi-hostfile"), "pod %s", worker.Name)
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("own what they create with a controller reference to the Job, and the garbage collector deletes it with the Job",
		func(ctx SpecContext) {
			examples := loadExamples()
			for _, j := range examples {
				// A completed Job's plugins delete their objects themselves.
				framework.KeepRunning(j)
			}
			jobs := f.CreateJobs(ctx, examples...)
			var all []ownedObject
			for _, job := range jobs {
				f.WaitPodsBound(ctx, job, 0)
				for _, o := range pluginObjects(f, job) {
					By("checking the ownerReferences of " + o.kind + " " + o.name)
					var obj metav1.Object
					framework.Eventually(ctx, func(ctx context.Context) (err error) {
						obj, err = o.get(ctx)
						return err
					}, framework.ObjectCreatedTimeout).Should(Succeed(), "%s %s", o.kind, o.name)
					Expect(obj.GetOwnerReferences()).To(ConsistOf(framework.ControllerRefTo(job)), "%s %s", o.kind, o.name)
					all = append(all, o)
				}
			}

			By("checking the MPI hostfile ConfigMap")
			hostfile, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, "mpi-dist-mpi-hostfile", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(hostfile.Data).To(Equal(map[string]string{
				"hostfile":     inNamespace(mpiHostfile, f.Namespace),
				"wait-targets": inNamespace(strings.ReplaceAll(mpiWaitTargets, " ", "\n")+"\n", f.Namespace),
			}))
			Expect(hostfile.BinaryData).To(BeEmpty())
			Expect(hostfile.Labels).To(Equal(map[string]string{batch.JobNameKey: "mpi-dist"}))

			By("checking that the TensorFlow example, small, has no cluster ConfigMap and inline TF_CONFIG (the default --tf-config=auto)")
			i := slices.IndexFunc(jobs, func(j *batch.Job) bool { return j.Name == "tf-dist" })
			Expect(i).To(BeNumerically(">=", 0), "Job tf-dist among the examples")
			tfDist := jobs[i]
			Expect(tfMode(tfDist)).To(Equal(tensorflow.Inline), "--tf-config=auto for Job %s", tfDist.Name)
			_, err = f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, tensorflow.ConfigMapName(tfDist), metav1.GetOptions{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ConfigMap %s: want none, got %v", tensorflow.ConfigMapName(tfDist), err)
			for _, pod := range f.PodsOf(tfDist) {
				var names []string
				for _, e := range kubeutil.ContainerOf(pod, "tensorflow").Env {
					names = append(names, e.Name)
				}
				Expect(names).NotTo(ContainElement(tensorflow.EnvCluster), "variables of pod %s", pod.Name)
				Expect(framework.EnvOf(pod, "tensorflow")[tensorflow.EnvTFConfig]).To(HavePrefix(`{"cluster":`+inNamespace(tfCluster, pod.Namespace)+`,`),
					"TF_CONFIG in the spec of pod %s", pod.Name)
			}

			By("deleting the Jobs (background propagation: the garbage collector deletes their dependents)")
			for _, job := range jobs {
				f.DeleteJob(ctx, job, metav1.DeletePropagationBackground)
			}
			for _, o := range all {
				framework.Eventually(ctx, func(ctx context.Context) bool {
					_, err := o.get(ctx)
					return apierrors.IsNotFound(err)
				}, framework.GarbageCollectedTimeout).Should(BeTrue(), "%s %s deleted after its Job", o.kind, o.name)
			}
			for _, job := range jobs {
				framework.Eventually(ctx, func() []string { return framework.PodNames(f.LivePodsOf(job)) },
					framework.GarbageCollectedTimeout).Should(BeEmpty(), "pods of deleted Job %s", job.Name)
				framework.Eventually(ctx, func(ctx context.Context) bool {
					_, err := f.PodGroupOf(ctx, job)
					return apierrors.IsNotFound(err)
				}, framework.GarbageCollectedTimeout).Should(BeTrue(), "PodGroup of deleted Job %s", job.Name)
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("give a Job written with Volcano's in-tree flag spellings the configuration this project's spellings give",
		func(ctx SpecContext) {
			task := func(name string, replicas int32) batch.TaskSpec { return jobtest.MakeTask(name, replicas).Obj() }
			// Volcano's in-tree plugins take these arguments (the examples of
			// its documentation); this project's plugins take none for the same
			// job, the defaults being the same.
			pairs := []struct{ inTree, ours *batch.Job }{{
				inTree: jobtest.MakeJob("tf-intree").Plugin("tensorflow", "--ps=ps", "--worker=worker", "--port=2222").
					Task(task("ps", 1)).Task(task("worker", 2)).Obj(),
				ours: jobtest.MakeJob("tf-ours").Plugin("tensorflow").
					Task(task("ps", 1)).Task(task("worker", 2)).Obj(),
			}, {
				inTree: jobtest.MakeJob("pt-intree").Plugin("pytorch", "--master=master", "--worker=worker", "--port=23456").
					Task(task("master", 1)).Task(task("worker", 2)).Obj(),
				ours: jobtest.MakeJob("pt-ours").Plugin("pytorch").
					Task(task("master", 1)).Task(task("worker", 2)).Obj(),
			}, {
				inTree: jobtest.MakeJob("mpi-intree").Plugin("mpi", "--master=master", "--worker=worker", "--port=22").
					Task(task("master", 1)).Task(task("worker", 2)).Obj(),
				ours: jobtest.MakeJob("mpi-ours").Plugin("mpi").
					Task(task("master", 1)).Task(task("worker", 2)).Obj(),
			}}
			var all []*batch.Job
			for _, p := range pairs {
				all = append(all, p.inTree, p.ours)
			}
			created := f.CreateJobs(ctx, all...)
			for _, job := range created {
				f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
			}
			// The variable each plugin must have set on its first pod.
			signature := map[string]string{"tf-ours": "TF_CONFIG", "pt-ours": "MASTER_ADDR", "mpi-ours": "MPI_HOST"}
			for i := 0; i < len(created); i += 2 {
				inTree, ours := created[i], created[i+1]
				By("comparing the pods of " + inTree.Name + " and " + ours.Name)
				inTreePods, ourPods := f.PodsOf(inTree), f.PodsOf(ours)
				Expect(ourPods).To(HaveLen(3), "pods of %s", ours.Name)
				Expect(inTreePods).To(HaveLen(len(ourPods)), "pods of %s", inTree.Name)
				Expect(framework.EnvOf(ourPods[0], "main")).To(HaveKey(signature[ours.Name]), "pod %s", ourPods[0].Name)
				for j := range ourPods {
					Expect(cmp.Diff(renderConfig(ourPods[j], ours.Name, ours.Name), renderConfig(inTreePods[j], inTree.Name, ours.Name))).
						To(BeEmpty(), "pod %s against %s, %s's name read as %s (-ours +in-tree spellings)",
							inTreePods[j].Name, ourPods[j].Name, inTree.Name, ours.Name)
				}
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("give every TensorFlow process the same TF_CONFIG with --tf-config=reference and inline; reference pods refer to one ConfigMap, and only inline pods' TF_CONFIG grows in etcd with the job",
		func(ctx SpecContext) {
			// Cost: a 3-pod and a 21-pod Job per mode on KWOK, kept running,
			// and one read of the namespace's pods from etcd: ~10 s.
			tc := framework.Cluster()
			if tc.Local == nil {
				Skip("KUBECONFIG cluster: the suite cannot read its etcd")
			}
			task := func(name string, replicas int32) batch.TaskSpec { return jobtest.MakeTask(name, replicas).Obj() }
			// Pairs of the same size: reference and inline, both given: the
			// default auto would inline both sizes (cluster JSON of about
			// 100 and 800 bytes, under tensorflow.AutoInlineMaxBytes).
			type pair struct{ ref, inline *batch.Job }
			var toCreate []*batch.Job
			for _, n := range []struct {
				suffix  string
				workers int32
			}{{"", 2}, {"-20", 20}} {
				toCreate = append(toCreate,
					jobtest.MakeJob("tf-ref"+n.suffix).Plugin(tensorflow.Name, "--tf-config=reference").
						Task(task("ps", 1)).Task(task("worker", n.workers)).Obj(),
					jobtest.MakeJob("tf-inline"+n.suffix).Plugin(tensorflow.Name, "--tf-config=inline").
						Task(task("ps", 1)).Task(task("worker", n.workers)).Obj())
			}
			for i := range toCreate {
				toCreate[i] = framework.KeepRunning(toCreate[i])
			}
			created := f.CreateJobs(ctx, toCreate...)
			for _, job := range created {
				f.WaitPodsBound(ctx, job, 0)
			}
			small, large := pair{created[0], created[1]}, pair{created[2], created[3]}
			for _, p := range []pair{small, large} {
				By("comparing the pods of " + p.ref.Name + " and " + p.inline.Name)
				cm, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, tensorflow.ConfigMapName(p.ref), metav1.GetOptions{})
				Expect(err).NotTo(HaveOccurred(), "cluster ConfigMap of %s", p.ref.Name)
				Expect(cm.OwnerReferences).To(ConsistOf(framework.ControllerRefTo(p.ref)))
				Expect(cm.Labels).To(Equal(map[string]string{batch.JobNameKey: p.ref.Name}))
				_, err = f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, tensorflow.ConfigMapName(p.inline), metav1.GetOptions{})
				Expect(apierrors.IsNotFound(err)).To(BeTrue(), "inline: no ConfigMap, got %v", err)

				refPods, inlinePods := f.PodsOf(p.ref), f.PodsOf(p.inline)
				Expect(refPods).To(HaveLen(framework.TotalReplicas(p.ref)))
				Expect(inlinePods).To(HaveLen(len(refPods)))
				for i, pod := range refPods {
					c := kubeutil.ContainerOf(pod, "main")
					// Volcano may run the svc plugin, whose variables come first
					// or last, before or after ours.
					at := map[string]int{}
					for j, e := range c.Env {
						at[e.Name] = j
					}
					Expect(at).To(HaveKey(tensorflow.EnvCluster), "pod %s", pod.Name)
					Expect(at).To(HaveKey(tensorflow.EnvTFConfig), "pod %s", pod.Name)
					Expect(at[tensorflow.EnvCluster]).To(BeNumerically("<", at[tensorflow.EnvTFConfig]),
						"pod %s: the reference comes after the variable it refers to", pod.Name)
					clusterVar, tfVar := c.Env[at[tensorflow.EnvCluster]], c.Env[at[tensorflow.EnvTFConfig]]
					Expect(clusterVar.ValueFrom).To(Equal(&corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, Key: tensorflow.ClusterKey}}))
					Expect(tfVar.Value).To(ContainSubstring(tfReference), "pod %s", pod.Name)
					// What the kubelet makes of it, with its own expansion code.
					got := expansion.Expand(tfVar.Value, expansion.MappingFuncFor(map[string]string{
						tensorflow.EnvCluster: cm.Data[tensorflow.ClusterKey]}))
					want := strings.ReplaceAll(framework.EnvOf(inlinePods[i], "main")[tensorflow.EnvTFConfig], p.inline.Name, p.ref.Name)
					Expect(got).To(Equal(want), "pod %s: expanded reference against inline pod %s", pod.Name, inlinePods[i].Name)
				}
			}

			By("reading the pods as etcd stores them")
			stored := map[string]storedPod{}
			err := localcluster.EachStored(ctx, tc.Local.EtcdEndpoint(), "pods", f.Namespace, func(name string, value []byte) error {
				pod, err := localcluster.DecodeStoredPod(value)
				if err != nil {
					return err
				}
				tf, err := localcluster.EnvBytes(pod, tensorflow.EnvTFConfig, tensorflow.EnvCluster)
				stored[name] = storedPod{size: len(value), tfConfig: tf}
				return err
			})
			Expect(err).NotTo(HaveOccurred())
			// largest returns the largest stored size and TF_CONFIG share
			// of the Job's worker pods.
			largest := func(job *batch.Job) (size, tfConfig int) {
				for _, pod := range f.PodsOf(job) {
					Expect(stored).To(HaveKey(pod.Name))
					if jobs.PodTask(pod) == "worker" {
						size, tfConfig = max(size, stored[pod.Name].size), max(tfConfig, stored[pod.Name].tfConfig)
					}
				}
				return size, tfConfig
			}
			for _, job := range created {
				for _, pod := range f.PodsOf(job) {
					tfConfig := framework.EnvOf(pod, "main")[tensorflow.EnvTFConfig]
					if job == small.ref || job == large.ref {
						Expect(stored[pod.Name].tfConfig).To(BeNumerically("<=", tfConfigPodBound),
							"pod %s: TF_CONFIG's bytes in etcd with reference", pod.Name)
					} else {
						Expect(stored[pod.Name].tfConfig).To(BeNumerically(">", len(tfConfig)),
							"pod %s: etcd holds the whole inline TF_CONFIG", pod.Name)
					}
				}
			}
			// The inline TF_CONFIG of the larger Job's workers is this much
			// longer: what each of its pods must store more.
			longer := len(framework.EnvOf(f.PodsOf(large.inline)[1], "main")[tensorflow.EnvTFConfig]) -
				len(framework.EnvOf(f.PodsOf(small.inline)[1], "main")[tensorflow.EnvTFConfig])
			smallRef, smallRefTF := largest(small.ref)
			largeRef, largeRefTF := largest(large.ref)
			smallInline, smallInlineTF := largest(small.inline)
			largeInline, largeInlineTF := largest(large.inline)
			// Whole pods vary by some hundred bytes with what is not ours:
			// status updates (read before or after KWOK's), Volcano's svc
			// plugin giving the wait container its variables or not (plugin
			// order). Shown, not checked.
			GinkgoWriter.Printf("largest worker pod in etcd (TF_CONFIG's share): reference %d B (%d B) with %d workers, %d B (%d B) with %d; inline %d B (%d B), %d B (%d B); inline TF_CONFIG %d B longer\n",
				smallRef, smallRefTF, jobs.Replicas(small.ref, "worker"), largeRef, largeRefTF, jobs.Replicas(large.ref, "worker"),
				smallInline, smallInlineTF, largeInline, largeInlineTF, longer)
			Expect(largeInlineTF-smallInlineTF).To(BeNumerically(">=", longer), "inline pods store the cluster they hold")
			// The reference pods differ only in the job name's length ("-20")
			// in the ConfigMap's name and in index digits.
			Expect(largeRefTF-smallRefTF).To(BeNumerically("<=", 8), "reference pods do not grow with the job")
		}, SpecTimeout(framework.SpecTimeout))
})
