package framework

import "time"

// Named timeouts of the e2e suite. Every wait in a spec uses one of these, so a
// slow machine is tuned here and nowhere else. The values fit a local cluster on
// two shared CPU cores: KWOK pods run and finish at once, vc-scheduler runs a
// session every second, and the garbage collector of kube-controller-manager
// re-reads API discovery every 30 seconds (it only watches Volcano Jobs once it
// has seen the CRD there).
const (
	// Interval is the polling period of every Eventually and Consistently.
	Interval = 250 * time.Millisecond

	// ClusterUpTimeout bounds starting the local cluster in BeforeSuite.
	ClusterUpTimeout = 5 * time.Minute
	// SuiteCleanupReserve is kept from `go test -timeout` for AfterSuite: the
	// suite times out (and still stops the cluster) this long before go test
	// would kill the process without any cleanup.
	SuiteCleanupReserve = 90 * time.Second
	// SpecTimeout bounds one spec, waits included.
	SpecTimeout = 4 * time.Minute

	// NamespaceReadyTimeout bounds creating a spec's namespace and waiting for
	// its default ServiceAccount (pods are refused until it exists).
	NamespaceReadyTimeout = 30 * time.Second
	// ObjectCreatedTimeout bounds waiting for an object a plugin creates when
	// the controller first syncs a Job (Service, ConfigMaps, Secret).
	ObjectCreatedTimeout = 30 * time.Second
	// PodsCreatedTimeout bounds waiting for the job controller to create a
	// Job's pods (after vc-scheduler enqueued its PodGroup).
	PodsCreatedTimeout = 60 * time.Second
	// PodsBoundTimeout bounds waiting for vc-scheduler to bind pods.
	PodsBoundTimeout = 60 * time.Second
	// AfterAPIServerRestartTimeout bounds waiting for the controllers and
	// the scheduler to act on a new object after kube-apiserver restarted.
	// Every informer relists then (the restarted server's watch cache
	// answers "too old resource version"), after client-go's reflector
	// backoff: from 0.8 s, doubling up to 30 s, with up to 100% jitter,
	// reset only after 2 minutes without a backoff
	// (tools/cache/reflector.go), and both the watch refused while the server
	// is down and the relist after it take a step. After restarts in quick
	// succession one informer can wait two capped steps, up to 2 minutes
	// (docs/troubleshooting.md, "kube-apiserver restarts"); then binding.
	AfterAPIServerRestartTimeout = 2*time.Minute + PodsBoundTimeout
	// JobCompletedTimeout bounds waiting for a Job to reach a phase, Completed
	// in particular.
	JobCompletedTimeout = 90 * time.Second
	// RealJobCompletedTimeout bounds a Job on the real node, from creation to
	// Completed: real sandboxes (a few seconds each on two shared cores), the
	// waits, and the probes' own delays.
	RealJobCompletedTimeout = 4 * time.Minute
	// HelloJobCompletedTimeout bounds an example that runs as written
	// (samples.Hellos) on the real node, from creation to Completed. They
	// finish in under a minute on a cluster; the real node's sandboxes on two
	// shared cores add some. Their checks give up after 2 minutes, so a hung
	// example fails here instead of waiting forever.
	HelloJobCompletedTimeout = 3 * time.Minute
	// RealSpecTimeout bounds one spec running Jobs on the real node.
	RealSpecTimeout = 8 * time.Minute
	// GarbageCollectedTimeout bounds waiting for the garbage collector to
	// delete what a deleted Job owned: up to one discovery resync (30s) plus
	// the deletions.
	GarbageCollectedTimeout = 90 * time.Second
	// GPUsFreeTimeout bounds waiting until no running pod holds a GPU, before
	// and after a spec that needs the cluster's GPUs.
	GPUsFreeTimeout = 60 * time.Second

	// GangPendingDuration is how long a gang that does not fit must stay
	// entirely unbound: 15 vc-scheduler sessions.
	GangPendingDuration = 15 * time.Second
	// PartialSettleDuration is how long a partial allocation must hold still
	// once reached: 5 vc-scheduler sessions.
	PartialSettleDuration = 5 * time.Second
)
