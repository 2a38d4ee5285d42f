package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// Names of the webhooks' match conditions (admissionregistration/v1
// matchConditions, GA in Kubernetes 1.30, beta and on by default since 1.28).
const (
	// UsesFrameworksCondition is true for a Job whose spec.plugins names one
	// of the framework plugins (FrameworksExpression). Both webhooks have it.
	UsesFrameworksCondition = "uses-framework-plugins"
	// SpecChangedCondition is false for an UPDATE that leaves spec as it was
	// (SpecChangedExpression). Only the validating webhook has it.
	SpecChangedCondition = "spec-changed"
)

// SpecChangedExpression is the CEL expression of SpecChangedCondition: every
// CREATE, and an UPDATE whose spec differs from the stored one. AdmitJob
// allows the others (metadata-only updates) anyway; not calling it for them
// keeps finalizer and label updates working while the manager is down.
const SpecChangedExpression = "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec"

// FrameworksExpression returns the CEL expression of UsesFrameworksCondition,
// built from the registered frameworks (plugins.ByName):
//
//	has(object.spec) && type(object.spec) == map && has(object.spec.plugins) &&
//	  type(object.spec.plugins) == map && ["mpi", ...].exists(p, p in object.spec.plugins)
//
// The API server calls our webhooks only for Jobs it is true for, so that
// every other Job is admitted by Volcano's own job admissions alone, also
// while vc-webhook-manager cannot answer ours. Both admissions let such Jobs
// through unchanged (UsesFrameworks), so skipping them changes no answer. The
// has() and type() tests keep it from failing on a Job without spec or
// plugins, or one whose spec or plugins is not an object (which the CRD's
// schema validation rejects later): with failurePolicy Fail an evaluation
// error would deny the request with a message about the condition.
func FrameworksExpression() string {
	fws := frameworks()
	names := make([]string, len(fws))
	for i, f := range fws {
		names[i] = strconv.Quote(f.Name)
	}
	return "has(object.spec) && type(object.spec) == map && has(object.spec.plugins) && type(object.spec.plugins) == map && [" +
		strings.Join(names, ", ") + "].exists(p, p in object.spec.plugins)"
}

// mutatingConditions and validatingConditions are the match conditions of the
// two webhooks, in the order the API server evaluates them.
func mutatingConditions() []whv1.MatchCondition {
	return []whv1.MatchCondition{{Name: UsesFrameworksCondition, Expression: FrameworksExpression()}}
}

func validatingConditions() []whv1.MatchCondition {
	return append(mutatingConditions(), whv1.MatchCondition{Name: SpecChangedCondition, Expression: SpecChangedExpression})
}

// MutatingConfiguration returns the webhook configuration of the mutating
// admission: ConfigurationName(MutatePath), one webhook MutateWebhookName on
// Job CREATE of Jobs that use a framework plugin (UsesFrameworksCondition),
// failurePolicy Fail, reinvocationPolicy Never (it must not run again after
// Volcano's mutation has filled in the fields it defaults "when unset"), no
// side effects, 10 s timeout.
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
			MatchConditions:         mutatingConditions(),
		}},
	}
}

// ValidatingConfiguration returns the webhook configuration of the validating
// admission: ConfigurationName(ValidatePath), one webhook ValidateWebhookName on
// Job CREATE and UPDATE of Jobs that use a framework plugin
// (UsesFrameworksCondition), UPDATEs only when they change spec
// (SpecChangedCondition), failurePolicy Fail, no side effects, 10 s timeout.
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
			MatchConditions:         validatingConditions(),
		}},
	}
}

// EnsureConfigurations creates the two webhook configurations when they do not
// exist, and points existing ones at ep: the client configuration (URL, or
// service namespace, name and path, keeping an installer's service port) and
// CA bundle of their webhooks are set, and so are the match conditions named
// UsesFrameworksCondition and SpecChangedCondition (the validating webhook's
// only), so that configurations made by a version without them, or with
// another list of frameworks, get this binary's; other match conditions and
// everything else an installer set are left as they are. Keeper calls it once
// every endpoint serves the admissions.
func EnsureConfigurations(ctx context.Context, client kubernetes.Interface, ep Endpoint) error {
	if err := ep.Check(); err != nil {
		return fmt.Errorf("cannot create webhook configurations: %w", err)
	}
	admission := client.AdmissionregistrationV1()
	m := MutatingConfiguration(ep)
	err := ensure[*whv1.MutatingWebhookConfiguration](ctx, admission.MutatingWebhookConfigurations(), m, m.Name,
		mutatingHooks, ensureHook(ep, MutatePath, mutatingConditions()))
	if err != nil {
		return fmt.Errorf("MutatingWebhookConfiguration %s: %w", m.Name, err)
	}
	v := ValidatingConfiguration(ep)
	err = ensure[*whv1.ValidatingWebhookConfiguration](ctx, admission.ValidatingWebhookConfigurations(), v, v.Name,
		validatingHooks, ensureHook(ep, ValidatePath, validatingConditions()))
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
	err := setCABundle[*whv1.MutatingWebhookConfiguration](ctx, admission.MutatingWebhookConfigurations(), ConfigurationName(MutatePath), caBundle, mutatingHooks)
	if err != nil {
		return fmt.Errorf("MutatingWebhookConfiguration %s: %w", ConfigurationName(MutatePath), err)
	}
	err = setCABundle[*whv1.ValidatingWebhookConfiguration](ctx, admission.ValidatingWebhookConfigurations(), ConfigurationName(ValidatePath), caBundle, validatingHooks)
	if err != nil {
		return fmt.Errorf("ValidatingWebhookConfiguration %s: %w", ConfigurationName(ValidatePath), err)
	}
	return nil
}

func setCABundle[T any](ctx context.Context, c configClient[T], name string, caBundle []byte, hooks func(T) []hookFields) error {
	cur, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return setHooks(ctx, c, cur, hooks, func(h hookFields) bool {
		if bytes.Equal(h.clientConfig.CABundle, caBundle) {
			return false
		}
		h.clientConfig.CABundle = caBundle
		return true
	})
}

// setHooks applies change to each webhook of cur (hooks lists them) and
// updates cur when change reported that it changed one.
func setHooks[T any](ctx context.Context, c configClient[T], cur T, hooks func(T) []hookFields, change func(hookFields) bool) error {
	changed := false
	for _, h := range hooks(cur) {
		changed = change(h) || changed
	}
	if !changed {
		return nil
	}
	_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// hookFields points at the fields of one webhook of a configuration that
// EnsureConfigurations and SetCABundle set, in place.
type hookFields struct {
	clientConfig    *whv1.WebhookClientConfig
	matchConditions *[]whv1.MatchCondition
}

// mutatingHooks and validatingHooks list the webhooks of a configuration.
func mutatingHooks(c *whv1.MutatingWebhookConfiguration) []hookFields {
	out := make([]hookFields, len(c.Webhooks))
	for i := range c.Webhooks {
		out[i] = hookFields{&c.Webhooks[i].ClientConfig, &c.Webhooks[i].MatchConditions}
	}
	return out
}

func validatingHooks(c *whv1.ValidatingWebhookConfiguration) []hookFields {
	out := make([]hookFields, len(c.Webhooks))
	for i := range c.Webhooks {
		out[i] = hookFields{&c.Webhooks[i].ClientConfig, &c.Webhooks[i].MatchConditions}
	}
	return out
}

// configClient is what ensure needs of the typed clients of mutating and
// validating webhook configurations.
type configClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// ensure creates the configuration want when none is named name, or applies
// change to the webhooks of the existing one (hooks lists them), updating it
// only when that changed something.
func ensure[T any](ctx context.Context, c configClient[T], want T, name string, hooks func(T) []hookFields, change func(hookFields) bool) error {
	cur, err := c.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = c.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	return setHooks(ctx, c, cur, hooks, change)
}

// ensureHook returns the change ensure makes to an existing webhook: repointed
// at ep and path, and given conditions (setConditions).
func ensureHook(ep Endpoint, path string, conditions []whv1.MatchCondition) func(hookFields) bool {
	return func(h hookFields) bool {
		repointed := repoint(h.clientConfig, ep, path)
		return setConditions(h.matchConditions, conditions) || repointed
	}
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

// setConditions gives *cur each of want, by name: a condition of the same name
// gets want's expression, a missing one is appended; conditions want does not
// name are kept. It reports whether it changed *cur.
func setConditions(cur *[]whv1.MatchCondition, want []whv1.MatchCondition) bool {
	changed := false
	for _, w := range want {
		i := slices.IndexFunc(*cur, func(c whv1.MatchCondition) bool { return c.Name == w.Name })
		switch {
		case i < 0:
			*cur = append(*cur, w)
		case (*cur)[i].Expression != w.Expression:
			(*cur)[i].Expression = w.Expression
		default:
			continue
		}
		changed = true
	}
	return changed
}
