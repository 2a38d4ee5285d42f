package lines_test

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// volcanoModule returns the directory and version of the volcano.sh/volcano
// module this build uses (the line's).
func volcanoModule(t *testing.T) (m struct{ Dir, Version string }) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", "volcano.sh/volcano").Output()
	if err != nil {
		t.Fatalf("go list -m volcano.sh/volcano: %v", err)
	}
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go list -m volcano.sh/volcano: %v, %s", err, out)
	}
	return m
}

// stockLinks returns the packages under any of prefixes that Volcano's own main at
// cmd/<command> (of the volcano module this build uses) imports.
func stockLinks(t *testing.T, command string, prefixes ...string) []string {
	t.Helper()
	m := volcanoModule(t)
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(m.Dir, "cmd", command, "main.go"), nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		for _, prefix := range prefixes {
			if strings.HasPrefix(path, prefix) {
				links = append(links, path)
				break
			}
		}
	}
	if len(links) == 0 {
		t.Fatalf("Volcano %s's cmd/%s links no package under %v: has its layout changed?", m.Version, command, prefixes)
	}
	return links
}

// ourLinks returns the packages under any of prefixes in the dependencies of our
// command pkg (its build, with this test's build tags).
func ourLinks(t *testing.T, pkg string, prefixes ...string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		for _, prefix := range prefixes {
			if strings.HasPrefix(p, prefix) {
				deps[p] = true
			}
		}
	}
	return deps
}

// TestManagersLinkWhatStockLinks checks that each manager links every
// controller and admission package that Volcano's own manager of the same
// version links, so that a Volcano bump cannot drop one silently: a drop-in
// must run everything stock runs.
func TestManagersLinkWhatStockLinks(t *testing.T) {
	for _, tc := range []struct {
		stock, ours string
		prefixes    []string
	}{
		{"controller-manager", "github.com/vcplugins/framework-plugins/cmd/vc-controller-manager", []string{"volcano.sh/volcano/pkg/controllers/"}},
		{"webhook-manager", "github.com/vcplugins/framework-plugins/cmd/vc-webhook-manager", []string{"volcano.sh/volcano/pkg/webhooks/admission/", "volcano.sh/volcano/pkg/features"}},
	} {
		ours := ourLinks(t, tc.ours, tc.prefixes...)
		var missing []string
		for _, p := range stockLinks(t, tc.stock, tc.prefixes...) {
			if !ours[p] {
				missing = append(missing, p)
			}
		}
		if diff := cmp.Diff([]string(nil), missing); diff != "" {
			t.Errorf("%s does not link what Volcano's cmd/%s links (-want +missing):\n%s", tc.ours, tc.stock, diff)
		}
	}
}
