// Package waitwatch is the wait-timeout controller of vc-controller-manager: it
// turns a wait container that gave up (--wait-timeout passed before every
// dependency answered) into a failed pod and a Warning event on its Job.
//
// Without it the pod's restart policy decides, and with OnFailure (the
// webhook's default for role tasks) or Always the kubelet restarts the init
// container forever: the pod sits in Init:CrashLoopBackOff, the Job never
// hears of it. Kubernetes has no per-container restart policy for init
// containers, and a plugin hook sees no pod updates, so a controller watches
// the pods (through the informers Volcano's job controller already runs: no
// extra API reads) and, on a terminated wait container whose exit status is
// wait.TimeoutExitCode, of a pod the Job's controller created (Owned):
//
//   - records a WaitTimedOut Warning event on the Job naming the task, the pod
//     and the dependencies that never answered (the script's last line);
//   - unless the pod's restartPolicy is Never (the kubelet then fails the pod
//     itself), sets the pod's spec.activeDeadlineSeconds to 1, the one pod
//     field that fails a running pod whatever its restart policy: the kubelet
//     kills it and marks it Failed (reason DeadlineExceeded). Volcano's job
//     controller then sees PodFailed and applies the Job's policies; the
//     webhook gives waiting tasks PodFailed → TerminateJob by default.
package waitwatch

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	batchlisters "volcano.sh/apis/pkg/client/listers/batch/v1alpha1"
	"volcano.sh/volcano/pkg/controllers/framework"

	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Name is the controller's name for vc-controller-manager --controllers
// ("-wait-timeout-controller" switches it off).
const Name = "wait-timeout-controller"

// FailDeadlineSeconds is the activeDeadlineSeconds set on a pod whose wait
// timed out: the smallest the API accepts, and below the pod's age.
const FailDeadlineSeconds int64 = 1

// apiTimeout bounds the event and the patch of one pod.
const apiTimeout = 30 * time.Second

func init() {
	framework.RegisterController(&Controller{})
}

// Controller watches pods for timed-out wait containers. It implements
// Volcano's framework.Controller.
type Controller struct {
	client    kubernetes.Interface
	informer  coreinformers.PodInformer
	podLister corelisters.PodLister
	jobSynced cache.InformerSynced
	jobLister batchlisters.JobLister
	queue     workqueue.RateLimitingInterface
	start     []func(stop <-chan struct{})
}

// Name returns Name.
func (c *Controller) Name() string { return Name }

// Initialize takes the shared pod and Job informers (the job controller's)
// and the client from opt.
func (c *Controller) Initialize(opt *framework.ControllerOption) error {
	c.client = opt.KubeClient
	c.informer = opt.SharedInformerFactory.Core().V1().Pods()
	c.podLister = c.informer.Lister()
	jobs := opt.VCSharedInformerFactory.Batch().V1alpha1().Jobs()
	c.jobLister = jobs.Lister()
	c.jobSynced = jobs.Informer().HasSynced
	c.start = []func(<-chan struct{}){opt.SharedInformerFactory.Start, opt.VCSharedInformerFactory.Start}
	c.queue = workqueue.NewRateLimitingQueue(workqueue.DefaultControllerRateLimiter())
	_, err := c.informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
	})
	return err
}

// enqueue queues pods that need action; everything else is dropped here, on
// the informer's goroutine, without allocation.
func (c *Controller) enqueue(obj interface{}) {
	pod, ok := obj.(*v1.Pod)
	if !ok || !NeedsAction(pod) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(pod)
	if err == nil {
		c.queue.Add(key)
	}
}

// Run processes queued pods with one worker until stop closes.
func (c *Controller) Run(stop <-chan struct{}) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	for _, start := range c.start {
		start(stop) // starts only informers nobody started yet
	}
	if !cache.WaitForCacheSync(stop, c.informer.Informer().HasSynced, c.jobSynced) {
		klog.ErrorS(nil, "Pod and Job caches did not sync", "controller", Name)
		return
	}
	go func() {
		for c.next() {
		}
	}()
	<-stop
}

func (c *Controller) next() bool {
	item, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(item)
	key := item.(string)
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := c.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.queue.Forget(item)
		return true
	}
	var job *batch.Job
	if err == nil {
		job, err = c.owner(pod)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
		err = Handle(ctx, c.client, job, pod)
		cancel()
	}
	if err != nil {
		klog.ErrorS(err, "Failing a pod whose wait timed out", "pod", key)
		c.queue.AddRateLimited(item)
		return true
	}
	c.queue.Forget(item)
	return true
}

// owner returns the Job pod's controller reference names, or nil when there
// is none (Handle then does nothing).
func (c *Controller) owner(pod *v1.Pod) (*batch.Job, error) {
	ref := jobOwner(pod)
	if ref == nil {
		return nil, nil
	}
	job, err := c.jobLister.Jobs(pod.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return job, err
}

// TimedOut returns the wait container's termination state when its current
// or last run ended with wait.TimeoutExitCode, else nil.
func TimedOut(pod *v1.Pod) *v1.ContainerStateTerminated {
	for i := range pod.Status.InitContainerStatuses {
		s := &pod.Status.InitContainerStatuses[i]
		if s.Name != wait.ContainerName {
			continue
		}
		for _, t := range []*v1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if t != nil && t.ExitCode == wait.TimeoutExitCode {
				return t
			}
		}
	}
	return nil
}

// NeedsAction reports whether Handle may have something to do for pod: a pod
// that names a Volcano Job as its controller and carries that Job's name in
// its batch.JobNameKey label, neither finished nor being deleted, whose wait
// container timed out, and which is not yet failing by its deadline. Whether
// the Job exists and is the one the reference means is Owned's question.
func NeedsAction(pod *v1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return false
	}
	ref := jobOwner(pod)
	if ref == nil || pod.Labels[batch.JobNameKey] != ref.Name || TimedOut(pod) == nil {
		return false
	}
	return pod.Spec.RestartPolicy == v1.RestartPolicyNever || !failing(pod)
}

// failing: the deadline Handle sets is already there.
func failing(pod *v1.Pod) bool {
	d := pod.Spec.ActiveDeadlineSeconds
	return d != nil && *d <= FailDeadlineSeconds
}

// jobOwner returns the pod's controlling Volcano Job reference, or nil.
func jobOwner(pod *v1.Pod) *metav1.OwnerReference {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "Job" || !strings.HasPrefix(ref.APIVersion, batch.GroupName+"/") {
		return nil
	}
	return ref
}

// Owned reports whether job's controller created pod, as far as the pod
// shows: its controller reference is job (name and UID, in its namespace)
// and its batch.JobNameKey label, which Volcano's job controller sets on
// every pod it creates, names job. Anyone who may create pods may write any
// owner reference (the API server checks neither that the owner exists nor
// its UID); without this a user's pod could post WaitTimedOut events on
// another Job, or on a Job that does not exist.
func Owned(pod *v1.Pod, job *batch.Job) bool {
	ref := jobOwner(pod)
	return ref != nil && job != nil && job.UID != "" && ref.UID == job.UID && ref.Name == job.Name &&
		pod.Namespace == job.Namespace && pod.Labels[batch.JobNameKey] == job.Name
}

// Message returns the WaitTimedOut event's message for pod: its task (the
// role), the pod, what the script said it waited for and what follows.
func Message(pod *v1.Pod) string {
	task := pod.Annotations[batch.TaskSpecKey]
	if task == "" {
		task = pod.Labels[batch.TaskSpecKey]
	}
	said := "the wait container exited " + fmt.Sprint(wait.TimeoutExitCode) + " (timed out)"
	if t := TimedOut(pod); t != nil {
		if line := lastLine(t.Message); line != "" {
			said = line
		}
	}
	next := "the pod is failed (activeDeadlineSeconds) rather than restarted, and the Job's PodFailed policy applies"
	if pod.Spec.RestartPolicy == v1.RestartPolicyNever {
		next = "the pod fails (restartPolicy Never), and the Job's PodFailed policy applies"
	}
	return fmt.Sprintf("task %s: pod %s: %s (--wait-timeout); %s", task, pod.Name, said, next)
}

// lastLine returns the last non-blank line of a termination message (the
// kubelet's fallback keeps the log's tail; the script ends with its verdict).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Handle acts on one pod if NeedsAction and job (the Job the pod's controller
// reference names, from the informer's cache; nil when there is none) Owned
// it: the WaitTimedOut event on job (recorded once per message), then,
// unless restartPolicy is Never, a patch of spec.activeDeadlineSeconds to
// FailDeadlineSeconds; the pod then counts in metrics.WaitTimeouts. It
// returns API errors of the patch (the event's are
// logged by events.Warn); a pod gone meanwhile is not an error.
func Handle(ctx context.Context, client kubernetes.Interface, job *batch.Job, pod *v1.Pod) error {
	if !NeedsAction(pod) {
		return nil
	}
	if !Owned(pod, job) {
		klog.V(2).InfoS("Not acting on a timed-out wait of a pod its Job's controller did not create", "pod", klog.KObj(pod))
		return nil
	}
	events.Warn(ctx, client, job, events.ReasonWaitTimedOut, Message(pod))
	if pod.Spec.RestartPolicy == v1.RestartPolicyNever {
		metrics.WaitTimeouts.Inc()
		return nil
	}
	patch := fmt.Sprintf(`{"spec":{"activeDeadlineSeconds":%d}}`, FailDeadlineSeconds)
	_, err := client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		// Counted once the pod fails: a failed patch is retried, and a
		// failing pod no longer NeedsAction.
		metrics.WaitTimeouts.Inc()
	}
	return err
}
