package training

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

func TestLocalizeUnknownImage(t *testing.T) {
	job := &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batch.JobSpec{Tasks: []batch.TaskSpec{{
		Name: "t", Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "tensorflow/tensorflow:2.16.1"}}}},
	}}}}
	if _, err := Localize(job); err == nil {
		t.Error("Localize accepted an image without a local one")
	}
}
