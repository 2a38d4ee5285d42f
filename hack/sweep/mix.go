package main

import (
	"fmt"
	"slices"
	"strings"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// shape returns the tasks of framework fw's job in a sweep: its Sample's
// small Job (sample.Role.Small: 3 or 4 pods), the tasks named as the defaults
// of the plugin's role flags, so that the plugin needs no arguments but those
// of measure.Plugins. ok is false for a framework without a Sample (not in
// the catalog).
func shape(fw string) (tasks []measure.TaskReplicas, ok bool) {
	s := samples.Of(fw)
	if s == nil {
		return nil, false
	}
	for _, r := range s.Roles {
		if r.Small > 0 {
			tasks = append(tasks, measure.TaskReplicas{Name: r.Flag, Replicas: int(r.Small)})
		}
	}
	return tasks, len(tasks) > 0
}

// mixAll names the mix of every framework of catalog.Frameworks.
const mixAll = "all"

// mix is a set of frameworks whose jobs one run submits together, and the
// impls that run it.
type mix struct {
	Name       string
	Frameworks []string
	Impls      []string
}

// plan returns the mixes a sweep runs for frameworks and impls (each in
// the order given):
//
//   - one mix of a single framework for each of frameworks that stock has
//     (measure.StockFrameworks) and a stock impl of impls runs, run by every
//     impl of impls that runs it (ours-inline on tensorflow only: its flag
//     changes no other framework's job; stock-wait on pytorch only: its
//     --wait-master-enabled is an argument of the pytorch plugin alone): the
//     comparisons with stock, framework by framework;
//   - then the mix of all frameworks (named "all" when they are every
//     framework of catalog.Frameworks, else joined by "+"), run by ours,
//     ours-inline when it has tensorflow, and stock (stock-wait when it has
//     pytorch) when stock has them all; left out when it is one of the
//     mixes above.
//
// It returns an error for an unknown framework, one given twice, or when
// nothing is left to run.
func plan(frameworks, impls []string) ([]mix, error) {
	if len(frameworks) == 0 {
		return nil, fmt.Errorf("no frameworks: want some of %v", catalog.Names())
	}
	for i, fw := range frameworks {
		if _, ok := shape(fw); !ok {
			return nil, fmt.Errorf("unknown framework %q: want some of %v", fw, catalog.Names())
		}
		if slices.Contains(frameworks[:i], fw) {
			return nil, fmt.Errorf("framework %q given twice", fw)
		}
	}
	runs := func(fws []string) []string {
		var out []string
		for _, impl := range impls {
			if impl == measure.ImplOursInline && !slices.Contains(fws, tensorflow.Name) {
				continue
			}
			if impl == measure.ImplStockWait && !slices.Contains(fws, pytorch.Name) {
				continue
			}
			if measure.IsStock(impl) && slices.ContainsFunc(fws, func(fw string) bool { return !measure.StockHas(fw) }) {
				continue
			}
			out = append(out, impl)
		}
		return out
	}
	var mixes []mix
	for _, fw := range frameworks {
		if r := runs([]string{fw}); measure.StockHas(fw) && slices.ContainsFunc(r, measure.IsStock) {
			mixes = append(mixes, mix{Name: fw, Frameworks: []string{fw}, Impls: r})
		}
	}
	if len(frameworks) > 1 || !slices.ContainsFunc(mixes, func(m mix) bool { return m.Name == frameworks[0] }) {
		name := strings.Join(frameworks, "+")
		if len(frameworks) == len(catalog.Frameworks) {
			name = mixAll
		}
		if r := runs(frameworks); len(r) > 0 {
			mixes = append(mixes, mix{Name: name, Frameworks: frameworks, Impls: r})
		}
	}
	if len(mixes) == 0 {
		return nil, fmt.Errorf("impls %v run none of frameworks %v (stock has only %v)", impls, frameworks, measure.StockFrameworks())
	}
	return mixes, nil
}

// sweepJobs returns the n jobs of a run of frameworks: job i is of
// frameworks[i mod len(frameworks)], with that framework's shape, named
// sweep-<framework>-<i> (i in 4 digits at least), with impl's arguments:
// ours-inline's TensorFlow jobs inline (measure.Plugins), ours-nowait's jobs
// without waits (measure.WithoutWaits), stock-wait's PyTorch jobs with
// --wait-master-enabled (measure.WithStockWait). It returns an error for a framework
// without a shape.
func sweepJobs(frameworks []string, n int, impl string) ([]*batch.Job, error) {
	out := make([]*batch.Job, 0, n)
	for i := range n {
		fw := frameworks[i%len(frameworks)]
		tasks, ok := shape(fw)
		if !ok {
			return nil, fmt.Errorf("unknown framework %q: want some of %v", fw, catalog.Names())
		}
		job, err := measure.Job(fmt.Sprintf("sweep-%s-%04d", fw, i), fw, tasks, impl == measure.ImplOursInline)
		if err != nil {
			return nil, err
		}
		switch impl {
		case measure.ImplOursNoWait:
			measure.WithoutWaits(job)
		case measure.ImplStockWait:
			measure.WithStockWait(job)
		}
		out = append(out, job)
	}
	return out, nil
}
