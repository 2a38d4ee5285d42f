// Command scale is `make scale`: it measures what a large job costs this
// project's vc-controller-manager against Volcano's stock controller manager
// (built from the same volcano.sh/volcano module, `make
// stock-controller-manager`), on the local cluster of package
// internal/localcluster with many KWOK nodes.
//
// For every round, framework and controller manager ("impl": stock,
// stock-wait, ours, ours-inline; runs says which run which job) it
// starts a fresh cluster in --dir with that controller manager and the same
// flags (the client QPS and burst of the controller and webhook managers
// raised to --qps and --burst, so the API server rather than client-side rate
// limiting bounds pod creation), submits that framework's job (TensorFlow: 1
// ps and --pods-1 workers; MPI: 1 master and --pods-1 workers), records the
// figures below and stops the cluster: no job is measured on a cluster that
// an earlier job has warmed or filled.
//
//   - created: seconds from the create call until every pod exists;
//   - bound: seconds until every pod is bound to a node;
//   - cpu to bound: the controller manager's CPU seconds (user+system, from
//     /proc/<pid>/stat) over the same interval;
//   - cpu total: its CPU seconds until it is idle again after the job started;
//   - peak RSS: its peak resident memory;
//   - stored pod bytes: the job's pods as etcd stores them (protobuf, read
//     from etcd itself once the controller is idle), in all, median and
//     largest pod; for the TensorFlow job also the bytes of TF_CONFIG and
//     TF_CONFIG_CLUSTER in them plus the cluster ConfigMap;
//   - peak RSS (VmHWM) of kube-apiserver, vc-scheduler and
//     vc-controller-manager after the job, and the growth of kube-apiserver's
//     RSS (VmRSS) from the idle cluster before the job to all its pods
//     bound, and of its live heap (after a forced collection) from the idle
//     cluster before the job to the idle cluster after it;
//   - what the median pod is made of in etcd: managedFields, status, labels
//     and annotations, the wait container and its script, the VC_*
//     variables (podParts);
//   - marked unschedulable: how many of the job's pods vc-scheduler wrote a
//     PodScheduled=False condition into before binding them (it does so
//     while a gang's pods are still being created; each write costs the
//     controller a sync of the whole job, so this count, which varies from
//     round to round, moves cpu total; docs/dev/performance.md).
//
// stock and stock-wait run Volcano's own pair of managers, its webhook
// manager too; ours runs this project's pair. "ours" gives the TensorFlow
// job no --tf-config: the default, auto, stores the cluster by reference
// for a job whose cluster JSON is over tensorflow.AutoInlineMaxBytes, as at
// the default --pods. "ours-inline" (not in the default --impls) runs it
// with --tf-config=inline, the pods holding the whole TF_CONFIG as with
// stock: at 2,000 pods our admission refuses that job, whose TF_CONFIG
// would pass MAX_ARG_STRLEN, so it measures only smaller --pods.
// "stock-wait" runs stock's managers with the PyTorch job's
// --wait-master-enabled: the in-tree plugin then gives every worker an init
// container that waits for the master's port, as ours does by default; the
// report compares ours with it (not a target). With the default --impls and
// --frameworks a round starts 7 clusters: tensorflow 2 (stock, ours), mpi 2
// (stock, ours), pytorch 3 (stock, stock-wait, ours).
//
// Each job starts when its fresh cluster is idle. With --profile our
// controller manager's CPU profile of each job is saved beside scale.json.
// It prints the medians, each round's figures, the ratios ours/stock and
// the target checks (ours/stock: bound and cpu total at most 1.05; the TensorFlow job's
// kube-apiserver RSS growth at most 1.2× the PyTorch job's, both ours;
// ours' TF_CONFIG in etcd at most 1 MiB per job and 2,000 B per pod),
// writes them to <out>/scale.txt and the measurements to
// <out>/scale.json, and stops the cluster. The exit status is 0 when every
// target holds, 1 when one fails, 2 when the test could not run, 130 on
// Ctrl-C.
//
// Usage:
//
//	scale [--rounds 2] [--nodes 100] [--pods 2000] [--impls stock,stock-wait,ours]
//	      [--frameworks tensorflow,mpi,pytorch] [--qps 5000] [--burst 10000]
//	      [--dir _output/scale] [--bin-dir _output/bin] [--out _output/bench]
//	      [--keep] [--profile]
//	scale --in _output/bench/scale.json   # re-check saved measurements
//	scale --in run1.json,run2.json        # medians over the rounds of both runs
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// The implementations compared (package measure's).
const (
	ImplOurs       = measure.ImplOurs
	ImplStock      = measure.ImplStock
	ImplOursInline = measure.ImplOursInline
	ImplStockWait  = measure.ImplStockWait
)

// tracked are the processes whose memory the scale test reports.
var tracked = []string{localcluster.KubeAPIServer, localcluster.Scheduler, localcluster.ControllerManager}

type options struct {
	dir, binDir, out, in string
	rounds, nodes, pods  int
	// podsOf is each framework's job size: pods, or fewer where our
	// admission refuses pods (admittedPods).
	podsOf            map[string]int
	impls, frameworks []string
	qps, burst        int
	limit             float64
	keep, profile     bool
}

func main() {
	os.Exit(mainStatus())
}

func mainStatus() int {
	var o options
	impls, frameworks := "stock,stock-wait,ours", TensorFlow+","+MPI+","+PyTorch
	flag.StringVar(&o.dir, "dir", "_output/scale", "root directory of the scale test's cluster (relative to the module root); removed after each run")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "directory of the binaries built by `make binaries stock-controller-manager`")
	flag.StringVar(&o.out, "out", "_output/bench", "directory for scale.txt and scale.json")
	flag.StringVar(&o.in, "in", "", "read measurements from these comma-separated scale.json files instead of running, and check them; rounds of later files are numbered after those of earlier ones")
	flag.IntVar(&o.rounds, "rounds", 2, "clusters started per controller manager (the order alternates between rounds); the report shows medians")
	flag.IntVar(&o.nodes, "nodes", 100, "KWOK nodes (32 CPU, 256Gi, 110 pods each)")
	flag.IntVar(&o.pods, "pods", 2000, "pods per job, or the most our admission admits where fewer (the TensorFlow job: TF_CONFIG within MAX_ARG_STRLEN)")
	flag.StringVar(&impls, "impls", impls, "controller managers to run, in order: stock, stock-wait (stock with the PyTorch job's --wait-master-enabled; pytorch only), ours, ours-inline (ours with the TensorFlow job's --tf-config=inline; tensorflow only)")
	flag.StringVar(&frameworks, "frameworks", frameworks, "jobs to submit, in order: "+TensorFlow+", "+MPI+", "+PyTorch+" (the reference of the RSS target)")
	flag.IntVar(&o.qps, "qps", 5000, "--kube-api-qps of the controller manager and the webhook manager, for both impls")
	flag.IntVar(&o.burst, "burst", 10000, "--kube-api-burst of the controller manager and the webhook manager, for both impls")
	flag.Float64Var(&o.limit, "limit", targetRatio, "largest ratio ours/stock that passes")
	flag.BoolVar(&o.profile, "profile", false, "run our controller manager with --profiling and save its CPU profile of each job, in 10 s pieces from the create call until it is idle, as <out>/scale-cpu-<framework>-<impl>-r<round>-<N>.pprof ('go tool pprof -top' merges the pieces given together); stock serves no profiles")
	flag.BoolVar(&o.keep, "keep", false, "leave the last cluster running (stop it with `go run ./hack/local-cluster down --dir <dir>`)")
	flag.Parse()
	o.impls = strings.Split(impls, ",")
	o.frameworks = strings.Split(frameworks, ",")

	return measure.Tool[Measurement]{
		Name: "scale", In: o.in, Out: o.out,
		Round:  func(m *Measurement) *int { return &m.Round },
		Run:    func(ctx context.Context) ([]Measurement, error) { return runAll(ctx, o) },
		Report: func(w io.Writer, ms []Measurement) []string { return report(w, ms, o.limit) },
	}.Main()
}

// runAll runs every round. Within a round the order of the controller
// managers alternates, so a drift of the machine's speed during the test
// does not always favour the same one.
func runAll(ctx context.Context, o options) ([]Measurement, error) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return nil, err
	}
	o.dir, o.binDir, o.out = localcluster.AbsUnder(root, o.dir), localcluster.AbsUnder(root, o.binDir), localcluster.AbsUnder(root, o.out)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	if slices.Contains(o.impls, measure.ImplOursNoWait) {
		return nil, fmt.Errorf("impl %s: the scale test runs only stock, stock-wait, ours and ours-inline", measure.ImplOursNoWait)
	}
	if err := measure.CheckImpls(o.impls, o.binDir); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(o.impls, measure.IsStock) {
		if _, err := os.Stat(filepath.Join(o.binDir, measure.StockWebhookBinary)); err != nil {
			return nil, fmt.Errorf("stock's webhook manager: %w (run `make stock-webhook-manager`)", err)
		}
	}
	// Every impl runs the same job: the largest our admission admits.
	o.podsOf = map[string]int{}
	for _, fw := range o.frameworks {
		n, denial, err := admittedPods(fw, o.pods)
		if err != nil {
			return nil, err
		}
		if n < o.pods {
			fmt.Printf("%s job: our admission refuses %d pods (%s); every impl runs the largest it admits, %d pods\n", fw, o.pods, denial, n)
		}
		o.podsOf[fw] = n
	}
	var all []Measurement
	for round := 1; round <= o.rounds; round++ {
		for _, fw := range o.frameworks {
			for _, impl := range measure.RoundOrder(o.impls, round) {
				if !runs(impl, fw) {
					continue
				}
				fmt.Printf("\n== round %d of %d, %s job: %s controller manager (%s), %d nodes\n", round, o.rounds, fw, impl, measure.ImplBinary[impl], o.nodes)
				m, err := runCluster(ctx, o, impl, fw, round)
				if err != nil {
					return all, fmt.Errorf("round %d, %s, %s job: %w", round, impl, fw, err)
				}
				m.Impl, m.Round = impl, round
				all = append(all, m)
			}
		}
	}
	return all, nil
}

// runs reports whether impl runs framework fw's job: ours-inline only the
// TensorFlow job and stock-wait only the PyTorch job, as their arguments
// change no other job (it would measure ours or stock again).
func runs(impl, fw string) bool {
	switch impl {
	case ImplOursInline:
		return fw == TensorFlow
	case ImplStockWait:
		return fw == PyTorch
	}
	return true
}

// runCluster measures framework fw's job with impl's controller manager on
// a fresh cluster (measure.WithCluster); with o.profile our controller
// manager's CPU profile of the job goes to o.out (measurer.profile).
func runCluster(ctx context.Context, o options, impl, fw string, round int) (Measurement, error) {
	var extra map[string][]string
	profile := ""
	if o.profile && !measure.IsStock(impl) {
		extra = map[string][]string{localcluster.ControllerManager: measure.ProfileArgs}
		profile = filepath.Join(o.out, fmt.Sprintf("scale-cpu-%s-%s-r%d", fw, impl, round))
	}
	var r Measurement
	err := measure.WithCluster(ctx, measure.ClusterConfig{
		Dir: o.dir, BinDir: o.binDir, Nodes: o.nodes, Impl: impl, QPS: o.qps, Burst: o.burst, Keep: o.keep,
		ExtraArgs: extra, StockWebhook: measure.IsStock(impl),
	}, func(cl *measure.Cluster) error {
		m := &measurer{cl: cl, profile: profile}
		job, err := scaleJob(fw, o.podsOf[fw], impl)
		if err != nil {
			return err
		}
		fmt.Printf("  %s job %s: %d pods\n", fw, job.Name, o.podsOf[fw])
		if r, err = m.run(ctx, job); err != nil {
			return err
		}
		r.Framework = fw
		fmt.Printf("  %s: created %.1fs, bound %.1fs, controller CPU %.2fs to bound, %.2fs in all, peak RSS %s; pods %s in etcd (median %d B, max %d B); kube-apiserver RSS +%s, live heap +%s; %d pods marked unschedulable by vc-scheduler\n",
			fw, r.Created.Seconds(), r.Bound.Seconds(), r.CPUToBound.Seconds(), r.CPUTotal.Seconds(), measure.MiB(r.PeakRSS),
			measure.MiB(r.StoredPodBytes), r.StoredPodMedian, r.StoredPodMax, measure.MiB(r.APIServerRSSGrowth), measure.MiB(r.APIServerHeapGrowth), r.SchedulerWrotePods)
		if r.Unschedulable != "" {
			fmt.Printf("  vc-scheduler's first PodScheduled=False condition: %s\n", r.Unschedulable)
		}
		return nil
	})
	return r, err
}
