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

// LocalImages maps each public image of the Hellos (sample.Sample.Hellos) to
// the local image with the same interpreter and tools (python3; Open MPI,
// mpi4py and sshd), for a node that pulls nothing: the real node, in the e2e
// suite and the install test. A Hello with an image missing here cannot run
// there (Localize fails).
var LocalImages = map[string]string{
	"python:3.12-slim":          Image,
	"mpioperator/openmpi:0.5.0": Image,
	"everpeace/chainermn:1.3.0": Image,
}

// Hello is an example Job that runs as written on any cluster that can pull
// its public images, and finishes in under a minute: a check of what its
// framework plugin injects, in place of a framework program. The examples a
// user meets first (README's "A Job", docs/install.md's Verify, the chart's
// NOTES) and the minimal example of every framework are Hellos; the GPU
// examples (example/*/*-gpu.yaml) are not: they need GPUs (the e2e suite
// gang-schedules them on KWOK GPU nodes).
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

// Qualified matches what follows <hostname>.<subdomain> in the hosts the
// plugins inject: .<namespace>.svc.cluster.local (the local cluster's domain,
// in any namespace), for the Hellos' Success patterns.
const Qualified = `\.[a-z0-9-]+\.svc\.cluster\.local`

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
