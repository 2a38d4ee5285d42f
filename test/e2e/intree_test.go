package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// The drop-in controller manager runs the job plugins Volcano v1.15 has
// in-tree and this project does not replace (ray, hcclrank), beside ours.
var _ = Describe("Volcano's own v1.15 job plugins in the drop-in", func() {
	f := framework.New("intree")

	It("runs hcclrank beside this project's pytorch plugin: each pod's hccl/rankIndex is its RANK", func(ctx SpecContext) {
		job := f.CreateJob(ctx, &batch.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "pt-hccl"},
			Spec: batch.JobSpec{
				SchedulerName: "volcano", Queue: "default",
				Plugins: map[string][]string{"pytorch": {}, "hcclrank": {}},
				Tasks:   []batch.TaskSpec{kwokTask("master", "pytorch", 1), kwokTask("worker", "pytorch", 2)},
			},
		})
		DeferCleanup(f.DeleteJobAndPods, job)
		f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
		pods := f.PodsOf(job)
		Expect(pods).To(HaveLen(3), "pods of %s", job.Name)
		for i, p := range pods {
			want := fmt.Sprint(i) // master-0, worker-0, worker-1
			Expect(framework.EnvOf(p, "pytorch")).To(HaveKeyWithValue(pytorch.EnvRank, want), "environment of %s", p.Name)
			Expect(p.Annotations).To(HaveKeyWithValue("hccl/rankIndex", want), "annotations of %s", p.Name)
		}
	}, SpecTimeout(framework.SpecTimeout))

	It("runs ray: the head's Service, ports and command", func(ctx SpecContext) {
		job := f.CreateJob(ctx, &batch.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "ray"},
			Spec: batch.JobSpec{
				SchedulerName: "volcano", Queue: "default",
				Plugins: map[string][]string{"ray": {}, "svc": {}},
				Tasks:   []batch.TaskSpec{kwokTask("head", "head", 1), kwokTask("worker", "worker", 2)},
			},
		})
		DeferCleanup(f.DeleteJobAndPods, job)
		framework.Eventually(ctx, func(ctx context.Context) error {
			_, err := f.Kube.CoreV1().Services(f.Namespace).Get(ctx, job.Name+"-head-svc", metav1.GetOptions{})
			return err
		}, framework.ObjectCreatedTimeout).Should(Succeed(), "Service %s-head-svc", job.Name)
		pods := f.WaitPodsBound(ctx, job, 3)
		framework.SortPods(job, pods)
		head := pods[0]
		Expect(containerPorts(head, "head")).To(ContainElements(int32(6379), int32(8265), int32(10001)), "ports of the head %s", head.Name)
		Expect(head.Spec.Containers[0].Command).To(ContainElement(ContainSubstring("ray start --head")), "command of the head %s", head.Name)
	}, SpecTimeout(framework.SpecTimeout))
})

// kwokTask is a task of replicas pods with one container named container,
// which KWOK ends Succeeded at once.
func kwokTask(name, container string, replicas int32) batch.TaskSpec {
	return batch.TaskSpec{Name: name, Replicas: replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: container, Image: "busybox:1.36.1", Command: []string{"true"},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}}},
	}}}
}
