// Package training has the types of the example Jobs of example/ that run
// for real (Example: on the local cluster's real node, training jobs and
// contract checks for the frameworks Debian does not package; Hello: as
// written, on public images) and what running and judging them shares:
// loading, placing on the real node, following the pods' logs, when every
// rank joined, and the judge of the digits programs. Each framework's
// examples and their judges are in its Sample (plugins/<framework>/
// <framework>sample); plugins/catalog/samples lists them all (Examples,
// Hellos), which `make demo` and the e2e suite run with the same judgement.
package training

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
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
	// Stock is set for an example that make startup also runs under
	// Volcano's stock controller manager (hack/demo's stockExample makes it
	// stock-compatible): one per framework that Volcano has an in-tree
	// plugin of (its Sample's StockFlags), one that plugin can run at all.
	Stock bool
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
	// PluginConfigMaps, if set, names the ConfigMaps of the Job (as
	// created) that its plugin writes and Judge reads (Run.ConfigMaps).
	// Whoever runs the example keeps their data as last seen: a completed
	// Job's plugin deletes them.
	PluginConfigMaps func(job *batch.Job) []string
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
	// ConfigMaps are the data of the Example's PluginConfigMaps as last
	// seen, by name; one never seen is missing.
	ConfigMaps map[string]map[string]string
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

// CheckTimeoutEnv is the variable the contract checks' programs read
// (example/*/*_check.py): how long, in whole seconds, a peer may stay
// unreachable before the check fails; 180 where it is unset.
const CheckTimeoutEnv = "TIMEOUT"

// WithCheckTimeout sets CheckTimeoutEnv to d, in whole seconds rounded up, in
// ex.Container of every task of job, when ex is a contract check
// (ex.Contract) and d is positive; otherwise it leaves job as it is. A node
// that starts containers minutes apart (an emulated CPU, make vm-test) needs
// more than the programs' 180 s. It returns job.
func (ex Example) WithCheckTimeout(job *batch.Job, d time.Duration) *batch.Job {
	if !ex.Contract || d <= 0 {
		return job
	}
	secs := strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
	for i := range job.Spec.Tasks {
		spec := &job.Spec.Tasks[i].Template.Spec
		for j := range spec.Containers {
			c := &spec.Containers[j]
			if c.Name != ex.Container {
				continue
			}
			c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == CheckTimeoutEnv })
			c.Env = append(c.Env, corev1.EnvVar{Name: CheckTimeoutEnv, Value: secs})
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
