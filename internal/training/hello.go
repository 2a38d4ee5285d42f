package training

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// Image is ImageTar's image reference, present only on the real node.
const Image = "localhost/framework-plugins/training:local"

// LocalImages maps each public image of the Hellos to the local image with
// the same interpreter and tools (python3; Open MPI, mpi4py and sshd), for a
// node that pulls nothing: the real node, in the e2e suite and the install
// test. A Hello with an image missing here cannot run there (Localize fails).
var LocalImages = map[string]string{
	"python:3.12-slim":          Image,
	"mpioperator/openmpi:0.5.0": Image,
	"everpeace/chainermn:1.3.0": Image,
}

// Hello is an example Job that runs as written on any cluster that can pull
// its public images, and finishes in under a minute: a check of what its
// framework plugin injects, in place of a framework program.
type Hello struct {
	// Source is the file, relative to the module root, that holds the Job:
	// a Job of example/, or a Markdown file whose yaml block holds Job Name.
	Source string
	// Name is the Job's name.
	Name string
	// Container is the container of every pod that runs the check.
	Container string
	// Success is the line a pod prints for each rank that succeeded.
	Success *regexp.Regexp
	// Tasks are the tasks each of whose pods must print Success PerPod times
	// (an MPI launcher prints a line per rank; the workers run sshd).
	Tasks  []string
	PerPod int
}

// qualified matches what follows <hostname>.<subdomain> in the hosts the
// plugins inject: .<namespace>.svc.cluster.local (the local cluster's domain,
// in any namespace).
const qualified = `\.[a-z0-9-]+\.svc\.cluster\.local`

// Hellos are the examples a user meets first (README's "A Job",
// docs/install.md's Verify, the chart's NOTES) and the minimal example of
// every framework. The GPU examples (example/*/*-gpu.yaml) are not here:
// they need GPUs (the e2e suite gang-schedules them on KWOK GPU nodes).
var Hellos = []Hello{
	{
		Source: "README.md", Name: "tf-readme", Container: "tensorflow",
		Success: regexp.MustCompile(`(?m)^(ps|worker) \d+: OK$`), Tasks: []string{"ps", "worker"}, PerPod: 1,
	},
	{
		Source: "example/tensorflow/tensorflow.yaml", Name: "tf-dist", Container: "tensorflow",
		Success: regexp.MustCompile(`(?m)^(ps|worker):\d+: OK, reached and heard from 2 tasks$`), Tasks: []string{"ps", "worker"}, PerPod: 1,
	},
	{
		Source: "example/pytorch/pytorch.yaml", Name: "pytorch-dist", Container: "pytorch",
		Success: regexp.MustCompile(`(?m)^rank [0-2]: OK, (all 3 ranks joined at|joined the master at) pytorch-dist-master-0\.pytorch-dist` + qualified + `:23456`), Tasks: []string{"master", "worker"}, PerPod: 1,
	},
	{
		Source: "example/mxnet/mxnet.yaml", Name: "mxnet-dist", Container: "mxnet",
		Success: regexp.MustCompile(`(?m)^(scheduler: OK, 1 servers and 2 workers registered|(server|worker) mxnet-dist-(server|worker)-\d: OK, registered with the scheduler at mxnet-dist-scheduler-0\.mxnet-dist` + qualified + `:9091)$`), Tasks: []string{"scheduler", "server", "worker"}, PerPod: 1,
	},
	{
		Source: "example/mpi/mpi.yaml", Name: "mpi-dist", Container: "mpi",
		Success: regexp.MustCompile(`(?m)^rank [01] of 2 on mpi-dist-worker-[01]$`), Tasks: []string{"master"}, PerPod: 2,
	},
	{
		Source: "example/chainermn/chainermn.yaml", Name: "chainermn-example", Container: "master",
		Success: regexp.MustCompile(`(?m)^rank [0-2] of 3 on chainermn-example-worker-[0-2]: allreduce 3 OK$`), Tasks: []string{"master"}, PerPod: 3,
	}, {
		Source: "example/dask/dask.yaml", Name: "dask-dist", Container: "dask",
		Success: regexp.MustCompile(`(?m)^(scheduler: OK, 2 workers \(dask-dist-worker-0 dask-dist-worker-1\) and 1 client connected|(worker dask-dist-worker-[01]|client): OK, connected to the scheduler at tcp://dask-dist-scheduler-0\.dask-dist` + qualified + `:8786)$`), Tasks: []string{"scheduler", "worker", "client"}, PerPod: 1,
	},
	{
		Source: "example/xgboost/xgboost.yaml", Name: "xgboost-dist", Container: "xgboost",
		Success: regexp.MustCompile(`(?m)^(master: OK, ranks 1 to 2 joined|rank [12] of 3: OK, joined) the tracker at xgboost-dist-master-0\.xgboost-dist` + qualified + `:9999$`), Tasks: []string{"master", "worker"}, PerPod: 1,
	},
	{
		Source: "example/paddle/paddle.yaml", Name: "paddle-dist", Container: "paddle",
		Success: regexp.MustCompile(`(?m)^(rank 0 paddle-dist-worker-0: OK, served the rendezvous at [0-9a-f.:]+:36543 to 2 nodes of job paddle-dist|node paddle-dist-worker-[12]: OK, registered at the rendezvous paddle-dist-worker-0\.paddle-dist` + qualified + `:36543 of job paddle-dist with 3 nodes)$`), Tasks: []string{"worker"}, PerPod: 1,
	},
	{
		Source: "example/jax/jax.yaml", Name: "jax-dist", Container: "jax",
		Success: regexp.MustCompile(`(?m)^process [0-2] of 3: OK, (all 3 processes registered at|registered with the coordinator at) jax-dist-worker-0\.jax-dist` + qualified + `:6666$`), Tasks: []string{"worker"}, PerPod: 1,
	},
}

// Localize swaps every container image of job for its LocalImages entry. It
// fails on an image without one. It returns job.
func Localize(job *batch.Job) (*batch.Job, error) {
	for i := range job.Spec.Tasks {
		spec := &job.Spec.Tasks[i].Template.Spec
		for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
			for j := range cs {
				local, ok := LocalImages[cs[j].Image]
				if !ok {
					return nil, fmt.Errorf("Job %s, task %s: image %s has no local image (training.LocalImages)", job.Name, job.Spec.Tasks[i].Name, cs[j].Image)
				}
				cs[j].Image = local
			}
		}
	}
	return job, nil
}

// Judge checks that each pod of h.Tasks printed h.Success h.PerPod times,
// with distinct lines (one per rank). It returns the number of lines.
func (h Hello) Judge(run Run) (int, error) {
	lines := 0
	seen := map[string]int{}
	for _, pod := range run.Pods {
		task := pod.Annotations[batch.TaskSpecKey]
		if !slices.Contains(h.Tasks, task) {
			continue
		}
		seen[task]++
		got := map[string]bool{}
		for _, l := range h.Success.FindAllString(run.Logs[pod.Name], -1) {
			got[l] = true
		}
		if len(got) != h.PerPod {
			return 0, fmt.Errorf("pod %s printed %d distinct lines matching %q, want %d; its log:\n%s", pod.Name, len(got), h.Success, h.PerPod, run.Logs[pod.Name])
		}
		lines += len(got)
	}
	for _, task := range h.Tasks {
		if seen[task] == 0 {
			return 0, fmt.Errorf("no pod of task %s", task)
		}
	}
	return lines, nil
}

// Load reads h's Job from under root: the file of example/ (LoadJob), or
// the ```yaml block of the Markdown file that holds a Job named h.Name.
func (h Hello) Load(root string) (*batch.Job, error) {
	if !strings.HasSuffix(h.Source, ".md") {
		return LoadJob(root, h.Source)
	}
	data, err := os.ReadFile(filepath.Join(root, h.Source))
	if err != nil {
		return nil, err
	}
	blocks := strings.Split(string(data), "```yaml\n")
	for _, b := range blocks[1:] {
		b, _, _ = strings.Cut(b, "```")
		job := &batch.Job{}
		if yaml.Unmarshal([]byte(b), job) != nil || job.Kind != "Job" || job.Name != h.Name {
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(b), job); err != nil {
			return nil, fmt.Errorf("%s: Job %s: %w", h.Source, h.Name, err)
		}
		return job, nil
	}
	return nil, fmt.Errorf("%s: no yaml block with Job %s", h.Source, h.Name)
}
