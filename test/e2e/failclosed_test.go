package e2e

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	whv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
)

// configurationSeenTimeout bounds waiting for kube-apiserver to act on a
// changed webhook configuration (it reads them through an informer).
const configurationSeenTimeout = 30 * time.Second

// closedURL returns an https URL on 127.0.0.1 at a port nothing listens on:
// the API server's calls to it are refused, as they are by a stopped manager.
func closedURL() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	port := l.Addr().(*net.TCPAddr).Port
	Expect(l.Close()).To(Succeed())
	return fmt.Sprintf("https://127.0.0.1:%d", port)
}

// pointConfigurations sets the client configuration of the webhooks of our
// two configurations: point(path, current) returns the one to set. It
// retries on conflicts.
func pointConfigurations(ctx context.Context, f *framework.Framework, point func(path string, cur whv1.WebhookClientConfig) whv1.WebhookClientConfig) {
	api := f.Kube.AdmissionregistrationV1()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := api.MutatingWebhookConfigurations().Get(ctx, webhook.ConfigurationName(webhook.MutatePath), metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range m.Webhooks {
			m.Webhooks[i].ClientConfig = point(webhook.MutatePath, m.Webhooks[i].ClientConfig)
		}
		_, err = api.MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{})
		return err
	})
	Expect(err).NotTo(HaveOccurred(), "repointing the framework job mutation")
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		v, err := api.ValidatingWebhookConfigurations().Get(ctx, webhook.ConfigurationName(webhook.ValidatePath), metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range v.Webhooks {
			v.Webhooks[i].ClientConfig = point(webhook.ValidatePath, v.Webhooks[i].ClientConfig)
		}
		_, err = api.ValidatingWebhookConfigurations().Update(ctx, v, metav1.UpdateOptions{})
		return err
	})
	Expect(err).NotTo(HaveOccurred(), "repointing the framework job validation")
}

// failedCalling matches the API server's refusal of a request because the
// webhook named name could not be called (failurePolicy Fail).
func failedCalling(name string) OmegaMatcher {
	return MatchError(And(ContainSubstring("failed calling webhook"), ContainSubstring(name)))
}

// Our two webhooks are served by the same vc-webhook-manager process as
// Volcano's own job admissions (/jobs/mutate, /jobs/validate, also
// failurePolicy Fail): stopping the process would refuse every Job, with or
// without our plugins, through Volcano's configurations, and would show
// nothing about ours. So only our two configurations are pointed at a closed
// port on 127.0.0.1: for the API server that is a manager that is down
// (connection refused), for our two paths only, while Volcano's admissions
// keep answering. The configurations are cluster-wide: Serial.
var _ = Describe("The framework admissions' match conditions while the framework admissions are unreachable", Serial, func() {
	f := framework.New("failclosed")

	It("admit a Job without framework plugins and its metadata updates, and refuse a Job with one and spec updates of it",
		func(ctx SpecContext) {
			tf := framework.LoadJob(filepath.Join(testdata, "tf-only.yaml"))
			tf.Name = "tf-before"
			before := f.CreateJob(ctx, tf)

			By("pointing our two webhook configurations at a closed port")
			saved := map[string]whv1.WebhookClientConfig{}
			closed := closedURL()
			pointConfigurations(ctx, f, func(path string, cur whv1.WebhookClientConfig) whv1.WebhookClientConfig {
				saved[path] = cur
				u := closed + path
				return whv1.WebhookClientConfig{URL: &u, CABundle: cur.CABundle}
			})
			DeferCleanup(func(ctx context.Context) {
				By("pointing our two webhook configurations back at vc-webhook-manager")
				pointConfigurations(ctx, f, func(path string, _ whv1.WebhookClientConfig) whv1.WebhookClientConfig { return saved[path] })
				probe := framework.LoadJob(filepath.Join(testdata, "tf-only.yaml"))
				probe.Name, probe.Namespace = "tf-restored", f.Namespace
				framework.Eventually(ctx, func(ctx context.Context) error {
					_, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
					return err
				}, configurationSeenTimeout).Should(Succeed(), "a framework Job once our admissions are reachable again")
			}, NodeTimeout(configurationSeenTimeout+30*time.Second))

			// Dry runs until the API server has seen both changes: a request
			// admitted before then would leave a Job, or a changed one, behind.
			dryRun := []string{metav1.DryRunAll}
			tf.Name, tf.Namespace = "tf-during", f.Namespace
			createTF := func(ctx context.Context, dry []string) error {
				_, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Create(ctx, tf, metav1.CreateOptions{DryRun: dry})
				return err
			}
			// One more worker: a change Volcano's own job validation allows.
			// A conflict (the job controller writes the Job's status) is
			// decided before validating admission: read again.
			scaleBefore := func(ctx context.Context, dry []string) error {
				return retry.RetryOnConflict(retry.DefaultRetry, func() error {
					cur, err := f.GetJob(ctx, before.Name)
					if err != nil {
						return err
					}
					cur.Spec.Tasks[1].Replicas++
					_, err = f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Update(ctx, cur, metav1.UpdateOptions{DryRun: dry})
					return err
				})
			}
			By("waiting until the API server refuses a Job with the tensorflow plugin (mutation unreachable)")
			framework.Eventually(ctx, func(ctx context.Context) error { return createTF(ctx, dryRun) }, configurationSeenTimeout).
				Should(failedCalling(webhook.MutateWebhookName), "dry-run creating Job %s", tf.Name)
			By("waiting until the API server refuses a spec update of " + before.Name + " (validation unreachable)")
			framework.Eventually(ctx, func(ctx context.Context) error { return scaleBefore(ctx, dryRun) }, configurationSeenTimeout).
				Should(failedCalling(webhook.ValidateWebhookName), "dry-run updating the spec of Job %s", before.Name)

			By("creating a Job with the tensorflow plugin, and scaling " + before.Name)
			Expect(createTF(ctx, nil)).To(failedCalling(webhook.MutateWebhookName), "creating Job %s", tf.Name)
			Expect(scaleBefore(ctx, nil)).To(failedCalling(webhook.ValidateWebhookName), "updating the spec of Job %s", before.Name)

			By("creating a Job without framework plugins")
			stock := framework.LoadJob(filepath.Join(testdata, "tf-only.yaml"))
			stock.Name = "stock-during"
			stock.Spec.Plugins = map[string][]string{"svc": {}, "env": {}}
			_, err := f.TryCreateJob(ctx, stock)
			Expect(err).NotTo(HaveOccurred(), "creating Job %s while our admissions are unreachable", stock.Name)

			By("updating only the labels of " + before.Name)
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := f.GetJob(ctx, before.Name)
				if err != nil {
					return err
				}
				if cur.Labels == nil {
					cur.Labels = map[string]string{}
				}
				cur.Labels["vcplugins.io/e2e"] = "relabelled"
				_, err = f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
				return err
			})
			Expect(err).NotTo(HaveOccurred(), "a metadata-only update of Job %s while our validation is unreachable", before.Name)

			By("checking that the refused Job was not stored and the refused update not applied")
			_, err = f.GetJob(ctx, tf.Name)
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Job %s: err = %v, want NotFound", tf.Name, err)
			cur, err := f.GetJob(ctx, before.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(cur.Spec.Tasks[1].Replicas).To(Equal(before.Spec.Tasks[1].Replicas), "replicas of task %s of Job %s", cur.Spec.Tasks[1].Name, before.Name)
			Expect(cur.Spec.Plugins).To(HaveKey("tensorflow"))
		}, SpecTimeout(framework.SpecTimeout))
})
