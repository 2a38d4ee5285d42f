// Package metrics defines the Prometheus metrics of vc-controller-manager and
// vc-webhook-manager (docs/metrics.md). Every name starts with Prefix, and
// every label takes its values from the constants below, never from a user's
// object: a label's values are a fixed, small set, so a series count does not
// grow with the Jobs a cluster runs.
//
// The collectors are package variables, usable (and testable with
// prometheus/testutil) without registration; Register adds them to the
// registry the managers' /metrics serves (Handler).
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Prefix starts the name of every metric of this package.
const Prefix = "framework_plugins_"

// Values of the framework label. A framework plugin's name is one of
// Frameworks; a Job without one is FrameworkNone, and one that could not be
// read (an admission review that does not decode, a Job with more plugins
// than the bounds allow) is FrameworkUnknown.
const (
	FrameworkNone    = "none"
	FrameworkUnknown = "unknown"
)

// Frameworks are the framework plugins' names, the other values of the
// framework label (plugins.Names; a test keeps them equal).
var Frameworks = []string{"dask", "jax", "mpi", "mxnet", "paddle", "pytorch", "tensorflow", "xgboost"}

// Framework returns the framework label for a plugin name: the name when it
// is one of Frameworks, FrameworkUnknown otherwise.
func Framework(name string) string {
	for _, f := range Frameworks {
		if f == name {
			return f
		}
	}
	return FrameworkUnknown
}

// FrameworkOf returns the framework label of a Job's plugins: the first of
// Frameworks (name order, the one whose name prefixes the webhook's
// messages) it uses, FrameworkNone when it uses none.
func FrameworkOf(plugins map[string][]string) string {
	for _, f := range Frameworks {
		if _, ok := plugins[f]; ok {
			return f
		}
	}
	return FrameworkNone
}

// Values of the result label of AdmissionRequests.
const (
	ResultAllowed = "allowed"
	ResultDenied  = "denied"
	// ResultError: the request was refused without a verdict on the Job
	// (a review or Job that does not decode, a panic, an unreadable body).
	ResultError = "error"
)

// Values of the reason label of AdmissionRequests. A denial's reason is the
// first check, in this order, that found a problem; ResultAllowed goes with
// ReasonNone, or ReasonArguments for a Job admitted with argument warnings
// (one Volcano's own admission accepts).
const (
	ReasonNone = "none"
	// ReasonBounds: the Job is over bounds.Check (tasks, replicas,
	// plugins, arguments and their lengths), read before decoding.
	ReasonBounds = "bounds"
	// ReasonShape: negative or inconsistent replicas and minAvailable, task
	// names that are not distinct DNS labels.
	ReasonShape = "shape"
	// ReasonArguments: a plugin's arguments do not parse or do not fit the
	// Job's tasks, or a task plays roles in two framework plugins.
	ReasonArguments = "arguments"
	// ReasonLaunchOrder: a dependency on a missing task, or a cycle.
	ReasonLaunchOrder = "launch_order"
	// ReasonLimits: an injected variable, argument, hostname or ConfigMap
	// over what the kubelet or the API server accept.
	ReasonLimits = "limits"
	// ReasonBadRequest (with ResultError): the body, the review or the Job
	// did not decode, or the review had no request.
	ReasonBadRequest = "bad_request"
	// ReasonInternal (with ResultError): a panic, or a patch or response
	// that could not be encoded.
	ReasonInternal = "internal"
)

// Values of the result label of PlanBuilds.
const (
	PlanValid   = "valid"
	PlanInvalid = "invalid"
)

// Values of the result label of ConfigMapSyncs.
const (
	SyncOK = "ok"
	// SyncConflict: a ConfigMap of the name exists and the Job does not
	// control it (a PluginConfigMapConflict event).
	SyncConflict = "conflict"
	SyncError    = "error"
)

var (
	// AdmissionRequests counts the framework admissions' requests by path
	// (webhook.MutatePath or ValidatePath), framework, result and reason.
	AdmissionRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Prefix + "admission_requests_total",
		Help: "Admission requests to the framework job admissions, by path, framework (first framework plugin of the Job, none, unknown), result (allowed, denied, error) and reason (none, bounds, shape, arguments, launch_order, limits, bad_request, internal).",
	}, []string{"path", "framework", "result", "reason"})

	// AdmissionDuration observes, in seconds, how long the framework
	// admissions take from reading the request to writing the response.
	AdmissionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: Prefix + "admission_duration_seconds",
		Help: "Time the framework job admissions take to answer a request, from reading its body to writing the response, by path and result.",
		// 1 ms to 10 s: a small Job takes well under a millisecond, the
		// largest within the bounds about a second; the API server's
		// webhook timeout is 10 s at most.
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 11),
	}, []string{"path", "result"})

	// PlanBuilds counts the plans the controller manager's framework
	// plugins build from a Job's arguments (once per Job revision), by
	// framework and result.
	PlanBuilds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Prefix + "plan_builds_total",
		Help: "Per-job plans built by the framework plugins of the controller manager, by framework and result (valid, invalid: the arguments were reported on the Job).",
	}, []string{"framework", "result"})

	// PlanCacheHits counts the plan lookups the per-job cache answered
	// without a build.
	PlanCacheHits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Prefix + "plan_cache_hits_total",
		Help: "Plan lookups of the framework plugins answered from the per-job cache without a build, by framework.",
	}, []string{"framework"})

	// ConfigMapSyncs counts the API syncs of the ConfigMaps the plugins
	// keep per Job (mpi's hostfile, tensorflow's cluster), by framework and
	// result.
	ConfigMapSyncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Prefix + "configmap_syncs_total",
		Help: "Syncs of the ConfigMaps the framework plugins keep per Job with the API server, by framework and result (ok, conflict: another owner's ConfigMap has the name, error).",
	}, []string{"framework", "result"})

	// WaitTimeouts counts the pods the wait-timeout controller failed (or,
	// with restartPolicy Never, reported) because their wait container
	// timed out.
	WaitTimeouts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: Prefix + "wait_timeouts_total",
		Help: "Pods whose wait container timed out and which the wait-timeout controller reported on their Job (and failed, unless their restartPolicy is Never).",
	})
)

// Collectors returns every collector of this package.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{AdmissionRequests, AdmissionDuration, PlanBuilds, PlanCacheHits, ConfigMapSyncs, WaitTimeouts}
}

var registerOnce sync.Once

// Register adds the collectors to Kubernetes' legacy registry
// (k8s.io/component-base/metrics/legacyregistry), which Handler serves, once;
// later calls do nothing.
func Register() {
	registerOnce.Do(func() {
		legacyregistry.Registerer().MustRegister(Collectors()...)
	})
}

// ObserveAdmission records one admission request: its count by framework,
// result and reason, and its duration since start.
func ObserveAdmission(path, framework, result, reason string, start time.Time) {
	AdmissionRequests.WithLabelValues(path, framework, result, reason).Inc()
	AdmissionDuration.WithLabelValues(path, result).Observe(time.Since(start).Seconds())
}
