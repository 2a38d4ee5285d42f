package bounds

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"

	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// The svc plugin's keys, written in svc.go, are the line's Volcano's.
func TestSvcKeys(t *testing.T) {
	want := []string{svc.ConfigMapTaskHostFmt, svc.EnvTaskHostFmt, svc.EnvHostNumFmt}
	if diff := cmp.Diff(want, []string{SvcTaskHostFmt, SvcEnvTaskHostFmt, SvcEnvHostNumFmt}); diff != "" {
		t.Errorf("(-Volcano's +ours):\n%s", diff)
	}
}

// SvcHostRanges expand to the <task>.host values of Volcano's
// svc.GenerateHosts (each line ending in a newline), for indexed hosts,
// a template hostname, a template subdomain, a task of no replicas and two
// tasks of one key; SvcRangesConfigMapBytes is their ranges' length with the
// other keys.
func TestSvcHostRangesAreVolcanos(t *testing.T) {
	task := func(name string, replicas int32, hostname, subdomain string) batch.TaskSpec {
		return batch.TaskSpec{Name: name, Replicas: replicas, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Hostname: hostname, Subdomain: subdomain}}}
	}
	for _, tc := range []struct {
		name  string
		tasks []batch.TaskSpec
	}{
		{"llama-70b-sft-lr-sweep-7-of-32-20261204-a1b2c3", []batch.TaskSpec{task("master", 1, "", ""), task("worker", 12000, "", "")}},
		{"shared", []batch.TaskSpec{task("ps", 3, "ps-host", ""), task("worker", 11, "", "other-sub"), task("evaluator", 0, "", "")}},
		{"keys", []batch.TaskSpec{task("a-b", 2, "", ""), task("a_b", 3, "", ""), task("c-d", 1, "", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "ml-training"}, Spec: batch.JobSpec{Tasks: tc.tasks}}
			want := map[string]string{}
			for k, v := range svc.GenerateHosts(job) {
				if strings.HasSuffix(k, ".host") {
					if v != "" {
						v += "\n"
					}
					want[k] = v
				}
			}
			got := map[string]string{}
			ranges := SvcHostRanges(job)
			for k, r := range ranges {
				got[k] = wait.ExpandRanges(r)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-Volcano's +expanded ranges):\n%s", diff)
			}
			total := 0
			for k, v := range svc.GenerateHosts(job) {
				if r, ok := ranges[k]; ok {
					v = wait.RangesFile(r)
				}
				if !SvcHostsEnvDropped(k, len(v)) {
					total += len(v)
				}
			}
			if got := SvcRangesConfigMapBytes(job); got != total {
				t.Errorf("SvcRangesConfigMapBytes = %d, want %d", got, total)
			}
		})
	}
}
