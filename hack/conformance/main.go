// Command conformance is `make conformance`: Volcano's own e2e suites of the
// line (volcano.sh/volcano/test/e2e/{jobp,jobseq,vcctl,admission}, compiled
// from the module cache with `go test -c`, never copied) run against
// Volcano's stock controller and webhook managers and against ours, both of
// the same Volcano release, each on a fresh KWOK-only local cluster; then the
// two runs' JUnit reports are compared spec by spec. Ours must pass every
// spec stock passes.
//
// For each variant (stock: vc-controller-manager-stock and
// vc-webhook-manager-stock; ours: vc-controller-manager and
// vc-webhook-manager) it starts a cluster in <out>/<variant>/cluster with:
//
//   - 4 KWOK nodes of 4 CPU and 16Gi, as the workers of Volcano's own e2e
//     cluster (kind on a 4-CPU CI runner);
//   - the eleven admission webhooks Volcano's e2e enables (e2eWebhooks);
//   - vc-scheduler with Volcano's CI configuration
//     (installer/helm/chart/volcano/config/volcano-scheduler-ci.conf of the
//     module) and kube-scheduler beside it, for the specs' pods of the
//     default scheduler;
//   - KWOK stages that play the suites' containers (kwokstages.yaml): `sleep
//     N` ends after N seconds, `sleep N && exit 3` fails, sshd and nginx keep
//     running, a deleted pod that has not ended stays Terminating for 5 s.
//
// It runs each suite binary in turn with -ginkgo.timeout, its JUnit report
// going to <out>/<variant>/<suite>.xml and its output to <suite>.log, copies
// the cluster's component logs to <out>/<variant>/logs and stops the
// cluster. Then it writes <out>/report.md (also printed): per suite the specs
// passed, failed and skipped per variant, and the specs that passed with
// stock only (regressions), with ours only and with neither, with the
// failure message. The exit status is 0 when no spec passes with stock and
// fails (or is missing) with ours, 1 when one does, 2 when the comparison
// could not run (a cluster did not start, a suite left no report), 130 on
// Ctrl-C.
//
// Usage (make conformance passes the line's paths):
//
//	conformance --line v1.15.1 [--bin-dir _output/bin] [--out _output/conformance/v1.15.1]
//	            [--suites jobp,jobseq,vcctl,admission] [--variants stock,ours]
//	            [--focus REGEXP] [--skip REGEXP] [--suite-timeout 90m]
//	conformance --compare-only --out _output/conformance/v1.15.1   # re-compare saved reports
package main

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/vcplugins/framework-plugins/hack/internal/cli"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// The variants compared: which managers' binaries (in --bin-dir) each runs.
const (
	Stock = "stock"
	Ours  = "ours"
)

var managers = map[string]struct{ controller, webhook string }{
	Stock: {"vc-controller-manager-stock", "vc-webhook-manager-stock"},
	Ours:  {localcluster.ControllerManager, localcluster.WebhookManager},
}

// suitePackage is the import path of Volcano's e2e suite name.
func suitePackage(name string) string { return "volcano.sh/volcano/test/e2e/" + name }

// schedulerCIConf is Volcano's scheduler configuration of its own e2e runs,
// relative to the volcano.sh/volcano module directory.
const schedulerCIConf = "installer/helm/chart/volcano/config/volcano-scheduler-ci.conf"

type options struct {
	line, binDir, out, volcanoDir, goCmd string
	suites, variants                     []string
	focus, skip                          string
	suiteTimeout, upTimeout              time.Duration
	compareOnly                          bool
}

func main() {
	os.Exit(mainStatus())
}

func mainStatus() int {
	var o options
	suites, variants := "jobp,jobseq,vcctl,admission", Stock+","+Ours
	flag.StringVar(&o.line, "line", "", "the Volcano line (e.g. v1.15.1), for the report; the binaries and the suites are those of the module as the go command sees it (make conformance LINE=... sets GOFLAGS)")
	flag.StringVar(&o.binDir, "bin-dir", "_output/bin", "directory of the cluster's binaries (make conformance builds them): etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, helm, vc-scheduler, vcctl and both variants' managers")
	flag.StringVar(&o.out, "out", "", "output directory (default _output/conformance/<line>)")
	flag.StringVar(&o.volcanoDir, "volcano-dir", "", "the volcano.sh/volcano module directory (default: go list -m)")
	flag.StringVar(&o.goCmd, "go", "go", "the go command that compiles the suites")
	flag.StringVar(&suites, "suites", suites, "Volcano's e2e suites to run (packages under volcano.sh/volcano/test/e2e), in order")
	flag.StringVar(&variants, "variants", variants, "managers to run the suites against, in order: stock, ours")
	flag.StringVar(&o.focus, "focus", "", "only specs matching this regular expression (-ginkgo.focus)")
	flag.StringVar(&o.skip, "skip", "", "skip specs matching this regular expression (-ginkgo.skip)")
	flag.DurationVar(&o.suiteTimeout, "suite-timeout", 90*time.Minute, "-ginkgo.timeout of each suite")
	flag.DurationVar(&o.upTimeout, "up-timeout", 5*time.Minute, "give up if a cluster is not ready within this time")
	flag.BoolVar(&o.compareOnly, "compare-only", false, "compare the reports already in --out, run nothing")
	printKwok := flag.Bool("print-kwok-config", false, "print the conformance cluster's KWOK configuration and exit")
	flag.Parse()
	if *printKwok {
		conf, err := kwokConfig()
		if err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			return 2
		}
		fmt.Print(conf)
		return 0
	}
	o.suites, o.variants = splitList(suites), splitList(variants)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	regressions, err := run(ctx, o)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "conformance: interrupted")
		return 130
	case err != nil:
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 2
	case regressions > 0:
		fmt.Fprintf(os.Stderr, "conformance: %d spec(s) pass with Volcano's stock managers and not with ours\n", regressions)
		return 1
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// run runs every variant (unless compareOnly), then compares and reports.
// It returns the number of regressions.
func run(ctx context.Context, o options) (int, error) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return 0, err
	}
	if o.out == "" {
		if o.line == "" {
			return 0, errors.New("--out or --line is required")
		}
		o.out = filepath.Join("_output", "conformance", o.line)
	}
	o.out, o.binDir = localcluster.AbsUnder(root, o.out), localcluster.AbsUnder(root, o.binDir)
	for _, v := range o.variants {
		if _, ok := managers[v]; !ok {
			return 0, fmt.Errorf("--variants: unknown variant %q (stock, ours)", v)
		}
	}
	if len(o.suites) == 0 || len(o.variants) == 0 {
		return 0, errors.New("no suites or no variants")
	}
	if !o.compareOnly {
		if err := checkBinaries(o); err != nil {
			return 0, err
		}
		if err := runAll(ctx, root, o); err != nil {
			return 0, err
		}
	}
	cmp, err := compareDir(o.out, o.suites, o.variants)
	if err != nil {
		return 0, err
	}
	var b strings.Builder
	writeReport(&b, o, cmp)
	fmt.Print("\n" + b.String())
	file := filepath.Join(o.out, "report.md")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return 0, err
	}
	fmt.Printf("\nreport: %s\n", file)
	if missing := cmp.missingReports(); len(missing) > 0 {
		return cmp.regressions(), fmt.Errorf("no JUnit report for %s (see the suites' logs)", strings.Join(missing, ", "))
	}
	return cmp.regressions(), nil
}

// runAll compiles the suites and runs them against every variant.
func runAll(ctx context.Context, root string, o options) error {
	if o.volcanoDir == "" {
		out, err := exec.CommandContext(ctx, o.goCmd, "list", "-m", "-f", "{{.Dir}}", "volcano.sh/volcano").Output()
		if err != nil {
			return fmt.Errorf("go list -m volcano.sh/volcano: %w", err)
		}
		o.volcanoDir = strings.TrimSpace(string(out))
	}
	schedConf, err := os.ReadFile(filepath.Join(o.volcanoDir, schedulerCIConf))
	if err != nil {
		return fmt.Errorf("Volcano's CI scheduler configuration: %w", err)
	}
	kwok, err := kwokConfig()
	if err != nil {
		return err
	}
	suiteDir := filepath.Join(o.out, "suites")
	fmt.Printf("== compiling Volcano's e2e suites from %s into %s\n", o.volcanoDir, suiteDir)
	for _, s := range o.suites {
		if err := compileSuite(ctx, root, o.goCmd, suiteDir, s); err != nil {
			return err
		}
	}
	// The Ray spec prunes images with `kubectl debug node/... --attach`,
	// which on a KWOK node waits for a kubelet that is not there; Volcano's
	// helper only warns when kubectl fails, so the suites get one that does.
	shim := filepath.Join(o.out, "path")
	if err := writeKubectlShim(shim); err != nil {
		return err
	}
	for i, v := range o.variants {
		fmt.Printf("\n== %s (%d of %d): %s and %s, suites %s\n", v, i+1, len(o.variants), managers[v].controller, managers[v].webhook, strings.Join(o.suites, ", "))
		start := time.Now()
		if err := runVariant(ctx, o, v, suiteDir, shim, string(schedConf), kwok); err != nil {
			return fmt.Errorf("%s: %w", v, err)
		}
		fmt.Printf("== %s done in %s\n", v, time.Since(start).Round(time.Second))
	}
	return nil
}

// checkBinaries checks that every variant's managers are built from the
// same volcano.sh/volcano, the line's when --line is given: a comparison of
// two Volcano releases would mean nothing.
func checkBinaries(o options) error {
	want := o.line
	for _, v := range o.variants {
		m := managers[v]
		for _, name := range []string{m.controller, m.webhook} {
			got, err := volcanoVersion(filepath.Join(o.binDir, name))
			if err != nil {
				return err
			}
			if want == "" {
				want = got
			}
			if got != want {
				return fmt.Errorf("%s is built from volcano.sh/volcano %s, want %s (the line's, for every variant)", name, got, want)
			}
		}
	}
	return nil
}

// volcanoVersion is the volcano.sh/volcano module version file was built with.
func volcanoVersion(file string) (string, error) {
	info, err := buildinfo.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w (make conformance builds it)", file, err)
	}
	// Volcano's own managers, built with go install from the module, have
	// it as their main module; ours link it.
	if info.Main.Path == "volcano.sh/volcano" {
		return info.Main.Version, nil
	}
	for _, d := range info.Deps {
		if d.Path == "volcano.sh/volcano" {
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s does not link volcano.sh/volcano", file)
}

// compileSuite builds <dir>/<name>.test from Volcano's e2e package name, in
// the module root with the environment's GOFLAGS (the line's).
func compileSuite(ctx context.Context, root, goCmd, dir, name string) error {
	fmt.Printf("  building %s.test ... ", name)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, "test", "-c", "-o", filepath.Join(dir, name+".test"), suitePackage(name))
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Println("FAILED")
		return fmt.Errorf("go test -c %s: %w\n%s", suitePackage(name), err, out)
	}
	fmt.Printf("done (%.0fs)\n", time.Since(start).Seconds())
	return nil
}

func writeKubectlShim(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	script := "#!/bin/sh\necho 'kubectl: not available to the conformance suites (make conformance)' >&2\nexit 1\n"
	return os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755)
}

// runVariant starts variant's cluster, runs every suite on it and stops it,
// keeping the components' logs in <out>/<variant>/logs.
func runVariant(ctx context.Context, o options, variant, suiteDir, shim, schedConf, kwok string) (err error) {
	dir := filepath.Join(o.out, variant)
	clusterDir := filepath.Join(dir, "cluster")
	if err := localcluster.Down(clusterDir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	defer func() {
		fmt.Print("  stopping the cluster ... ")
		if cerr := copyDir(filepath.Join(clusterDir, "logs"), filepath.Join(dir, "logs")); cerr != nil {
			err = errors.Join(err, fmt.Errorf("keeping the cluster's logs: %w", cerr))
		}
		start := time.Now()
		if derr := localcluster.Down(clusterDir); derr != nil {
			fmt.Println("FAILED")
			err = errors.Join(err, derr)
			return
		}
		fmt.Printf("done (%.1fs)\n", time.Since(start).Seconds())
	}()
	m := managers[variant]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, runInfoFile), []byte(runInfo(o, variant)), 0o644); err != nil {
		return err
	}
	cl, err := localcluster.Up(ctx, localcluster.Config{
		RootDir:                 clusterDir,
		BinDir:                  o.binDir,
		Nodes:                   4,
		NodeResources:           nodeResources(),
		Webhook:                 localcluster.WebhookOn,
		Webhooks:                e2eWebhooks(),
		ControllerManagerBinary: m.controller,
		WebhookManagerBinary:    m.webhook,
		SchedulerConf:           schedConf,
		KwokConfig:              kwok,
		KubeScheduler:           true,
		VolcanoDir:              o.volcanoDir,
		RealNode:                localcluster.RealNodeOff,
		Timeout:                 o.upTimeout,
		Out:                     cli.Indent(os.Stdout, "  "),
	})
	if err != nil {
		return fmt.Errorf("starting the cluster: %w", err)
	}
	for i, s := range o.suites {
		fmt.Printf("  suite %s (%d of %d)\n", s, i+1, len(o.suites))
		if err := runSuite(ctx, o, variant, s, filepath.Join(suiteDir, s+".test"), dir, shim, cl); err != nil {
			return err
		}
	}
	return nil
}

// runInfoFile, in <out>/<variant>, says what ran: the report quotes it.
const runInfoFile = "run.txt"

// runInfo is one line: when, the tree's commit and the variant's managers.
func runInfo(o options, variant string) string {
	commit := "unknown commit"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = "commit " + strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			commit += " with uncommitted changes"
		}
	}
	m := managers[variant]
	version, _ := volcanoVersion(filepath.Join(o.binDir, m.controller))
	return fmt.Sprintf("%s: %s and %s (volcano.sh/volcano %s), %s, %s, started %s\n",
		variant, m.controller, m.webhook, version, kubeVersion(o.binDir), commit, time.Now().UTC().Format(time.RFC3339))
}

// kubeVersion is what the cluster's kube-apiserver says it is ("Kubernetes
// v1.36.3": make conformance KUBE=... runs another release than go.mod's).
func kubeVersion(binDir string) string {
	out, err := exec.Command(filepath.Join(binDir, "kube-apiserver"), "--version").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return "Kubernetes version unknown"
}

// runSuite runs one compiled suite against the cluster; its exit status
// (non-zero when a spec fails) is not an error, a missing report is found
// by the comparison.
func runSuite(ctx context.Context, o options, variant, suite, bin, dir, shim string, cl *localcluster.Cluster) error {
	artifacts := filepath.Join(dir, "artifacts", suite)
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		return err
	}
	logFile := filepath.Join(dir, suite+".log")
	log, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer log.Close()
	args := []string{
		"-test.timeout", (o.suiteTimeout + 5*time.Minute).String(),
		"-ginkgo.timeout", o.suiteTimeout.String(),
		"-ginkgo.v", "-ginkgo.no-color",
		"-ginkgo.junit-report", filepath.Join(dir, suite+".xml"),
	}
	if o.focus != "" {
		args = append(args, "-ginkgo.focus", o.focus)
	}
	if o.skip != "" {
		args = append(args, "-ginkgo.skip", o.skip)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = artifacts
	cmd.Env = append(withoutEnv(os.Environ(), "KUBECONFIG", "VC_BIN", "MASTER", "ARTIFACTS_PATH", "PATH"),
		"KUBECONFIG="+cl.Kubeconfig,
		"VC_BIN="+o.binDir,
		"ARTIFACTS_PATH="+artifacts,
		"PATH="+shim+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	p := &progress{out: os.Stdout, prefix: fmt.Sprintf("    %s %s", variant, suite), start: start}
	go func() {
		defer close(done)
		s := bufio.NewScanner(pr)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			fmt.Fprintln(log, s.Text())
			p.line(s.Text())
		}
		_, _ = io.Copy(log, pr) // a line over 1 MiB: keep the rest anyway
	}()
	werr := cmd.Wait()
	pw.Close()
	<-done
	status := "passed"
	if werr != nil {
		status = "exit: " + werr.Error()
	}
	fmt.Printf("    %s %s: %d specs done (%d passed, %d failed, %d skipped) in %s, %s; log %s\n",
		variant, suite, p.done, p.passed, p.failed, p.skipped, time.Since(start).Round(time.Second), status, logFile)
	return ctx.Err()
}

// withoutEnv returns env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || name == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// progress turns a suite's verbose Ginkgo output into one line per spec done.
type progress struct {
	out                           io.Writer
	prefix                        string
	start                         time.Time
	total                         int
	done, passed, failed, skipped int
	afterSeparator, spec          string
}

var (
	willRunRE = regexp.MustCompile(`^Will run (\d+) of \d+ specs`)
	// The end of a spec: "• [12.3 seconds]", "• [FAILED] [12.3 seconds]", "S [SKIPPED] [0.0 seconds]"...
	specEndRE = regexp.MustCompile(`^([•SP]) (?:\[([A-Z]+)\] )?\[[0-9.]+ seconds\]$`)
)

func (p *progress) line(l string) {
	if m := willRunRE.FindStringSubmatch(l); m != nil {
		fmt.Sscan(m[1], &p.total)
		fmt.Fprintf(p.out, "%s: running %d specs\n", p.prefix, p.total)
		return
	}
	if strings.HasPrefix(l, "------------------------------") {
		p.afterSeparator = "next"
		return
	}
	if p.afterSeparator == "next" {
		// With -ginkgo.v a spec starts with its full text after a separator.
		p.afterSeparator = ""
		if !specEndRE.MatchString(l) && !strings.HasPrefix(l, "[") {
			p.spec = l
		}
	}
	m := specEndRE.FindStringSubmatch(l)
	if m == nil {
		return
	}
	p.done++
	result := "passed"
	switch {
	case m[2] == "SKIPPED" || m[2] == "PENDING":
		result = strings.ToLower(m[2])
		p.skipped++
	case m[2] != "":
		result = strings.ToLower(m[2])
		p.failed++
	default:
		p.passed++
	}
	if result == "skipped" && p.spec == "" {
		return // specs skipped by --focus or --skip print no text
	}
	fmt.Fprintf(p.out, "%s [%d/%d %s] %-8s %s\n", p.prefix, p.done, p.total, time.Since(p.start).Round(time.Second), result, p.spec)
	p.spec = ""
}

// copyDir copies the regular files of src (not recursively) into dst.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
