package chart

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// allows reports whether rules allow verb on resource in group (rules with
// resourceNames allow only those names, so they do not count).
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && slices.Contains(r.APIGroups, group) &&
			(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) &&
			(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
			return true
		}
	}
	return false
}

// The controller role adds nothing to what Volcano's own controller
// ClusterRole grants its service account (docs/install.md and values.yaml
// say so): Volcano's chart, rendered with installer/helm/volcano-values.yaml
// as docs/install.md installs it, grants each of its verbs.
func TestControllerRoleWithinVolcanos(t *testing.T) {
	ours, err := render(t, "1.30.2", nil)
	if err != nil {
		t.Fatal(err)
	}
	volcano, err := renderChart(t, volcanoChartDir(t), "volcano", "1.30.2", nil, readValues(t, "installer/helm/volcano-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	granted := decode[rbacv1.ClusterRole](t, volcano, "ClusterRole/volcano-controllers").Rules
	if len(granted) == 0 {
		t.Fatal("Volcano's controller ClusterRole has no rules")
	}
	for _, r := range decode[rbacv1.ClusterRole](t, ours, ctrlRole).Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !allows(granted, g, res, v) {
						t.Errorf("%s %q/%s: not granted by Volcano's controller ClusterRole", v, g, res)
					}
				}
			}
		}
	}
}
