package samples_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vcplugins/framework-plugins/plugins/catalog/ninthtest"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

// A ninth framework registered in the catalog and the samples alone
// (ninthtest.Register) has its examples in Examples and Hellos, after the
// eight's, which make demo, make startup and the e2e suite run; the eight's
// are as before.
func TestNinthFrameworkExamples(t *testing.T) {
	examples, hellos := samples.Examples(), samples.Hellos()
	ninthtest.Register(t)
	var files, sources []string
	for _, ex := range samples.Examples() {
		files = append(files, ex.Framework+" "+ex.File)
	}
	for _, h := range samples.Hellos() {
		sources = append(sources, h.Source)
	}
	var wantFiles, wantSources []string
	for _, ex := range examples {
		wantFiles = append(wantFiles, ex.Framework+" "+ex.File)
	}
	for _, h := range hellos {
		wantSources = append(wantSources, h.Source)
	}
	wantFiles = append(wantFiles, ninthtest.Name+" "+ninthtest.Example.File)
	wantSources = append(wantSources, ninthtest.Hello.Source)
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Errorf("Examples with the ninth framework (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSources, sources); diff != "" {
		t.Errorf("Hellos with the ninth framework (-want +got):\n%s", diff)
	}
}
