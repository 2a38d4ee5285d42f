// Package plugins lists this project's framework plugins and registers them
// with Volcano's job plugin factory. Frameworks is the one list (kept in
// package catalog, which programs that need no factory import instead: the
// factory links Volcano's scheduler): the controller, the
// admission webhook, the demo, the benchmarks and the e2e tables take theirs
// from it. A new framework is a package under plugins/ exporting a
// framework.Framework, and one line in catalog.Frameworks (and its Sample's
// line in plugins/catalog/samples, for the tests and tools).
package plugins

import (
	"sync"

	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/guard"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
)

// Frameworks lists the framework plugins, in the order the demo, the
// benchmarks and the documentation present them: catalog.Frameworks as the
// program starts (Builders and Register read the catalog itself).
var Frameworks = catalog.Frameworks

// ByName returns Frameworks ordered by name (catalog.ByName).
func ByName() []*framework.Framework { return catalog.ByName() }

// Lookup returns the framework named name, or nil (catalog.Lookup).
func Lookup(name string) *framework.Framework { return catalog.Lookup(name) }

// Names returns the frameworks' names, in Frameworks order (catalog.Names).
func Names() []string { return catalog.Names() }

// Builders maps each framework's name to its builder (Framework.New), in the
// form Volcano's factory takes. It reads catalog.Frameworks when called, so
// that a framework a test adds to the catalog is among them.
func Builders() map[string]vcplugins.PluginBuilder {
	m := make(map[string]vcplugins.PluginBuilder, len(catalog.Frameworks))
	for _, f := range catalog.Frameworks {
		m[f.Name] = f.New
	}
	return m
}

var (
	registerMu sync.Mutex
	// registered are the frameworks Register has given Volcano's factory:
	// registering one twice would wrap our own builder as the stock one.
	registered = map[string]bool{}
)

// Register adds the frameworks' builders to Volcano's plugin factory
// (volcano.sh/volcano/pkg/controllers/job/plugins). Volcano registers its
// in-tree tensorflow, pytorch and mpi builders in that package's init, and
// the factory is a map, so Register replaces them; each such framework
// (Framework.Stock) keeps Volcano's builder for the Jobs whose arguments
// ours refuses and stock's admission accepts (framework.StockFallback). It
// also wraps Volcano's in-tree svc, ssh and ray plugins so that they never
// adopt, overwrite or delete an object the Job does not control
// (guard.Register). Safe to call more than once: each call registers the
// frameworks of catalog.Frameworks that no call has registered yet.
func Register() {
	registerMu.Lock()
	defer registerMu.Unlock()
	for _, f := range catalog.Frameworks {
		if registered[f.Name] {
			continue
		}
		b := f.New
		if stock, ok := vcplugins.GetPluginBuilder(f.Name); ok && f.Stock != nil {
			b = framework.StockFallback(f.New, stock)
		}
		vcplugins.RegisterPluginBuilder(f.Name, b)
		registered[f.Name] = true
	}
	guard.Register()
}
