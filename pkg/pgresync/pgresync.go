// Package pgresync is the podgroup-resync controller of vc-controller-manager:
// it asks Volcano's job controller to sync a Job again when that controller
// cannot have seen the Job's PodGroup leave Pending.
//
// Volcano's job controller creates a Job's pods once the scheduler has moved
// the Job's PodGroup to Inqueue, and learns of that move only from an update
// event of its PodGroup informer (job_controller.go registers UpdateFunc
// alone, and its informers never resync). When that informer lists again
// instead of watching (after kube-apiserver restarted, every watch is
// answered "too old resource version"), a PodGroup created and moved to
// Inqueue during the gap arrives as an add event, which the job controller
// ignores: the Job stays Pending with no pods until something else touches
// it, which may be never (docs/troubleshooting.md, "kube-apiserver
// restarts").
//
// This controller watches the same shared PodGroup informer, and on an add
// event outside the informer's first list of a PodGroup already past Pending
// that is its Job's own (Missed.Of: the controller reference's UID and the
// name the job controller gives it) and whose Job is still Pending, creates a
// Command (bus.volcano.sh/v1alpha1) with action SyncJob for the Job:
// Volcano's own way of asking its job controller to act on a Job, which it
// executes once and deletes (feature gate QueueCommandSync, on by default).
// It also records a PodGroupResynced event on the Job.
package pgresync

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	bus "volcano.sh/apis/pkg/apis/bus/v1alpha1"
	scheduling "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"
	batchlisters "volcano.sh/apis/pkg/client/listers/batch/v1alpha1"
	schedulinglisters "volcano.sh/apis/pkg/client/listers/scheduling/v1beta1"
	"volcano.sh/volcano/pkg/controllers/framework"

	"github.com/vcplugins/framework-plugins/pkg/events"
)

// Name is the controller's name for vc-controller-manager --controllers
// ("-podgroup-resync-controller" switches it off).
const Name = "podgroup-resync-controller"

// apiTimeout bounds the Command's creation and the event.
const apiTimeout = 30 * time.Second

func init() {
	framework.RegisterController(&Controller{})
}

// Controller implements Volcano's framework.Controller.
type Controller struct {
	kube      kubernetes.Interface
	volcano   vcclientset.Interface
	pgSynced  cache.InformerSynced
	jobSynced cache.InformerSynced
	jobLister batchlisters.JobLister
	pgLister  schedulinglisters.PodGroupLister
	queue     workqueue.TypedRateLimitingInterface[Missed]
	start     []func(stop <-chan struct{})
}

// Name returns Name.
func (c *Controller) Name() string { return Name }

// Initialize takes the shared PodGroup and Job informers (the job
// controller's) and the clients from opt.
func (c *Controller) Initialize(opt *framework.ControllerOption) error {
	c.kube, c.volcano = opt.KubeClient, opt.VolcanoClient
	pgs := opt.VCSharedInformerFactory.Scheduling().V1beta1().PodGroups()
	jobs := opt.VCSharedInformerFactory.Batch().V1alpha1().Jobs()
	c.jobLister, c.pgLister = jobs.Lister(), pgs.Lister()
	c.pgSynced, c.jobSynced = pgs.Informer().HasSynced, jobs.Informer().HasSynced
	c.start = []func(<-chan struct{}){opt.VCSharedInformerFactory.Start}
	c.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[Missed]())
	_, err := pgs.Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, inInitialList bool) {
			// The first list is not a gap: the job controller lists its
			// Jobs then too and syncs every one.
			if pg, ok := obj.(*scheduling.PodGroup); ok && !inInitialList {
				if m, ok := MissedJob(pg); ok {
					c.queue.Add(m)
				}
			}
		},
	})
	return err
}

// Missed is a PodGroup past Pending whose add event the job controller may
// have taken for nothing, with the Volcano Job its controller reference names.
type Missed struct {
	// Namespace is the PodGroup's, and so the Job's.
	Namespace string
	// PodGroup is the PodGroup's name.
	PodGroup string
	// Job and UID are the controller reference's name and UID.
	Job string
	UID types.UID
}

// MissedJob returns the Missed of pg, when pg's phase is past Pending (an add
// event of such a PodGroup is a missed transition to the job controller) and
// its controller reference is a batch.volcano.sh/v1alpha1 Job; ok is false
// otherwise. Whether that Job exists and pg is its own is for Missed.Of.
func MissedJob(pg *scheduling.PodGroup) (m Missed, ok bool) {
	if pg.Status.Phase == "" || pg.Status.Phase == scheduling.PodGroupPending {
		return Missed{}, false
	}
	ref := metav1.GetControllerOfNoCopy(pg)
	if ref == nil || ref.Kind != "Job" || ref.APIVersion != batch.SchemeGroupVersion.String() {
		return Missed{}, false
	}
	return Missed{Namespace: pg.Namespace, PodGroup: pg.Name, Job: ref.Name, UID: ref.UID}, true
}

// Of reports whether m's PodGroup is the one Volcano's job controller uses
// for job, whose own PodGroup is named podGroup (PodGroupName): its
// controller reference has job's name and UID, and it has that name.
//
// Anyone who may create PodGroups can write any controller reference (copying
// a Job's UID, which is no secret) and, as PodGroups have no status
// subresource, any phase. The name is what they cannot have: the job
// controller creates <job>-<uid> with the Job.
func (m Missed) Of(job *batch.Job, podGroup string) bool {
	return m.Namespace == job.Namespace && m.Job == job.Name && m.UID == job.UID && m.PodGroup == podGroup
}

// PodGroupName returns the name of the PodGroup Volcano's job controller
// uses for job, as its getPodGroupByJob (v1.15.1 pkg/controllers/job) finds
// it: <job>-<uid>, or <job> (a PodGroup made before Volcano v1.5) when no
// <job>-<uid> is in lister.
func PodGroupName(lister schedulinglisters.PodGroupLister, job *batch.Job) string {
	name := job.Name + "-" + string(job.UID)
	if _, err := lister.PodGroups(job.Namespace).Get(name); apierrors.IsNotFound(err) {
		return job.Name
	}
	return name
}

// Run processes queued Jobs with one worker until stop closes.
func (c *Controller) Run(stop <-chan struct{}) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	for _, start := range c.start {
		start(stop) // starts only informers nobody started yet
	}
	if !cache.WaitForCacheSync(stop, c.pgSynced, c.jobSynced) {
		klog.ErrorS(nil, "PodGroup and Job caches did not sync", "controller", Name)
		return
	}
	go func() {
		for c.next() {
		}
	}()
	<-stop
}

func (c *Controller) next() bool {
	m, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(m)
	key := m.Namespace + "/" + m.Job
	job, err := c.jobLister.Jobs(m.Namespace).Get(m.Job)
	if apierrors.IsNotFound(err) || err == nil && !m.Of(job, PodGroupName(c.pgLister, job)) {
		c.queue.Forget(m)
		return true
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
		err = Resync(ctx, c.kube, c.volcano, job)
		cancel()
	}
	switch {
	case err == nil:
		c.queue.Forget(m)
	case apierrors.IsForbidden(err):
		// Permanent until RBAC changes: reported, not retried.
		klog.ErrorS(err, "Cannot ask the job controller to sync a Job whose PodGroup it missed (RBAC: create bus.volcano.sh commands)", "job", key)
		c.queue.Forget(m)
	default:
		klog.ErrorS(err, "Asking the job controller to sync a Job whose PodGroup it missed", "job", key)
		c.queue.AddRateLimited(m)
	}
	return true
}

// Resync creates a SyncJob Command for job if it is still Pending (a Job past
// Pending was synced since), and records events.ReasonPodGroupResynced on it. It
// returns the Command's creation error.
func Resync(ctx context.Context, kube kubernetes.Interface, volcano vcclientset.Interface, job *batch.Job) error {
	if job.Status.State.Phase != batch.Pending || job.DeletionTimestamp != nil {
		return nil
	}
	// The Job owns the Command (deleted with it) and is its target, as
	// vcctl's commands are.
	ref := metav1.NewControllerRef(job, batch.SchemeGroupVersion.WithKind("Job"))
	cmd := &bus.Command{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    job.Name + "-resync-",
			Namespace:       job.Namespace,
			OwnerReferences: []metav1.OwnerReference{*ref},
		},
		Action:       string(bus.SyncJobAction),
		TargetObject: ref,
		Reason:       events.ReasonPodGroupResynced,
		Message:      "the job controller's PodGroup informer listed again and missed the PodGroup leaving Pending",
	}
	if _, err := volcano.BusV1alpha1().Commands(job.Namespace).Create(ctx, cmd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating a SyncJob Command for Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	events.Normal(ctx, kube, job, events.ReasonPodGroupResynced,
		"the job controller missed this Job's PodGroup leaving Pending (its PodGroup informer listed again, as after a kube-apiserver restart); a SyncJob Command asks it to create the pods")
	return nil
}
