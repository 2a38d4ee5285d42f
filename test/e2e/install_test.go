package e2e

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	whv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
)

// renderedManifest is the chart rendered with its default values (RBAC
// only) by `make manifests`, relative to the module root.
const renderedManifest = "installer/framework-plugins.yaml"

// rbacManifest is the same render under the name the upgrade without Helm
// used before the default became webhook.create=false.
const rbacManifest = "installer/framework-plugins-rbac.yaml"

// webhooksManifest is the chart's two webhook configurations alone
// (webhook.create=true).
const webhooksManifest = "installer/framework-plugins-webhooks.yaml"

// volcanoNamespace holds Volcano's admission service in an installation, and
// with it the manifests' endpoints Role; the local cluster runs Volcano on
// the host and has no such namespace.
const volcanoNamespace = "volcano-system"

// renderedWebhookConfigurations returns the two webhook configurations of
// installer/framework-plugins-webhooks.yaml, decoded strictly.
func renderedWebhookConfigurations() (*whv1.MutatingWebhookConfiguration, *whv1.ValidatingWebhookConfiguration) {
	GinkgoHelper()
	data, err := os.ReadFile(framework.Path(webhooksManifest))
	Expect(err).NotTo(HaveOccurred())
	docs, err := kubeutil.YAMLDocuments(data)
	Expect(err).NotTo(HaveOccurred())
	var m *whv1.MutatingWebhookConfiguration
	var v *whv1.ValidatingWebhookConfiguration
	for _, doc := range docs {
		var tm metav1.TypeMeta
		Expect(yaml.Unmarshal(doc, &tm)).To(Succeed())
		switch tm.Kind {
		case "MutatingWebhookConfiguration":
			Expect(m).To(BeNil(), "two MutatingWebhookConfigurations in %s", webhooksManifest)
			m = &whv1.MutatingWebhookConfiguration{}
			Expect(yaml.UnmarshalStrict(doc, m)).To(Succeed())
		case "ValidatingWebhookConfiguration":
			Expect(v).To(BeNil(), "two ValidatingWebhookConfigurations in %s", webhooksManifest)
			v = &whv1.ValidatingWebhookConfiguration{}
			Expect(yaml.UnmarshalStrict(doc, v)).To(Succeed())
		}
	}
	Expect(m).NotTo(BeNil(), "no MutatingWebhookConfiguration in %s", webhooksManifest)
	Expect(v).NotTo(BeNil(), "no ValidatingWebhookConfiguration in %s", webhooksManifest)
	return m, v
}

// chartLabel is the helm.sh/chart label of the chart's objects:
// <name>-<version> of Chart.yaml.
func chartLabel() string {
	GinkgoHelper()
	data, err := os.ReadFile(framework.Path(filepath.Join(localcluster.ChartDir, "Chart.yaml")))
	Expect(err).NotTo(HaveOccurred())
	var chart struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	Expect(yaml.Unmarshal(data, &chart)).To(Succeed())
	Expect(chart.Name).NotTo(BeEmpty())
	Expect(chart.Version).NotTo(BeEmpty())
	return chart.Name + "-" + chart.Version
}

// ignoreClientConfig compares webhooks without their clientConfig, the one
// part the chart takes from webhook.url / webhook.service and webhook.caBundle.
var ignoreClientConfig = cmp.Options{
	cmpopts.IgnoreFields(whv1.MutatingWebhook{}, "ClientConfig"),
	cmpopts.IgnoreFields(whv1.ValidatingWebhook{}, "ClientConfig"),
}

var _ = Describe("The installer", func() {
	f := framework.New("install")

	It("has every object of installer/framework-plugins.yaml, -rbac.yaml and -webhooks.yaml accepted by a server-side dry run, which persists nothing",
		func(ctx SpecContext) {
			// The dry run of a namespaced object needs its namespace to exist.
			if _, err := f.Kube.CoreV1().Namespaces().Get(ctx, volcanoNamespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				_, err = f.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: volcanoNamespace}}, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func(ctx SpecContext) {
					Expect(f.Kube.CoreV1().Namespaces().Delete(ctx, volcanoNamespace, metav1.DeleteOptions{})).To(Succeed())
				})
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
			for _, manifest := range []string{renderedManifest, rbacManifest, webhooksManifest} {
				data, err := os.ReadFile(framework.Path(manifest))
				Expect(err).NotTo(HaveOccurred())
				docs, err := kubeutil.YAMLDocuments(data)
				Expect(err).NotTo(HaveOccurred())
				Expect(docs).NotTo(BeEmpty(), manifest)
				results := f.ServerDryRun(ctx, data, f.Namespace)
				Expect(results).To(HaveLen(len(docs)))
				var problems []string
				for _, r := range results {
					how := "created"
					if r.Existed {
						how = "replaced"
					}
					GinkgoWriter.Printf("dry run of %s: %s %s\n", manifest, r.Object, how)
					if r.Err != nil {
						problems = append(problems, fmt.Sprintf("%s (%s with dryRun=All): %v", r.Object, how, r.Err))
					}
				}
				Expect(problems).To(BeEmpty(), "objects of %s refused by the API server", manifest)
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("provides the webhook configurations of this project's admissions the suite runs with, pointed at the local webhook manager by webhook.url",
		func(ctx SpecContext) {
			wantM, wantV := renderedWebhookConfigurations()
			label := chartLabel()
			Expect(wantM.Labels).To(HaveKeyWithValue("helm.sh/chart", label), "%s is not rendered from the chart as it is: run make manifests", webhooksManifest)

			gotM, err := f.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().
				Get(ctx, webhook.ConfigurationName(webhook.MutatePath), metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			gotV, err := f.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().
				Get(ctx, webhook.ConfigurationName(webhook.ValidatePath), metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())

			By("checking that they carry the chart's labels")
			Expect(gotM.Name).To(Equal(wantM.Name))
			Expect(gotV.Name).To(Equal(wantV.Name))
			for k, v := range wantM.Labels {
				Expect(gotM.Labels).To(HaveKeyWithValue(k, v), "labels of %s", gotM.Name)
			}
			for k, v := range wantV.Labels {
				Expect(gotV.Labels).To(HaveKeyWithValue(k, v), "labels of %s", gotV.Name)
			}
			Expect(gotM.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"))

			By("checking that their webhooks are the chart's but for the clientConfig")
			// The one field the API server defaults that the chart leaves out.
			all := whv1.AllScopes
			for i := range wantM.Webhooks {
				for j := range wantM.Webhooks[i].Rules {
					if wantM.Webhooks[i].Rules[j].Scope == nil {
						wantM.Webhooks[i].Rules[j].Scope = &all
					}
				}
			}
			for i := range wantV.Webhooks {
				for j := range wantV.Webhooks[i].Rules {
					if wantV.Webhooks[i].Rules[j].Scope == nil {
						wantV.Webhooks[i].Rules[j].Scope = &all
					}
				}
			}
			Expect(cmp.Diff(wantM.Webhooks, gotM.Webhooks, ignoreClientConfig)).To(BeEmpty(), "webhooks of %s (-%s +cluster)", gotM.Name, webhooksManifest)
			Expect(cmp.Diff(wantV.Webhooks, gotV.Webhooks, ignoreClientConfig)).To(BeEmpty(), "webhooks of %s (-%s +cluster)", gotV.Name, webhooksManifest)

			tc := framework.Cluster()
			if tc.Local == nil {
				Skip("KUBECONFIG cluster: the webhook manager's address is not known to the suite")
			}
			By("checking that webhook.url and webhook.caBundle point them at the local webhook manager")
			ca, err := os.ReadFile(filepath.Join(tc.Local.RootDir, "pki", "ca.crt"))
			Expect(err).NotTo(HaveOccurred())
			base := fmt.Sprintf("https://127.0.0.1:%d", tc.Local.Ports[localcluster.WebhookManager])
			for _, c := range []struct {
				path string
				cc   whv1.WebhookClientConfig
			}{
				{webhook.MutatePath, gotM.Webhooks[0].ClientConfig},
				{webhook.ValidatePath, gotV.Webhooks[0].ClientConfig},
			} {
				Expect(c.cc.Service).To(BeNil(), "clientConfig of %s", c.path)
				Expect(c.cc.URL).To(HaveValue(Equal(base+c.path)), "clientConfig of %s", c.path)
				Expect(c.cc.CABundle).To(Equal(ca), "caBundle of %s", c.path)
			}

			By("checking that the webhook manager does not create configurations of its own")
			var args []string
			for _, c := range tc.Local.Components {
				if c.Name == localcluster.WebhookManager {
					args = c.Args
				}
			}
			Expect(args).To(ContainElement("--create-framework-webhook-configurations=false"), "arguments of %s", localcluster.WebhookManager)
		}, SpecTimeout(framework.SpecTimeout))
})
