package ownedcm

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func TestApplyAndDelete(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	job := jobtest.MakeJob("mpi").Obj()
	labels := map[string]string{"app": "x"}
	for i := 0; i < 2; i++ {
		if err := Apply(ctx, client, job, "mpi-hostfile", labels, map[string]string{"hostfile": "a"}); err != nil {
			t.Fatalf("Apply %d: %v", i, err)
		}
	}
	if err := Apply(ctx, client, job, "mpi-hostfile", labels, map[string]string{"hostfile": "b"}); err != nil {
		t.Fatalf("Apply update: %v", err)
	}
	cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "mpi-hostfile", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"hostfile": "b"}, cm.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metav1.OwnerReference{ControllerRef(job)}, cm.OwnerReferences); diff != "" {
		t.Errorf("ownerReferences (-want +got):\n%s", diff)
	}
	if !*cm.OwnerReferences[0].Controller {
		t.Errorf("owner reference is not a controller reference")
	}
	for i := 0; i < 2; i++ {
		if err := Delete(ctx, client, job, "mpi-hostfile"); err != nil {
			t.Fatalf("Delete %d: %v", i, err)
		}
	}
	if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "mpi-hostfile", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap still there: %v", err)
	}
}

func TestForeignConfigMapIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	foreign := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mpi-hostfile", Namespace: "default"}, Data: map[string]string{"mine": "1"}}
	client := fake.NewSimpleClientset(foreign)
	job := jobtest.MakeJob("mpi").Obj()
	var notOwned *NotOwnedError
	if err := Apply(ctx, client, job, "mpi-hostfile", nil, map[string]string{"hostfile": "a"}); !errors.As(err, &notOwned) {
		t.Fatalf("Apply: got %v, want *NotOwnedError", err)
	}
	if err := Delete(ctx, client, job, "mpi-hostfile"); !errors.As(err, &notOwned) {
		t.Fatalf("Delete: got %v, want *NotOwnedError", err)
	}
	cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "mpi-hostfile", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(foreign.Data, cm.Data); diff != "" {
		t.Errorf("foreign ConfigMap changed (-want +got):\n%s", diff)
	}
	want := "ConfigMap default/mpi-hostfile exists and is not controlled by Job mpi; rename or delete it"
	if notOwned.Error() != want {
		t.Errorf("message = %q, want %q", notOwned.Error(), want)
	}
}

func TestCheck(t *testing.T) {
	job := jobtest.MakeJob("mpi").Obj()
	ours := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{ControllerRef(job)}}}
	theirs := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default"}}
	cases := map[string]struct {
		existing []*v1.ConfigMap
		want     error
	}{
		"missing": {},
		"ours":    {existing: []*v1.ConfigMap{ours}},
		"theirs":  {existing: []*v1.ConfigMap{theirs}, want: &NotOwnedError{Namespace: "default", Name: "h", Job: "mpi"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			for _, cm := range tc.existing {
				if _, err := client.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			got := Check(context.Background(), client, job, "h")
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

// A write that loses a race with another writer (409) is read again and
// retried rather than returned: the Job's sync would fail and count towards
// Volcano's requeues.
func TestConflictsAreRetried(t *testing.T) {
	job := jobtest.MakeJob("mpi").Obj()
	ours := func(data string) *v1.ConfigMap {
		return &v1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "default", UID: "uid-1",
				OwnerReferences: []metav1.OwnerReference{ControllerRef(job)}},
			Data: map[string]string{"hostfile": data},
		}
	}
	gr := v1.Resource("configmaps")
	cases := map[string]struct {
		existing *v1.ConfigMap
		verb     string
		// fail is the error of the first verb call; raced, if set, is created
		// first, as by another worker.
		fail  error
		raced *v1.ConfigMap
		run   func(context.Context, *fake.Clientset) error
		// wantCalls is how often verb is called: the retry of a lost create
		// finds the other worker's ConfigMap and updates it.
		wantCalls int
		wantData  map[string]string // nil: the ConfigMap is gone
		wantErr   bool
	}{
		"update conflicts once": {
			existing: ours("old"),
			verb:     "update",
			fail:     apierrors.NewConflict(gr, "h", errors.New("the object has been modified")),
			run: func(ctx context.Context, c *fake.Clientset) error {
				return Apply(ctx, c, job, "h", nil, map[string]string{"hostfile": "new"})
			},
			wantCalls: 2,
			wantData:  map[string]string{"hostfile": "new"},
		},
		"create races with another worker": {
			verb:  "create",
			fail:  apierrors.NewAlreadyExists(gr, "h"),
			raced: ours("theirs"),
			run: func(ctx context.Context, c *fake.Clientset) error {
				return Apply(ctx, c, job, "h", nil, map[string]string{"hostfile": "new"})
			},
			wantCalls: 1,
			wantData:  map[string]string{"hostfile": "new"},
		},
		"delete of a replaced ConfigMap": {
			existing: ours("old"),
			verb:     "delete",
			fail:     apierrors.NewConflict(gr, "h", errors.New("Precondition failed: UID in precondition")),
			run: func(ctx context.Context, c *fake.Clientset) error {
				return Delete(ctx, c, job, "h")
			},
			wantCalls: 2,
		},
		"a conflict every time is returned": {
			existing: ours("old"),
			verb:     "update",
			run: func(ctx context.Context, c *fake.Clientset) error {
				c.PrependReactor("update", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewConflict(gr, "h", errors.New("the object has been modified"))
				})
				return Apply(ctx, c, job, "h", nil, map[string]string{"hostfile": "new"})
			},
			wantData: map[string]string{"hostfile": "old"},
			wantErr:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client := fake.NewSimpleClientset()
			if tc.existing != nil {
				if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, tc.existing, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			calls := 0
			client.PrependReactor(tc.verb, "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
				calls++
				if calls > 1 || tc.fail == nil {
					return false, nil, nil
				}
				if tc.raced != nil {
					if err := client.Tracker().Add(tc.raced); err != nil {
						t.Fatal(err)
					}
				}
				return true, nil, tc.fail
			})
			err := tc.run(ctx, client)
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Fatalf("error = %v, want error: %v", err, tc.wantErr)
			}
			if tc.wantErr && !apierrors.IsConflict(err) {
				t.Errorf("error = %v, want a conflict", err)
			}
			if tc.fail != nil && calls != tc.wantCalls {
				t.Errorf("%s called %d times, want %d", tc.verb, calls, tc.wantCalls)
			}
			cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "h", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				cm, err = nil, nil
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if cm != nil {
				got = cm.Data
			}
			if diff := cmp.Diff(tc.wantData, got); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// Sync of a new Job's ConfigMap creates it without reading first; a
// started Job's, or one whose ConfigMap exists, is read first. The calls are
// what the API server sees, by verb.
func TestSyncCalls(t *testing.T) {
	ours := func(job, data string) *v1.ConfigMap {
		j := jobtest.MakeJob(job).Obj()
		return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mpi-hostfile", Namespace: "default",
			Labels: map[string]string{"volcano.sh/job-name": job}, OwnerReferences: []metav1.OwnerReference{ControllerRef(j)}},
			Data: map[string]string{"hostfile": data}}
	}
	foreign := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mpi-hostfile", Namespace: "default"}}
	cases := map[string]struct {
		phase    string
		existing []runtime.Object
		want     []string
		conflict bool
	}{
		"new Job":                               {want: []string{"create"}},
		"new Job, ConfigMap there and current":  {existing: []runtime.Object{ours("mpi", "a")}, want: []string{"create", "get"}},
		"new Job, ConfigMap there and outdated": {existing: []runtime.Object{ours("mpi", "old")}, want: []string{"create", "get", "update"}},
		"new Job, another owner's ConfigMap":    {existing: []runtime.Object{foreign}, want: []string{"create", "get"}, conflict: true},
		"running Job":                           {phase: "Running", want: []string{"get", "create"}},
		"running Job, ConfigMap current":        {phase: "Running", existing: []runtime.Object{ours("mpi", "a")}, want: []string{"get"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			client := fake.NewSimpleClientset(tc.existing...)
			job := jobtest.MakeJob("mpi").Obj()
			job.Status.State.Phase = batch.JobPhase(tc.phase)
			kept := Kept{Plugin: "mpi", Purpose: "the hostfile", Name: func(*batch.Job) string { return "mpi-hostfile" }}
			var s Synced
			err := kept.Sync(client, job, &s, map[string]string{"hostfile": "a"})
			if got := errors.As(err, new(*ConflictError)); got != tc.conflict || (!tc.conflict && err != nil) {
				t.Fatalf("Sync: %v, want a conflict: %v", err, tc.conflict)
			}
			var got []string
			for _, a := range client.Actions() {
				if a.GetResource().Resource == "configmaps" {
					got = append(got, a.GetVerb())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if tc.conflict {
				return
			}
			cm, err := client.CoreV1().ConfigMaps("default").Get(context.Background(), "mpi-hostfile", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ours("mpi", "a").Data, cm.Data); diff != "" || !metav1.IsControlledBy(cm, job) {
				t.Errorf("ConfigMap data (-want +got):\n%s, controlled by the Job: %v", diff, metav1.IsControlledBy(cm, job))
			}
		})
	}
}

// A ConfigMap whose controller reference has the Job's UID under another
// apiVersion, kind or name is not the Job's (the chart's job-object-claims
// policy stops only references with all the Job's coordinates): Apply,
// Delete and Check report a *NotOwnedError and leave it as it is. The Job's
// own reference is still adopted.
func TestForgedControllerRefIsNotOwned(t *testing.T) {
	job := jobtest.MakeJob("mpi").Obj()
	real := ControllerRef(job)
	forged := func(f func(*metav1.OwnerReference)) metav1.OwnerReference { r := real; f(&r); return r }
	notOwned := &NotOwnedError{Namespace: "default", Name: "mpi-hostfile", Job: "mpi"}
	for _, tc := range []struct {
		name string
		ref  metav1.OwnerReference
		// want is the error of Apply, Delete and Check; nil: the ConfigMap
		// is the Job's.
		want error
	}{
		{"the Job's reference", real, nil},
		{"the Job's UID, another apiVersion, kind and name", metav1.OwnerReference{
			APIVersion: "example.invalid/v1", Kind: "Decoy", Name: "x", UID: job.UID, Controller: ptr.To(true)}, notOwned},
		{"the Job's UID, another kind", forged(func(r *metav1.OwnerReference) { r.Kind = "Decoy" }), notOwned},
		{"the Job's UID, another apiVersion", forged(func(r *metav1.OwnerReference) { r.APIVersion = "example.invalid/v1" }), notOwned},
		{"the Job's UID, another name", forged(func(r *metav1.OwnerReference) { r.Name = "x" }), notOwned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			existing := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mpi-hostfile", Namespace: "default",
				OwnerReferences: []metav1.OwnerReference{tc.ref}}, Data: map[string]string{"hostfile": "attacker 22"}}
			client := fake.NewSimpleClientset(existing)
			errs := cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })
			if diff := cmp.Diff(tc.want, Check(ctx, client, job, "mpi-hostfile"), errs); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, Apply(ctx, client, job, "mpi-hostfile", nil, map[string]string{"hostfile": "mpi-worker-0"}), errs); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
			cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "mpi-hostfile", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantData := existing.Data
			if tc.want == nil {
				wantData = map[string]string{"hostfile": "mpi-worker-0"}
			}
			if diff := cmp.Diff(wantData, cm.Data); diff != "" {
				t.Errorf("data after Apply (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, Delete(ctx, client, job, "mpi-hostfile"), errs); diff != "" {
				t.Errorf("Delete (-want +got):\n%s", diff)
			}
			_, err = client.CoreV1().ConfigMaps("default").Get(ctx, "mpi-hostfile", metav1.GetOptions{})
			if deleted := apierrors.IsNotFound(err); deleted != (tc.want == nil) {
				t.Errorf("after Delete: deleted %v (%v), want %v", deleted, err, tc.want == nil)
			}
		})
	}
}
