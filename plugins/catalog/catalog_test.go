package catalog

import (
	"os/exec"
	"strings"
	"testing"
)

// The list must stay importable without Volcano's scheduler packages and
// their inits, which the programs that import it (the demo, make scale and
// make sweep) do not need.
func TestNoSchedulerDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "volcano.sh/volcano/pkg/scheduler") || pkg == "volcano.sh/volcano/pkg/controllers/job/plugins" {
			t.Errorf("package catalog depends on %s", pkg)
		}
	}
}
