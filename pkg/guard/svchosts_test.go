package guard

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// hostsJob is a pytorch-shaped Job of one master and workers workers named
// name, with the svc plugin.
func hostsJob(name string, workers int32) *batch.Job {
	return &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml-training", UID: "uid-1"},
		Spec: batch.JobSpec{Tasks: []batch.TaskSpec{
			{Name: "master", Replicas: 1, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}},
			{Name: "worker", Replicas: workers, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}},
		}, Plugins: map[string][]string{"svc": nil}},
		Status: batch.JobStatus{ControlledResources: map[string]string{}},
	}
}

// A Job whose <task>.host files pass the 1 MiB a ConfigMap holds (12,000
// workers, a 46-character name: Volcano's svc writes 1.2 MB, which the API
// server refuses): the guarded svc writes each as its ranges, and the
// ConfigMap is bounds.SvcRangesConfigMapBytes long; the other keys are
// Volcano's. Below the bound (8,192 workers) the files stay as they are.
func TestSvcHostFilesAsRanges(t *testing.T) {
	for _, tc := range []struct {
		workers int32
		ranges  bool
	}{{8192, false}, {12000, true}} {
		job := hostsJob("llama-70b-sft-lr-sweep-7-of-32-20261204-a1b2c3", tc.workers)
		if got := bounds.SvcHostsAsRanges(job); got != tc.ranges {
			t.Fatalf("%d workers: SvcHostsAsRanges = %v, want %v", tc.workers, got, tc.ranges)
		}
		stockClient, guardedClient := fake.NewClientset(), fake.NewClientset()
		if err := stockBuilders["svc"](pluginsinterface.PluginClientset{KubeClients: stockClient}, nil).OnJobAdd(job.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		if err := Wrap("svc", stockBuilders["svc"])(pluginsinterface.PluginClientset{KubeClients: guardedClient}, nil).OnJobAdd(job.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		stock, err := stockClient.CoreV1().ConfigMaps(job.Namespace).Get(t.Context(), job.Name+"-svc", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		guarded, err := guardedClient.CoreV1().ConfigMaps(job.Namespace).Get(t.Context(), job.Name+"-svc", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for k, v := range stock.Data {
			switch {
			case bounds.SvcHostsEnvDropped(k, len(v)):
			case tc.ranges && strings.HasSuffix(k, ".host"):
				r := bounds.SvcHostRanges(job)[k]
				if got := wait.ExpandRanges(r); got != v+"\n" {
					t.Errorf("%s: the ranges expand to %d bytes, Volcano's value is %d", k, len(got), len(v))
				}
				want[k] = wait.RangesFile(r)
			default:
				want[k] = v
			}
		}
		if diff := cmp.Diff(want, guarded.Data); diff != "" {
			t.Errorf("%d workers: data (-want +guarded):\n%s", tc.workers, diff)
		}
		total := 0
		for _, v := range guarded.Data {
			total += len(v)
		}
		wantTotal := bounds.SvcConfigMapBytes(job)
		if tc.ranges {
			wantTotal = bounds.SvcRangesConfigMapBytes(job)
		}
		if total != wantTotal || total > v1.MaxSecretSize {
			t.Errorf("%d workers: the ConfigMap's values are %d bytes, want %d and at most %d", tc.workers, total, wantTotal, v1.MaxSecretSize)
		}
	}
}

// A pod of such a Job reads /etc/volcano as on stock, from an emptyDir the
// first init container fills from the ranges: the ConfigMap volume projects
// the <task>.host keys, mounted in that container alone; every container
// svc gave the ConfigMap gets the emptyDir there, read-only. The rest of
// the pod is what Volcano's svc made it (less the dropped variables).
func TestExpandHostsInPod(t *testing.T) {
	job := hostsJob("llama-70b-sft-lr-sweep-7-of-32-20261204-a1b2c3", 12000)
	stock, guarded := svcPodCreate(t, job, workerPod(job))
	DropOversizedHostVariables(stock, job)
	cm := job.Name + "-svc"
	want := stock.DeepCopy()
	want.Spec.Volumes[0].ConfigMap.Items = []v1.KeyToPath{{Key: "master.host", Path: "master.host"}, {Key: "worker.host", Path: "worker.host"}}
	want.Spec.Volumes = append(want.Spec.Volumes, v1.Volume{Name: bounds.SvcHostsVolumeName, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	for _, c := range []*v1.Container{&want.Spec.InitContainers[0], &want.Spec.Containers[0]} {
		c.VolumeMounts = []v1.VolumeMount{{Name: bounds.SvcHostsVolumeName, MountPath: svc.ConfigMapMountPath, ReadOnly: true}}
	}
	want.Spec.InitContainers = append([]v1.Container{wait.RangesContainer(bounds.SvcHostsContainerName,
		v1.VolumeMount{Name: cm, MountPath: bounds.SvcRangesDir},
		v1.VolumeMount{Name: bounds.SvcHostsVolumeName, MountPath: svc.ConfigMapMountPath}, wait.Options{})}, want.Spec.InitContainers...)
	if diff := cmp.Diff(want, guarded); diff != "" {
		t.Errorf("the pod (-want +guarded):\n%s", diff)
	}
	if stock.Spec.Volumes[0].Name != cm || stock.Spec.Containers[0].VolumeMounts[0].Name != cm {
		t.Errorf("Volcano's svc no longer mounts volume %s: the test shows nothing", cm)
	}

	// A template that has a container of the init container's name.
	taken := workerPod(job)
	taken.Spec.Containers = append(taken.Spec.Containers, v1.Container{Name: bounds.SvcHostsContainerName})
	err := Wrap("svc", stockBuilders["svc"])(pluginsinterface.PluginClientset{KubeClients: fake.NewClientset()}, nil).OnPodCreate(taken, job)
	if err == nil || !strings.Contains(err.Error(), "rename it") {
		t.Errorf("a pod with a container %q: error %v, want one that says to rename it", bounds.SvcHostsContainerName, err)
	}
}
