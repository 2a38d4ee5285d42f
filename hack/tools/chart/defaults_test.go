package chart

import (
	"slices"
	"strings"
	"testing"

	admv1 "k8s.io/api/admissionregistration/v1"
)

// A plain `helm install` of the chart (no values) onto a cluster whose
// Volcano still runs its own images denies no Job create: it renders no
// webhook configuration at all (Volcano's manager would answer our paths
// with 404, and failurePolicy Fail turns that into a denial), and its
// admission policies match no Job (the template bounds one matches Volcano
// CronJobs, not the Jobs they create). Issue #25: the default used to be
// webhook.create=true.
func TestDefaultsRenderNothingThatAdmitsJobs(t *testing.T) {
	for _, tc := range []struct {
		name string
		kube string
		apis []string
	}{
		{"Kubernetes 1.35 with ValidatingAdmissionPolicy", "1.35.3", vapAPI},
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
						if (slices.Contains(rule.APIGroups, "batch.volcano.sh") || slices.Contains(rule.APIGroups, "*")) &&
							(slices.Contains(rule.Resources, "jobs") || slices.Contains(rule.Resources, "*")) {
							t.Errorf("%s matches %v of %v", key, rule.Resources, rule.APIGroups)
						}
					}
				}
			}
		})
	}
}
