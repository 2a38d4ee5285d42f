package samples

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vcplugins/framework-plugins/plugins/catalog"
)

// Every framework of the catalog has a Sample, and every Sample is of a
// framework of the catalog: the two lists name the same frameworks.
func TestEveryFrameworkHasASample(t *testing.T) {
	for _, f := range Frameworks() {
		if f.Sample == nil {
			t.Errorf("framework %s has no Sample: add its sample package to samples.Samples", f.Name)
		}
	}
	for name := range Samples {
		if catalog.Lookup(name) == nil {
			t.Errorf("Sample of %s, which is not in catalog.Frameworks", name)
		}
	}
}

// Frameworks keeps the catalog's order, and Of answers for the catalog's
// frameworks only.
func TestFrameworksAndOf(t *testing.T) {
	var got []string
	for _, f := range Frameworks() {
		got = append(got, f.Name)
		if Of(f.Name) != f.Sample {
			t.Errorf("Of(%s) is not Frameworks' Sample", f.Name)
		}
	}
	if diff := cmp.Diff(catalog.Names(), got); diff != "" {
		t.Errorf("Frameworks' names (-catalog +got):\n%s", diff)
	}
	if s := Of("no-such-framework"); s != nil {
		t.Errorf("Of(no-such-framework) = %+v, want nil", s)
	}
}

// Samples are for the tests and tools: neither manager links one, nor this
// package, nor the Sample type, nor the examples and judges of
// internal/training the Samples carry.
func TestManagersLinkNoSample(t *testing.T) {
	const module = "github.com/vcplugins/framework-plugins/"
	out, err := exec.Command("go", "list", "-deps", module+"cmd/vc-controller-manager", module+"cmd/vc-webhook-manager").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		if strings.HasSuffix(pkg, "sample") || strings.HasSuffix(pkg, "/samples") || strings.HasSuffix(pkg, "/ninthtest") ||
			strings.HasPrefix(pkg, module+"internal/training") {
			t.Errorf("the managers link %s", pkg)
		}
	}
}
