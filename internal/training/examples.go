// Package training describes the example Jobs of example/ that run for real
// on the local cluster's real node (training jobs, and contract checks for the
// frameworks Debian does not package), and judges what their pods printed.
// `make demo` and the e2e suite run the same examples with the same
// judgement.
package training

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins/dask"
	"github.com/vcplugins/framework-plugins/plugins/jax"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
)

// ImageTar is the training image (Debian's python3-torch 1.13, python3-sklearn,
// python3-mpi4py, python3-xgboost 1.7, python3-dask and python3-distributed
// 2022.12, Open MPI, MPICH, OpenSSH), relative to the module root: the
// real node loads it at cluster start; `make node-images-training` builds it.
const ImageTar = "_output/images/training.tar"

// Example is one example Job that runs for real.
type Example struct {
	// Framework is the framework plugin the Job uses.
	Framework string
	// What says in a few words what the Job runs.
	What string
	// Contract is set for a check of a framework's contract (its variables
	// and the network they describe) that runs no framework code, where no
	// Debian package of the framework exists.
	Contract bool
	// File is the Job's YAML, relative to the module root.
	File string
	// ConfigMap is the ConfigMap the Job mounts its program from; Programs
	// are the files (relative to the module root) it holds, each under its
	// base name, as `kubectl create configmap NAME --from-file=...` makes it.
	ConfigMap string
	Programs  []string
	// Container is the container of every pod that runs the program.
	Container string
	// Judge decides from what the Job left behind whether it did what it
	// must. It returns one line summing the run up, or an error that names
	// what is wrong.
	Judge func(Run) (string, error)
	// Joined tells from the pods' Container logs when every rank of the
	// program had joined: the first line each rank prints (for the
	// contract checks, a process that serves others, such as the chief or
	// process 0, prints it once it serves).
	Joined Joined
	// Listening, if set, matches the line a pod that others wait for
	// (pkg/wait) prints once its port accepts connections: the moment that
	// dependency answers. Nil where the program prints nothing at that
	// moment, or its dependants wait for its DNS name only.
	Listening *regexp.Regexp
}

// Run is what a Job of an example left behind.
type Run struct {
	// Pods are the Job's pods as last seen.
	Pods []*corev1.Pod
	// Logs are their Container logs by pod name ("" for a pod whose log
	// could not be read).
	Logs map[string]string
	// Hostfile is the content of the mpi plugin's hostfile ConfigMap as the
	// Job had it ("" for a Job without the mpi plugin).
	Hostfile string
}

// The first lines of the programs (Example.Joined) and the lines that say a
// dependency's port is open (Example.Listening), as example/*/*.py print
// them; dask's scheduler and workers and the MPI workers' sshd log theirs.
var (
	// sshd -De: "Server listening on 0.0.0.0 port 2222." once it accepts.
	sshdListening = regexp.MustCompile(`^Server listening on \S+ port \d+\.$`)
	// tf_config_check.py: "chief:0 serves HOST:PORT" right after it binds.
	tfServes = regexp.MustCompile(`^(?P<rank>\w+:\d+) serves \S+$`)
	// dmlc_check.py: the scheduler's first registration; a server's or
	// worker's listing from the scheduler (ps-lite's start-up done).
	dmlcJoined = regexp.MustCompile(`^(?:scheduler: registered (?:server|worker) \S+$|(?:server|worker) \d+: the scheduler listed \d+ nodes$)`)
	// train_xgboost.py, once the collective is up.
	xgboostJoined = regexp.MustCompile(`^rank (?P<rank>\d+) of (?P<world>\d+) joined tracker at `)
	// distributed 2022.12: "Scheduler at: tcp://..." once the scheduler
	// listens, a worker's "Registered to: tcp://..."; dask_digits.py's
	// client: "client: connected to the scheduler at ...".
	daskSchedulerAt = regexp.MustCompile(`Scheduler at:\s+\S+$`)
	daskJoined      = regexp.MustCompile(`(?:^client: connected to the scheduler at |Registered to:\s+\S+$|Scheduler at:\s+\S+$)`)
	// paddle_check.py: rank 0 serves the rendezvous; the others print
	// nothing before their verdict.
	paddleServes = regexp.MustCompile(`^\S+: serves the rendezvous at `)
	paddleJoined = regexp.MustCompile(`^(?:\S+: serves the rendezvous at |paddle \w+ rank \d+ of \d+ on \S+: OK)`)
	// jax_check.py: process 0 serves the coordinator; the others print once
	// the coordinator has answered every registration.
	jaxServes = regexp.MustCompile(`^process 0 of \d+: coordinator serves `)
	jaxJoined = regexp.MustCompile(`^process \d+ of \d+: (?:coordinator serves |OK, registered with the coordinator at )`)
)

// Examples are the Jobs that run for real, in the order `make demo` shows them.
var Examples = []Example{
	{
		Framework: pytorch.Name, What: "DDP with env://, master and 2 workers",
		File: "example/pytorch/pytorch-digits-ddp.yaml", ConfigMap: "pytorch-digits",
		Programs: []string{"example/pytorch/train_digits.py"}, Container: "pytorch",
		Judge: judgeDigits(3, 3, false), Joined: Joined{Line: DigitsJoinedLine},
	},
	{
		Framework: pytorch.Name, What: "torchrun from the PET_* variables only, worker-only",
		File: "example/pytorch/pytorch-digits-torchrun.yaml", ConfigMap: "pytorch-digits",
		Programs: []string{"example/pytorch/train_digits.py"}, Container: "pytorch",
		Judge: judgeDigits(3, 3, false), Joined: Joined{Line: DigitsJoinedLine},
	},
	{
		Framework: pytorch.Name, What: "elastic torchrun with c10d, --min-nodes=2 --max-nodes=3",
		File: "example/pytorch/pytorch-digits-elastic.yaml", ConfigMap: "pytorch-digits",
		Programs: []string{"example/pytorch/train_digits.py"}, Container: "pytorch",
		Judge: judgeDigits(2, 3, true), Joined: Joined{Line: DigitsJoinedLine},
	},
	{
		Framework: mpi.Name, What: "Open MPI: mpirun over ssh, the hostfile and OMPI_* only, mpi4py allreduce",
		File: "example/mpi/mpi-digits-openmpi.yaml", ConfigMap: "mpi-digits",
		Programs: []string{"example/mpi/train_mpi.py"}, Container: "mpi",
		Judge: judgeMPI, Joined: Joined{Line: DigitsJoinedLine}, Listening: sshdListening,
	},
	{
		Framework: mpi.Name, What: "MPICH: Hydra's mpiexec over ssh without -localhost",
		File: "example/mpi/mpi-digits-mpich.yaml", ConfigMap: "mpi-digits",
		Programs: []string{"example/mpi/train_mpi.py"}, Container: "mpi",
		Judge: judgeMPI, Joined: Joined{Line: DigitsJoinedLine}, Listening: sshdListening,
	},
	{
		Framework: tensorflow.Name, What: "TF_CONFIG contract check: chief, ps and 2 workers reach each other", Contract: true,
		File: "example/tensorflow/tensorflow-contract.yaml", ConfigMap: "tf-config-check",
		Programs: []string{"example/tensorflow/tf_config_check.py"}, Container: "tensorflow",
		Judge: judgeTFConfig, Joined: Joined{Line: tfServes}, Listening: tfServes,
	},
	{
		Framework: mxnet.Name, What: "DMLC_* contract check: ps-lite start-up with scheduler, 2 servers and 2 workers", Contract: true,
		File: "example/mxnet/mxnet-contract.yaml", ConfigMap: "dmlc-check",
		Programs: []string{"example/mxnet/dmlc_check.py"}, Container: "mxnet",
		Judge: judgeDMLC, Joined: Joined{Line: dmlcJoined},
	},
	{
		Framework: xgboost.Name, What: "XGBoost collective: the master's tracker and 3 ranks on sharded digits, one model",
		File: "example/xgboost/xgboost-digits.yaml", ConfigMap: "xgboost-digits",
		Programs: []string{"example/xgboost/train_xgboost.py"}, Container: "xgboost",
		Judge: judgeXGBoost, Joined: Joined{Line: xgboostJoined},
	},
	{
		Framework: dask.Name, What: "dask scheduler, 2 dask workers and a client, all from DASK_SCHEDULER_ADDRESS: the digits fitted on both workers",
		File: "example/dask/dask-digits.yaml", ConfigMap: "dask-digits",
		Programs: []string{"example/dask/dask_digits.py"}, Container: "dask",
		Judge: judgeDask, Joined: Joined{Line: daskJoined}, Listening: daskSchedulerAt,
	},
	{
		Framework: paddle.Name, What: "PADDLE_* contract check: the launcher's rendezvous and collective start-up with 3 workers", Contract: true,
		File: "example/paddle/paddle-contract.yaml", ConfigMap: "paddle-check",
		Programs: []string{"example/paddle/paddle_check.py"}, Container: "paddle",
		Judge: judgePaddle, Joined: Joined{Line: paddleJoined}, Listening: paddleServes,
	},
	{
		Framework: jax.Name, What: "JAX contract check: 3 processes register with process 0's coordinator", Contract: true,
		File: "example/jax/jax-contract.yaml", ConfigMap: "jax-check",
		Programs: []string{"example/jax/jax_check.py"}, Container: "jax",
		Judge: judgeJAX, Joined: Joined{Line: jaxJoined}, Listening: jaxServes,
	},
}

// LoadJob reads the Volcano Job of file (relative to root) strictly.
func LoadJob(root, file string) (*batch.Job, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	job := &batch.Job{}
	if err := yaml.UnmarshalStrict(data, job); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if job.Kind != "Job" || job.APIVersion != batch.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("%s: want a %s Job, got %s %s", file, batch.SchemeGroupVersion, job.APIVersion, job.Kind)
	}
	return job, nil
}

// ConfigMapOf returns ex's ConfigMap in namespace, with its programs read
// from under root.
func (ex Example) ConfigMapOf(root, namespace string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ex.ConfigMap, Namespace: namespace},
		Data:       map[string]string{},
	}
	for _, p := range ex.Programs {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		cm.Data[filepath.Base(p)] = string(data)
	}
	return cm, nil
}

// OnRealNode makes every pod of job select the real node and tolerate its
// taint, and sets imagePullPolicy IfNotPresent on its containers (the node's
// images are loaded from tarballs; nothing can be pulled). It returns job.
func OnRealNode(job *batch.Job) *batch.Job {
	for i := range job.Spec.Tasks {
		spec := &job.Spec.Tasks[i].Template.Spec
		if spec.NodeSelector == nil {
			spec.NodeSelector = map[string]string{}
		}
		spec.NodeSelector[localcluster.RealNodeLabel] = "true"
		spec.Tolerations = append(spec.Tolerations, localcluster.RealNodeToleration())
		for j := range spec.Containers {
			spec.Containers[j].ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	return job
}

// FailedOnItsOwn reports whether pod failed by itself: a pod being deleted was
// stopped by its Job's completion (the sshd workers of an MPI Job are killed
// and end Failed), which is not a failure of the run.
func FailedOnItsOwn(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed && pod.DeletionTimestamp == nil
}
