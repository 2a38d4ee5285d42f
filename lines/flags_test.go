package lines_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// flagSpec is what --help says of a flag: its type (pflag's name for it;
// "" for a boolean) and its default ("" when none is printed).
type flagSpec struct{ Type, Default string }

var (
	flagLine     = regexp.MustCompile(`^\s+(?:-\w, )?--([\w.-]+)(?: ([\w.]+))?\s{2,}(.*)$`)
	boolFlagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([\w.-]+)\s{2,}(.*)$`)
	defaultOf    = regexp.MustCompile(`\(default (.*)\)$`)
)

// helpFlags returns the flags a manager's --help lists.
func helpFlags(t *testing.T, bin string) map[string]flagSpec {
	t.Helper()
	out, _ := exec.Command(bin, "--help").CombinedOutput() // pflag exits 2 after --help
	flags := map[string]flagSpec{}
	var name, usage string
	flush := func() {
		if name == "" {
			return
		}
		spec := flags[name]
		if m := defaultOf.FindStringSubmatch(strings.TrimSpace(usage)); m != nil {
			spec.Default = m[1]
		}
		flags[name] = spec
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			m = boolFlagLine.FindStringSubmatch(line)
			if m != nil {
				m = []string{m[0], m[1], "", m[2]}
			}
		}
		switch {
		case m != nil && strings.HasPrefix(strings.TrimSpace(line), "-"):
			flush()
			name, usage = m[1], m[3]
			flags[name] = flagSpec{Type: m[2]}
		case name != "":
			usage += " " + strings.TrimSpace(line) // a usage of several lines
		}
	}
	flush()
	if len(flags) < 10 {
		t.Fatalf("%s --help lists %d flags: %s", bin, len(flags), out)
	}
	return flags
}

// buildManagers builds packages into dir with the go command and the
// GOFLAGS of this test (the line's -modfile and tags under make test-lines).
func buildManagers(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
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
