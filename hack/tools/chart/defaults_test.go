package chart

import (
	"slices"
	"strings"
	"testing"

	admv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// A plain `helm install` of the chart (no values) onto a cluster whose
// Volcano still runs its own images denies no Job create: it renders no
// webhook configuration at all (Volcano's manager would answer our paths
// with 404, and failurePolicy Fail turns that into a denial), and its only
// admission policy, the ConfigMap one, matches no Job. Issue #25: the
// default used to be webhook.create=true.
func TestDefaultsRenderNothingThatAdmitsJobs(t *testing.T) {
	for _, tc := range []struct {
		name string
		kube string
		apis []string
	}{
		{"Kubernetes 1.30 with ValidatingAdmissionPolicy", "1.30.2", vapAPI},
		{"Kubernetes 1.28", "1.28.9", nil},
		{"Kubernetes 1.21", "1.21.14", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := renderChart(t, chartDir, "framework-plugins", tc.kube, tc.apis, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range r.keys() {
				kind, _, _ := strings.Cut(key, "/")
				switch kind {
				case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
					t.Errorf("the default values render %s: it would send Job creates to an admission stock Volcano does not serve", key)
				case "ValidatingAdmissionPolicy":
					p := decode[admv1.ValidatingAdmissionPolicy](t, r, key)
					for _, rule := range p.Spec.MatchConstraints.ResourceRules {
						if slices.Contains(rule.APIGroups, "batch.volcano.sh") || slices.Contains(rule.APIGroups, "*") {
							t.Errorf("%s matches %v of %v", key, rule.Resources, rule.APIGroups)
						}
					}
				}
			}
		})
	}
}

// The webhook manager's ClusterRole, on by default now that the manager
// creates the configurations, adds nothing to what Volcano's own admission
// ClusterRole grants (values.yaml says so): Volcano's chart, rendered with
// installer/helm/volcano-values.yaml, grants each of its verbs, those
// narrowed by name included.
func TestWebhookManagerRoleWithinVolcanos(t *testing.T) {
	ours, err := render(t, "1.30.2", nil)
	if err != nil {
		t.Fatal(err)
	}
	volcano, err := renderChart(t, volcanoChartDir(t), "volcano", "1.30.2", nil, readValues(t, "installer/helm/volcano-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	granted := decode[rbacv1.ClusterRole](t, volcano, "ClusterRole/volcano-admission").Rules
	if len(granted) == 0 {
		t.Fatal("Volcano's admission ClusterRole has no rules")
	}
	rules := decode[rbacv1.ClusterRole](t, ours, whRole).Rules
	if len(rules) == 0 {
		t.Fatal("the webhook manager's ClusterRole has no rules")
	}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !allows(granted, g, res, v) {
						t.Errorf("%s %q/%s: not granted by Volcano's admission ClusterRole", v, g, res)
					}
				}
			}
		}
	}
}
