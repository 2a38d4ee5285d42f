// Package jobtest holds fluent builders for the objects the plugin, webhook,
// e2e and tool tests make: Volcano Jobs, their Tasks, and the pods the job
// controller creates from them; and RunPod, which runs a plugin's hooks as
// Volcano's controller does. Tests only: it lives under internal/ so that
// neither manager links it.
//
//	job := jobtest.MakeJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow", "--port=2222").Obj()
//	pod := jobtest.MakePod(job, "worker", 1).Obj()
package jobtest

import (
	"strconv"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// JobWrapper builds a batch.Job.
type JobWrapper struct{ batch.Job }

// resourceVersions numbers built Jobs: like the API server, every Job object a
// test builds gets its own resourceVersion, so per-revision caches behave as
// they do in the controller.
var resourceVersions atomic.Int64

// MakeJob returns a Job in namespace "default" with UID "uid-<name>", a
// resourceVersion no other built Job has, no tasks and no plugins.
func MakeJob(name string) *JobWrapper {
	rv := strconv.FormatInt(resourceVersions.Add(1), 10)
	return &JobWrapper{batch.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: batch.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), ResourceVersion: rv},
		Spec:       batch.JobSpec{SchedulerName: "volcano", Queue: "default"},
	}}
}

// Obj returns a pointer to a copy of the built Job.
func (w *JobWrapper) Obj() *batch.Job { j := w.Job.DeepCopy(); return j }

// Namespace sets the namespace.
func (w *JobWrapper) Namespace(ns string) *JobWrapper { w.Job.Namespace = ns; return w }

// UID sets the UID.
func (w *JobWrapper) UID(uid string) *JobWrapper { w.Job.UID = types.UID(uid); return w }

// ResourceVersion sets the resourceVersion ("" disables per-job caching).
func (w *JobWrapper) ResourceVersion(rv string) *JobWrapper { w.Job.ResourceVersion = rv; return w }

// Task appends a task.
func (w *JobWrapper) Task(t batch.TaskSpec) *JobWrapper {
	w.Job.Spec.Tasks = append(w.Job.Spec.Tasks, t)
	return w
}

// Plugin sets the arguments of a plugin (none is an empty list, as `tensorflow: []`).
func (w *JobWrapper) Plugin(name string, args ...string) *JobWrapper {
	if w.Job.Spec.Plugins == nil {
		w.Job.Spec.Plugins = map[string][]string{}
	}
	if args == nil {
		args = []string{}
	}
	w.Job.Spec.Plugins[name] = args
	return w
}

// MinAvailable sets the job's minAvailable.
func (w *JobWrapper) MinAvailable(n int32) *JobWrapper { w.Job.Spec.MinAvailable = n; return w }

// Queue sets the queue.
func (w *JobWrapper) Queue(q string) *JobWrapper { w.Job.Spec.Queue = q; return w }

// SchedulerName sets the scheduler name.
func (w *JobWrapper) SchedulerName(s string) *JobWrapper { w.Job.Spec.SchedulerName = s; return w }

// TaskWrapper builds a batch.TaskSpec.
type TaskWrapper struct{ batch.TaskSpec }

// MakeTask returns a task with replicas pods of one container "main" (image
// "train:latest") and restartPolicy Never.
func MakeTask(name string, replicas int32) *TaskWrapper {
	return &TaskWrapper{batch.TaskSpec{
		Name:     name,
		Replicas: replicas,
		Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyNever,
			Containers:    []v1.Container{{Name: "main", Image: "train:latest"}},
		}},
	}}
}

// Obj returns a copy of the built task.
func (w *TaskWrapper) Obj() batch.TaskSpec { return *w.TaskSpec.DeepCopy() }

// MinAvailable sets the task's minAvailable.
func (w *TaskWrapper) MinAvailable(n int32) *TaskWrapper { w.TaskSpec.MinAvailable = &n; return w }

// Hostname sets the template's hostname.
func (w *TaskWrapper) Hostname(h string) *TaskWrapper { w.Template.Spec.Hostname = h; return w }

// Subdomain sets the template's subdomain.
func (w *TaskWrapper) Subdomain(s string) *TaskWrapper { w.Template.Spec.Subdomain = s; return w }

// DNSSearches sets the template's dnsConfig.searches.
func (w *TaskWrapper) DNSSearches(s ...string) *TaskWrapper {
	w.Template.Spec.DNSConfig = &v1.PodDNSConfig{Searches: s}
	return w
}

// RestartPolicy sets the template's restartPolicy ("" leaves it unset).
func (w *TaskWrapper) RestartPolicy(p v1.RestartPolicy) *TaskWrapper {
	w.Template.Spec.RestartPolicy = p
	return w
}

// Container appends a container named name.
func (w *TaskWrapper) Container(name string) *TaskWrapper {
	w.Template.Spec.Containers = append(w.Template.Spec.Containers, v1.Container{Name: name, Image: "train:latest"})
	return w
}

// InitContainer appends an init container named name.
func (w *TaskWrapper) InitContainer(name string) *TaskWrapper {
	w.Template.Spec.InitContainers = append(w.Template.Spec.InitContainers, v1.Container{Name: name, Image: "init:latest"})
	return w
}

// Env sets a variable on the first container.
func (w *TaskWrapper) Env(name, value string) *TaskWrapper {
	c := &w.Template.Spec.Containers[0]
	c.Env = append(c.Env, v1.EnvVar{Name: name, Value: value})
	return w
}

// Port adds a named container port to the first container.
func (w *TaskWrapper) Port(name string, port int32) *TaskWrapper {
	c := &w.Template.Spec.Containers[0]
	c.Ports = append(c.Ports, v1.ContainerPort{Name: name, ContainerPort: port})
	return w
}

// Resource sets request and limit of a resource (e.g. "nvidia.com/gpu", "2") on
// the first container.
func (w *TaskWrapper) Resource(name v1.ResourceName, quantity string) *TaskWrapper {
	c := &w.Template.Spec.Containers[0]
	if c.Resources.Requests == nil {
		c.Resources.Requests = v1.ResourceList{}
		c.Resources.Limits = v1.ResourceList{}
	}
	c.Resources.Requests[name] = resource.MustParse(quantity)
	c.Resources.Limits[name] = resource.MustParse(quantity)
	return w
}

// GPU requests n nvidia.com/gpu on the first container.
func (w *TaskWrapper) GPU(n int) *TaskWrapper {
	return w.Resource("nvidia.com/gpu", strconv.Itoa(n))
}

// Policy adds a lifecycle policy (event -> action) to the task.
func (w *TaskWrapper) Policy(event, action string) *TaskWrapper {
	w.Policies = append(w.Policies, batch.LifecyclePolicy{Event: busEvent(event), Action: busAction(action)})
	return w
}

// PodWrapper builds the pod the job controller would create.
type PodWrapper struct{ v1.Pod }

// MakePod returns the index-th pod of task taskName as Volcano's job controller
// creates it (name <job>-<task>-<index>, task-spec and task-index annotations and
// labels, the template's spec) before plugins run. It panics when the Job has no
// such task: a test bug.
func MakePod(job *batch.Job, taskName string, index int) *PodWrapper {
	t, ok := jobs.Task(job, taskName)
	if !ok {
		panic("MakePod: job " + job.Name + " has no task " + taskName)
	}
	return &PodWrapper{*jobs.NewPod(job, t, index)}
}

// Obj returns a pointer to a copy of the built pod.
func (w *PodWrapper) Obj() *v1.Pod { return w.Pod.DeepCopy() }

// Env returns the env of container i of pod as a map (a test helper).
func Env(pod *v1.Pod, i int) map[string]string {
	out := map[string]string{}
	for _, e := range pod.Spec.Containers[i].Env {
		out[e.Name] = e.Value
	}
	return out
}

// DependsOn makes the task depend on the named tasks (Volcano's dependsOn).
func (w *TaskWrapper) DependsOn(tasks ...string) *TaskWrapper {
	w.TaskSpec.DependsOn = &batch.DependsOn{Name: tasks}
	return w
}

// Policy adds a job-level lifecycle policy (event -> action).
func (w *JobWrapper) Policy(event, action string) *JobWrapper {
	w.Job.Spec.Policies = append(w.Job.Spec.Policies, batch.LifecyclePolicy{Event: busEvent(event), Action: busAction(action)})
	return w
}

// Owner makes job the pod's controlling owner, as Volcano's job controller does.
func (w *PodWrapper) Owner(job *batch.Job) *PodWrapper {
	w.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, batch.SchemeGroupVersion.WithKind("Job"))}
	return w
}

// InitTerminated records a terminated run of init container name with the exit
// code and termination message: the current state, or with last the previous
// run's (the kubelet restarted it and it is waiting again).
func (w *PodWrapper) InitTerminated(name string, exitCode int32, message string, last bool) *PodWrapper {
	t := &v1.ContainerStateTerminated{ExitCode: exitCode, Message: message}
	s := v1.ContainerStatus{Name: name}
	if last {
		s.LastTerminationState.Terminated = t
		s.State.Waiting = &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
	} else {
		s.State.Terminated = t
	}
	w.Status.InitContainerStatuses = append(w.Status.InitContainerStatuses, s)
	return w
}

// Phase sets the pod's phase.
func (w *PodWrapper) Phase(p v1.PodPhase) *PodWrapper { w.Status.Phase = p; return w }

// ActiveDeadlineSeconds sets spec.activeDeadlineSeconds.
func (w *PodWrapper) ActiveDeadlineSeconds(s int64) *PodWrapper {
	w.Spec.ActiveDeadlineSeconds = &s
	return w
}
