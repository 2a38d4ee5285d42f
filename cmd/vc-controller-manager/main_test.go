package main

import (
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins"
)

// TestRegistryResolvesOurPlugins checks the registry the job controller reads:
// after configurePlugins, the framework names build this module's plugins
// (wrapped in framework.StockFallback where Volcano has one) and Volcano's own svc, ssh and env plugins, and its ray and hcclrank (v1.13+), are still there.
func TestRegistryResolvesOurPlugins(t *testing.T) {
	configurePlugins("registry.example/busybox:1")
	client := pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}
	// Volcano's in-tree mpi plugin is also an *mpi.Plugin: compare package paths.
	const module = "github.com/vcplugins/framework-plugins/plugins/"
	for _, f := range plugins.Frameworks {
		name := f.Name
		b, ok := vcplugins.GetPluginBuilder(name)
		if !ok {
			t.Errorf("%s: not registered", name)
			continue
		}
		p := b(client, nil)
		typ := reflect.TypeOf(p).Elem()
		want := module + name + ".Plugin"
		if f.Stock != nil {
			// Ours, handing Jobs whose arguments ours refuses to Volcano's
			// (plugins TestStockFallback).
			want = "github.com/vcplugins/framework-plugins/pkg/framework.fallback"
		}
		if got := typ.PkgPath() + "." + typ.Name(); got != want {
			t.Errorf("%s builds %s, want %s", name, got, want)
		}
		if p.Name() != name {
			t.Errorf("%s: Name() = %q", name, p.Name())
		}
	}
	for _, name := range []string{"svc", "ssh", "env", "ray", "hcclrank"} {
		if _, ok := vcplugins.GetPluginBuilder(name); !ok {
			t.Errorf("Volcano's %s plugin is no longer registered", name)
		}
	}
	if got := wait.DefaultImage(); got != "registry.example/busybox:1" {
		t.Errorf("controller-wide wait image = %q", got)
	}
}
