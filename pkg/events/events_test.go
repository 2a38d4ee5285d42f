package events

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

func TestWarnRecordsOnce(t *testing.T) {
	client := fake.NewSimpleClientset()
	job := jobtest.MakeJob("tf").Obj()
	ctx := context.Background()
	Warn(ctx, client, job, ReasonInvalidArguments, "bad --port")
	Warn(ctx, client, job, ReasonInvalidArguments, "bad --port")
	Warn(ctx, client, job, ReasonInvalidArguments, strings.Repeat("x", 3000))
	evs, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 2 {
		t.Fatalf("got %d events, want 2 (one per distinct message)", len(evs.Items))
	}
	for _, ev := range evs.Items {
		if ev.Type != v1.EventTypeWarning || ev.Reason != ReasonInvalidArguments || ev.InvolvedObject.Kind != "Job" ||
			ev.InvolvedObject.Name != "tf" || ev.InvolvedObject.UID != job.UID {
			t.Errorf("unexpected event %+v", ev)
		}
		if len(ev.Message) > 1024 {
			t.Errorf("message of %d characters exceeds the API limit", len(ev.Message))
		}
	}
}

// An event that already has the Warning's name but is not the Warning (a
// co-tenant's, made to suppress it) does not stop it: the Warning is recorded
// under a generated name. Our own event of that name still dedups.
func TestWarnNotSuppressedByAnotherEvent(t *testing.T) {
	job := jobtest.MakeJob("tf").Obj()
	ctx := context.Background()
	// The name record gives the Warning, read from a first recording.
	probe := fake.NewSimpleClientset()
	Warn(ctx, probe, job, ReasonObjectConflict, "Secret default/tf-ssh is in the way")
	list, err := probe.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("first recording: %v, %d events", err, len(list.Items))
	}
	ours := list.Items[0]
	ours.ResourceVersion = ""
	edit := func(f func(*v1.Event)) *v1.Event { e := ours.DeepCopy(); f(e); return e }
	for _, tc := range []struct {
		name     string
		existing *v1.Event
		// want are the events after Warn, as source/involved object UID/
		// reason/message, the existing one first.
		want []string
	}{
		{"ours: recorded once", edit(func(e *v1.Event) { e.InvolvedObject.ResourceVersion = "1" }), []string{
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way"}},
		{"another source", edit(func(e *v1.Event) { e.Source.Component = "someone" }), []string{
			"someone/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way",
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way"}},
		{"another object", edit(func(e *v1.Event) { e.InvolvedObject.UID = "uid-other" }), []string{
			"vc-controller-manager/uid-other/PluginObjectConflict/Secret default/tf-ssh is in the way",
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way"}},
		{"another object name", edit(func(e *v1.Event) { e.InvolvedObject.Name = "elsewhere" }), []string{
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way",
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way"}},
		{"another message", edit(func(e *v1.Event) { e.Message = "all is well" }), []string{
			"vc-controller-manager/uid-tf/PluginObjectConflict/all is well",
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way"}},
		{"a Normal event", edit(func(e *v1.Event) { e.Type = v1.EventTypeNormal }), []string{
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way",
			"vc-controller-manager/uid-tf/PluginObjectConflict/Secret default/tf-ssh is in the way"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(tc.existing)
			generated := 0
			// The fake clientset does not generate names; the API server does.
			client.PrependReactor("create", "events", func(a clienttesting.Action) (bool, runtime.Object, error) {
				ev := a.(clienttesting.CreateAction).GetObject().(*v1.Event)
				if ev.Name == "" && ev.GenerateName != "" {
					generated++
					ev.Name = ev.GenerateName + strconv.Itoa(generated)
				}
				return false, nil, nil
			})
			// As Volcano's chart: vc-controller-manager may list events, not get them.
			client.PrependReactor("get", "events", func(a clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(v1.Resource("events"), a.(clienttesting.GetAction).GetName(), nil)
			})
			Warn(ctx, client, job, ReasonObjectConflict, "Secret default/tf-ssh is in the way")
			Warn(ctx, client, job, ReasonObjectConflict, "Secret default/tf-ssh is in the way")
			evs, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range evs.Items {
				if e.Name != tc.existing.Name && (!strings.HasPrefix(e.Name, "tf.") || e.Type != v1.EventTypeWarning) {
					t.Errorf("event %s of type %s, want a Warning named tf.<suffix>", e.Name, e.Type)
				}
				got = append(got, e.Source.Component+"/"+string(e.InvolvedObject.UID)+"/"+e.Reason+"/"+e.Message)
			}
			if len(tc.want) == 1 {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				return
			}
			// Not ours: each report adds one under a generated name.
			want := append(tc.want, tc.want[1])
			if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestControlledBy(t *testing.T) {
	job := jobtest.MakeJob("tf").Obj()
	real := *metav1.NewControllerRef(job, batch.SchemeGroupVersion.WithKind("Job"))
	with := func(f func(*metav1.OwnerReference)) metav1.OwnerReference { r := real; f(&r); return r }
	notController := with(func(r *metav1.OwnerReference) { r.Controller = nil })
	for _, tc := range []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{"the Job's controller reference", []metav1.OwnerReference{real}, true},
		{"after a plain owner", []metav1.OwnerReference{with(func(r *metav1.OwnerReference) { r.Controller = nil; r.UID = "x" }), real}, true},
		{"no owner", nil, false},
		{"an owner, not the controller", []metav1.OwnerReference{notController}, false},
		{"another kind with the Job's UID", []metav1.OwnerReference{with(func(r *metav1.OwnerReference) { r.Kind = "Decoy" })}, false},
		{"another apiVersion with the Job's UID", []metav1.OwnerReference{with(func(r *metav1.OwnerReference) { r.APIVersion = "example.invalid/v1" })}, false},
		{"another version of the group", []metav1.OwnerReference{with(func(r *metav1.OwnerReference) { r.APIVersion = "batch.volcano.sh/v1" })}, false},
		{"another name with the Job's UID", []metav1.OwnerReference{with(func(r *metav1.OwnerReference) { r.Name = "x" })}, false},
		{"the Job's name, another UID", []metav1.OwnerReference{with(func(r *metav1.OwnerReference) { r.UID = "uid-older-tf" })}, false},
		{"all forged but the UID", []metav1.OwnerReference{{APIVersion: "example.invalid/v1", Kind: "Decoy", Name: "x", UID: job.UID, Controller: ptr.To(true)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tf-cm", Namespace: "default", OwnerReferences: tc.refs}}
			if got := ControlledBy(cm, job); got != tc.want {
				t.Errorf("ControlledBy(%v) = %v, want %v", tc.refs, got, tc.want)
			}
		})
	}
}
