package plugins

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/guard"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// The one list: distinct names, each with builders and a description, and
// the webhook's order by name.
func TestFrameworks(t *testing.T) {
	if diff := cmp.Diff([]string{"tensorflow", "pytorch", "mpi", "mxnet", "xgboost", "dask", "jax", "paddle"}, Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	var byName []string
	for _, f := range ByName() {
		byName = append(byName, f.Name)
		if f.New == nil || f.NewUncached == nil || f.Describe == nil || len(f.VolcanoPlugins) == 0 {
			t.Errorf("framework %s: incomplete: %+v", f.Name, *f)
		}
		if Lookup(f.Name) != f {
			t.Errorf("Lookup(%s) is not the listed framework", f.Name)
		}
	}
	if diff := cmp.Diff([]string{"dask", "jax", "mpi", "mxnet", "paddle", "pytorch", "tensorflow", "xgboost"}, byName); diff != "" {
		t.Errorf("ByName (-want +got):\n%s", diff)
	}
	if Lookup("caffe") != nil {
		t.Errorf("Lookup of an unlisted framework is not nil")
	}
}

// Register puts every framework's builder in Volcano's factory, in place of
// the in-tree ones (wrapped in framework.StockFallback where Volcano has one).
func TestRegister(t *testing.T) {
	Register()
	for _, f := range Frameworks {
		b, ok := vcplugins.GetPluginBuilder(f.Name)
		if !ok {
			t.Fatalf("no factory builder for %s", f.Name)
		}
		p := b(pluginsinterface.PluginClientset{}, nil)
		want := "github.com/vcplugins/framework-plugins/plugins/" + f.Name
		if f.Stock != nil { // ours, or Volcano's for some Jobs (TestStockFallback)
			want = "github.com/vcplugins/framework-plugins/pkg/framework"
		}
		if pkg := reflect.TypeOf(p).Elem().PkgPath(); p.Name() != f.Name || pkg != want {
			t.Errorf("factory builder of %s builds plugin %q of package %s", f.Name, p.Name(), pkg)
		}
	}
	for _, name := range guard.InTree {
		b, ok := vcplugins.GetPluginBuilder(name)
		if !ok {
			t.Fatalf("no factory builder for Volcano's %s", name)
		}
		if pkg := reflect.TypeOf(b(pluginsinterface.PluginClientset{}, nil)).Elem().PkgPath(); pkg != "github.com/vcplugins/framework-plugins/pkg/guard" {
			t.Errorf("factory builder of Volcano's %s builds a plugin of package %s, not the guarded one", name, pkg)
		}
	}
}

// The metrics' framework label knows exactly the frameworks, in the order
// the webhook names them (ByName).
func TestMetricsFrameworks(t *testing.T) {
	var names []string
	for _, f := range ByName() {
		names = append(names, f.Name)
	}
	if diff := cmp.Diff(names, metrics.Frameworks); diff != "" {
		t.Errorf("metrics.Frameworks (-plugins +metrics):\n%s", diff)
	}
}
