// Command demo is `make demo`: it brings up the local cluster of package
// internal/localcluster (or reuses the one running in the same directory),
// submits example Jobs into a fresh namespace side by side, follows each until
// it completes, prints what the plugins injected into every pod (framework
// variables, the wait-for-dependencies init container, the MPI hostfile) and
// one result line per Job, and stops the cluster again if it started it.
//
// --mode real runs the examples that train (or check a framework's contract)
// on the real node (samples.Examples: each framework Sample's Training, in
// catalog order), judged by their Samples' judges; --mode kwok runs the
// minimal Job of every framework (example/<framework>/<framework>.yaml) on the
// KWOK nodes; the default, auto (DEMO_MODE in the environment), is real where
// the real node and the training image are there.
//
// Usage:
//
//	demo [--mode auto|real|kwok] [--dir _output/local] [--bin-dir _output/bin]
//	     [--namespace demo] [--job-timeout 3m] [--real-job-timeout 8m]
//	     [--check-timeout 0] [--at-once 0] [--up-timeout 3m] [--keep]
//	demo --mode startup [--runs 10] [--warmup 1] [--impls ours,stock,stock-wait]
//	     [--examples NAME,...|all] [--startup-dir _output/startup]
//	     [--out _output/bench] [--join-slack 1s] [--release-limit 500ms]
//	     [--run-timeout 5m] [--verbose]
//
// --mode startup is `make startup`: the time to first step of the examples
// on the real node, with this project's vc-controller-manager, with
// Volcano's stock one and with the stock one running the PyTorch examples
// with --wait-master-enabled (stock-wait, its wait in the training image),
// each on a fresh cluster of its own; see startupMain
// and docs/dev/performance.md. It never reuses the cluster of --dir.
//
// KEEP=1 in the environment is --keep: leave the cluster running and print how
// to use it. A cluster that was already running is never stopped. Ctrl-C stops
// the cluster if demo started it (unless KEEP is set; a second Ctrl-C is
// ignored while it stops). The exit status is 0 when every job completed, 1
// when one did not or demo failed, 130 on Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vcplugins/framework-plugins/hack/internal/cli"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
)

func main() {
	os.Exit(mainStatus())
}

type options struct {
	dir, binDir, namespace string
	mode                   string
	jobTimeout             time.Duration
	realJobTimeout         time.Duration
	checkTimeout           time.Duration
	atOnce                 int
	upTimeout              time.Duration
	keep                   bool

	// --mode startup (make startup, startup.go).
	runs, warmup                        int
	impls, examples, startupDir, out    string
	joinSlack, releaseLimit, runTimeout time.Duration
	verbose                             bool
}

// The demo's modes: the examples that train on the real node, or the
// control-plane simulation on the KWOK nodes.
const (
	modeAuto = "auto"
	modeReal = "real"
	modeKWOK = "kwok"
	// modeStartup is make startup: time to first step, ours against stock.
	modeStartup = "startup"
)

func mainStatus() int {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/local", "cluster root directory, shared with `make local-up` (relative to the module root)")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "directory of the binaries built by `make binaries`")
	flag.StringVar(&o.namespace, "namespace", "demo", "namespace the example jobs run in; deleted and recreated on every run")
	flag.StringVar(&o.mode, "mode", envOr("DEMO_MODE", modeAuto), "real: the examples that train on the real node; kwok: one minimal Job per framework on the KWOK nodes (what the plugins inject, no training); auto: real where the real node and the training image are there (also DEMO_MODE in the environment); startup: make startup, the time to first step of each example on the real node, our controller manager against Volcano's (the startup: flags)")
	flag.DurationVar(&o.jobTimeout, "job-timeout", 3*time.Minute, "how long each KWOK job may take to complete, from its submission")
	flag.DurationVar(&o.realJobTimeout, "real-job-timeout", 8*time.Minute, "how long each job on the real node may take to complete, from its submission (they run side by side on 2 cores)")
	flag.DurationVar(&o.checkTimeout, "check-timeout", 0, "how long the contract checks on the real node wait for an unreachable peer (their TIMEOUT, in whole seconds); 0: as their programs say, 180s. A node that starts containers minutes apart, such as an emulated VM's, needs more")
	flag.IntVar(&o.atOnce, "at-once", 0, "submit the Jobs in groups of this many, each group once the one before has finished (0: all side by side); an emulated VM's node, where side by side they start too slowly for their frameworks' own timeouts, runs them one at a time")
	flag.DurationVar(&o.upTimeout, "up-timeout", 3*time.Minute, "how long starting the cluster may take")
	flag.BoolVar(&o.keep, "keep", false, "leave the cluster running at the end (also KEEP=1 in the environment)")
	flag.IntVar(&o.runs, "runs", 10, "startup: measured runs of each example per controller manager")
	flag.IntVar(&o.warmup, "warmup", 1, "startup: unmeasured runs of each example on each fresh cluster before the measured ones")
	flag.StringVar(&o.impls, "impls", implOurs+","+implStock+","+implStockWait, "startup: controller managers, in order: ours, stock (Volcano's, for pytorch, mpi and tensorflow), stock-wait (Volcano's, for pytorch, with --wait-master-enabled, its wait in the training image)")
	flag.StringVar(&o.examples, "examples", "", "startup: comma-separated example Job names or files; empty: the first example of each framework; all: every one")
	flag.StringVar(&o.startupDir, "startup-dir", "_output/startup", "startup: root directory of its clusters (relative to the module root); removed after each")
	flag.StringVar(&o.out, "out", "_output/bench", "startup: directory for startup.txt and startup.json")
	flag.DurationVar(&o.joinSlack, "join-slack", time.Second, "startup: how much ours' median time to every rank joined may exceed the fastest successful stock run")
	flag.DurationVar(&o.releaseLimit, "release-limit", 500*time.Millisecond, "startup: largest median time from a wait container's last dependency answering to its exit")
	flag.DurationVar(&o.runTimeout, "run-timeout", 5*time.Minute, "startup: how long one run may take from its create call")
	flag.BoolVar(&o.verbose, "verbose", false, "startup: print every run's progress lines (bound pods, job states)")
	flag.Parse()
	o.keep = o.keep || truthy(os.Getenv("KEEP"))

	start := time.Now()
	// The first Ctrl-C (or SIGTERM) cancels ctx; later ones are ignored
	// until demo returns, so a second Ctrl-C cannot leave a half-stopped
	// cluster behind. Everything after a cancellation is bounded: Up stops
	// what it started, Down takes at most a few seconds.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, err := localcluster.ModuleRoot()
	if err != nil {
		return fail(err)
	}
	dir := localcluster.AbsUnder(root, o.dir)
	binDir := localcluster.AbsUnder(root, o.binDir)

	switch o.mode {
	case modeAuto, modeReal, modeKWOK:
	case modeStartup:
		return startupMain(ctx, root, o)
	default:
		return fail(fmt.Errorf("--mode %q: want %s, %s, %s or %s", o.mode, modeAuto, modeReal, modeKWOK, modeStartup))
	}
	// Load the examples before touching the cluster: a broken file fails fast.
	examples, err := loadExamples(root, o.namespace)
	if err != nil {
		return fail(err)
	}
	realExamples, err := loadRealExamples(root, o.namespace, o.checkTimeout)
	if err != nil {
		return fail(err)
	}
	_, imageErr := os.Stat(filepath.Join(root, training.ImageTar))
	if o.mode == modeReal && imageErr != nil {
		return fail(fmt.Errorf("--mode real needs the training image: %w (make node-training builds it)", imageErr))
	}

	heading("Local cluster")
	wasRunning := false
	if st, err := localcluster.Status(dir); err == nil && st.Running() {
		wasRunning = true
	}
	realNode := localcluster.RealNodeAuto
	switch {
	case o.mode == modeReal:
		realNode = localcluster.RealNodeOn
	case o.mode == modeKWOK:
		// The simulation needs no real node; one already running is reused.
		realNode = localcluster.RealNodeOff
	}
	cl, err := localcluster.Up(ctx, localcluster.Config{
		RootDir:  dir,
		BinDir:   binDir,
		Timeout:  o.upTimeout,
		Out:      cli.Indent(os.Stdout, "  "),
		RealNode: realNode,
	})
	if err != nil {
		if ctx.Err() != nil {
			// Up stopped the processes it started; remove the rest too.
			fmt.Println("\ninterrupted while starting the cluster; removing it")
			if !wasRunning {
				if derr := localcluster.Down(dir); derr != nil {
					fmt.Fprintln(os.Stderr, "demo: stopping the cluster:", derr)
				}
			}
			return 130
		}
		return fail(fmt.Errorf("starting the local cluster: %w", err))
	}
	startedByUs := !wasRunning
	if !startedByUs {
		fmt.Println("  reusing it (demo will leave it running)")
	}
	for _, comp := range cl.Components {
		if comp.Name == localcluster.ControllerManager && filepath.Base(comp.Binary) != localcluster.ControllerManager {
			fmt.Printf("  note: the controller manager is %s, not this repository's\n", comp.Binary)
		}
	}
	if !cl.Webhook {
		fmt.Println("  note: no webhook manager runs (not built or LOCAL_WEBHOOK=off)")
	}
	fmt.Printf("  apiserver %s, nodes %s\n", cl.Server, strings.Join(cl.Nodes, " "))
	if cl.RealNode != nil {
		fmt.Printf("  real node %s (kubelet, containerd, cluster DNS %s): runs pods that select %s=true\n",
			localcluster.RealNodeName, cl.RealNode.DNS, localcluster.RealNodeLabel)
	}

	jobTimeout := o.jobTimeout
	switch {
	case o.mode == modeKWOK:
		fmt.Println("  --mode kwok: the minimal example of each framework on the KWOK nodes (no training)")
	case cl.RealNode == nil:
		fmt.Println("  note: no real node on this machine (see above), so no training: the minimal example of each framework on the KWOK nodes instead")
	case imageErr != nil:
		fmt.Printf("  note: no training image (%s; make node-training builds it), so no training: the minimal example of each framework on the KWOK nodes instead\n", training.ImageTar)
	default:
		examples, jobTimeout = realExamples, o.realJobTimeout
	}
	code := demo(ctx, cl, root, examples, jobTimeout, o)

	fmt.Println()
	switch {
	case !startedByUs:
		fmt.Printf("The cluster was already running, so it stays up; the jobs remain in namespace %s.\n", o.namespace)
		printUsage(cl, o.namespace)
	case o.keep:
		fmt.Printf("KEEP is set: the cluster stays up; the jobs remain in namespace %s.\n", o.namespace)
		printUsage(cl, o.namespace)
	default:
		if code == 130 {
			fmt.Println("interrupted; stopping the cluster demo started")
		}
		fmt.Printf("stopping the local cluster ... ")
		t := time.Now()
		if err := localcluster.Down(cl.RootDir); err != nil {
			fmt.Println("FAILED")
			fmt.Fprintln(os.Stderr, "demo:", err)
			if code == 0 {
				code = 1
			}
		} else {
			fmt.Printf("done (%.1fs); KEEP=1 make demo leaves it running\n", time.Since(t).Seconds())
		}
	}
	fmt.Printf("demo took %.1fs\n", time.Since(start).Seconds())
	return code
}

// demo runs the examples on cl and prints everything about them; it returns
// the exit status.
func demo(ctx context.Context, cl *localcluster.Cluster, root string, examples []*example, jobTimeout time.Duration, o options) int {
	cs, err := kubeutil.NewClients(cl.RESTConfig, cli.Warnings)
	if err != nil {
		return fail(err)
	}
	c := &clients{kube: cs.Kube, volcano: cs.Volcano, namespace: o.namespace, out: os.Stdout}

	where := "on the KWOK nodes"
	if examples[0].real != nil {
		where = "on the real node " + localcluster.RealNodeName
	}
	heading(fmt.Sprintf("Jobs %s (namespace %s, each must complete within %s)", where, o.namespace, jobTimeout))
	if err := c.freshNamespace(ctx); err != nil {
		if ctx.Err() != nil {
			return 130
		}
		return fail(err)
	}
	if err := c.createConfigMaps(ctx, root, examples); err != nil {
		if ctx.Err() != nil {
			return 130
		}
		return fail(err)
	}
	var runs []*run
	groups := groupsOf(examples, o.atOnce)
	for _, group := range groups {
		if ctx.Err() != nil {
			break
		}
		if len(groups) > 1 {
			fmt.Printf("\n  Jobs %d to %d of %d (--at-once %d)\n", len(runs)+1, len(runs)+len(group), len(examples), o.atOnce)
		}
		pods, err := c.watchPods(ctx)
		if err != nil {
			return fail(err)
		}
		submitted, err := c.submit(ctx, group)
		if err != nil {
			pods.Stop()
			if ctx.Err() != nil {
				return 130
			}
			return fail(err)
		}
		runs = append(runs, submitted...)
		c.follow(ctx, submitted, pods, jobTimeout)
	}
	for _, r := range runs {
		r.judge()
	}

	if ctx.Err() == nil {
		heading("What the plugins injected")
		for _, r := range runs {
			report(r)
		}
	}

	heading("Result")
	var failed []string
	for _, r := range runs {
		fmt.Println("  " + r.resultLine())
		if !r.ok {
			failed = append(failed, r.example.job.Name)
		}
	}
	if ctx.Err() != nil {
		return 130
	}
	if len(failed) > 0 {
		fmt.Printf("FAILED: %s; logs of the cluster are in %s\n", strings.Join(failed, ", "), filepath.Join(cl.RootDir, "logs"))
		return 1
	}
	var last time.Time
	for _, r := range runs {
		if end := r.submitted.Add(r.elapsed); end.After(last) {
			last = end
		}
	}
	done := "completed"
	if runs[0].real != nil {
		done = "trained or checked their contract on the real node"
	}
	fmt.Printf("all %d jobs %s, %s after the first was submitted\n", len(runs), done, seconds(last.Sub(runs[0].submitted)))
	return 0
}

func printUsage(cl *localcluster.Cluster, ns string) {
	vcctl := filepath.Join(cl.BinDir, "vcctl")
	if root, err := localcluster.ModuleRoot(); err == nil {
		if rel, err := filepath.Rel(root, vcctl); err == nil && !strings.HasPrefix(rel, "..") {
			vcctl = rel
		}
	}
	fmt.Printf(`Use it:
  export KUBECONFIG=%s
  %s job list -n %s
  %s job view -n %s -N tf-dist
  kubectl get pods -n %s -o wide     # any kubectl 1.30 (not shipped here)
Logs: %s/logs/<component>.log
Stop: make local-down
`, cl.Kubeconfig, vcctl, ns, vcctl, ns, ns, cl.RootDir)
}

func heading(s string) {
	fmt.Printf("\n== %s\n", s)
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "demo:", err)
	return 1
}

// envOr returns the environment variable name, or def when it is empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

// seconds formats d as seconds with one decimal.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}
