package jobs

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

func TestHosts(t *testing.T) {
	job := &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "tf", Namespace: "ml"}}
	plain := &batch.TaskSpec{Name: "worker", Replicas: 2}
	named := &batch.TaskSpec{Name: "ps", Replicas: 1, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Hostname: "params", Subdomain: "net"}}}
	if diff := cmp.Diff([]string{"tf-worker-0.tf.ml.svc.cluster.local:22", "tf-worker-1.tf.ml.svc.cluster.local:22"}, Hosts(job, plain, 22)); diff != "" {
		t.Errorf("Hosts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"params.net.ml.svc.cluster.local"}, Hosts(job, named, 0)); diff != "" {
		t.Errorf("Hosts with template names (-want +got):\n%s", diff)
	}
	if got := Hostname(job, plain, 1); got != "tf-worker-1" {
		t.Errorf("Hostname = %q", got)
	}
}

func TestPodIndex(t *testing.T) {
	cases := map[string]struct {
		pod     v1.Pod
		want    int
		wantErr bool
	}{
		"annotation":  {pod: v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "j-w-9", Annotations: map[string]string{batch.TaskIndex: "3"}}}, want: 3},
		"name suffix": {pod: v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "j-w-7"}}, want: 7},
		"neither":     {pod: v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "standalone"}}, wantErr: true},
		"negative":    {pod: v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{batch.TaskIndex: "-1"}}}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PodIndex(&tc.pod)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("PodIndex = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestFirstContainerResource(t *testing.T) {
	gpu := v1.ResourceName("nvidia.com/gpu")
	task := func(r v1.ResourceRequirements) *batch.TaskSpec {
		return &batch.TaskSpec{Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Resources: r}}}}}
	}
	cases := map[string]struct {
		task *batch.TaskSpec
		want int64
	}{
		"request":       {task: task(v1.ResourceRequirements{Requests: v1.ResourceList{gpu: resource.MustParse("2")}}), want: 2},
		"limit only":    {task: task(v1.ResourceRequirements{Limits: v1.ResourceList{gpu: resource.MustParse("4")}}), want: 4},
		"none":          {task: task(v1.ResourceRequirements{}), want: 0},
		"no containers": {task: &batch.TaskSpec{}, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := FirstContainerResource(tc.task, gpu); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestResourceNames(t *testing.T) {
	one := resource.MustParse("1")
	zero := resource.MustParse("0")
	spec := &v1.PodSpec{
		InitContainers: []v1.Container{{Resources: v1.ResourceRequirements{Limits: v1.ResourceList{"amd.com/gpu": one}}}},
		Containers: []v1.Container{
			{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{"nvidia.com/gpu": one, v1.ResourceCPU: one}, Limits: v1.ResourceList{"nvidia.com/gpu": one}}},
			{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{"gpu.intel.com/i915": zero}}},
		},
	}
	want := []v1.ResourceName{"amd.com/gpu", "nvidia.com/gpu"}
	if diff := cmp.Diff(want, ResourceNames(spec, IsGPU)); diff != "" {
		t.Errorf("ResourceNames (-want +got):\n%s", diff)
	}
	if !RequestsResource(spec, IsGPU) || RequestsResource(&v1.PodSpec{}, IsGPU) {
		t.Errorf("RequestsResource disagrees with ResourceNames")
	}
}

func TestTaskNames(t *testing.T) {
	job := &batch.Job{Spec: batch.JobSpec{Tasks: []batch.TaskSpec{{Name: "ps"}, {Name: "worker"}}}}
	if got := TaskNames(job); got != "ps, worker" {
		t.Errorf("TaskNames = %q", got)
	}
	if got := TaskNames(&batch.Job{}); got != "none" {
		t.Errorf("TaskNames of no tasks = %q", got)
	}
}

// HostsLen and IndexDigits agree with the strings Hosts builds.
func TestHostsLen(t *testing.T) {
	job := &batch.Job{}
	job.Name = "job"
	named := batch.TaskSpec{Name: "worker", Replicas: 3}
	named.Template.Spec.Hostname = "fixed"
	sub := batch.TaskSpec{Name: "w", Replicas: 1}
	sub.Template.Spec.Subdomain = "custom"
	for _, task := range []batch.TaskSpec{
		{Name: "worker", Replicas: 0}, {Name: "worker", Replicas: 1}, {Name: "worker", Replicas: 10},
		{Name: "worker", Replicas: 11}, {Name: "w", Replicas: 1001}, named, sub,
	} {
		for _, port := range []int{0, 22, 65535} {
			want := 0
			for _, h := range Hosts(job, &task, port) {
				want += len(h)
			}
			if got := HostsLen(job, &task, port); got != want {
				t.Errorf("HostsLen(%s x%d, port %d) = %d, want %d", task.Name, task.Replicas, port, got, want)
			}
		}
	}
	for _, n := range []int{-1, 0, 1, 9, 10, 11, 99, 100, 12345} {
		want := 0
		for i := 0; i < n; i++ {
			want += len(strconv.Itoa(i))
		}
		if got := IndexDigits(n); got != want {
			t.Errorf("IndexDigits(%d) = %d, want %d", n, got, want)
		}
	}
	if got, want := IndexDigits(1<<31-1), 20363725360; got != want {
		t.Errorf("IndexDigits(2^31-1) = %d, want %d", got, want)
	}
}
