// Package catalog is the one list of this project's framework plugins, for
// programs that need the list but not Volcano's job plugin factory: the demo,
// make scale and make sweep (hack/internal/measure, hack/sweep). Package
// plugins re-exports it and registers it with the factory.
//
// It must not import the factory (volcano.sh/volcano/pkg/controllers/job/plugins):
// that package links Volcano's scheduler (pkg/scheduler/api, its device
// packages and their package inits) into every program that imports it, which
// these programs do not need. TestNoSchedulerDependency keeps it so.
package catalog

import (
	"slices"
	"strings"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins/dask"
	"github.com/vcplugins/framework-plugins/plugins/jax"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
)

// Frameworks lists the framework plugins, in the order the demo, the
// benchmarks and the documentation present them. A new framework is a
// package under plugins/ exporting a framework.Framework, and one line here;
// its Sample, for the tests and tools, is a package beside it and one line in
// samples.Samples (plugins/catalog/samples), which the managers do not link.
var Frameworks = []*framework.Framework{
	&tensorflow.Framework,
	&pytorch.Framework,
	&mpi.Framework,
	&mxnet.Framework,
	&xgboost.Framework,
	&dask.Framework,
	&jax.Framework,
	&paddle.Framework,
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
