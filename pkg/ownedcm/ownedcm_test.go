package ownedcm

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	utiltesting "github.com/vcplugins/framework-plugins/pkg/testing"
)

func TestApplyAndDelete(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	job := utiltesting.MakeJob("mpi").Obj()
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
	job := utiltesting.MakeJob("mpi").Obj()
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
	job := utiltesting.MakeJob("mpi").Obj()
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
