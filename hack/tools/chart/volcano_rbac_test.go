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

// Each of the chart's ClusterRoles for Volcano's service accounts adds
// nothing to what Volcano's own ClusterRole grants that account
// (docs/install.md and values.yaml say so): Volcano's chart, rendered with
// installer/helm/volcano-values.yaml as docs/install.md installs it, grants
// each of their verbs. The webhook manager's role is on by default now that
// the manager creates the webhook configurations. On every line: Volcano's
// chart of the line with the line's values.
// beyondVolcano are the grants of ours that Volcano's chart lacks, by
// "<role> <verb> <group>/<resource>": the podgroup-resync controller's SyncJob
// Commands (pkg/pgresync; Volcano's controller only reads and deletes
// Commands). No escalation: the same account deletes Jobs and pods already.
var beyondVolcano = map[string]bool{
	ctrlRole + " create bus.volcano.sh/commands": true,
}

func TestRolesWithinVolcanos(t *testing.T) {
	ours, err := render(t, "1.35.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range volcanoLines(t) {
		t.Run(line.name, func(t *testing.T) { rolesWithinVolcanos(t, ours, line) })
	}
}

func rolesWithinVolcanos(t *testing.T, ours *rendered, line volcanoLine) {
	volcano, err := renderChart(t, line.chartDir, "volcano", "1.35.3", nil, readValues(t, line.values))
	if err != nil {
		t.Fatal(err)
	}
	for ourRole, volcanoRole := range map[string]string{
		ctrlRole: "ClusterRole/volcano-controllers",
		whRole:   "ClusterRole/volcano-admission",
	} {
		granted := decode[rbacv1.ClusterRole](t, volcano, volcanoRole).Rules
		rules := decode[rbacv1.ClusterRole](t, ours, ourRole).Rules
		if len(granted) == 0 || len(rules) == 0 {
			t.Fatalf("%s has %d rules, %s %d", volcanoRole, len(granted), ourRole, len(rules))
		}
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						if !allows(granted, g, res, v) && !beyondVolcano[ourRole+" "+v+" "+g+"/"+res] {
							t.Errorf("%s: %s %q/%s: not granted by Volcano's %s", ourRole, v, g, res, volcanoRole)
						}
					}
				}
			}
		}
	}
}
