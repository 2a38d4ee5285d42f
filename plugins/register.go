// Package plugins registers this project's framework plugins with Volcano's job
// plugin factory. It is the one place that lists them.
package plugins

import (
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"

	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Builders maps each plugin name to its builder, in the form Volcano's factory takes.
var Builders = map[string]vcplugins.PluginBuilder{
	tensorflow.Name: tensorflow.New,
	pytorch.Name:    pytorch.New,
	mpi.Name:        mpi.New,
	mxnet.Name:      mxnet.New,
}

// Uncached maps each plugin name to a builder of the same plugin whose hooks
// cache no per-job plan (NewUncached). The admission webhook simulates pods
// with them: the plan cache is keyed by the Job's UID and generation, which a
// denied UPDATE and its corrected retry share.
var Uncached = map[string]vcplugins.PluginBuilder{
	tensorflow.Name: tensorflow.NewUncached,
	pytorch.Name:    pytorch.NewUncached,
	mpi.Name:        mpi.NewUncached,
	mxnet.Name:      mxnet.NewUncached,
}

// Register adds the four builders to Volcano's plugin factory
// (volcano.sh/volcano/pkg/controllers/job/plugins). Volcano registers its in-tree
// tensorflow, pytorch and mpi builders in that package's init, and the factory is
// a map, so calling Register afterwards replaces them. Safe to call more than once.
func Register() {
	for name, b := range Builders {
		vcplugins.RegisterPluginBuilder(name, b)
	}
}
