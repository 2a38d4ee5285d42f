// Package samples pairs each framework of plugins/catalog with its Sample
// (internal/sample), for the tests and tools that derive their work per
// framework from it: the generated admission tests, the benchmarks, make
// sweep, make test-install, and the real-node and hello examples of make
// demo and the e2e suite (Examples, Hellos). The managers import package catalog, never
// this one, so that no Sample is linked into them.
package samples

import (
	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/dask"
	"github.com/vcplugins/framework-plugins/plugins/dask/dasksample"
	"github.com/vcplugins/framework-plugins/plugins/jax"
	"github.com/vcplugins/framework-plugins/plugins/jax/jaxsample"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mpi/mpisample"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/mxnet/mxnetsample"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
	"github.com/vcplugins/framework-plugins/plugins/paddle/paddlesample"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/pytorch/pytorchsample"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow/tensorflowsample"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
	"github.com/vcplugins/framework-plugins/plugins/xgboost/xgboostsample"
)

// Samples maps each framework's name to its Sample: a framework in
// catalog.Frameworks needs its line here too (TestEveryFrameworkHasASample
// fails until it has one). The order of catalog.Frameworks is the order of
// Frameworks.
var Samples = map[string]*sample.Sample{
	tensorflow.Name: &tensorflowsample.Sample,
	pytorch.Name:    &pytorchsample.Sample,
	mpi.Name:        &mpisample.Sample,
	mxnet.Name:      &mxnetsample.Sample,
	xgboost.Name:    &xgboostsample.Sample,
	dask.Name:       &dasksample.Sample,
	jax.Name:        &jaxsample.Sample,
	paddle.Name:     &paddlesample.Sample,
}

// Framework is a framework of the catalog with its Sample.
type Framework struct {
	*framework.Framework
	Sample *sample.Sample
}

// Frameworks returns catalog.Frameworks, in its order, each with its Sample
// (nil for a framework missing from Samples, which a test forbids). It reads
// both lists on every call, so that a test that registers a framework
// (plugins/catalog/ninthtest) sees it here.
func Frameworks() []Framework {
	out := make([]Framework, len(catalog.Frameworks))
	for i, f := range catalog.Frameworks {
		out[i] = Framework{Framework: f, Sample: Samples[f.Name]}
	}
	return out
}

// Of returns the Sample of the framework named name, or nil when name is not
// a framework of catalog.Frameworks.
func Of(name string) *sample.Sample {
	if catalog.Lookup(name) == nil {
		return nil
	}
	return Samples[name]
}

// Examples returns the examples that run for real on the real node: each
// framework's Sample.Training, in the order of Frameworks (which make demo
// and make startup run them in).
func Examples() []training.Example {
	return concat(func(s *sample.Sample) []training.Example { return s.Training })
}

// Hellos returns the examples that run as written on public images: each
// framework's Sample.Hellos, in the order of Frameworks.
func Hellos() []training.Hello {
	return concat(func(s *sample.Sample) []training.Hello { return s.Hellos })
}

// concat returns the lists of of every framework's Sample, in the order of
// Frameworks.
func concat[T any](of func(*sample.Sample) []T) []T {
	var out []T
	for _, f := range Frameworks() {
		if f.Sample != nil {
			out = append(out, of(f.Sample)...)
		}
	}
	return out
}
