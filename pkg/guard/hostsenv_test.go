package guard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// The guarded svc plugin gives a pod every variable Volcano's svc gives it
// but a VC_<TASK>_HOSTS over MAX_ARG_STRLEN, with which no container could
// start: a pytorch Job of 2,048 workers named llama-70b-sft-run-20261204-a1
// (146,362 bytes) loses VC_WORKER_HOSTS, keeps VC_MASTER_HOSTS and the counts;
// the same Job named resnet50-dist keeps them all, as Volcano's svc gives them.
func TestDropOversizedHostVariables(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"llama-70b-sft-run-20261204-a1", []string{"VC_MASTER_HOSTS", "VC_MASTER_NUM", "VC_WORKER_NUM"}},
		{"resnet50-dist", []string{"VC_MASTER_HOSTS", "VC_MASTER_NUM", "VC_WORKER_HOSTS", "VC_WORKER_NUM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &batch.Job{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "default", UID: "uid-1"},
				Spec: batch.JobSpec{Tasks: []batch.TaskSpec{
					{Name: "master", Replicas: 1, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}},
					{Name: "worker", Replicas: 2048, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}},
				}, Plugins: map[string][]string{"svc": nil}},
			}
			stock, guarded := svcPodCreate(t, job, workerPod(job))
			for _, c := range append(guarded.Spec.InitContainers, guarded.Spec.Containers...) {
				var got []string
				for _, e := range c.Env {
					got = append(got, e.Name)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("container %s: variables (-want +got):\n%s", c.Name, diff)
				}
			}
			// Everything else as Volcano's svc made it.
			DropOversizedHostVariables(stock, job)
			if diff := cmp.Diff(stock, guarded); diff != "" {
				t.Errorf("the pod beside the dropped variables (-stock +guarded):\n%s", diff)
			}
			// What the kubelet would expand it to: svc's ConfigMap value.
			if n := bounds.SvcSizes(job)["VC_WORKER_HOSTS"]; (len(tc.want) == 3) != (bounds.EnvBytes("VC_WORKER_HOSTS", n) > bounds.MaxArgStrlen) {
				t.Errorf("VC_WORKER_HOSTS of %d bytes: the case shows nothing", n)
			}
		})
	}
}

// The guarded svc plugin's ConfigMap of hosts has no key of a dropped
// VC_<TASK>_HOSTS and is bounds.SvcConfigMapBytes long; the rest is what
// Volcano's svc writes. A pytorch Job of 8,192 workers with a 46-character
// name, whose ConfigMap Volcano's svc would make over 1 MiB (refused by the
// API server), fits once the variable no pod gets is left out.
func TestSvcConfigMapWithoutDroppedKeys(t *testing.T) {
	for _, tc := range []struct {
		name      string
		workers   int32
		dropped   []string
		stockOver bool // Volcano's svc writes a ConfigMap over 1 MiB
	}{
		{"resnet50-dist", 2048, nil, false},
		{"llama-70b-sft-run-20261204-a1", 2048, []string{"VC_WORKER_HOSTS"}, false},
		{"llama-70b-sft-lr-sweep-7-of-32-20261204-a1b2c3", 8192, []string{"VC_WORKER_HOSTS"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &batch.Job{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name, Namespace: "ml-training", UID: "uid-1"},
				Spec: batch.JobSpec{Tasks: []batch.TaskSpec{
					{Name: "master", Replicas: 1, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}},
					{Name: "worker", Replicas: tc.workers, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}},
				}, Plugins: map[string][]string{"svc": nil}},
				Status: batch.JobStatus{ControlledResources: map[string]string{}},
			}
			stockClient, guardedClient := fake.NewClientset(), fake.NewClientset()
			if err := stockBuilders["svc"](pluginsinterface.PluginClientset{KubeClients: stockClient}, nil).OnJobAdd(job.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			if err := Wrap("svc", stockBuilders["svc"])(pluginsinterface.PluginClientset{KubeClients: guardedClient}, nil).OnJobAdd(job.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			get := func(c *fake.Clientset) *v1.ConfigMap {
				cm, err := c.CoreV1().ConfigMaps(job.Namespace).Get(t.Context(), job.Name+"-svc", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return cm
			}
			stock, guarded := get(stockClient), get(guardedClient)
			stockTotal := 0
			for _, v := range stock.Data {
				stockTotal += len(v)
			}
			if got := stockTotal > v1.MaxSecretSize; got != tc.stockOver {
				t.Errorf("Volcano's svc writes %d bytes of values: over 1 MiB %v, want %v", stockTotal, got, tc.stockOver)
			}
			for _, k := range tc.dropped {
				delete(stock.Data, k)
			}
			if diff := cmp.Diff(stock.Data, guarded.Data); diff != "" {
				t.Errorf("data beside the dropped keys %v (-stock +guarded):\n%s", tc.dropped, diff)
			}
			total := 0
			for _, v := range guarded.Data {
				total += len(v)
			}
			if want := bounds.SvcConfigMapBytes(job); total != want {
				t.Errorf("the ConfigMap's values are %d bytes, bounds.SvcConfigMapBytes says %d", total, want)
			}
			if total > v1.MaxSecretSize {
				t.Errorf("the ConfigMap's values are %d bytes, over the %d a ConfigMap holds", total, v1.MaxSecretSize)
			}
		})
	}
}

// workerPod returns a pod of job's worker task, with a container and an init
// container, as Volcano's controller gives it to the plugins.
func workerPod(job *batch.Job) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-worker-0", Namespace: job.Namespace,
		Annotations: map[string]string{batch.TaskSpecKey: "worker"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}, InitContainers: []v1.Container{{Name: "i"}}}}
}

// svcPodCreate returns pod after Volcano's svc plugin's OnPodCreate (stock)
// and after the guarded one's, for job.
func svcPodCreate(t *testing.T, job *batch.Job, pod *v1.Pod) (stock, guarded *v1.Pod) {
	t.Helper()
	stock, guarded = pod.DeepCopy(), pod.DeepCopy()
	client := pluginsinterface.PluginClientset{KubeClients: fake.NewClientset()}
	if err := stockBuilders["svc"](client, nil).OnPodCreate(stock, job); err != nil {
		t.Fatal(err)
	}
	if err := Wrap("svc", stockBuilders["svc"])(client, nil).OnPodCreate(guarded, job); err != nil {
		t.Fatal(err)
	}
	return stock, guarded
}
