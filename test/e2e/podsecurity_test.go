package e2e

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	scheduling "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

var restrictedFiles = func() []string {
	var out []string
	for _, name := range plugins.Names() {
		out = append(out, path.Join("restricted", name+".yaml"))
	}
	return out
}()

// inTreeWaitForMaster is the init container Volcano's in-tree pytorch plugin
// adds to workers with --wait-master-enabled (v1.15.1 and v1.14.1, the lines
// this repository builds; v1.10.0 had none): named wait-for-master, image
// busybox:1.36.1 (here the local busybox image, localcluster.WaitImage), `sh -c`
// with a loop that retries nslookup of the master
// until a timeout (default 300 seconds), no resources and no securityContext.
// The script is reproduced in substance; Pod Security admission only looks at
// the container's securityContext, which upstream leaves empty.
func inTreeWaitForMaster(masterAddr string) corev1.Container {
	script := fmt.Sprintf(`TIMEOUT=300
START=$(date +%%s)
until nslookup %[1]s; do
  NOW=$(date +%%s)
  if [ $((NOW - START)) -ge $TIMEOUT ]; then
    echo "timed out after ${TIMEOUT}s waiting for master %[1]s"
    exit 1
  fi
  echo "waiting for master %[1]s"
  sleep 2
done
echo "master %[1]s is ready"`, masterAddr)
	return corev1.Container{
		Name:    "wait-for-master",
		Image:   localcluster.WaitImage,
		Command: []string{"sh", "-c", script},
	}
}

// standalonePod turns a pod the job controller made into one to create
// directly: same spec, not bound, no owner (so no controller adopts it), no
// service account token volume (admission adds it again).
func standalonePod(from *corev1.Pod, name string) *corev1.Pod {
	spec := from.Spec.DeepCopy()
	spec.NodeName = ""
	var volumes []corev1.Volume
	for _, v := range spec.Volumes {
		if !strings.HasPrefix(v.Name, tokenVolumePrefix) {
			volumes = append(volumes, v)
		}
	}
	spec.Volumes = volumes
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			var mounts []corev1.VolumeMount
			for _, m := range cs[i].VolumeMounts {
				if !strings.HasPrefix(m.Name, tokenVolumePrefix) {
					mounts = append(mounts, m)
				}
			}
			cs[i].VolumeMounts = mounts
		}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: from.Namespace}, Spec: *spec}
}

// expectRestrictedWaitContainer checks that the pod's first init container is
// the wait container with a securityContext the restricted standard accepts.
func expectRestrictedWaitContainer(pod *corev1.Pod) {
	GinkgoHelper()
	Expect(framework.InitContainerNames(pod)).To(Equal([]string{waitContainer}), "init containers of pod %s", pod.Name)
	sc := pod.Spec.InitContainers[0].SecurityContext
	Expect(sc).NotTo(BeNil(), "securityContext of the wait container of %s", pod.Name)
	Expect(sc.RunAsNonRoot).To(HaveValue(BeTrue()))
	Expect(sc.RunAsUser).To(HaveValue(Not(BeZero())))
	Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
	Expect(sc.Capabilities).NotTo(BeNil())
	Expect(sc.Capabilities.Drop).To(ContainElement(corev1.Capability("ALL")))
	Expect(sc.Capabilities.Add).To(BeEmpty())
	Expect(sc.SeccompProfile).To(HaveValue(HaveField("Type", corev1.SeccompProfileTypeRuntimeDefault)))
}

var _ = Describe("Wait containers in a namespace enforcing the restricted Pod Security Standard", func() {
	f := framework.New("restricted", framework.WithNamespaceLabels(map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}))

	It("are admitted with the pods of compliant Jobs of every framework, which complete", func(ctx SpecContext) {
		var jobs []*batch.Job
		for _, file := range restrictedFiles {
			jobs = append(jobs, framework.LoadJob(filepath.Join(testdata, file)))
		}
		jobs = f.CreateJobs(ctx, jobs...)
		for _, job := range jobs {
			waiting := waitingPods(job)
			for _, pod := range f.WaitPodsCreated(ctx, job, 0) {
				if waiting[pod.Name] {
					expectRestrictedWaitContainer(pod)
				} else {
					Expect(framework.InitContainerNames(pod)).To(BeEmpty(), "init containers of pod %s", pod.Name)
				}
			}
		}
		for _, job := range jobs {
			f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
		}
		Expect(f.Events(ctx, "FailedCreate")).To(BeEmpty(), "pod creations the API server refused")
	}, SpecTimeout(framework.SpecTimeout))

	It("refuse the same pod with the wait-for-master init container of Volcano's newer in-tree pytorch plugin", func(ctx SpecContext) {
		job := f.CreateJob(ctx, framework.LoadJob(filepath.Join(testdata, "restricted", "pytorch.yaml")))
		f.WaitPodsCreated(ctx, job, 0)
		var worker *corev1.Pod
		for _, p := range f.PodsOf(job) {
			if p.Name == job.Name+"-worker-0" {
				worker = p
			}
		}
		Expect(worker).NotTo(BeNil(), "pod %s-worker-0", job.Name)
		expectRestrictedWaitContainer(worker)
		dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

		By("creating the worker pod as the job controller made it (dry run): admitted")
		ours := standalonePod(worker, "ours-"+worker.Name)
		_, err := f.Kube.CoreV1().Pods(f.Namespace).Create(ctx, ours, dryRun)
		Expect(err).NotTo(HaveOccurred(), "the worker pod with this project's wait container")

		By("creating it with the in-tree wait-for-master container instead (dry run): refused")
		inTree := standalonePod(worker, "intree-"+worker.Name)
		inTree.Spec.InitContainers[0] = inTreeWaitForMaster(framework.EnvOf(worker, "pytorch")["MASTER_ADDR"])
		_, err = f.Kube.CoreV1().Pods(f.Namespace).Create(ctx, inTree, dryRun)
		Expect(err).To(HaveOccurred(), "the worker pod with the in-tree wait-for-master container")
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring(`violates PodSecurity "restricted:latest"`),
			ContainSubstring(`allowPrivilegeEscalation != false (container "wait-for-master"`),
			ContainSubstring(`unrestricted capabilities (container "wait-for-master"`),
		))
		GinkgoWriter.Printf("refused: %v\n", err)
	}, SpecTimeout(framework.SpecTimeout))

	Context("with the cluster's 32 GPUs (4 KWOK nodes of 8)", func() {
		BeforeEach(func(ctx SpecContext) {
			f.RequireGPUNodes(ctx, 4, 8)
			f.WaitGPUsFree(ctx)
			DeferCleanup(f.WaitGPUsFree, NodeTimeout(framework.GPUsFreeTimeout+10*time.Second))
		})

		It("do not keep an MPI gang of 1 master and 8 four-GPU workers from being bound together on all 32 GPUs",
			func(ctx SpecContext) {
				job := f.CreateJob(ctx, framework.LoadJob(filepath.Join(testdata, "restricted", "mpi-gpu-gang.yaml")))
				DeferCleanup(f.DeleteJobAndPods, job)
				Expect(job.Spec.MinAvailable).To(Equal(int32(9)), "minAvailable as admitted: the whole gang")

				pods := f.WaitPodsBound(ctx, job, 9)
				framework.Eventually(ctx, func(ctx context.Context) scheduling.PodGroupPhase { return f.PodGroupPhase(ctx, job) },
					framework.PodsBoundTimeout).Should(Equal(scheduling.PodGroupRunning))
				pg, err := f.PodGroupOf(ctx, job)
				Expect(err).NotTo(HaveOccurred())
				Expect(pg.Spec.MinMember).To(Equal(int32(9)))

				By("checking the master: its wait container waits for all 8 workers' sshd")
				master := pods[0]
				Expect(master.Name).To(Equal(job.Name + "-master-0"))
				expectRestrictedWaitContainer(master)
				var targets []string
				for i := 0; i < 8; i++ {
					targets = append(targets, fmt.Sprintf("%s-worker-%d.%s.%s.svc.cluster.local:22", job.Name, i, job.Name, master.Namespace))
				}
				Expect(f.WaitTargets(ctx, master)).To(Equal(targets))
				Expect(framework.EnvOf(master, "mpi")).To(HaveKeyWithValue("OMPI_MCA_orte_set_default_slots", "4"))

				By("checking that the workers fill every node's 8 GPUs")
				perNode := map[string]int64{}
				for _, p := range pods {
					perNode[p.Spec.NodeName] += framework.PodGPUs(p)
				}
				gpus := map[string]int64{}
				for node, n := range perNode {
					if n > 0 {
						gpus[node] = n
					}
				}
				Expect(gpus).To(Equal(f.ClusterGPUs(ctx)), "GPUs held per node")
				Expect(f.Events(ctx, "FailedCreate")).To(BeEmpty(), "pod creations the API server refused")
			}, SpecTimeout(framework.SpecTimeout))
	})
})

var _ = Describe("A namespace that sets no Pod Security level", func() {
	f := framework.New("baseline")

	It("refuses pods that would reach the host: the local cluster enforces baseline by default", func(ctx SpecContext) {
		dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		pod := func(name string, mutate func(*corev1.PodSpec)) *corev1.Pod {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.Namespace}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36.1", Command: []string{"true"}}},
			}}
			mutate(&p.Spec)
			return p
		}
		By("a plain pod: admitted")
		_, err := f.Kube.CoreV1().Pods(f.Namespace).Create(ctx, pod("plain", func(*corev1.PodSpec) {}), dryRun)
		Expect(err).NotTo(HaveOccurred())
		for _, tc := range []struct {
			name   string
			mutate func(*corev1.PodSpec)
			says   string
		}{
			{"hostpath", func(s *corev1.PodSpec) {
				s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
			}, "hostPath volumes"},
			{"hostnetwork", func(s *corev1.PodSpec) { s.HostNetwork = true }, "host namespaces"},
		} {
			By("a pod with " + tc.says + ": refused")
			_, err := f.Kube.CoreV1().Pods(f.Namespace).Create(ctx, pod(tc.name, tc.mutate), dryRun)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", tc.name, err)
			Expect(err.Error()).To(And(ContainSubstring(`violates PodSecurity "baseline:latest"`), ContainSubstring(tc.says)))
		}
		By("a privileged container: refused")
		priv := true
		_, err = f.Kube.CoreV1().Pods(f.Namespace).Create(ctx, pod("privileged", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &priv}
		}), dryRun)
		Expect(err).To(HaveOccurred(), "a privileged container")
	}, SpecTimeout(framework.SpecTimeout))
})
