package training

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

func TestWithCheckTimeout(t *testing.T) {
	job := func(env ...corev1.EnvVar) *batch.Job {
		spec := corev1.PodSpec{Containers: []corev1.Container{
			{Name: "check", Env: env},
			{Name: "sidecar"},
		}}
		return &batch.Job{Spec: batch.JobSpec{Tasks: []batch.TaskSpec{
			{Name: "chief", Template: corev1.PodTemplateSpec{Spec: *spec.DeepCopy()}},
			{Name: "worker", Template: corev1.PodTemplateSpec{Spec: *spec.DeepCopy()}},
		}}}
	}
	check := Example{Contract: true, Container: "check"}
	other := corev1.EnvVar{Name: "RANK", Value: "0"}
	for _, tc := range []struct {
		name string
		ex   Example
		d    time.Duration
		in   *batch.Job
		want *batch.Job
	}{
		{"set", check, 90 * time.Minute, job(), job(corev1.EnvVar{Name: CheckTimeoutEnv, Value: "5400"})},
		{"rounded up to whole seconds", check, 1500 * time.Millisecond, job(), job(corev1.EnvVar{Name: CheckTimeoutEnv, Value: "2"})},
		{"replaces the Job's own, keeps the rest", check, time.Minute,
			job(corev1.EnvVar{Name: CheckTimeoutEnv, Value: "180"}, other),
			job(other, corev1.EnvVar{Name: CheckTimeoutEnv, Value: "60"})},
		{"zero: as written", check, 0, job(other), job(other)},
		{"an example that trains: as written", Example{Container: "check"}, time.Hour, job(), job()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.ex.WithCheckTimeout(tc.in, tc.d)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
