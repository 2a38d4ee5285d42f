package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
)

// webhookConfigPrefix is the prefix of the webhook configuration names Volcano's
// webhook manager looks up: at start it waits (up to 5 minutes) for a
// configuration named volcano-admission-service<path with / replaced by ->
// for every enabled path and only updates its caBundle; it never creates one
// (cmd/webhook-manager/app/util.go addCaCertForWebhook, the same in v1.15.1
// and v1.14.1). --webhook-url merely satisfies a
// start-up check. So the cluster registers them itself, as Volcano's Helm
// chart does, with a url clientConfig for the out-of-cluster process.
const webhookConfigPrefix = "volcano-admission-service"

// Webhook is one admission webhook served by the webhook manager.
type Webhook struct {
	// Path is the URL path served, e.g. "/jobs/mutate". It also names the
	// configuration (volcano-admission-service-jobs-mutate) and goes into
	// --enabled-admission.
	Path string
	// Name is the webhook's name inside the configuration, e.g. mutatejob.volcano.sh.
	Name string
	// Mutating selects a MutatingWebhookConfiguration; otherwise validating.
	Mutating bool
	// Rule says which requests are sent to the webhook.
	Rule admissionregistrationv1.RuleWithOperations
	// AllNamespaces drops the namespace and object selectors, as the chart
	// does for its one hook of a cluster-scoped kind (/hypernodes/validate).
	AllNamespaces bool
	// SideEffects is the webhook's sideEffects; "" is NoneOnDryRun, the
	// chart's value for all but /hypernodes/validate (None).
	SideEffects admissionregistrationv1.SideEffectClass
}

// VolcanoPaths is Volcano v1.15.1's default --enabled-admission (its Helm
// chart's custom.enabled_admissions), what users of this project run.
// TestVolcanoWebhooks checks it against the chart in the module cache.
const VolcanoPaths = "/jobs/mutate,/jobs/validate,/podgroups/validate,/queues/mutate,/queues/validate,/hypernodes/validate,/cronjobs/validate"

// JobFlowsPath is served beside VolcanoPaths although Volcano's default
// leaves it out: Volcano's own e2e configuration and this project's
// conformance clusters enable it, so the e2e suite must reach it (its cost
// bounds, test/e2e/cost_test.go).
const JobFlowsPath = "/jobflows/validate"

// VolcanoWebhooks returns the webhooks of VolcanoPaths and JobFlowsPath, in
// that order, with the rules, selectors and side effects of Volcano
// v1.15.1's Helm chart (templates/webhooks.yaml).
//
// Volcano v1.10.0's default also had /pods/mutate, /pods/validate and
// /podgroups/mutate; v1.15.1's has none of them, so neither has the cluster.
// Config.Webhooks adds them where wanted (hack/conformance's e2eWebhooks).
func VolcanoWebhooks() []Webhook {
	rule := func(group, version, resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
		scope := admissionregistrationv1.AllScopes
		return admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}, Scope: &scope,
			},
		}
	}
	const (
		create = admissionregistrationv1.Create
		update = admissionregistrationv1.Update
		del    = admissionregistrationv1.Delete
	)
	return []Webhook{
		{Path: "/jobs/mutate", Name: "mutatejob.volcano.sh", Mutating: true, Rule: rule("batch.volcano.sh", "v1alpha1", "jobs", create)},
		{Path: "/jobs/validate", Name: "validatejob.volcano.sh", Rule: rule("batch.volcano.sh", "v1alpha1", "jobs", create, update)},
		{Path: "/podgroups/validate", Name: "validatepodgroup.volcano.sh", Rule: rule("scheduling.volcano.sh", "v1beta1", "podgroups", create)},
		{Path: "/queues/mutate", Name: "mutatequeue.volcano.sh", Mutating: true, Rule: rule("scheduling.volcano.sh", "v1beta1", "queues", create)},
		{Path: "/queues/validate", Name: "validatequeue.volcano.sh", Rule: rule("scheduling.volcano.sh", "v1beta1", "queues", create, update, del)},
		{Path: "/hypernodes/validate", Name: "validatehypernodes.volcano.sh", Rule: rule("topology.volcano.sh", "v1alpha1", "hypernodes", create, update),
			AllNamespaces: true, SideEffects: admissionregistrationv1.SideEffectClassNone},
		{Path: "/cronjobs/validate", Name: "validatecronjob.volcano.sh", Rule: rule("batch.volcano.sh", "v1alpha1", "cronjobs", create, update)},
		// The chart names it as the job validation.
		{Path: JobFlowsPath, Name: "validatejob.volcano.sh", Rule: rule("flow.volcano.sh", "v1alpha1", "jobflows", create, update)},
	}
}

// webhookConfigName is the configuration name the webhook manager expects for path.
func webhookConfigName(path string) string {
	return webhookConfigPrefix + strings.ReplaceAll(path, "/", "-")
}

// enabledAdmission is the --enabled-admission value serving exactly hooks.
func enabledAdmission(hooks []Webhook) string {
	paths := make([]string, len(hooks))
	for i, h := range hooks {
		paths[i] = h.Path
	}
	return strings.Join(paths, ",")
}

// configurations returns h's webhook configuration as the chart makes it
// (exactly one of the two is set), pointing at https://127.0.0.1:<port><path>
// and trusting caBundle: fail closed, skipping kube-system and
// volcano-system (the chart's release namespace) unless AllNamespaces.
func (h Webhook) configurations(port int, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	fail := admissionregistrationv1.Fail
	equivalent := admissionregistrationv1.Equivalent
	sideEffects := h.SideEffects
	if sideEffects == "" {
		sideEffects = admissionregistrationv1.SideEffectClassNoneOnDryRun
	}
	never := admissionregistrationv1.NeverReinvocationPolicy
	timeout := int32(10)
	var nsSelector, objSelector *metav1.LabelSelector
	if !h.AllNamespaces {
		nsSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"volcano-system", "kube-system"},
		}}}
		objSelector = &metav1.LabelSelector{}
	}
	url := fmt.Sprintf("https://127.0.0.1:%d%s", port, h.Path)
	client := admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
	meta := metav1.ObjectMeta{Name: webhookConfigName(h.Path)}
	if h.Mutating {
		return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: meta, Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: h.Name, ClientConfig: client, Rules: []admissionregistrationv1.RuleWithOperations{h.Rule},
			FailurePolicy: &fail, MatchPolicy: &equivalent, NamespaceSelector: nsSelector, ObjectSelector: objSelector,
			SideEffects: &sideEffects, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: &never,
		}}}, nil
	}
	return nil, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: meta, Webhooks: []admissionregistrationv1.ValidatingWebhook{{
		Name: h.Name, ClientConfig: client, Rules: []admissionregistrationv1.RuleWithOperations{h.Rule},
		FailurePolicy: &fail, MatchPolicy: &equivalent, NamespaceSelector: nsSelector, ObjectSelector: objSelector,
		SideEffects: &sideEffects, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"},
	}}}
}

// registerWebhooks creates (or replaces) one webhook configuration per hook
// (Webhook.configurations), pointing at https://127.0.0.1:<port><path> and
// trusting caBundle. It returns the first API error.
func registerWebhooks(ctx context.Context, kc kubernetes.Interface, hooks []Webhook, port int, caBundle []byte) error {
	for _, h := range hooks {
		mutating, validating := h.configurations(port, caBundle)
		name := webhookConfigName(h.Path)
		var err error
		if mutating != nil {
			api := kc.AdmissionregistrationV1().MutatingWebhookConfigurations()
			if err = api.Delete(ctx, name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
				_, err = api.Create(ctx, mutating, metav1.CreateOptions{})
			}
		} else {
			api := kc.AdmissionregistrationV1().ValidatingWebhookConfigurations()
			if err = api.Delete(ctx, name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
				_, err = api.Create(ctx, validating, metav1.CreateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("registering webhook %s: %w", name, err)
		}
	}
	return nil
}

// tlsServing reports whether a TLS server trusted by caFile answers on
// 127.0.0.1:port, i.e. whether the webhook manager is ready for the apiserver.
func tlsServing(ctx context.Context, port int, caFile string) (bool, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return false, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second}, Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
	conn, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false, err
	}
	_ = conn.Close()
	return true, nil
}

// The framework-plugins Helm chart, whose webhook configurations the cluster
// registers for this project's admissions (/jobs/frameworks/mutate and
// /jobs/frameworks/validate), so that the e2e suite runs with the very
// configurations users install.
const (
	// ChartDir is the chart, relative to the module root.
	ChartDir = "installer/helm/framework-plugins"
	// ChartRelease and ChartNamespace are the release name and namespace the
	// chart is rendered with, as `make manifests` renders it.
	ChartRelease   = "framework-plugins"
	ChartNamespace = "volcano-system"
	// Helm is the file name of the helm binary in Config.BinDir (`make binaries`).
	Helm = "helm"
)

// chartWebhookTemplates are the chart's templates of the two webhook configurations.
var chartWebhookTemplates = []string{
	"templates/mutatingwebhookconfiguration.yaml",
	"templates/validatingwebhookconfiguration.yaml",
}

// renderChartWebhooks runs `helm template` on the chart with webhook.url set to
// the local webhook manager (https://127.0.0.1:<port>) and webhook.caBundle to
// caBundle, and returns the chart's two webhook configurations. It returns an
// error if helm is missing from binDir or the output does not hold exactly one
// configuration of each kind.
func renderChartWebhooks(ctx context.Context, binDir string, port int, caBundle []byte) (
	*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	helm := filepath.Join(binDir, Helm)
	if info, err := os.Stat(helm); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return nil, nil, fmt.Errorf("missing binary %s (it renders the webhook configurations of %s); build it with `make binaries`", helm, ChartDir)
	}
	root, err := ModuleRoot()
	if err != nil {
		return nil, nil, err
	}
	// helm template assumes Kubernetes 1.20 offline, below the chart's kubeVersion.
	args := []string{"template", ChartRelease, filepath.Join(root, ChartDir), "--namespace", ChartNamespace, "--kube-version", "1.35.3",
		"--set", "webhook.create=true", "--set-string", fmt.Sprintf("webhook.url=https://127.0.0.1:%d", port),
		"--set-string", "webhook.caBundle=" + base64.StdEncoding.EncodeToString(caBundle)}
	for _, t := range chartWebhookTemplates {
		args = append(args, "--show-only", t)
	}
	cmd := exec.CommandContext(ctx, helm, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w\n%s", helm, strings.Join(args, " "), err, stderr.String())
	}
	return decodeWebhookConfigurations(out)
}

// decodeWebhookConfigurations decodes rendered YAML (strictly) into exactly one
// MutatingWebhookConfiguration and one ValidatingWebhookConfiguration.
func decodeWebhookConfigurations(data []byte) (
	*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	docs, err := kubeutil.YAMLDocuments(data)
	if err != nil {
		return nil, nil, fmt.Errorf("the rendered chart: %w", err)
	}
	var mutating []*admissionregistrationv1.MutatingWebhookConfiguration
	var validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	for _, doc := range docs {
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("decoding the rendered chart: %w\n%s", err, doc)
		}
		switch o := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			mutating = append(mutating, o)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			validating = append(validating, o)
		default:
			return nil, nil, fmt.Errorf("the rendered webhook templates hold a %s", gvk)
		}
	}
	if len(mutating) != 1 || len(validating) != 1 {
		return nil, nil, fmt.Errorf("the chart rendered %d MutatingWebhookConfigurations and %d ValidatingWebhookConfigurations, want 1 and 1 (is webhook.create false?)",
			len(mutating), len(validating))
	}
	return mutating[0], validating[0], nil
}

// registerChartWebhooks creates (or replaces) the webhook configurations of
// this project's admissions from the chart (renderChartWebhooks), pointing at
// the webhook manager on 127.0.0.1:port and trusting caBundle. The webhook
// manager then runs with --create-framework-webhook-configurations=false.
func registerChartWebhooks(ctx context.Context, kc kubernetes.Interface, binDir string, port int, caBundle []byte) error {
	mutating, validating, err := renderChartWebhooks(ctx, binDir, port, caBundle)
	if err != nil {
		return err
	}
	mapi := kc.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if err = mapi.Delete(ctx, mutating.Name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
		_, err = mapi.Create(ctx, mutating, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("registering webhook %s from %s: %w", mutating.Name, ChartDir, err)
	}
	vapi := kc.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if err = vapi.Delete(ctx, validating.Name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
		_, err = vapi.Create(ctx, validating, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("registering webhook %s from %s: %w", validating.Name, ChartDir, err)
	}
	return nil
}
