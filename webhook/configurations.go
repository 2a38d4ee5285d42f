package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	whv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Endpoint says how the API server reaches vc-webhook-manager: Volcano's
// --webhook-url, or --webhook-namespace and --webhook-service-name (port 443),
// and the CA bundle that signs its certificate (--ca-cert-file).
type Endpoint struct {
	URL                           string
	ServiceNamespace, ServiceName string
	CABundle                      []byte
}

// Check returns an error when ep names neither a URL nor a service (namespace
// and name): the configurations could not point anywhere.
func (ep Endpoint) Check() error {
	if ep.URL == "" && (ep.ServiceNamespace == "" || ep.ServiceName == "") {
		return errors.New("neither --webhook-url nor --webhook-namespace and --webhook-service-name are set")
	}
	return nil
}

func (ep Endpoint) clientConfig(path string) whv1.WebhookClientConfig {
	cc := whv1.WebhookClientConfig{CABundle: ep.CABundle}
	if ep.URL != "" {
		u := strings.TrimSuffix(ep.URL, "/") + path
		cc.URL = &u
		return cc
	}
	port := int32(443)
	p := path
	cc.Service = &whv1.ServiceReference{Namespace: ep.ServiceNamespace, Name: ep.ServiceName, Path: &p, Port: &port}
	return cc
}

// namespaceSelector leaves out kube-system and the manager's own namespace,
// as Volcano's chart does for its job webhooks.
func (ep Endpoint) namespaceSelector() *metav1.LabelSelector {
	skip := []string{"kube-system"}
	if ep.ServiceNamespace != "" && ep.ServiceNamespace != "kube-system" {
		skip = append([]string{ep.ServiceNamespace}, skip...)
	}
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: skip,
	}}}
}

// MutatingConfiguration returns the webhook configuration of the mutating
// admission: ConfigurationName(MutatePath), one webhook MutateWebhookName on
// Job CREATE, failurePolicy Fail, reinvocationPolicy Never (it must not run
// again after Volcano's mutation has filled in the fields it defaults "when
// unset"), no side effects, 10 s timeout.
func MutatingConfiguration(ep Endpoint) *whv1.MutatingWebhookConfiguration {
	fail, never, none := whv1.Fail, whv1.NeverReinvocationPolicy, whv1.SideEffectClassNone
	equivalent, timeout := whv1.Equivalent, int32(10)
	return &whv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName(MutatePath)},
		Webhooks: []whv1.MutatingWebhook{{
			Name:                    MutateWebhookName,
			ClientConfig:            ep.clientConfig(MutatePath),
			Rules:                   jobRule(whv1.Create),
			FailurePolicy:           &fail,
			MatchPolicy:             &equivalent,
			NamespaceSelector:       ep.namespaceSelector(),
			ObjectSelector:          &metav1.LabelSelector{},
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      &never,
		}},
	}
}

// ValidatingConfiguration returns the webhook configuration of the validating
// admission: ConfigurationName(ValidatePath), one webhook ValidateWebhookName on
// Job CREATE and UPDATE, failurePolicy Fail, no side effects, 10 s timeout.
func ValidatingConfiguration(ep Endpoint) *whv1.ValidatingWebhookConfiguration {
	fail, none := whv1.Fail, whv1.SideEffectClassNone
	equivalent, timeout := whv1.Equivalent, int32(10)
	return &whv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName(ValidatePath)},
		Webhooks: []whv1.ValidatingWebhook{{
			Name:                    ValidateWebhookName,
			ClientConfig:            ep.clientConfig(ValidatePath),
			Rules:                   jobRule(whv1.Create, whv1.Update),
			FailurePolicy:           &fail,
			MatchPolicy:             &equivalent,
			NamespaceSelector:       ep.namespaceSelector(),
			ObjectSelector:          &metav1.LabelSelector{},
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// EnsureConfigurations creates the two webhook configurations when they do not
// exist, and points existing ones at ep: the client configuration (URL, or
// service namespace, name and path, keeping an installer's service port) and
// CA bundle of their webhooks are set, everything else an installer set is
// left as it is. Keeper calls it once every endpoint serves the admissions.
func EnsureConfigurations(ctx context.Context, client kubernetes.Interface, ep Endpoint) error {
	if err := ep.Check(); err != nil {
		return fmt.Errorf("cannot create webhook configurations: %w", err)
	}
	admission := client.AdmissionregistrationV1()
	m := MutatingConfiguration(ep)
	err := ensure[*whv1.MutatingWebhookConfiguration](ctx, admission.MutatingWebhookConfigurations(), m, m.Name, ep, MutatePath, mutatingClientConfigs)
	if err != nil {
		return fmt.Errorf("MutatingWebhookConfiguration %s: %w", m.Name, err)
	}
	v := ValidatingConfiguration(ep)
	err = ensure[*whv1.ValidatingWebhookConfiguration](ctx, admission.ValidatingWebhookConfigurations(), v, v.Name, ep, ValidatePath, validatingClientConfigs)
	if err != nil {
		return fmt.Errorf("ValidatingWebhookConfiguration %s: %w", v.Name, err)
	}
	return nil
}

// SetCABundle sets caBundle on every webhook of the two existing
// configurations, as Volcano's manager does for the configurations of its
// own admissions, and returns an error if either does not exist (NotFound) or
// cannot be updated.
func SetCABundle(ctx context.Context, client kubernetes.Interface, caBundle []byte) error {
	admission := client.AdmissionregistrationV1()
	err := setCABundle[*whv1.MutatingWebhookConfiguration](ctx, admission.MutatingWebhookConfigurations(), ConfigurationName(MutatePath), caBundle, mutatingClientConfigs)
	if err != nil {
		return fmt.Errorf("MutatingWebhookConfiguration %s: %w", ConfigurationName(MutatePath), err)
	}
	err = setCABundle[*whv1.ValidatingWebhookConfiguration](ctx, admission.ValidatingWebhookConfigurations(), ConfigurationName(ValidatePath), caBundle, validatingClientConfigs)
	if err != nil {
		return fmt.Errorf("ValidatingWebhookConfiguration %s: %w", ConfigurationName(ValidatePath), err)
	}
	return nil
}

func setCABundle[T any](ctx context.Context, c configClient[T], name string, caBundle []byte,
	clientConfigs func(T) []*whv1.WebhookClientConfig) error {
	cur, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return setClientConfigs(ctx, c, cur, clientConfigs, func(cc *whv1.WebhookClientConfig) bool {
		if bytes.Equal(cc.CABundle, caBundle) {
			return false
		}
		cc.CABundle = caBundle
		return true
	})
}

// setClientConfigs applies change to the client configuration of each webhook
// of cur (clientConfigs lists them) and updates cur when change reported that
// it changed one.
func setClientConfigs[T any](ctx context.Context, c configClient[T], cur T,
	clientConfigs func(T) []*whv1.WebhookClientConfig, change func(*whv1.WebhookClientConfig) bool) error {
	changed := false
	for _, cc := range clientConfigs(cur) {
		changed = change(cc) || changed
	}
	if !changed {
		return nil
	}
	_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// mutatingClientConfigs and validatingClientConfigs point at the client
// configurations of a configuration's webhooks.
func mutatingClientConfigs(c *whv1.MutatingWebhookConfiguration) []*whv1.WebhookClientConfig {
	return clientConfigs(c.Webhooks, func(w *whv1.MutatingWebhook) *whv1.WebhookClientConfig { return &w.ClientConfig })
}

func validatingClientConfigs(c *whv1.ValidatingWebhookConfiguration) []*whv1.WebhookClientConfig {
	return clientConfigs(c.Webhooks, func(w *whv1.ValidatingWebhook) *whv1.WebhookClientConfig { return &w.ClientConfig })
}

// configClient is what ensure needs of the typed clients of mutating and
// validating webhook configurations.
type configClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// clientConfigs returns the client configuration of each of webhooks
// (whv1.MutatingWebhook or whv1.ValidatingWebhook, through config), in place.
func clientConfigs[W any](webhooks []W, config func(*W) *whv1.WebhookClientConfig) []*whv1.WebhookClientConfig {
	out := make([]*whv1.WebhookClientConfig, len(webhooks))
	for i := range webhooks {
		out[i] = config(&webhooks[i])
	}
	return out
}

// ensure creates the configuration want when none is named name, or repoints
// the webhooks of the existing one (clientConfigs lists them) at ep and path,
// updating it only when that changed something.
func ensure[T any](ctx context.Context, c configClient[T], want T, name string, ep Endpoint, path string,
	clientConfigs func(T) []*whv1.WebhookClientConfig) error {
	cur, err := c.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = c.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	return setClientConfigs(ctx, c, cur, clientConfigs, func(cc *whv1.WebhookClientConfig) bool { return repoint(cc, ep, path) })
}

// repoint sets cc to ep's client configuration for path, keeping the service
// port cc names, and reports whether it changed.
func repoint(cc *whv1.WebhookClientConfig, ep Endpoint, path string) bool {
	want := ep.clientConfig(path)
	if want.Service != nil && cc.Service != nil && cc.Service.Port != nil {
		want.Service.Port = cc.Service.Port
	}
	if apiequality.Semantic.DeepEqual(*cc, want) {
		return false
	}
	*cc = want
	return true
}
