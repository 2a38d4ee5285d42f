package lines_test

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vcplugins/framework-plugins/internal/helpflags"
)

// flagSpec is what parity compares of a flag: its type and its default.
type flagSpec struct{ Type, Default string }

// helpFlags returns the flags a manager's --help lists (helpflags.Of), by
// name, with their type and default.
func helpFlags(t *testing.T, bin string) map[string]flagSpec {
	t.Helper()
	flags := map[string]flagSpec{}
	for name, s := range helpflags.Of(bin) {
		flags[name] = flagSpec{Type: s.Type, Default: s.Default}
	}
	if len(flags) < 10 {
		t.Fatalf("%s --help lists %d flags", bin, len(flags))
	}
	return flags
}

// buildManagers builds packages into dir (helpflags.Build).
func buildManagers(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	if out, err := helpflags.Build(dir, pkgs...); err != nil {
		t.Fatalf("go build %v: %v\n%s", pkgs, err, out)
	}
}

// flagDifferences are the flags of the line's stock managers that ours give
// another type or default, with the reason (docs/compatibility.md lists
// them).
var flagDifferences = map[string]string{
	// cmd/internal/apiflags: Volcano's 50/100 stall the creation of a
	// large Job's pods and ConfigMaps; Volcano's chart passes the
	// controller's own values, and none to the admission.
	"kube-api-qps":   "500 (stock 50): large Jobs stall at 50 requests a second",
	"kube-api-burst": "1000 (stock 100): as --kube-api-qps",
}

// ourFlags are the flags ours add to the line's stock managers, by manager.
var ourFlags = map[string][]string{
	"vc-webhook-manager":    {"cluster-domain", "create-framework-webhook-configurations", "framework-admission", "gpu-resources", "max-requests-in-flight", "strict-plugin-arguments"},
	"vc-controller-manager": {"cluster-domain", "gpu-resources", "profiling", "wait-image"},
}

// Every flag of the line's stock vc-webhook-manager and vc-controller-manager
// (Volcano's own cmd/webhook-manager and cmd/controller-manager, built here
// from the line's module) is one of ours, with the same type and default,
// but for flagDifferences; ours add only ourFlags. A drop-in runs with the
// arguments the stock Deployment gives it: a missing flag would stop it at
// start (as --feature-gates did), another default would change what it does.
func TestFlagParity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four managers")
	}
	dir := t.TempDir()
	buildManagers(t, filepath.Join(dir, "stock"), "volcano.sh/volcano/cmd/webhook-manager", "volcano.sh/volcano/cmd/controller-manager")
	buildManagers(t, filepath.Join(dir, "ours"), "../cmd/vc-webhook-manager", "../cmd/vc-controller-manager")
	for _, m := range []struct{ stock, ours string }{
		{"webhook-manager", "vc-webhook-manager"},
		{"controller-manager", "vc-controller-manager"},
	} {
		t.Run(m.ours, func(t *testing.T) {
			stock := helpFlags(t, filepath.Join(dir, "stock", m.stock))
			ours := helpFlags(t, filepath.Join(dir, "ours", m.ours))
			var problems, extra []string
			for name, s := range stock {
				o, ok := ours[name]
				switch {
				case !ok:
					problems = append(problems, "--"+name+" is missing")
				case o != s && flagDifferences[name] == "":
					problems = append(problems, "--"+name+": "+cmp.Diff(s, o))
				case o == s && flagDifferences[name] != "":
					problems = append(problems, "--"+name+" is as stock's now: drop it from flagDifferences")
				}
			}
			for name := range ours {
				if _, ok := stock[name]; !ok {
					extra = append(extra, name)
				}
			}
			sort.Strings(problems)
			sort.Strings(extra)
			for _, p := range problems {
				t.Error(p)
			}
			if diff := cmp.Diff(ourFlags[m.ours], extra); diff != "" {
				t.Errorf("flags of ours that stock lacks (-ourFlags +built):\n%s", diff)
			}
		})
	}
}
