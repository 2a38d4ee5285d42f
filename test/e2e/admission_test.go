package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	scheduling "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
)

const testdata = "test/e2e/testdata"

// hostsConfigMap is the data of the svc plugin's <job>-svc ConfigMap for the
// given tasks and replicas (Volcano's svc GenerateHosts, the same in v1.15.1
// and v1.14.1).
func hostsConfigMap(job string, tasks []string, replicas []int) map[string]string {
	out := map[string]string{}
	for i, t := range tasks {
		var hosts []string
		for r := 0; r < replicas[i]; r++ {
			hosts = append(hosts, fmt.Sprintf("%s-%s-%d.%s", job, t, r, job))
		}
		up := strings.ToUpper(t)
		out[t+".host"] = strings.Join(hosts, "\n")
		out["VC_"+up+"_HOSTS"] = strings.Join(hosts, ",")
		out["VC_"+up+"_NUM"] = fmt.Sprint(replicas[i])
	}
	return out
}

// boundAndPodGroup summarizes a gang for Consistently.
func boundAndPodGroup(f *framework.Framework, job *batch.Job) func(ctx context.Context) string {
	return func(ctx context.Context) string {
		return fmt.Sprintf("bound=%d podgroup=%s", len(framework.Bound(f.LivePodsOf(job))), f.PodGroupPhase(ctx, job))
	}
}

func unschedulableMessage(pg *scheduling.PodGroup) string {
	for _, c := range pg.Status.Conditions {
		if c.Type == scheduling.PodGroupUnschedulableType {
			return c.Message
		}
	}
	return ""
}

var _ = Describe("The framework admission through the real kube-apiserver", func() {
	f := framework.New("admission")

	BeforeEach(func(ctx SpecContext) {
		// vc-webhook-manager registers them at start, pointing the API server
		// at itself over TLS.
		_, err := f.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().
			Get(ctx, webhook.ConfigurationName(webhook.MutatePath), metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "the framework job mutation is not registered")
		_, err = f.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().
			Get(ctx, webhook.ConfigurationName(webhook.ValidatePath), metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "the framework job validation is not registered")
	})

	It("adds svc to Jobs that name only a framework plugin, which get the headless Service and hosts ConfigMap",
		func(ctx SpecContext) {
			// Volcano's own /jobs/mutate adds svc for tensorflow too; for mxnet,
			// which it does not know, only the framework admission does.
			jobs := f.CreateJobs(ctx,
				framework.LoadJob(filepath.Join(testdata, "tf-only.yaml")),
				framework.LoadJob(filepath.Join(testdata, "mxnet-only.yaml")))
			wantHosts := map[string]map[string]string{
				"only-tf":    hostsConfigMap("only-tf", []string{"ps", "worker"}, []int{1, 2}),
				"only-mxnet": hostsConfigMap("only-mxnet", []string{"scheduler", "server", "worker"}, []int{1, 1, 1}),
			}
			for _, job := range jobs {
				Expect(job.Spec.Plugins).To(HaveKeyWithValue("svc", BeEmpty()), "plugins of Job %s as admitted", job.Name)
				Expect(job.Spec.Plugins).NotTo(HaveKey("ssh"), "plugins of Job %s as admitted", job.Name)
			}
			for _, job := range jobs {
				By("checking the svc objects of " + job.Name)
				var svc *corev1.Service
				framework.Eventually(ctx, func(ctx context.Context) (err error) {
					svc, err = f.Kube.CoreV1().Services(f.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
					return err
				}, framework.ObjectCreatedTimeout).Should(Succeed(), "Service %s", job.Name)
				Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone), "Service %s must be headless", job.Name)
				Expect(svc.Spec.Selector).To(Equal(map[string]string{
					batch.JobNameKey: job.Name, batch.JobNamespaceKey: f.Namespace,
				}))
				Expect(svc.OwnerReferences).To(ConsistOf(framework.ControllerRefTo(job)))

				var cm *corev1.ConfigMap
				framework.Eventually(ctx, func(ctx context.Context) (err error) {
					cm, err = f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, job.Name+"-svc", metav1.GetOptions{})
					return err
				}, framework.ObjectCreatedTimeout).Should(Succeed(), "ConfigMap %s-svc", job.Name)
				Expect(cm.Data).To(Equal(wantHosts[job.Name]), "ConfigMap %s-svc", job.Name)
				Expect(cm.OwnerReferences).To(ConsistOf(framework.ControllerRefTo(job)))

				// The pods carry the names that resolve through the Service.
				for _, pod := range f.WaitPodsBound(ctx, job, 0) {
					Expect(pod.Spec.Hostname).To(Equal(pod.Name), "hostname of pod %s", pod.Name)
					Expect(pod.Spec.Subdomain).To(Equal(job.Name), "subdomain of pod %s", pod.Name)
				}
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("adds ssh to an mpi Job without it, which gets its ssh Secret", func(ctx SpecContext) {
		job := f.CreateJob(ctx, framework.LoadJob(filepath.Join(testdata, "mpi-no-ssh.yaml")))
		Expect(job.Spec.Plugins).To(HaveKeyWithValue("ssh", BeEmpty()), "plugins of Job %s as admitted", job.Name)
		Expect(job.Spec.Plugins).To(HaveKeyWithValue("svc", BeEmpty()), "plugins of Job %s as admitted", job.Name)
		var secret *corev1.Secret
		framework.Eventually(ctx, func(ctx context.Context) (err error) {
			secret, err = f.Kube.CoreV1().Secrets(f.Namespace).Get(ctx, job.Name+"-ssh", metav1.GetOptions{})
			return err
		}, framework.ObjectCreatedTimeout).Should(Succeed(), "Secret %s-ssh", job.Name)
		keys := make([]string, 0, len(secret.Data))
		for k := range secret.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		Expect(keys).To(Equal([]string{"authorized_keys", "config", "id_rsa", "id_rsa.pub"}))
		Expect(secret.OwnerReferences).To(ConsistOf(framework.ControllerRefTo(job)))
		pods := f.WaitPodsBound(ctx, job, 0)
		Expect(framework.Volumes(pods[0])).To(HaveKey(job.Name+"-ssh"), "volumes of the master %s", pods[0].Name)
		Expect(framework.EnvOf(pods[0], "mpi")).To(HaveKeyWithValue("OMPI_MCA_plm_rsh_args", "-p 2222 -o ConnectionAttempts=10"))
	}, SpecTimeout(framework.SpecTimeout))

	It("denies every Job of testdata/invalid marked expect-denied, admits those Volcano admits with warnings, and none of them creates a pod",
		func(ctx SpecContext) {
			files, err := filepath.Glob(framework.Path(filepath.Join(testdata, "invalid", "*.yaml")))
			Expect(err).NotTo(HaveOccurred())
			Expect(len(files)).To(BeNumerically(">=", 40), "the corpus of malformed Jobs")
			var problems []string
			var denied, warned int
			for _, file := range files {
				job := framework.LoadJob(file)
				name := filepath.Base(file)
				if want, ok := job.Annotations[annotationExpectWarn]; ok {
					// Volcano's admission accepts it: ours too, with the
					// problem as a warning (a dry run: nothing starts).
					warned++
					_, warnings, err := f.DryRunJobWithWarnings(ctx, job)
					switch {
					case err != nil:
						problems = append(problems, fmt.Sprintf("%s: denied with %q, want admitted with a warning containing %q", name, err, want))
					case len(warnings) == 0 || warnings[0] != webhook.ArgumentsWarning || !containsSubstring(warnings, want):
						problems = append(problems, fmt.Sprintf("%s: admitted with warnings %q, want %q first and one containing %q", name, warnings, webhook.ArgumentsWarning, want))
					}
					continue
				}
				want := job.Annotations[annotationExpectDeny]
				Expect(want).NotTo(BeEmpty(), "%s has neither %s nor %s", file, annotationExpectDeny, annotationExpectWarn)
				denied++
				_, err := f.TryCreateJob(ctx, job)
				switch {
				case err == nil:
					problems = append(problems, fmt.Sprintf("%s: admitted, want denied with %q", name, want))
				case !strings.Contains(err.Error(), want):
					problems = append(problems, fmt.Sprintf("%s: denied with %q, want a message containing %q", name, err, want))
				}
			}
			Expect(problems).To(BeEmpty(), "%d of %d Jobs", len(problems), len(files))
			GinkgoWriter.Printf("%d malformed Jobs denied, %d admitted with warnings, with their messages\n", denied, warned)

			jobs, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(jobs.Items).To(BeEmpty(), "Jobs in the namespace")
			pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(pods.Items).To(BeEmpty(), "pods in the namespace")
		}, SpecTimeout(framework.SpecTimeout))

	// Volcano's own suite ("Job Mutating E2E Test") creates such a Job to see
	// svc added; its in-tree plugin runs it without a cluster spec.
	It("admits a tensorflow Job whose tasks play no tensorflow role as Volcano does, with warnings and an InvalidPluginArguments event, and runs it without TF_CONFIG",
		func(ctx SpecContext) {
			job := framework.LoadJob(filepath.Join(testdata, "tf-only.yaml"))
			job.Name = "tf-no-roles"
			job.Spec.Tasks = job.Spec.Tasks[:1]
			job.Spec.Tasks[0].Name = "task-1"
			job.Spec.Tasks[0].Template.Annotations = nil // KWOK: Succeeded at once
			created, warnings, err := f.CreateJobWithWarnings(ctx, job)
			Expect(err).NotTo(HaveOccurred(), "creating Job %s", job.Name)
			DeferCleanup(f.DeleteJobAndPods, created)
			Expect(warnings).NotTo(BeEmpty())
			Expect(warnings[0]).To(Equal(webhook.ArgumentsWarning))
			Expect(containsSubstring(warnings, "the job has none of the tasks the roles name")).To(BeTrue(), "warnings %q", warnings)
			Expect(created.Spec.Plugins).To(HaveKey("svc"), "plugins as admitted")

			framework.Eventually(ctx, func(ctx context.Context) string {
				return framework.DescribeEvents(f.Events(ctx, events.ReasonInvalidArguments))
			}, framework.ObjectCreatedTimeout).Should(ContainSubstring("Job/"+job.Name), "%s events", events.ReasonInvalidArguments)
			f.WaitJobPhase(ctx, created, batch.Completed, framework.JobCompletedTimeout)
			pods := f.PodsOf(created)
			Expect(pods).To(HaveLen(1), "pods of %s", job.Name)
			Expect(framework.EnvOf(pods[0], "tensorflow")).NotTo(HaveKey("TF_CONFIG"), "environment of %s", pods[0].Name)
		}, SpecTimeout(framework.SpecTimeout))

	Context("with the cluster's 32 GPUs (4 KWOK nodes of 8)", func() {
		BeforeEach(func(ctx SpecContext) {
			f.RequireGPUNodes(ctx, 4, 8)
			f.WaitGPUsFree(ctx)
			DeferCleanup(f.WaitGPUsFree, NodeTimeout(framework.GPUsFreeTimeout+10*time.Second))
		})

		It("keeps a GPU Job that does not fit entirely Pending, gang-scheduled by default, while one that fits runs to completion",
			func(ctx SpecContext) {
				jobs := f.CreateJobs(ctx,
					framework.LoadJob(filepath.Join(testdata, "gpu-gang-too-big.yaml")),
					framework.LoadJob(filepath.Join(testdata, "gpu-gang-fits.yaml")))
				big, fits := jobs[0], jobs[1]
				DeferCleanup(func(ctx context.Context) {
					f.DeleteJobAndPods(ctx, big)
					f.DeleteJobAndPods(ctx, fits)
				})
				// No minAvailable was given: the GPU task is all-or-nothing.
				Expect(big.Spec.MinAvailable).To(Equal(int32(5)))
				Expect(big.Spec.Tasks[0].MinAvailable).To(HaveValue(Equal(int32(5))))

				f.WaitJobPhase(ctx, fits, batch.Completed, framework.JobCompletedTimeout)
				Expect(framework.Bound(f.PodsOf(fits))).To(HaveLen(2), "pods of %s that were bound", fits.Name)

				By("watching the Job that does not fit for " + framework.GangPendingDuration.String())
				// Volcano's job controller (calcPGMinResources, the same in
				// v1.15.1 and v1.14.1) sums only the template's requests
				// into the PodGroup's minResources, and these pods ask
				// for GPUs through limits: the PodGroup gets Inqueue and the pods
				// are created. The gang plugin then keeps every one of them unbound.
				framework.Eventually(ctx, func(ctx context.Context) []scheduling.PodGroupCondition {
					pg, err := f.PodGroupOf(ctx, big)
					if err != nil {
						return nil
					}
					return pg.Status.Conditions
				}, framework.PodsCreatedTimeout).Should(ContainElement(And(
					HaveField("Type", scheduling.PodGroupUnschedulableType),
					HaveField("Status", corev1.ConditionTrue),
				)), "conditions of the PodGroup of %s", big.Name)
				framework.Consistently(ctx, boundAndPodGroup(f, big), framework.GangPendingDuration).
					Should(MatchRegexp(`^bound=0 podgroup=(Pending|Inqueue)$`))
				pg, err := f.PodGroupOf(ctx, big)
				Expect(err).NotTo(HaveOccurred())
				Expect(pg.Spec.MinMember).To(Equal(int32(5)))
				Expect(f.JobPhase(ctx, big)).To(Equal(batch.Pending))
				GinkgoWriter.Printf("%s: PodGroup %s, %d pods created, none bound; condition: %s\n",
					big.Name, pg.Status.Phase, len(f.PodsOf(big)), unschedulableMessage(pg))
			}, SpecTimeout(framework.SpecTimeout))

		It("shows with minAvailable 1 the partial allocation the gang default prevents: 4 of 5 eight-GPU workers bound, idle",
			func(ctx SpecContext) {
				job, warnings, err := f.CreateJobWithWarnings(ctx, framework.LoadJob(filepath.Join(testdata, "gpu-gang-partial.yaml")))
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(f.DeleteJobAndPods, job)
				Expect(warnings).To(ContainElement(
					`task "worker" requests nvidia.com/gpu with minAvailable 1 < replicas 5: partially allocated GPUs sit idle until the rest arrive`))
				Expect(job.Spec.MinAvailable).To(Equal(int32(1)))
				Expect(job.Spec.Tasks[0].MinAvailable).To(HaveValue(Equal(int32(1))))

				f.WaitPodsCreated(ctx, job, 5)
				f.WaitPodsBound(ctx, job, 4)
				framework.Eventually(ctx, boundAndPodGroup(f, job), framework.PodsBoundTimeout).
					Should(Equal("bound=4 podgroup=Running"))
				framework.Consistently(ctx, boundAndPodGroup(f, job), framework.PartialSettleDuration).
					Should(Equal("bound=4 podgroup=Running"))
				gpus, err := f.GPUsInUse(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(gpus).To(Equal(int64(32)), "GPUs held while one worker is missing")
			}, SpecTimeout(framework.SpecTimeout))
	})
})
