// Command demo is `make demo`: it brings up the local cluster of package
// internal/localcluster (or reuses the one running in the same directory), submits
// the example Job of every framework (example/<framework>/<framework>.yaml)
// into a fresh namespace, follows each until it completes on the KWOK nodes,
// prints what the plugins injected into every pod (framework variables, the
// wait-for-dependencies init container, the MPI hostfile) and one result line
// per job, and stops the cluster again if it started it.
//
// Usage:
//
//	demo [--dir _output/local] [--bin-dir _output/bin] [--namespace demo]
//	     [--job-timeout 3m] [--keep]
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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/hack/internal/cli"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

func main() {
	os.Exit(mainStatus())
}

type options struct {
	dir, binDir, namespace string
	jobTimeout             time.Duration
	upTimeout              time.Duration
	keep                   bool
}

func mainStatus() int {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/local", "cluster root directory, shared with `make local-up` (relative to the module root)")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "directory of the binaries built by `make binaries`")
	flag.StringVar(&o.namespace, "namespace", "demo", "namespace the example jobs run in; deleted and recreated on every run")
	flag.DurationVar(&o.jobTimeout, "job-timeout", 3*time.Minute, "how long each job may take to complete, from its submission")
	flag.DurationVar(&o.upTimeout, "up-timeout", 3*time.Minute, "how long starting the cluster may take")
	flag.BoolVar(&o.keep, "keep", false, "leave the cluster running at the end (also KEEP=1 in the environment)")
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

	// Load the examples before touching the cluster: a broken file fails fast.
	examples, err := loadExamples(root, o.namespace)
	if err != nil {
		return fail(err)
	}

	heading("Local cluster")
	wasRunning := false
	if st, err := localcluster.Status(dir); err == nil && st.Running() {
		wasRunning = true
	}
	cl, err := localcluster.Up(ctx, localcluster.Config{
		RootDir: dir,
		BinDir:  binDir,
		Timeout: o.upTimeout,
		Out:     cli.Indent(os.Stdout, "  "),
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

	code := demo(ctx, cl, examples, o)

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
func demo(ctx context.Context, cl *localcluster.Cluster, examples []*example, o options) int {
	cfg := rest.CopyConfig(cl.RESTConfig)
	cfg.WarningHandler = cli.Warnings{}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	vc, err := vcclientset.NewForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	c := &clients{kube: kc, volcano: vc, namespace: o.namespace}

	heading(fmt.Sprintf("Jobs (namespace %s, each must complete within %s)", o.namespace, o.jobTimeout))
	if err := c.freshNamespace(ctx); err != nil {
		if ctx.Err() != nil {
			return 130
		}
		return fail(err)
	}
	pods, err := c.watchPods(ctx)
	if err != nil {
		return fail(err)
	}
	runs, err := c.submit(ctx, examples)
	if err != nil {
		pods.Stop()
		if ctx.Err() != nil {
			return 130
		}
		return fail(err)
	}
	c.follow(ctx, runs, pods, o.jobTimeout)

	if ctx.Err() == nil {
		heading("What the plugins injected")
		for _, r := range runs {
			report(r)
		}
	}

	heading("Result")
	code := 0
	for _, r := range runs {
		fmt.Println("  " + r.resultLine())
		if !r.ok {
			code = 1
		}
	}
	if ctx.Err() != nil {
		return 130
	}
	if code == 0 {
		var last time.Time
		for _, r := range runs {
			if end := r.submitted.Add(r.elapsed); end.After(last) {
				last = end
			}
		}
		fmt.Printf("all %d jobs completed, %s after the first was submitted\n", len(runs), seconds(last.Sub(runs[0].submitted)))
	} else {
		fmt.Printf("some jobs did not complete; logs of the cluster are in %s\n", filepath.Join(cl.RootDir, "logs"))
	}
	return code
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
