// Package plugins lists this project's framework plugins and registers them
// with Volcano's job plugin factory. Frameworks is the one list: the
// controller, the admission webhook, the demo, the benchmarks and the e2e
// tables take theirs from it. A new framework is a package under plugins/
// exporting a framework.Framework, and one line here.
package plugins

import (
	"slices"
	"strings"

	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Frameworks lists the framework plugins, in the order the demo, the
// benchmarks and the documentation present them.
var Frameworks = []*framework.Framework{
	&tensorflow.Framework,
	&pytorch.Framework,
	&mpi.Framework,
	&mxnet.Framework,
}

// ByName returns Frameworks ordered by name: the order in which the webhook
// examines a Job's plugins, so that its messages come out in a stable order.
func ByName() []*framework.Framework {
	out := slices.Clone(Frameworks)
	slices.SortFunc(out, func(a, b *framework.Framework) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the framework named name, or nil.
func Lookup(name string) *framework.Framework {
	for _, f := range Frameworks {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Names returns the frameworks' names, in Frameworks order.
func Names() []string {
	out := make([]string, len(Frameworks))
	for i, f := range Frameworks {
		out[i] = f.Name
	}
	return out
}

// Builders maps each framework's name to its builder (Framework.New), in the
// form Volcano's factory takes.
var Builders = func() map[string]vcplugins.PluginBuilder {
	m := make(map[string]vcplugins.PluginBuilder, len(Frameworks))
	for _, f := range Frameworks {
		m[f.Name] = f.New
	}
	return m
}()

// Register adds the frameworks' builders to Volcano's plugin factory
// (volcano.sh/volcano/pkg/controllers/job/plugins). Volcano registers its in-tree
// tensorflow, pytorch and mpi builders in that package's init, and the factory is
// a map, so calling Register afterwards replaces them. Safe to call more than once.
func Register() {
	for name, b := range Builders {
		vcplugins.RegisterPluginBuilder(name, b)
	}
}
