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
	for _, tc := range []struct {
		name    string
		pg      *scheduling.PodGroup
		wantKey string
		wantOK  bool
	}{
		{"inqueue, Volcano Job", podGroup(scheduling.PodGroupInqueue, jobRef), "ns/job-1", true},
		{"running, Volcano Job", podGroup(scheduling.PodGroupRunning, jobRef), "ns/job-1", true},
		{"pending: the job controller sees its move as an update", podGroup(scheduling.PodGroupPending, jobRef), "", false},
		{"no phase yet", podGroup("", jobRef), "", false},
		{"no controller", podGroup(scheduling.PodGroupInqueue, nil), "", false},
		{"owner not the controller", podGroup(scheduling.PodGroupInqueue, notController), "", false},
		{"a batch/v1 Job's PodGroup", podGroup(scheduling.PodGroupInqueue, otherKind), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, ok := MissedJob(tc.pg)
			if key != tc.wantKey || ok != tc.wantOK {
				t.Errorf("MissedJob = %q, %v; want %q, %v", key, ok, tc.wantKey, tc.wantOK)
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
	named := func(pg *scheduling.PodGroup, name string) *scheduling.PodGroup { pg.Name = name + "-pg"; return pg }
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
