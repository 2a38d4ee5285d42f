package e2e

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// What Jobs written for Volcano v1.14 and v1.15 use, through the real API
// server and controller on KWOK: master-only mpi Jobs (volcano-sh/volcano#4955),
// the ssh plugin's --ssh-port (docs/plugins/mpi.md) and pytorch's
// --wait-master-* flags (docs/plugins/pytorch.md).
var _ = Describe("Arguments of Volcano v1.14 and v1.15 Jobs", func() {
	f := framework.New("v115args")

	It("takes pytorch's --wait-master-enabled: the workers wait for the master's port, 300 s as Volcano's default",
		func(ctx SpecContext) {
			job := f.CreateJob(ctx, &batch.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "pt-wm"},
				Spec: batch.JobSpec{
					SchedulerName: "volcano", Queue: "default",
					Plugins: map[string][]string{"pytorch": {"--wait-master-enabled=true"}},
					Tasks:   []batch.TaskSpec{kwokTask("master", "pytorch", 1), kwokTask("worker", "pytorch", 2)},
				},
			})
			DeferCleanup(f.DeleteJobAndPods, job)
			f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
			pods := f.PodsOf(job)
			Expect(pods).To(HaveLen(3), "pods of %s", job.Name)
			Expect(framework.InitContainerNames(pods[0])).To(BeEmpty(), "init containers of the master %s", pods[0].Name)
			for _, p := range pods[1:] {
				Expect(framework.EnvOf(p, waitContainer)).To(Equal(map[string]string{
					waitTargetsVariable: inNamespace("pt-wm-master-0.pt-wm.{ns}.svc.cluster.local:23456", p.Namespace), waitTimeoutVariable: "300"}), "wait container env of %s", p.Name)
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("runs a master-only mpi Job (no worker task): the hostfile lists the launcher with its slots, and the Job completes",
		func(ctx SpecContext) {
			job := customMPIJob("mpi-solo", 0, "--master=launcher", "--slots-per-worker=4")
			job.Spec.Tasks = job.Spec.Tasks[:1] // the launcher alone
			created, warnings, err := f.CreateJobWithWarnings(ctx, job)
			Expect(err).NotTo(HaveOccurred(), "creating Job %s", job.Name)
			DeferCleanup(f.DeleteJobAndPods, created)
			Expect(warnings).To(BeEmpty(), "a master-only Job is valid")
			Expect(created.Spec.Plugins).To(HaveKey("ssh"), "plugins as admitted")

			f.WaitJobPhase(ctx, created, batch.Completed, framework.JobCompletedTimeout)
			cm := f.ConfigMapSeen(mpi.ConfigMapName(created))
			Expect(cm).NotTo(BeNil(), "ConfigMap %s", mpi.ConfigMapName(created))
			Expect(strings.TrimSpace(cm.Data[mpi.HostfileKey])).To(Equal(inNamespace("mpi-solo-launcher-0.mpi-solo.{ns}.svc.cluster.local slots=4", f.Namespace)), "the hostfile")
			Expect(strings.TrimSpace(cm.Data[mpi.WaitTargetsKey])).To(BeEmpty(), "the launcher waits for no worker")
			pods := f.PodsOf(created)
			Expect(pods).To(HaveLen(1))
			Expect(framework.EnvOf(pods[0], "mpi")).To(HaveKeyWithValue("OMPI_MCA_orte_default_hostfile", mpi.HostfilePath),
				"environment of the launcher %s", pods[0].Name)
		}, SpecTimeout(framework.SpecTimeout))

	It("takes the ssh plugin's --ssh-port as the port of ssh, of the launcher's wait and of the workers",
		func(ctx SpecContext) {
			job := customMPIJob("mpi-sshport", 2, "--master=launcher", "--worker=w")
			job.Spec.Plugins["ssh"] = []string{"--ssh-port=2200"}
			created, warnings, err := f.CreateJobWithWarnings(ctx, job)
			Expect(err).NotTo(HaveOccurred(), "creating Job %s", job.Name)
			DeferCleanup(f.DeleteJobAndPods, created)
			Expect(warnings).To(BeEmpty())

			f.WaitJobPhase(ctx, created, batch.Completed, framework.JobCompletedTimeout)
			pods := f.PodsOf(created)
			Expect(pods).To(HaveLen(3), "pods of %s", job.Name)
			Expect(framework.EnvOf(pods[0], "mpi")).To(HaveKeyWithValue("OMPI_MCA_plm_rsh_args", "-p 2200 -o ConnectionAttempts=10"),
				"environment of the launcher %s", pods[0].Name)
			cm := f.ConfigMapSeen(mpi.ConfigMapName(created))
			Expect(cm).NotTo(BeNil(), "ConfigMap %s", mpi.ConfigMapName(created))
			Expect(strings.Fields(cm.Data[mpi.WaitTargetsKey])).To(ConsistOf(inNamespace("mpi-sshport-w-0.mpi-sshport.{ns}.svc.cluster.local:2200", f.Namespace), inNamespace("mpi-sshport-w-1.mpi-sshport.{ns}.svc.cluster.local:2200", f.Namespace)),
				"the launcher's wait targets")
			for _, p := range pods[1:] {
				Expect(containerPorts(p, "mpi")).To(ContainElement(int32(2200)), "ports of worker %s", p.Name)
			}
		}, SpecTimeout(framework.SpecTimeout))
})

// containerPorts returns the container ports of the pod's container named
// name (kubeutil.ContainerOf); none when it has no such container.
func containerPorts(pod *corev1.Pod, name string) []int32 {
	c := kubeutil.ContainerOf(pod, name)
	if c == nil {
		return nil
	}
	var out []int32
	for _, p := range c.Ports {
		out = append(out, p.ContainerPort)
	}
	return out
}
