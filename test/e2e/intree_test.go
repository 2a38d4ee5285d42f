package e2e

import (
	"context"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	stocktensorflow "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/tensorflow"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
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

	// #38 M2: svc and ssh, which the webhook adds to framework Jobs, looked
	// objects up by name alone. pkg/guard keeps them off objects the Job
	// does not control.
	It("leaves another owner's NetworkPolicy, Service and Secret of the Job's name untouched and says so on the Job", func(ctx SpecContext) {
		const name = "db"
		labels := map[string]string{"owner": "database-team"}
		meta := func(n string) metav1.ObjectMeta {
			return metav1.ObjectMeta{Name: n, Namespace: f.Namespace, Labels: labels}
		}
		np, err := f.Kube.NetworkingV1().NetworkPolicies(f.Namespace).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: meta(name),
			Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		svc, err := f.Kube.CoreV1().Services(f.Namespace).Create(ctx, &corev1.Service{ObjectMeta: meta(name),
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Port: 5432}}}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		secret, err := f.Kube.CoreV1().Secrets(f.Namespace).Create(ctx, &corev1.Secret{ObjectMeta: meta(name + "-ssh"),
			Data: map[string][]byte{"config": []byte("StrictHostKeyChecking no\n"), "id_rsa": []byte("the database team's key")}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		unchanged := func(g Gomega) {
			n, err := f.Kube.NetworkingV1().NetworkPolicies(f.Namespace).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred(), "NetworkPolicy %s", name)
			g.Expect(n.ResourceVersion).To(Equal(np.ResourceVersion), "NetworkPolicy %s was written", name)
			s, err := f.Kube.CoreV1().Services(f.Namespace).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred(), "Service %s", name)
			g.Expect(s.ResourceVersion).To(Equal(svc.ResourceVersion), "Service %s was written", name)
			k, err := f.Kube.CoreV1().Secrets(f.Namespace).Get(ctx, name+"-ssh", metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred(), "Secret %s-ssh", name)
			g.Expect(k.ResourceVersion).To(Equal(secret.ResourceVersion), "Secret %s-ssh was written", name)
		}

		// mpi: the webhook adds svc and ssh.
		job := f.CreateJob(ctx, &batch.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: batch.JobSpec{
				SchedulerName: "volcano", Queue: "default",
				Plugins: map[string][]string{"mpi": {}},
				Tasks:   []batch.TaskSpec{kwokTask("master", "mpi", 1), kwokTask("worker", "mpi", 1)},
			},
		})
		Expect(job.Spec.Plugins).To(HaveKey("svc"))
		Expect(job.Spec.Plugins).To(HaveKey("ssh"))
		// Volcano's controller runs the Job's plugins in map order and stops
		// the sync at the first error: svc reports its two objects in a
		// sync where it runs before ssh, which the controller's retries
		// (backing off) reach within seconds, or later on a loaded machine.
		for _, want := range []string{"NetworkPolicy " + f.Namespace + "/" + name, "Service " + f.Namespace + "/" + name, "Secret " + f.Namespace + "/" + name + "-ssh"} {
			framework.Eventually(ctx, func(ctx context.Context) string {
				return framework.DescribeEvents(f.Events(ctx, events.ReasonObjectConflict))
			}, framework.JobCompletedTimeout).Should(ContainSubstring(want+" exists and is not controlled by Job "+name), "a PluginObjectConflict event on the Job naming the %s", want)
		}
		Expect(f.PodsOf(job)).To(BeEmpty(), "pods of %s while its objects are another owner's", name)
		unchanged(Default)

		f.DeleteJobAndPods(ctx, job)
		framework.Consistently(ctx, unchanged, 5*time.Second).Should(Succeed())
	}, SpecTimeout(framework.SpecTimeout))

	// Drop-in fidelity: Go's flag parsing in Volcano's in-tree plugin stops
	// at the first flag it does not define and keeps the defaults, so such
	// a Job trains on stock Volcano; ours hands it to that plugin.
	It("hands a tensorflow Job with a mistyped flag (--prot=2222) to Volcano's in-tree plugin: stock's TF_CONFIG, the warnings and an InvalidPluginArguments event",
		func(ctx SpecContext) {
			job := mistypedTFJob("tf-prot")
			created, warnings, err := f.CreateJobWithWarnings(ctx, job)
			Expect(err).NotTo(HaveOccurred(), "creating Job %s", job.Name)
			DeferCleanup(f.DeleteJobAndPods, created)
			Expect(warnings).NotTo(BeEmpty())
			Expect(warnings[0]).To(Equal(webhook.ArgumentsWarning))
			Expect(containsSubstring(warnings, "--prot")).To(BeTrue(), "warnings %q", warnings)

			framework.Eventually(ctx, func(ctx context.Context) string {
				return framework.DescribeEvents(f.Events(ctx, events.ReasonInvalidArguments))
			}, framework.ObjectCreatedTimeout).Should(And(ContainSubstring("Job/"+job.Name),
				ContainSubstring("Volcano's in-tree tensorflow plugin configures the job's pods instead")), "%s events", events.ReasonInvalidArguments)
			f.WaitJobPhase(ctx, created, batch.Completed, framework.JobCompletedTimeout)
			pods := f.PodsOf(created)
			Expect(pods).To(HaveLen(3), "pods of %s", job.Name)
			for _, p := range pods {
				// What Volcano's in-tree plugin gives this pod of this Job.
				task, _ := jobs.Task(created, p.Annotations[batch.TaskSpecKey])
				index, err := jobs.PodIndex(p)
				Expect(err).NotTo(HaveOccurred())
				want := jobs.NewPod(created, task, index)
				Expect(stocktensorflow.New(pluginsinterface.PluginClientset{}, created.Spec.Plugins["tensorflow"]).OnPodCreate(want, created)).To(Succeed())
				Expect(framework.EnvOf(p, "tensorflow")).To(HaveKeyWithValue("TF_CONFIG", framework.EnvOf(want, "tensorflow")["TF_CONFIG"]),
					"environment of %s", p.Name)
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("denies the same Job in strict mode (strictPluginArguments: true in the admission configuration), with the problems the warnings give",
		func(ctx SpecContext) {
			tc := framework.Cluster()
			if tc.Local == nil {
				Skip("strict mode is turned on through the local cluster's admission configuration file")
			}
			conf := localcluster.AdmissionConf(tc.Local.RootDir)
			before, err := os.ReadFile(conf)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(os.WriteFile, conf, before, os.FileMode(0o644))
			Expect(os.WriteFile(conf, []byte(webhook.StrictArgumentsKey+": true\n"), 0o644)).To(Succeed())

			job := mistypedTFJob("tf-prot-strict")
			_, warnings, err := f.DryRunJobWithWarnings(ctx, job)
			Expect(err).To(HaveOccurred(), "a dry run of %s in strict mode (warnings %q)", job.Name, warnings)
			Expect(err.Error()).To(And(ContainSubstring("denied the request"), ContainSubstring("plugin tensorflow"), ContainSubstring("--prot")))

			Expect(os.WriteFile(conf, before, 0o644)).To(Succeed())
			_, warnings, err = f.DryRunJobWithWarnings(ctx, job)
			Expect(err).NotTo(HaveOccurred(), "a dry run of %s with strict mode off again", job.Name)
			Expect(warnings).To(ContainElement(webhook.ArgumentsWarning))
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

// mistypedTFJob is a tensorflow Job of 1 ps and 2 workers on KWOK whose
// one argument is a typo of --port that Volcano's admission accepts.
func mistypedTFJob(name string) *batch.Job {
	return &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batch.JobSpec{
			SchedulerName: "volcano", Queue: "default",
			Plugins: map[string][]string{"tensorflow": {"--prot=2222"}},
			Tasks:   []batch.TaskSpec{kwokTask("ps", "tensorflow", 1), kwokTask("worker", "tensorflow", 2)},
		},
	}
}
