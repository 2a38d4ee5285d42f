// Package framework holds what the framework plugins share beyond single
// helpers: the ControlledResources bookkeeping Volcano expects; turning a
// Job's plugin arguments into a per-job plan once per Job revision, with invalid
// arguments reported on the Job instead of retried (Definition, Base, Plan);
// what each plugin says of a Job to the webhook (Framework, Description,
// Describer); the wait containers of a launch order (Waiters); Volcano's
// in-tree plugin of the same name where there is one (Stock,
// StockFallback). What the tests and tools need besides (a framework's
// Sample) is in internal/sample, which the managers do not link.
package framework

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/jobcache"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// APITimeout bounds each API call a plugin hook makes; the hooks get no context.
const APITimeout = 30 * time.Second

// Context returns a context bounded by APITimeout for one plugin hook.
func Context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), APITimeout)
}

// MarkControlled records in job.Status.ControlledResources that the plugin
// manages the Job, as Volcano's own plugins do ("plugin-<name>": name).
func MarkControlled(job *batch.Job, plugin string) {
	if job.Status.ControlledResources == nil {
		job.Status.ControlledResources = map[string]string{}
	}
	job.Status.ControlledResources["plugin-"+plugin] = plugin
}

// UnmarkControlled removes the mark MarkControlled set.
func UnmarkControlled(job *batch.Job, plugin string) {
	delete(job.Status.ControlledResources, "plugin-"+plugin)
}

type planResult[P any] struct {
	plan P
	errs field.ErrorList
	// over: errs are the Job's bounds (bounds.Check, MaxReplicas).
	over     bool
	reported *sync.Once
	// stock is StockFallback's decision for this plan.
	stock *stockVerdict
}

// Plan returns the per-job plan build makes from the plugin's arguments, computed
// once per Job revision and arguments (cached in c). Each build counts in
// metrics.PlanBuilds, each answer from c in metrics.PlanCacheHits. When build reports errors the
// plan is not usable: Plan records one InvalidPluginArguments Warning event on the
// Job (through client, which may be nil in tests) and returns ok=false, so the
// caller injects nothing and returns nil rather than an error Volcano would retry.
func Plan[P any](c *jobcache.Cache, client kubernetes.Interface, plugin string, args []string, job *batch.Job,
	build func(args []string, job *batch.Job) (P, field.ErrorList)) (plan P, ok bool) {
	r := cachedPlan(c, client, plugin, args, job, build)
	return r.plan, len(r.errs) == 0
}

// cachedPlan is Plan's result with its errors, reported as Plan says.
func cachedPlan[P any](c *jobcache.Cache, client kubernetes.Interface, plugin string, args []string, job *batch.Job,
	build func(args []string, job *batch.Job) (P, field.ErrorList)) planResult[P] {
	r := planOf(c, plugin, args, job, build)
	report(client, job, r, "")
	return r
}

// planOf is cachedPlan without the report.
func planOf[P any](c *jobcache.Cache, plugin string, args []string, job *batch.Job,
	build func(args []string, job *batch.Job) (P, field.ErrorList)) planResult[P] {
	built := false
	r := jobcache.Get(c, job, plugin, strings.Join(args, "\x00"), func() planResult[P] {
		built = true
		r := boundedBuild(build, args, job)
		result := metrics.PlanValid
		if len(r.errs) > 0 {
			result = metrics.PlanInvalid
		}
		metrics.PlanBuilds.WithLabelValues(metrics.Framework(plugin), result).Inc()
		r.reported = new(sync.Once)
		r.stock = new(stockVerdict)
		return r
	})
	if !built {
		metrics.PlanCacheHits.WithLabelValues(metrics.Framework(plugin)).Inc()
	}
	return r
}

// report records r's errors, when it has any, as one InvalidPluginArguments
// Warning event on the Job (through client, which may be nil in tests), once
// per cached plan, not once per pod (events.Warn dedups the rest). A note,
// when not empty, comes first: what happens to the Job's pods.
func report[P any](client kubernetes.Interface, job *batch.Job, r planResult[P], note string) {
	if len(r.errs) == 0 {
		return
	}
	r.reported.Do(func() {
		msg := r.errs.ToAggregate().Error()
		if note != "" {
			msg = note + ": " + msg
		}
		ctx, cancel := Context()
		defer cancel()
		events.Warn(ctx, client, job, events.ReasonInvalidArguments, msg)
	})
}

// boundedBuild runs build on a Job within bounds.Check and
// bounds.CheckReplicas; a Job over them gets their errors (over) and no plan.
// Admission denies such Jobs, but the controller also sees Jobs admitted
// without it (created while the webhook configurations were absent, or in a
// namespace they skip), and a plan's cost grows with the dimensions the
// bounds cap.
func boundedBuild[P any](build func(args []string, job *batch.Job) (P, field.ErrorList), args []string, job *batch.Job) planResult[P] {
	errs := bounds.Check(job)
	if len(errs) == 0 {
		errs = bounds.CheckReplicas(job)
	}
	if len(errs) > 0 {
		return planResult[P]{errs: errs, over: true}
	}
	p, errs := build(args, job)
	return planResult[P]{plan: p, errs: errs}
}

// OverBoundsError is what a framework plugin's OnJobAdd returns for a Job
// over bounds.Check or bounds.CheckReplicas (admission denies such Jobs;
// this one was created without it). Volcano's controller would build every
// pod of the Job in memory before creating any; with the error it builds
// none: it retries the Job's sync (--max-requeue-num times) and then
// terminates the Job. The errors are also the Job's InvalidPluginArguments
// event.
type OverBoundsError struct {
	Plugin string
	Errs   field.ErrorList
}

func (e *OverBoundsError) Error() string {
	return "plugin " + e.Plugin + ": the Job is over the bounds that admission checks, so none of its pods are created: " + e.Errs.ToAggregate().Error()
}

// Definition describes one framework plugin: its name and how it turns its
// arguments and a Job into the plan its hooks share. A framework package keeps
// one Definition in a package variable; its cache lives there.
type Definition[P any] struct {
	// Name is the plugin's name in a Job's plugins stanza.
	Name string
	// Build parses the arguments against the Job and computes everything the
	// Job's pods share. It runs once per Job revision and arguments.
	Build func(args []string, job *batch.Job) (P, field.ErrorList)

	cache jobcache.Cache
}

// Base is embedded by each framework's Plugin type. It holds what one hook call
// needs (Volcano builds a fresh plugin for every call) and provides Name and the
// default Job hooks: OnJobAdd checks the arguments and marks the Job,
// OnJobDelete unmarks it, OnJobUpdate does nothing. A framework that owns
// objects (mpi's hostfile) overrides them.
type Base[P any] struct {
	// Client is the controller's Kubernetes client.
	Client kubernetes.Interface
	// Args are the Job's arguments for this plugin.
	Args []string
	def  *Definition[P]
	// uncached: Plan builds the plan on every call and keeps nothing.
	uncached bool
}

// Base returns a Base for one hook call.
func (d *Definition[P]) Base(client kubernetes.Interface, args []string) Base[P] {
	return Base[P]{Client: client, Args: args, def: d}
}

// UncachedBase returns a Base whose Plan builds the plan from the Job it is
// given on every call, without the per-job cache and without reporting
// invalid arguments as events. It is for admission, which sees specs that
// were never stored: a denied UPDATE and the corrected one that follows share
// UID and generation, so the cache would answer the second with the plan of
// the first.
func (d *Definition[P]) UncachedBase(client kubernetes.Interface, args []string) Base[P] {
	return Base[P]{Client: client, Args: args, def: d, uncached: true}
}

// Name returns the plugin's name.
func (b *Base[P]) Name() string { return b.def.Name }

// Plan returns the Job's plan; ok is false when the arguments are invalid, which
// has then been reported on the Job (see the package function Plan), except
// for an UncachedBase, which builds the plan afresh and reports nothing.
func (b *Base[P]) Plan(job *batch.Job) (plan P, ok bool) {
	r := b.result(job)
	return r.plan, len(r.errs) == 0
}

func (b *Base[P]) result(job *batch.Job) planResult[P] {
	if b.uncached {
		return boundedBuild(b.def.Build, b.Args, job)
	}
	return cachedPlan(&b.def.cache, b.Client, b.def.Name, b.Args, job, b.def.Build)
}

// OnJobAdd checks the arguments (reporting problems on the Job) and marks the
// Job as handled by the plugin in status.controlledResources. A Job over the
// bounds gets an *OverBoundsError (OverBounds). Idempotent.
func (b *Base[P]) OnJobAdd(job *batch.Job) error {
	if err := b.OverBounds(job); err != nil {
		return err
	}
	MarkControlled(job, b.def.Name)
	return nil
}

// OverBounds builds or looks up the Job's plan as Plan does (reporting its
// problems) and returns an *OverBoundsError when the Job is over
// bounds.Check or bounds.CheckReplicas, nil otherwise.
func (b *Base[P]) OverBounds(job *batch.Job) error {
	if r := b.result(job); r.over {
		return &OverBoundsError{Plugin: b.def.Name, Errs: r.errs}
	}
	return nil
}

// OnJobDelete removes the plugin's mark. Idempotent.
func (b *Base[P]) OnJobDelete(job *batch.Job) error {
	UnmarkControlled(job, b.def.Name)
	return nil
}

// OnJobUpdate does nothing: the plugins write into pods when they are created.
func (b *Base[P]) OnJobUpdate(job *batch.Job) error { return nil }
