// Package plugins lists this project's framework plugins and registers them
// with Volcano's job plugin factory. Frameworks is the one list (kept in
// package catalog, which programs that need no factory import instead: the
// factory links Volcano's scheduler): the controller, the
// admission webhook, the demo, the benchmarks and the e2e tables take theirs
// from it. A new framework is a package under plugins/ exporting a
// framework.Framework, and one line in catalog.Frameworks.
package plugins

import (
	"sync"

	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/guard"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
)

// Frameworks lists the framework plugins, in the order the demo, the
// benchmarks and the documentation present them: catalog.Frameworks, the
// same slice.
var Frameworks = catalog.Frameworks

// ByName returns Frameworks ordered by name (catalog.ByName).
func ByName() []*framework.Framework { return catalog.ByName() }

// Lookup returns the framework named name, or nil (catalog.Lookup).
func Lookup(name string) *framework.Framework { return catalog.Lookup(name) }

// Names returns the frameworks' names, in Frameworks order (catalog.Names).
func Names() []string { return catalog.Names() }

// Builders maps each framework's name to its builder (Framework.New), in the
// form Volcano's factory takes.
var Builders = func() map[string]vcplugins.PluginBuilder {
	m := make(map[string]vcplugins.PluginBuilder, len(Frameworks))
	for _, f := range Frameworks {
		m[f.Name] = f.New
	}
	return m
}()

var registerOnce sync.Once

// Register adds the frameworks' builders to Volcano's plugin factory
// (volcano.sh/volcano/pkg/controllers/job/plugins). Volcano registers its
// in-tree tensorflow, pytorch and mpi builders in that package's init, and
// the factory is a map, so Register replaces them; each such framework
// (Framework.Stock) keeps Volcano's builder for the Jobs whose arguments
// ours refuses and stock's admission accepts (framework.StockFallback). It
// also wraps Volcano's in-tree svc, ssh and ray plugins so that they never
// adopt, overwrite or delete an object the Job does not control
// (guard.Register). Safe to call more than once: the first call registers.
func Register() {
	registerOnce.Do(func() {
		for _, f := range Frameworks {
			b := f.New
			if stock, ok := vcplugins.GetPluginBuilder(f.Name); ok && f.Stock != nil {
				b = framework.StockFallback(f.New, stock)
			}
			vcplugins.RegisterPluginBuilder(f.Name, b)
		}
	})
	guard.Register()
}
