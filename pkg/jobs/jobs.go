// Package jobs answers what the framework plugins and the admissions ask of a
// Volcano Job's roles, from its spec alone: which task plays a role and how
// many pods it has (Task, Present, Replicas), which pod this is (PodTask,
// PodIndex), the pod Volcano's controller creates (NewPod), under which DNS
// names the pods are reachable (Host, Hosts, Domain, the --cluster-domain),
// and which resources count as GPUs (the --gpu-resources rule). Abbrev and
// TaskNames keep what a message quotes of a user's values short.
//
// The bounds admission holds a Job to, and the sizes Volcano's svc and ssh
// plugins would write, are package bounds (pkg/jobs/bounds), which reads the
// roles through this one.
package jobs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// Task returns the task named name and true, or nil and false when the Job has no
// such task. The pointer aliases job.Spec.Tasks: changing the task changes the
// Job (the webhook's mutation relies on that; plugins must not).
func Task(job *batch.Job, name string) (*batch.TaskSpec, bool) {
	for i := range job.Spec.Tasks {
		if job.Spec.Tasks[i].Name == name {
			return &job.Spec.Tasks[i], true
		}
	}
	return nil, false
}

// Replicas returns the replica count of the task named name, or 0 when the Job
// has no such task.
func Replicas(job *batch.Job, name string) int {
	if t, ok := Task(job, name); ok {
		return int(t.Replicas)
	}
	return 0
}

// PodTask returns the name of the task a pod belongs to, read from the
// volcano.sh/task-spec annotation the job controller sets on every pod it creates.
func PodTask(pod *v1.Pod) string {
	if t := pod.Annotations[batch.TaskSpecKey]; t != "" {
		return t
	}
	return pod.Labels[batch.TaskSpecKey]
}

// PodIndex returns the pod's index within its task (0-based). It reads the
// volcano.sh/task-index annotation and falls back to the "-<index>" suffix of the
// pod name (<job>-<task>-<index>), as Volcano releases before 1.8 only set the name.
// It returns an error when neither holds a non-negative integer.
func PodIndex(pod *v1.Pod) (int, error) {
	s := pod.Annotations[batch.TaskIndex]
	if s == "" {
		if i := strings.LastIndexByte(pod.Name, '-'); i >= 0 {
			s = pod.Name[i+1:]
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("pod %q has no task index (annotation %s or name suffix -<index>)", pod.Name, batch.TaskIndex)
	}
	return n, nil
}

// PodName returns the name the job controller gives the index-th pod of a task:
// <job>-<task>-<index>.
func PodName(jobName, taskName string, index int) string {
	return jobName + "-" + taskName + "-" + strconv.Itoa(index)
}

// NewPod returns the index-th pod of task as Volcano's job controller hands
// it to the plugins' OnPodCreate: name <job>-<task>-<index>, the task-spec,
// task-index and job-name annotations and labels, the template's spec
// (copied), in the Job's namespace. The admission webhook simulates pods
// with it; the test builder (jobtest.MakePod) wraps it.
func NewPod(job *batch.Job, task *batch.TaskSpec, index int) *v1.Pod {
	meta := map[string]string{
		batch.TaskSpecKey: task.Name,
		batch.TaskIndex:   strconv.Itoa(index),
		batch.JobNameKey:  job.Name,
	}
	labels := make(map[string]string, len(meta))
	for k, v := range meta {
		labels[k] = v
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        PodName(job.Name, task.Name, index),
			Namespace:   job.Namespace,
			Annotations: meta,
			Labels:      labels,
		},
		Spec: *task.Template.Spec.DeepCopy(),
	}
}

// Host returns the DNS name under which the index-th pod of task is reachable,
// in the process-wide cluster domain (SetClusterDomain):
// <hostname>.<subdomain>.<namespace>.svc.<cluster domain> (Domain.Host).
func Host(job *batch.Job, task *batch.TaskSpec, index int) string {
	return Domain("").Host(job, task, index)
}

// Subdomain returns the subdomain of task's pods: the template's, else the Job
// name (the name of the headless Service Volcano's svc plugin creates).
func Subdomain(job *batch.Job, task *batch.TaskSpec) string {
	if s := task.Template.Spec.Subdomain; s != "" {
		return s
	}
	return job.Name
}

// Hosts returns Host for every replica of task, in index order. With port > 0
// each entry is "host:port".
func Hosts(job *batch.Job, task *batch.TaskSpec, port int) []string {
	return Domain("").Hosts(job, task, port)
}

// Hostname returns the pod hostname (the first DNS label of Host) of the
// index-th pod of task. Kubernetes limits it to 63 characters.
func Hostname(job *batch.Job, task *batch.TaskSpec, index int) string {
	if task.Template.Spec.Hostname != "" {
		return task.Template.Spec.Hostname
	}
	return PodName(job.Name, task.Name, index)
}

// FirstContainerResource returns the quantity of resource (a count, such as GPUs)
// that the first container of task's template requests, or its limit when only a
// limit is set (Kubernetes then defaults the request to it), or 0.
func FirstContainerResource(task *batch.TaskSpec, resource v1.ResourceName) int64 {
	cs := task.Template.Spec.Containers
	if len(cs) == 0 {
		return 0
	}
	if q, ok := cs[0].Resources.Requests[resource]; ok {
		return q.Value()
	}
	if q, ok := cs[0].Resources.Limits[resource]; ok {
		return q.Value()
	}
	return 0
}

// ResourceNvidiaGPU is NVIDIA's device-plugin resource.
const ResourceNvidiaGPU v1.ResourceName = "nvidia.com/gpu"

// DefaultGPUResources are the default GPU resource patterns (the
// --gpu-resources flag of both managers): any resource whose name contains
// "gpu" (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915, ...).
var DefaultGPUResources = []string{"gpu"}

// gpuResources are the process-wide patterns IsGPU applies.
var gpuResources = DefaultGPUResources

// SetGPUResources sets the patterns IsGPU applies (the managers'
// --gpu-resources); empty restores DefaultGPUResources. Call it before the
// controller or the webhook starts.
func SetGPUResources(patterns []string) {
	gpuResources = DefaultGPUResources
	if len(patterns) > 0 {
		gpuResources = append([]string(nil), patterns...)
	}
}

// MatchesGPU reports whether a resource is a GPU under patterns: its name
// contains one of them, compared case-insensitively (blank patterns match
// nothing). It is the one GPU rule of the controller and the webhook.
func MatchesGPU(patterns []string, name v1.ResourceName) bool {
	n := strings.ToLower(string(name))
	for _, p := range patterns {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" && strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// IsGPU reports whether a resource is a GPU under the process-wide patterns
// (SetGPUResources; by default, its name contains "gpu").
func IsGPU(name v1.ResourceName) bool {
	return MatchesGPU(gpuResources, name)
}

// FirstContainerGPUs returns the GPUs the first container of task's template
// requests (its limit when it sets no request): nvidia.com/gpu, else the first,
// by name, other GPU resource with a positive count; 0 when none.
func FirstContainerGPUs(task *batch.TaskSpec) int64 {
	if n := FirstContainerResource(task, ResourceNvidiaGPU); n > 0 {
		return n
	}
	cs := task.Template.Spec.Containers
	if len(cs) == 0 {
		return 0
	}
	var names []string
	for _, list := range []v1.ResourceList{cs[0].Resources.Requests, cs[0].Resources.Limits} {
		for name := range list {
			if IsGPU(name) {
				names = append(names, string(name))
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if n := FirstContainerResource(task, v1.ResourceName(name)); n > 0 {
			return n
		}
	}
	return 0
}

// ResourceNames returns, sorted and without repeats, the resources for which
// match is true that any container or init container of spec requests or limits
// in a positive quantity.
func ResourceNames(spec *v1.PodSpec, match func(v1.ResourceName) bool) []v1.ResourceName {
	seen := map[v1.ResourceName]bool{}
	var out []v1.ResourceName
	for _, cs := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			for _, list := range []v1.ResourceList{cs[i].Resources.Requests, cs[i].Resources.Limits} {
				for name, q := range list {
					if q.Sign() > 0 && match(name) && !seen[name] {
						seen[name] = true
						out = append(out, name)
					}
				}
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// RequestsResource reports whether any container or init container of spec
// requests or limits a positive quantity of a resource for which match is true.
func RequestsResource(spec *v1.PodSpec, match func(v1.ResourceName) bool) bool {
	return len(ResourceNames(spec, match)) > 0
}

// NamedPort returns the number of the container port called name in the task's
// template (any container), or def when there is none. Kubeflow's operators let
// a role choose its port this way (tfjob-port, mxjob-port).
func NamedPort(task *batch.TaskSpec, name string, def int) int {
	for _, c := range task.Template.Spec.Containers {
		for _, port := range c.Ports {
			if port.Name == name {
				return int(port.ContainerPort)
			}
		}
	}
	return def
}

// HostParts returns what Host(job, task, i) is made of (Domain.HostParts).
func HostParts(job *batch.Job, task *batch.TaskSpec) (prefix, suffix string, indexed bool) {
	return Domain("").HostParts(job, task)
}

// IndexDigits returns the number of decimal digits of the indices 0 to n-1
// together (the sum of len(strconv.Itoa(i))); 0 when n <= 0. It takes a step
// per power of ten, not per index.
func IndexDigits(n int) int {
	total := 0
	for lo, hi, digits := 0, 10, 1; lo < n; lo, hi, digits = hi, hi*10, digits+1 {
		total += (min(n, hi) - lo) * digits
	}
	return total
}

// HostsLen returns the total length, in bytes, of the strings Hosts(job, task,
// port) returns (Domain.HostsLen).
func HostsLen(job *batch.Job, task *batch.TaskSpec, port int) int {
	return Domain("").HostsLen(job, task, port)
}

// PresentTask returns the task named name and true when the Job has it with at
// least one replica (the tasks that play their role), else nil and false.
func PresentTask(job *batch.Job, name string) (*batch.TaskSpec, bool) {
	t, ok := Task(job, name)
	if !ok || t.Replicas < 1 {
		return nil, false
	}
	return t, true
}

// Present reports whether the Job has the task named name with at least one
// replica (PresentTask).
func Present(job *batch.Job, name string) bool {
	_, ok := PresentTask(job, name)
	return ok
}

// sharedHost reports whether every pod of task has the same DNS name: its
// template sets a hostname (and it has pods).
func sharedHost(task *batch.TaskSpec) bool {
	return task.Replicas > 0 && task.Template.Spec.Hostname != ""
}

// DistinctHosts returns the distinct DNS names of task's pods in index order
// (Domain.DistinctHosts).
func DistinctHosts(job *batch.Job, task *batch.TaskSpec) []string {
	return Domain("").DistinctHosts(job, task)
}

// DistinctHostCount is len(DistinctHosts(job, task)), computed.
func DistinctHostCount(task *batch.TaskSpec) int {
	if sharedHost(task) {
		return 1
	}
	return max(int(task.Replicas), 0)
}

// DistinctHostsLen is the total length of DistinctHosts(job, task) (no
// separators), computed from the names and the replica count
// (Domain.DistinctHostsLen).
func DistinctHostsLen(job *batch.Job, task *batch.TaskSpec) int {
	return Domain("").DistinctHostsLen(job, task)
}
