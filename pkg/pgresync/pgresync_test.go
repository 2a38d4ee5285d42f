package pgresync

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/workqueue"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	bus "volcano.sh/apis/pkg/apis/bus/v1alpha1"
	scheduling "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcfake "volcano.sh/apis/pkg/client/clientset/versioned/fake"
	vcinformers "volcano.sh/apis/pkg/client/informers/externalversions"
	"volcano.sh/volcano/pkg/controllers/framework"

	"github.com/vcplugins/framework-plugins/pkg/events"
)

func podGroup(phase scheduling.PodGroupPhase, owner *metav1.OwnerReference) *scheduling.PodGroup {
	pg := &scheduling.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1-uid", Namespace: "ns"},
		Status:     scheduling.PodGroupStatus{Phase: phase},
	}
	if owner != nil {
		pg.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return pg
}

func TestMissedJob(t *testing.T) {
	jobRef := &metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "job-1", UID: "uid", Controller: ptrTrue()}
	notController := jobRef.DeepCopy()
	notController.Controller = nil
	otherKind := jobRef.DeepCopy()
	otherKind.APIVersion, otherKind.Kind = "batch/v1", "Job"
	missed := Missed{Namespace: "ns", PodGroup: "job-1-uid", Job: "job-1", UID: "uid"}
	for _, tc := range []struct {
		name   string
		pg     *scheduling.PodGroup
		want   Missed
		wantOK bool
	}{
		{"inqueue, Volcano Job", podGroup(scheduling.PodGroupInqueue, jobRef), missed, true},
		{"running, Volcano Job", podGroup(scheduling.PodGroupRunning, jobRef), missed, true},
		{"pending: the job controller sees its move as an update", podGroup(scheduling.PodGroupPending, jobRef), Missed{}, false},
		{"no phase yet", podGroup("", jobRef), Missed{}, false},
		{"no controller", podGroup(scheduling.PodGroupInqueue, nil), Missed{}, false},
		{"owner not the controller", podGroup(scheduling.PodGroupInqueue, notController), Missed{}, false},
		{"a batch/v1 Job's PodGroup", podGroup(scheduling.PodGroupInqueue, otherKind), Missed{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := MissedJob(tc.pg)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.wantOK {
				t.Errorf("MissedJob ok = %v, want %v; Missed (-want +got):\n%s", ok, tc.wantOK, diff)
			}
		})
	}
}

func ptrTrue() *bool { b := true; return &b }

func job(phase batch.JobPhase) *batch.Job {
	return &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1", Namespace: "ns", UID: types.UID("uid")},
		Status:     batch.JobStatus{State: batch.JobState{Phase: phase}},
	}
}

// Resync asks for a sync of a Pending Job only, with the Command Volcano's job
// controller executes (its informer keeps Commands whose target is a
// batch.volcano.sh/v1alpha1 Job), and says so on the Job.
func TestResync(t *testing.T) {
	for _, tc := range []struct {
		name        string
		job         *batch.Job
		wantCommand bool
	}{
		{"pending", job(batch.Pending), true},
		{"running: synced since", job(batch.Running), false},
		{"restarting", job(batch.Restarting), false},
		{"deleted", func() *batch.Job {
			j := job(batch.Pending)
			now := metav1.Now()
			j.DeletionTimestamp = &now
			return j
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube, volcano := kubefake.NewSimpleClientset(), vcfake.NewSimpleClientset()
			if err := Resync(context.Background(), kube, volcano, tc.job); err != nil {
				t.Fatal(err)
			}
			cmds, err := volcano.BusV1alpha1().Commands("ns").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := kube.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.wantCommand {
				if len(cmds.Items) != 0 || len(evs.Items) != 0 {
					t.Errorf("got %d Commands and %d events; want none", len(cmds.Items), len(evs.Items))
				}
				return
			}
			if len(cmds.Items) != 1 {
				t.Fatalf("got %d Commands; want 1", len(cmds.Items))
			}
			got := cmds.Items[0]
			wantRef := metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "job-1", UID: "uid", Controller: ptrTrue(), BlockOwnerDeletion: ptrTrue()}
			if diff := cmp.Diff(bus.Command{
				ObjectMeta:   metav1.ObjectMeta{GenerateName: "job-1-resync-", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{wantRef}},
				Action:       "SyncJob",
				TargetObject: &wantRef,
				Reason:       events.ReasonPodGroupResynced,
			}, got, cmpIgnoreMessage); diff != "" {
				t.Errorf("Command (-want +got):\n%s", diff)
			}
			if len(evs.Items) != 1 || evs.Items[0].Reason != events.ReasonPodGroupResynced || evs.Items[0].Type != corev1.EventTypeNormal {
				t.Errorf("events %+v; want one Normal %s", evs.Items, events.ReasonPodGroupResynced)
			}
		})
	}
}

var cmpIgnoreMessage = cmp.Transformer("noMessage", func(c bus.Command) bus.Command {
	c.Message = ""
	return c
})

// The controller acts on PodGroups its informer adds past Pending after its
// first list (a relist found them), not on those of the first list, nor on
// Pending ones.
func TestControllerActsOnAddsAfterTheFirstList(t *testing.T) {
	// As in pkg/waitwatch: apis v1.14.0's informers do not pass on the fake
	// clientset's lack of WatchList support.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	jobRef := func(name string) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: name, UID: types.UID(name), Controller: ptrTrue()}
	}
	pendingJob := func(name string) *batch.Job {
		return &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)}, Status: batch.JobStatus{State: batch.JobState{Phase: batch.Pending}}}
	}
	// Named as Volcano's job controller names them: <job>-<uid>.
	named := func(pg *scheduling.PodGroup, name string) *scheduling.PodGroup {
		pg.Name = name + "-" + name
		return pg
	}
	kube := kubefake.NewSimpleClientset()
	volcano := vcfake.NewSimpleClientset(
		pendingJob("listed"), named(podGroup(scheduling.PodGroupInqueue, jobRef("listed")), "listed"),
		pendingJob("missed"), pendingJob("pending"))
	factory := vcinformers.NewSharedInformerFactory(volcano, 0)
	c := &Controller{}
	if err := c.Initialize(&framework.ControllerOption{KubeClient: kube, VolcanoClient: volcano, VCSharedInformerFactory: factory}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go c.Run(stop)
	ctx := context.Background()
	for !c.pgSynced() || !c.jobSynced() {
		time.Sleep(10 * time.Millisecond)
	}
	for _, pg := range []*scheduling.PodGroup{
		named(podGroup(scheduling.PodGroupPending, jobRef("pending")), "pending"),
		named(podGroup(scheduling.PodGroupInqueue, jobRef("missed")), "missed"),
	} {
		if _, err := volcano.SchedulingV1beta1().PodGroups("ns").Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var targets []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		cmds, err := volcano.BusV1alpha1().Commands("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cmds.Items) > 0 {
			for _, cmd := range cmds.Items {
				targets = append(targets, cmd.TargetObject.Name)
			}
			break
		}
	}
	// One worker, first in first out: had the PodGroup of the first list
	// been queued (at start, before the others), its Command would be
	// there by now too.
	if diff := cmp.Diff([]string{"missed"}, targets); diff != "" {
		t.Errorf("Commands' targets (-want +got):\n%s", diff)
	}
}

// The controller acts only on a Job's own PodGroup: one whose controller
// reference has the Job's UID and whose name is the one Volcano's job
// controller uses for the Job (<job>-<uid>, or the legacy <job> when there is
// no <job>-<uid>). Anyone may create a PodGroup past Pending that names
// someone else's Job.
func TestNextActsOnlyOnTheJobsPodGroup(t *testing.T) {
	owned := func(name string, uid types.UID) *scheduling.PodGroup {
		pg := podGroup(scheduling.PodGroupInqueue, &metav1.OwnerReference{
			APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "job-1", UID: uid, Controller: ptrTrue()})
		pg.Name = name
		return pg
	}
	for _, tc := range []struct {
		name string
		// existing are the PodGroups in the informer; the last one's add
		// event is queued.
		existing []*scheduling.PodGroup
		job      *batch.Job
		want     []string // the Commands' targets
	}{
		{"the Job's PodGroup", []*scheduling.PodGroup{owned("job-1-uid", "uid")}, job(batch.Pending), []string{"job-1"}},
		{"a legacy PodGroup, named as the Job", []*scheduling.PodGroup{owned("job-1", "uid")}, job(batch.Pending), []string{"job-1"}},
		{"another controller UID", []*scheduling.PodGroup{owned("job-1-other", "other")}, job(batch.Pending), nil},
		{"another controller UID, the Job's PodGroup name", []*scheduling.PodGroup{owned("job-1-uid", "other")}, job(batch.Pending), nil},
		{"the Job's UID, another name", []*scheduling.PodGroup{owned("job-1-uid", "uid"), owned("decoy", "uid")}, job(batch.Pending), nil},
		{"the Job's UID, the legacy name while the Job's PodGroup exists", []*scheduling.PodGroup{owned("job-1-uid", "uid"), owned("job-1", "uid")}, job(batch.Pending), nil},
		{"no such Job", []*scheduling.PodGroup{owned("job-1-uid", "uid")}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube, volcano := kubefake.NewSimpleClientset(), vcfake.NewSimpleClientset()
			factory := vcinformers.NewSharedInformerFactory(volcano, 0)
			pgs, jobs := factory.Scheduling().V1beta1().PodGroups(), factory.Batch().V1alpha1().Jobs()
			for _, pg := range tc.existing {
				if err := pgs.Informer().GetIndexer().Add(pg); err != nil {
					t.Fatal(err)
				}
			}
			if tc.job != nil {
				if err := jobs.Informer().GetIndexer().Add(tc.job); err != nil {
					t.Fatal(err)
				}
			}
			c := &Controller{kube: kube, volcano: volcano, jobLister: jobs.Lister(), pgLister: pgs.Lister(),
				queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[Missed]())}
			defer c.queue.ShutDown()
			m, ok := MissedJob(tc.existing[len(tc.existing)-1])
			if !ok {
				t.Fatal("MissedJob: not ok")
			}
			c.queue.Add(m)
			c.next()
			cmds, err := volcano.BusV1alpha1().Commands("ns").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cmd := range cmds.Items {
				got = append(got, cmd.TargetObject.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Commands' targets (-want +got):\n%s", diff)
			}
			evs, err := kube.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs.Items) != len(tc.want) {
				t.Errorf("%d events, want %d", len(evs.Items), len(tc.want))
			}
			if c.queue.Len() != 0 || c.queue.NumRequeues(m) != 0 {
				t.Errorf("queue holds %d, %d requeues; want it done with", c.queue.Len(), c.queue.NumRequeues(m))
			}
		})
	}
}
