package localcluster

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEnvBytes(t *testing.T) {
	tf := corev1.EnvVar{Name: "TF_CONFIG", Value: `{"cluster":$(TF_CONFIG_CLUSTER),"task":{"type":"worker","index":3}}`}
	cluster := corev1.EnvVar{Name: "TF_CONFIG_CLUSTER", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "resnet50-train-tf-cluster"}, Key: "cluster"}}}
	other := corev1.EnvVar{Name: "VC_TASK_INDEX", Value: "3"}
	// entry is an EnvVar's share of its container's encoding: the field
	// tag (Container.env is field 7), the length and the message.
	entry := func(e corev1.EnvVar) int { return protowire.SizeTag(7) + protowire.SizeBytes(e.Size()) }
	// The API server's managedFields spelling of two variables of one container.
	const fieldsTF = `{"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:env":{".":{},` +
		`"k:{\"name\":\"TF_CONFIG\"}":{".":{},"f:name":{},"f:value":{}},` +
		`"k:{\"name\":\"VC_TASK_INDEX\"}":{".":{},"f:name":{},"f:value":{}}}}}}}`
	tfFieldsLen := len(`"k:{\"name\":\"TF_CONFIG\"}":{".":{},"f:name":{},"f:value":{}},`)

	pod := func(init, main []corev1.EnvVar, fields string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "resnet50-train-worker-3"}}
		if init != nil {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Env: init}}
		}
		p.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox", Env: main}}
		if fields != "" {
			p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "vc-controller-manager", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}}
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		names []string
		want  int
	}{
		{"none of the names", pod(nil, []corev1.EnvVar{other}, ""), []string{"TF_CONFIG"}, 0},
		{"one variable", pod(nil, []corev1.EnvVar{tf, other}, ""), []string{"TF_CONFIG"}, entry(tf)},
		{"two names", pod(nil, []corev1.EnvVar{cluster, tf, other}, ""), []string{"TF_CONFIG", "TF_CONFIG_CLUSTER"}, entry(tf) + entry(cluster)},
		{"init containers too", pod([]corev1.EnvVar{tf}, []corev1.EnvVar{tf}, ""), []string{"TF_CONFIG"}, 2 * entry(tf)},
		{"managedFields entries", pod(nil, []corev1.EnvVar{tf, other}, fieldsTF), []string{"TF_CONFIG"}, entry(tf) + tfFieldsLen},
		{"managedFields of other variables", pod(nil, []corev1.EnvVar{other}, strings.ReplaceAll(fieldsTF, "TF_CONFIG", "VC_OTHER")), []string{"TF_CONFIG"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EnvBytes(tc.pod, tc.names...)
			if err != nil {
				t.Fatal(err)
			}
			// Removing the entries also shortens the length prefixes of the
			// messages around them (container, spec): a byte each at most
			// at these sizes.
			if got < tc.want || got > tc.want+2*len(tc.pod.Spec.InitContainers)+2 || (tc.want == 0 && got != 0) {
				t.Errorf("EnvBytes = %d, want %d (plus at most a byte per enclosing message)", got, tc.want)
			}
		})
	}
	if _, err := EnvBytes(pod(nil, nil, "{"), "TF_CONFIG"); err == nil {
		t.Error("EnvBytes of a pod with invalid managedFields: no error")
	}
}
