package ownedcm

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// Every Sync that reaches the API counts once in
// framework_plugins_configmap_syncs_total, by its result; one within
// Recheck of a success does not.
func TestSyncMetrics(t *testing.T) {
	job := jobtest.MakeJob("mpi").Obj()
	theirs := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mpi-hostfile", Namespace: "default"}}
	cases := map[string]struct {
		existing []runtime.Object
		failAPI  bool
		syncs    int
		want     map[string]float64
	}{
		"created, then within Recheck": {syncs: 2, want: map[string]float64{metrics.SyncOK: 1}},
		"another owner's":              {existing: []runtime.Object{theirs}, syncs: 2, want: map[string]float64{metrics.SyncConflict: 2}},
		"API error":                    {failAPI: true, syncs: 1, want: map[string]float64{metrics.SyncError: 1}},
	}
	results := []string{metrics.SyncOK, metrics.SyncConflict, metrics.SyncError}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			client := fake.NewSimpleClientset(tc.existing...)
			if tc.failAPI {
				client.PrependReactor("*", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewServiceUnavailable("etcd is down")
				})
			}
			kept := Kept{Plugin: "mpi", Purpose: "the hostfile", Name: func(*batch.Job) string { return "mpi-hostfile" },
				Now: func() time.Time { return time.Unix(1000, 0) }}
			before := map[string]float64{}
			for _, r := range results {
				before[r] = testutil.ToFloat64(metrics.ConfigMapSyncs.WithLabelValues("mpi", r))
			}
			var s Synced
			for i := 0; i < tc.syncs; i++ {
				err := kept.Sync(client, job, &s, map[string]string{"hostfile": "a"})
				if tc.want[metrics.SyncOK] > 0 && err != nil {
					t.Fatalf("Sync %d: %v", i, err)
				}
				if tc.want[metrics.SyncConflict] > 0 && !errors.As(err, new(*ConflictError)) {
					t.Fatalf("Sync %d: %v, want a *ConflictError", i, err)
				}
			}
			got := map[string]float64{}
			for _, r := range results {
				if d := testutil.ToFloat64(metrics.ConfigMapSyncs.WithLabelValues("mpi", r)) - before[r]; d != 0 {
					got[r] = d
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("syncs by result moved (-want +got):\n%s", diff)
			}
		})
	}
}
