package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcplugins/framework-plugins/hack/internal/cli"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
)

// The controller managers make startup compares, and the files in --bin-dir
// that run each one's controller and webhook managers: stock is Volcano's
// own pair, as a stock install runs them; stock-wait is the same pair
// running the PyTorch examples with the in-tree plugin's
// --wait-master-enabled (stockWaitExample).
const (
	implOurs      = "ours"
	implStock     = "stock"
	implStockWait = "stock-wait"
)

// managers are the files in --bin-dir run as a cluster's controller and
// webhook managers.
type managers struct{ controller, webhook string }

var implManagers = map[string]managers{
	implOurs:      {controller: localcluster.ControllerManager, webhook: localcluster.WebhookManager},
	implStock:     {controller: localcluster.ControllerManager + "-stock", webhook: localcluster.WebhookManager + "-stock"},
	implStockWait: {controller: localcluster.ControllerManager + "-stock", webhook: localcluster.WebhookManager + "-stock"},
}

// deleteTimeout bounds deleting a run's Job until its pods are gone.
const deleteTimeout = 3 * time.Minute

// startupMain is --mode startup (make startup): for each controller manager
// of --impls it starts a fresh cluster with the real node in --startup-dir
// (ours with this project's webhook manager; stock with Volcano's unmodified
// one, whose admission of Jobs and pods a stock install pays for), runs every
// selected example's Job --warmup times unmeasured and then --runs times,
// one Job at a time (run 1 of every example, then run 2, ...), and stops
// the cluster. Stock runs only the examples marked Stock, made stock-compatible by
// stockExample; stock-wait only the PyTorch ones of those, with
// stockWaitExample's --wait-master-enabled (its wait in the training image,
// for its nc). It prints a line per run, then the report (writeReport), writes
// startup.txt and startup.json into --out, and returns 0 when every target
// holds, 1 when one does not, 2 when the measurement could not run, 130 on
// Ctrl-C.
func startupMain(ctx context.Context, root string, o options) int {
	impls := strings.Split(o.impls, ",")
	for _, impl := range impls {
		if _, ok := implManagers[impl]; !ok {
			return startupFail(fmt.Errorf("--impls: unknown %q: want %s, %s or %s", impl, implOurs, implStock, implStockWait))
		}
	}
	if o.runs < 1 || o.warmup < 0 {
		return startupFail(fmt.Errorf("--runs %d, --warmup %d: want at least 1 run and no negative warm-ups", o.runs, o.warmup))
	}
	all, err := loadRealExamples(root, o.namespace, o.checkTimeout)
	if err != nil {
		return startupFail(err)
	}
	selected, err := selectExamples(all, o.examples)
	if err != nil {
		return startupFail(err)
	}
	if _, err := os.Stat(filepath.Join(root, training.ImageTar)); err != nil {
		return startupFail(fmt.Errorf("the training image: %w (make node-training builds it)", err))
	}
	binDir := localcluster.AbsUnder(root, o.binDir)
	plan := map[string][]*example{}
	for _, impl := range impls {
		if _, err := os.Stat(filepath.Join(binDir, implManagers[impl].controller)); err != nil {
			return startupFail(fmt.Errorf("%s controller manager: %w (make binaries stock-controller-manager builds it)", impl, err))
		}
		if _, err := os.Stat(filepath.Join(binDir, implManagers[impl].webhook)); err != nil {
			return startupFail(fmt.Errorf("%s webhook manager: %w (make binaries stock-webhook-manager builds it)", impl, err))
		}
		if impl == implOurs {
			plan[impl] = selected
			continue
		}
		exs, err := stockPlan(impl, selected)
		if err != nil {
			return startupFail(err)
		}
		plan[impl] = exs
	}

	var results []runResult
	for _, impl := range impls {
		exs := plan[impl]
		if len(exs) == 0 {
			fmt.Printf("\n%s: none of the selected examples runs under it\n", impl)
			continue
		}
		var names []string
		for _, ex := range exs {
			names = append(names, ex.job.Name)
		}
		heading(fmt.Sprintf("%s controller manager (%s): %s; %d warm-up and %d measured runs each",
			impl, implManagers[impl].controller, strings.Join(names, ", "), o.warmup, o.runs))
		res, err := runImpl(ctx, root, o, impl, exs)
		results = append(results, res...)
		if ctx.Err() != nil {
			fmt.Println("interrupted")
			return 130
		}
		if err != nil {
			return startupFail(fmt.Errorf("%s controller manager: %w", impl, err))
		}
	}

	out := localcluster.AbsUnder(root, o.out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return startupFail(err)
	}
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return startupFail(err)
	}
	if err := os.WriteFile(filepath.Join(out, "startup.json"), append(data, '\n'), 0o644); err != nil {
		return startupFail(err)
	}
	heading("Time to first step on the real node")
	var buf strings.Builder
	failed := writeReport(io.MultiWriter(os.Stdout, &buf), results, checkTargets(results, o.joinSlack, o.releaseLimit))
	if err := os.WriteFile(filepath.Join(out, "startup.txt"), []byte(buf.String()), 0o644); err != nil {
		return startupFail(err)
	}
	fmt.Printf("\nwritten: %s, %s\n", filepath.Join(out, "startup.txt"), filepath.Join(out, "startup.json"))
	if len(failed) > 0 {
		fmt.Printf("targets failed: %s\n", strings.Join(failed, "; "))
		return 1
	}
	return 0
}

func startupFail(err error) int {
	fmt.Fprintln(os.Stderr, "startup:", err)
	return 2
}

// stockPlan returns the examples of selected that stock impl (implStock or
// implStockWait) runs, as it runs them: those marked Stock, made
// stock-compatible by stockExample; for implStockWait only the PyTorch ones,
// given --wait-master-enabled (stockWaitExample), as the argument changes no
// other framework's Job. It returns stockExample's error.
func stockPlan(impl string, selected []*example) ([]*example, error) {
	var out []*example
	for _, ex := range selected {
		if !ex.real.Stock || impl == implStockWait && ex.framework != pytorch.Name {
			continue
		}
		s, err := stockExample(ex)
		if err != nil {
			return nil, err
		}
		if impl == implStockWait {
			s = stockWaitExample(s)
		}
		out = append(out, s)
	}
	return out, nil
}

// selectExamples picks the examples of --examples from all: "" the first
// example of each framework (in samples.Examples' order), "all" every one,
// else the comma-separated Job names or files. It returns an error naming an
// unknown one.
func selectExamples(all []*example, which string) ([]*example, error) {
	switch which {
	case "all":
		return all, nil
	case "":
		var out []*example
		seen := map[string]bool{}
		for _, ex := range all {
			if !seen[ex.framework] {
				seen[ex.framework] = true
				out = append(out, ex)
			}
		}
		return out, nil
	}
	var out []*example
	for _, name := range strings.Split(which, ",") {
		i := slices.IndexFunc(all, func(ex *example) bool { return ex.job.Name == name || ex.file == name })
		if i < 0 {
			var names []string
			for _, ex := range all {
				names = append(names, ex.job.Name)
			}
			return nil, fmt.Errorf("--examples: no example %q (the examples: %s)", name, strings.Join(names, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// runImpl starts a fresh cluster in --startup-dir running impl's controller
// manager, runs exs there (see startupMain) and stops the cluster, also on
// error. It returns the runs done, and an error that stopped them.
func runImpl(ctx context.Context, root string, o options, impl string, exs []*example) (results []runResult, err error) {
	dir := localcluster.AbsUnder(root, o.startupDir)
	if err := localcluster.Down(dir); err != nil {
		return nil, err
	}
	defer func() {
		fmt.Print("  stopping the cluster ... ")
		if derr := localcluster.Down(dir); derr != nil {
			fmt.Println("FAILED")
			err = errors.Join(err, derr)
			return
		}
		fmt.Println("done")
	}()
	cl, err := localcluster.Up(ctx, localcluster.Config{
		RootDir: dir,
		BinDir:  localcluster.AbsUnder(root, o.binDir),
		// The Jobs select the real node; one KWOK node is all the
		// cluster needs besides it.
		Nodes:                   1,
		Webhook:                 localcluster.WebhookOn,
		ControllerManagerBinary: implManagers[impl].controller,
		WebhookManagerBinary:    implManagers[impl].webhook,
		RealNode:                localcluster.RealNodeOn,
		Timeout:                 o.upTimeout,
		Out:                     cli.Indent(os.Stdout, "  "),
	})
	if err != nil {
		return nil, fmt.Errorf("starting the cluster: %w", err)
	}
	cs, err := kubeutil.NewClients(cl.RESTConfig, cli.Warnings)
	if err != nil {
		return nil, err
	}
	c := &clients{kube: cs.Kube, volcano: cs.Volcano, namespace: o.namespace, out: io.Discard, timed: true}
	if o.verbose {
		c.out = os.Stdout
	}
	if err := c.freshNamespace(ctx); err != nil {
		return nil, err
	}
	if err := c.createConfigMaps(ctx, root, exs); err != nil {
		return nil, err
	}
	fmt.Println()
	seq := 0
	for n := 1 - o.warmup; n <= o.runs; n++ {
		for _, ex := range exs {
			seq++
			res, err := c.measure(ctx, ex, impl, n, seq, o.runTimeout)
			if err != nil {
				return results, err
			}
			fmt.Println("  " + runLine(res))
			results = append(results, res)
		}
	}
	return results, nil
}

// measure runs ex's Job once, as run n of impl (n ≤ 0: a warm-up) named
// <job>-r<seq> (a new name every run: no DNS record of an earlier run's pods
// can answer for this run's), follows it until it ends or timeout passes,
// deletes it, judges it and waits until its pods are gone, so that the next
// run has the node to itself. The deletion comes before the judgement, which
// waits for the followed logs to end: a failed run's pods still running
// (a stock PyTorch master waiting for a worker that failed) would hold them
// open. It returns an error only when the next run cannot go on: the Job
// could not be created or removed, or ctx ended.
func (c *clients) measure(ctx context.Context, ex *example, impl string, n, seq int, timeout time.Duration) (runResult, error) {
	exRun := *ex
	exRun.job = ex.job.DeepCopy()
	exRun.job.Name = fmt.Sprintf("%s-r%d", ex.job.Name, seq)
	pods, err := c.watchPods(ctx)
	if err != nil {
		return runResult{}, err
	}
	r, err := c.submitJob(ctx, &exRun)
	if err != nil {
		pods.Stop()
		return runResult{}, err
	}
	c.follow(ctx, []*run{r}, pods, timeout)
	derr := c.deleteJob(ctx, r.job.Name)
	r.judge()
	res := r.result(impl, ex.job.Name, n)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if derr != nil {
		return res, derr
	}
	return res, c.waitGone(ctx, r.job.Name)
}

// deleteJob deletes Job name, its pods in the background.
func (c *clients) deleteJob(ctx context.Context, name string) error {
	bg := metav1.DeletePropagationBackground
	err := c.volcano.BatchV1alpha1().Jobs(c.namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Job %s: %w", name, err)
	}
	return nil
}

// waitGone waits up to deleteTimeout until the deleted Job name and its pods
// are gone.
func (c *clients) waitGone(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()
	for {
		_, err := c.volcano.BatchV1alpha1().Jobs(c.namespace).Get(ctx, name, metav1.GetOptions{})
		pods, perr := c.jobPods(ctx, name)
		if apierrors.IsNotFound(err) && perr == nil && len(pods) == 0 {
			return nil
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return fmt.Errorf("Job %s or its pods still there %s after deleting it", name, deleteTimeout)
		}
	}
}
