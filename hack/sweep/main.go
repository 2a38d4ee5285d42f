// Command sweep is `make sweep`: it measures what many small jobs created at
// once cost this project's vc-controller-manager against Volcano's stock
// controller manager (built from the same volcano.sh/volcano module, `make
// stock-controller-manager`), on the local cluster of package
// internal/localcluster with KWOK nodes. Where `make scale` (hack/scale)
// times one job of thousands of pods, the sweep times hundreds of jobs of 3
// or 4 pods each: per-job costs (plans, PodGroups, Services, ConfigMaps,
// status updates, admission) rather than per-pod ones.
//
// For every round, mix and controller manager ("impl": stock, stock-wait,
// ours, ours-inline) it starts a fresh cluster in --dir with that controller
// manager and the same flags (as make scale: the controller and webhook
// managers' client QPS and burst raised to --qps and --burst; kube-apiserver
// writing an audit log), creates --jobs Volcano Jobs at once (--parallel
// create calls in flight), the mix's frameworks taking turns, records the
// figures below and stops the cluster. The jobs (each framework's Sample's
// small Job, mix.go's shape):
// tensorflow 1 ps + 2 workers, pytorch 1 master + 3 workers, mpi 1 master
// (launcher) + 2 workers, mxnet 1 scheduler + 1 server + 2 workers, xgboost
// 1 master + 2 workers, dask 1 scheduler + 2 workers + 1 client, jax 3
// processes, paddle 3 workers (collective mode); every pod in its job's
// gang and kept running by KWOK.
//
// The mixes (plan): with stock among --impls, one mix of a single framework
// for each framework stock has (tensorflow, pytorch, mpi), run by every
// impl (ours-inline on tensorflow only, stock-wait on pytorch only); then
// the mix of all --frameworks, run by ours and ours-inline (stock has no
// plugin for mxnet, xgboost, dask, jax or paddle). "ours-inline" is our
// controller manager with the TensorFlow jobs' --tf-config=inline; "ours"
// gives them no --tf-config, and the default, auto, inlines jobs this small
// too (tensorflow.AutoInlineMaxBytes). "stock-wait" is stock's controller
// manager with the PyTorch jobs' --wait-master-enabled: the in-tree plugin's
// workers then get an init container waiting for the master's port, as
// ours' do by default. With the default --impls and --frameworks a round
// starts 10 clusters: tensorflow 3 (stock, ours, ours-inline), pytorch 3
// (stock, stock-wait, ours), mpi 2, all 2.
//
//   - submitted, created, bound: seconds from the first create call until
//     every create call returned, every pod of every job exists, and every
//     pod exists and is bound (the sweep's time); for a mix of several
//     frameworks also when each framework's pods were all bound;
//   - cpu to bound, cpu total: the controller manager's CPU seconds
//     (user+system, /proc/<pid>/stat) until bound, and until it is idle
//     again;
//   - API requests of the controller manager, by verb and resource, per
//     job, from the first create call until it is idle and has sent no
//     request for 5 s (its Job events' patches trail its CPU): from
//     kube-apiserver's audit log, by the manager's user agent
//     (audit.go says why not apiserver_request_total), with the writes
//     (create, update, patch, delete), reads and objects created (creates
//     of resources, events left out) per job;
//   - admission p50 and p99: the latency of the framework admissions
//     (mutate and validate of each Job) during the sweep, from the webhook
//     manager's framework_plugins_admission_duration_seconds histogram
//     (buckets 1, 2.5, 6.25, 15.6, 39 ms ...), as histogram_quantile
//     estimates it.
//
// It prints the medians over rounds, the comparisons ours/stock and the
// target checks (on every mix both ran: ours/stock at most 1.0 on bound and
// cpu total, ours' API writes per job at most stock's + 1; admission p99 at
// most 20 ms in every mix and impl), writes them to <out>/sweep.txt and the
// measurements to <out>/sweep.json, and stops the cluster. The exit status
// is 0 when every target holds, 1 when one fails, 2 when the sweep could not
// run, 130 on Ctrl-C.
//
// Usage:
//
//	sweep [--rounds 2] [--jobs 500] [--parallel 50] [--nodes 50]
//	      [--impls stock,stock-wait,ours,ours-inline] [--frameworks tensorflow,pytorch,...]
//	      [--qps 5000] [--burst 10000] [--limit 1.0]
//	      [--dir _output/sweep] [--bin-dir _output/bin] [--out _output/bench]
//	      [--keep] [--profile]
//	sweep --in _output/bench/sweep.json   # re-check saved measurements
//	sweep --in run1.json,run2.json        # medians over the rounds of both runs
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
)

type options struct {
	dir, binDir, out, in          string
	rounds, jobs, parallel, nodes int
	impls, frameworks             []string
	qps, burst                    int
	limit                         float64
	keep, profile                 bool
}

func main() {
	os.Exit(mainStatus())
}

func mainStatus() int {
	var o options
	impls, frameworks := "stock,stock-wait,ours,ours-inline", strings.Join(catalog.Names(), ",")
	flag.StringVar(&o.dir, "dir", "_output/sweep", "root directory of the sweep's cluster (relative to the module root); removed after each run, as is <dir>-audit, kube-apiserver's audit log")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "directory of the binaries built by 'make binaries stock-controller-manager'")
	flag.StringVar(&o.out, "out", "_output/bench", "directory for sweep.txt and sweep.json")
	flag.StringVar(&o.in, "in", "", "read measurements from these comma-separated sweep.json files instead of running, and check them; rounds of later files are numbered after those of earlier ones")
	flag.IntVar(&o.rounds, "rounds", 2, "clusters started per mix and controller manager (the order of the controller managers alternates between rounds); the report shows medians")
	flag.IntVar(&o.jobs, "jobs", 500, "jobs per sweep, created at once")
	flag.IntVar(&o.parallel, "parallel", 50, "create calls in flight while the jobs are created")
	flag.IntVar(&o.nodes, "nodes", 50, "KWOK nodes (32 CPU, 256Gi, 110 pods each)")
	flag.StringVar(&impls, "impls", impls, "controller managers to run, in order: stock, stock-wait (stock with the PyTorch jobs' --wait-master-enabled; pytorch's mix only), ours, ours-inline (ours with the TensorFlow jobs' --tf-config=inline), ours-nowait (ours with --wait=false on every framework plugin: no wait init containers)")
	flag.StringVar(&frameworks, "frameworks", frameworks, "frameworks of the mix of all, in order; with stock, also one mix each for those stock has (tensorflow, pytorch, mpi)")
	flag.IntVar(&o.qps, "qps", 5000, "--kube-api-qps of the controller manager and the webhook manager, for every impl")
	flag.IntVar(&o.burst, "burst", 10000, "--kube-api-burst of the controller manager and the webhook manager, for every impl")
	flag.Float64Var(&o.limit, "limit", targetRatio, "largest ratio ours/stock that passes")
	flag.BoolVar(&o.profile, "profile", false, "run our controller manager with --profiling and save its CPU profile of each sweep, in 10 s pieces from the first create call until it is idle, as <out>/sweep-cpu-<mix>-<impl>-r<round>-<N>.pprof ('go tool pprof -top' merges the pieces given together)")
	flag.BoolVar(&o.keep, "keep", false, "leave the last cluster running (stop it with 'go run ./hack/local-cluster down --dir <dir>') and its audit log")
	flag.Parse()
	o.impls = strings.Split(impls, ",")
	o.frameworks = strings.Split(frameworks, ",")

	return measure.Tool[Measurement]{
		Name: "sweep", In: o.in, Out: o.out,
		Round:  func(m *Measurement) *int { return &m.Round },
		Run:    func(ctx context.Context) ([]Measurement, error) { return runAll(ctx, o) },
		Report: func(w io.Writer, ms []Measurement) []string { return report(w, ms, o.limit) },
	}.Main()
}

// runAll runs every round: every mix of plan with each of its impls, the
// order of the impls alternating between rounds (measure.RoundOrder). It
// returns the measurements so far and the first error.
func runAll(ctx context.Context, o options) ([]Measurement, error) {
	if o.jobs < 1 || o.parallel < 1 || o.rounds < 1 {
		return nil, fmt.Errorf("-jobs %d, -parallel %d, -rounds %d: each must be at least 1", o.jobs, o.parallel, o.rounds)
	}
	mixes, err := plan(o.frameworks, o.impls)
	if err != nil {
		return nil, err
	}
	if err := fits(mixes, o.jobs, o.nodes); err != nil {
		return nil, err
	}
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return nil, err
	}
	o.dir, o.binDir, o.out = localcluster.AbsUnder(root, o.dir), localcluster.AbsUnder(root, o.binDir), localcluster.AbsUnder(root, o.out)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	if err := measure.CheckImpls(o.impls, o.binDir); err != nil {
		return nil, err
	}
	var all []Measurement
	for round := 1; round <= o.rounds; round++ {
		for _, mx := range mixes {
			for _, impl := range measure.RoundOrder(mx.Impls, round) {
				fmt.Printf("\n== round %d of %d, mix %s (%s): %s controller manager (%s), %d jobs, %d nodes\n",
					round, o.rounds, mx.Name, strings.Join(mx.Frameworks, ", "), impl, measure.ImplBinary[impl], o.jobs, o.nodes)
				m, err := runCluster(ctx, o, impl, mx, round)
				if err != nil {
					return all, fmt.Errorf("round %d, %s, mix %s: %w", round, impl, mx.Name, err)
				}
				m.Impl, m.Round, m.Mix, m.Frameworks = impl, round, mx.Name, mx.Frameworks
				all = append(all, m)
			}
		}
	}
	return all, nil
}

// runCluster sweeps mix's jobs with impl's controller manager on a fresh
// cluster (measure.WithCluster) whose kube-apiserver writes its audit log
// into <dir>-audit, removed afterwards unless o.keep; with o.profile our
// controller manager's CPU profile goes to o.out (sweeper.profile).
func runCluster(ctx context.Context, o options, impl string, mx mix, round int) (Measurement, error) {
	auditDir := o.dir + "-audit"
	if err := os.RemoveAll(auditDir); err != nil {
		return Measurement{}, err
	}
	if !o.keep {
		defer os.RemoveAll(auditDir)
	}
	audit, err := auditArgs(auditDir)
	if err != nil {
		return Measurement{}, err
	}
	jobs, err := sweepJobs(mx.Frameworks, o.jobs, impl)
	if err != nil {
		return Measurement{}, err
	}
	extra := map[string][]string{localcluster.KubeAPIServer: audit}
	profile := ""
	if o.profile && !measure.IsStock(impl) {
		extra[localcluster.ControllerManager] = measure.ProfileArgs
		profile = filepath.Join(o.out, fmt.Sprintf("sweep-cpu-%s-%s-r%d", mx.Name, impl, round))
	}
	var r Measurement
	err = measure.WithCluster(ctx, measure.ClusterConfig{
		Dir: o.dir, BinDir: o.binDir, Nodes: o.nodes, Impl: impl, QPS: o.qps, Burst: o.burst, Keep: o.keep,
		ExtraArgs: extra,
	}, func(cl *measure.Cluster) error {
		s := &sweeper{cl: cl, agent: measure.ImplBinary[impl], auditDir: auditDir, parallel: o.parallel, ours: !measure.IsStock(impl), profile: profile}
		var err error
		if r, err = s.run(ctx, jobs); err != nil {
			return err
		}
		fmt.Printf("  mix %s, %s: %d jobs, %d pods bound in %.1fs (created %.1fs, submitted %.1fs); controller CPU %.2fs to bound, %.2fs in all; %.2f API writes per job; %d admissions, p50 %.1f ms, p99 %.1f ms\n",
			mx.Name, impl, r.Jobs, r.Pods, r.Bound.Seconds(), r.Created.Seconds(), r.Submitted.Seconds(),
			r.CPUToBound.Seconds(), r.CPUTotal.Seconds(), perJob(r, isWrite), r.Admissions, 1000*r.AdmissionP50, 1000*r.AdmissionP99)
		return nil
	})
	return r, err
}

// fits returns an error if the jobs of a mix cannot all run at once on
// nodes KWOK nodes of the default shape (localcluster.DefaultNodeResources:
// 110 pods, 32 CPU; every pod requests 100m), which would leave the sweep
// waiting for bindings until it times out.
func fits(mixes []mix, jobs, nodes int) error {
	capacity := localcluster.DefaultNodeResources()
	perNode := min(capacity.Pods().Value(), capacity.Cpu().MilliValue()/100)
	for _, mx := range mixes {
		pods := 0
		for i := range jobs {
			tasks, _ := shape(mx.Frameworks[i%len(mx.Frameworks)])
			for _, t := range tasks {
				pods += t.Replicas
			}
		}
		if int64(pods) > int64(nodes)*perNode {
			return fmt.Errorf("mix %s: %d jobs have %d pods, more than %d nodes hold (%d each); raise -nodes", mx.Name, jobs, pods, nodes, perNode)
		}
	}
	return nil
}
