// Command report runs the plugin benchmarks of test/bench (or reads their
// output), prints the comparison of this project's plugins with Volcano's in-tree
// ones, and checks the performance targets of docs/dev/performance.md. It exits 1
// when a target fails, 2 when the benchmarks cannot be run or read.
//
//	go run ./test/bench/report                      # what `make bench` runs
//	go run ./test/bench/report -rounds 1            # quicker, noisier
//	go run ./test/bench/report -in _output/bench/raw.txt   # re-check saved output
//
// It writes the table to <out>/plugins.txt and the raw `go test -bench` output,
// which benchstat reads, to <out>/raw.txt.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vcplugins/framework-plugins/internal/stats"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Target limits (docs/dev/performance.md). Wall-time limits get the tolerance
// (-tolerance) because they are measured on a shared machine; the CPU-time
// ratio and the byte limit get none.
const (
	tfCPURatio      = 1.0 / 200 // tensorflow at N=2048: ours (auto: by reference at that size) / in-tree CPU time
	tfStoredMax     = 1 << 20   // tensorflow at N=2048: TF_CONFIG-related bytes stored per job, ours (by reference)
	tfRetainedRatio = 1.10      // tensorflow at N=2048: ours/in-tree retained heap
	maxPodTime      = 5e3       // pytorch, mpi, mxnet at N=2048: ns per pod (N+1 pods)
	growthVsInTree  = 1.3       // pytorch, mpi, mxnet: time(2048)/time(256) within this × in-tree pytorch's
	bigN            = 2048
	midN            = 256
	retainedUnit    = "retained-B/op"
	cpuUnit         = "cpu-ns/op"
	tfConfigUnit    = "TF_CONFIG-B/op"
)

// group is one invocation of the benchmark binary: the big jobs run fewer
// iterations, in-tree and inline tensorflow at 2048 workers fewest (0.5-4 s
// each). All five rounds take about two minutes on 2 shared cores.
type group struct {
	bench, benchtime string
}

var groups = []group{
	{`^BenchmarkPlugins$/^framework=/^impl=/^workers=16$`, "500x"},
	{`^BenchmarkPlugins$/^framework=/^impl=/^workers=256$`, "60x"},
	{`^BenchmarkPlugins$/^framework=(` + strings.Join(perPodTargeted, "|") + `)$/^impl=/^workers=2048$`, "25x"},
	{`^BenchmarkPlugins$/^framework=` + tensorflow.Name + `$/^impl=ours(-nowait)?$/^workers=2048$`, "25x"},
	{`^BenchmarkPlugins$/^framework=` + tensorflow.Name + `$/^impl=(in-tree|ours-inline)$/^workers=2048$`, "3x"},
}

func main() {
	rounds := flag.Int("rounds", 5, "samples per benchmark: the benchmarks run this many times, interleaved (go test -count 1 per round)")
	in := flag.String("in", "", "read `go test -bench` output from this file (- for stdin) instead of running the benchmarks")
	out := flag.String("out", "_output/bench", "directory for plugins.txt and raw.txt")
	goCmd := flag.String("go", "go", "go command")
	pkg := flag.String("pkg", "./test/bench", "benchmark package")
	tolerance := flag.Float64("tolerance", 0.10, "measurement tolerance on time ratios against in-tree")
	flag.Parse()

	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	var raw []byte
	var err error
	switch {
	case *in == "-":
		raw, err = io.ReadAll(os.Stdin)
	case *in != "":
		raw, err = os.ReadFile(*in)
	default:
		raw, err = run(*goCmd, *pkg, *out, *rounds)
	}
	if err != nil {
		fatal(err)
	}
	if *in != filepath.Join(*out, "raw.txt") {
		if err := os.WriteFile(filepath.Join(*out, "raw.txt"), raw, 0o644); err != nil {
			fatal(err)
		}
	}
	results, err := parse(raw)
	if err != nil {
		fatal(err)
	}

	var report bytes.Buffer
	fmt.Fprintf(&report, "%s\n", machine(raw))
	failed := write(&report, results, *tolerance)
	os.Stdout.Write(report.Bytes())
	if err := os.WriteFile(filepath.Join(*out, "plugins.txt"), report.Bytes(), 0o644); err != nil {
		fatal(err)
	}
	fmt.Printf("\nwrote %s and %s\n", filepath.Join(*out, "plugins.txt"), filepath.Join(*out, "raw.txt"))
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "\nbench: %d performance target(s) not met:\n", len(failed))
		for _, f := range failed {
			fmt.Fprintf(os.Stderr, "  - %s\n", f)
		}
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "bench report: %v\n", err)
	os.Exit(2)
}

// run builds the benchmark binary once and runs every group rounds times,
// interleaved, so that a slow spell of a shared machine spreads over all
// benchmarks instead of skewing one.
func run(goCmd, pkg, out string, rounds int) ([]byte, error) {
	bin, err := filepath.Abs(filepath.Join(out, "bench.test"))
	if err != nil {
		return nil, err
	}
	build := exec.Command(goCmd, "test", "-c", "-o", bin, pkg)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "$ %s\n", strings.Join(build.Args, " "))
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building the benchmarks: %w", err)
	}
	var raw bytes.Buffer
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		for _, g := range groups {
			// The same as: go test -run '^$' -bench <g.bench> -benchmem -benchtime <g.benchtime> -count 1 <pkg>
			args := []string{"-test.run", "^$", "-test.bench", g.bench, "-test.benchmem", "-test.benchtime", g.benchtime, "-test.count", "1"}
			fmt.Fprintf(os.Stderr, "[round %d/%d, %s] go test -run '^$' -bench '%s' -benchmem -benchtime %s -count 1 %s\n",
				r, rounds, time.Since(start).Round(time.Second), g.bench, g.benchtime, pkg)
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			raw.Write(stdout.Bytes())
			if err != nil {
				os.Stderr.Write(stdout.Bytes())
				os.Stderr.Write(stderr.Bytes())
				return nil, fmt.Errorf("benchmarks failed: %w", err)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "benchmarks took %s\n\n", time.Since(start).Round(time.Second))
	return raw.Bytes(), nil
}

// key identifies one benchmark: BenchmarkPlugins/framework=F/impl=I/workers=N.
type key struct {
	framework, impl string
	workers         int
}

// sample is one result line's metrics by unit (ns/op, B/op, allocs/op, ...).
type sample map[string]float64

type result struct {
	samples []sample
}

// median returns the median of unit over the samples, NaN when absent.
func (r *result) median(unit string) float64 {
	var vs []float64
	for _, s := range r.samples {
		if v, ok := s[unit]; ok {
			vs = append(vs, v)
		}
	}
	return stats.Median(vs, math.NaN())
}

// spread returns the largest deviation of unit from its median, relative to it.
func (r *result) spread(unit string) float64 {
	m := r.median(unit)
	d := 0.0
	for _, s := range r.samples {
		if v, ok := s[unit]; ok {
			d = math.Max(d, math.Abs(v-m)/m)
		}
	}
	return d
}

var lineRE = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

func parse(raw []byte) (map[key]*result, error) {
	results := map[key]*result{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var k key
		for _, part := range strings.Split(m[1], "/")[1:] {
			name, value, _ := strings.Cut(part, "=")
			switch name {
			case "framework":
				k.framework = value
			case "impl":
				k.impl = value
			case "workers":
				k.workers, _ = strconv.Atoi(value)
			}
		}
		if k.framework == "" || k.impl == "" || k.workers == 0 {
			continue
		}
		fields := strings.Fields(m[3])
		s := sample{}
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bad value %q in %q", fields[i], sc.Text())
			}
			s[fields[i+1]] = v
		}
		if results[k] == nil {
			results[k] = &result{}
		}
		results[k].samples = append(results[k].samples, s)
	}
	if len(results) == 0 {
		return nil, errors.New("no BenchmarkPlugins results in the input")
	}
	return results, nil
}

// machine describes where the benchmarks ran, from their header and this host.
func machine(raw []byte) string {
	cpu := ""
	if m := regexp.MustCompile(`(?m)^cpu: (.*)$`).FindSubmatch(raw); m != nil {
		cpu = string(m[1])
	}
	return fmt.Sprintf("Machine: %s, %d cores (GOMAXPROCS %d), %s %s/%s", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0),
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

var frameworks = plugins.Names()

// perPodTargeted are the frameworks held to the per-pod time and growth
// targets (docs/dev/performance.md): all but tensorflow, whose targets are its
// own (CPU time against in-tree, TF_CONFIG bytes, retained heap).
var perPodTargeted = slices.DeleteFunc(slices.Clone(frameworks), func(fw string) bool { return fw == tensorflow.Name })

func sizes(results map[key]*result) []int {
	seen := map[int]bool{}
	for k := range results {
		seen[k.workers] = true
	}
	var out []int
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// write prints the tables and the target checks, and returns the failed targets.
func write(w io.Writer, results map[key]*result, tolerance float64) (failed []string) {
	get := func(fw, impl string, n int) *result { return results[key{fw, impl, n}] }
	samples := 0
	for _, r := range results {
		samples = max(samples, len(r.samples))
	}
	fmt.Fprintf(w, "One op = one job: OnJobAdd, then OnPodCreate for the lead pod (ps/master/scheduler) and every worker,\n"+
		"each on a fresh plugin instance. Medians of %d samples; +- is the largest deviation of a sample from the median.\n\n", samples)

	// compare prints impl against baseline for every framework of fws and
	// size that impl has results for.
	compare := func(title, impl, baseline string, fws []string) {
		fmt.Fprintf(w, "%s\n", title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "framework\tworkers\t|\t%s time\t+-\tcpu\tbytes\tallocs\t|\t%s time\t+-\tcpu\tbytes\tallocs\t|\ttime ratio\tcpu ratio\tbytes ratio\tallocs ratio\t\n", baseline, impl)
		for _, fw := range fws {
			for _, n := range sizes(results) {
				ours := get(fw, impl, n)
				if ours == nil {
					continue
				}
				cells := []string{fw, strconv.Itoa(n), "|"}
				base := get(fw, baseline, n)
				if base == nil {
					cells = append(cells, "-", "", "-", "-", "-", "|")
				} else {
					cells = append(cells, dur(base.median("ns/op")), pct(base.spread("ns/op")), dur(base.median(cpuUnit)),
						size(base.median("B/op")), count(base.median("allocs/op")), "|")
				}
				cells = append(cells, dur(ours.median("ns/op")), pct(ours.spread("ns/op")), dur(ours.median(cpuUnit)),
					size(ours.median("B/op")), count(ours.median("allocs/op")), "|")
				if base == nil {
					cells = append(cells, "-", "-", "-", "-")
				} else {
					cells = append(cells, ratio(ours.median("ns/op")/base.median("ns/op")), ratio(ours.median(cpuUnit)/base.median(cpuUnit)),
						ratio(ours.median("B/op")/base.median("B/op")), ratio(ours.median("allocs/op")/base.median("allocs/op")))
				}
				fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
			}
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	compare("Ours (default arguments) against in-tree; ratio = ours/in-tree:", "ours", "in-tree", frameworks)
	compare("Ours with --wait=false (no wait init container, which in-tree plugins do not add by default) against in-tree:", "ours-nowait", "in-tree", frameworks)
	compare("Ours with --tf-config=inline (every pod holds its whole TF_CONFIG, as in-tree's do) against in-tree:", "ours-inline", "in-tree", frameworks)
	// Only pytorch's in-tree plugin can wait (--wait-master-enabled): both
	// sides then add a wait init container to every worker.
	compare("Ours (default arguments) against in-tree "+pytorch.Name+" with --wait-master-enabled (in-tree-wait: a wait init container on every worker, as ours); ratio = ours/in-tree-wait:", "ours", "in-tree-wait", []string{pytorch.Name})

	// Growth from midN to bigN, and TF_CONFIG bytes.
	growth := func(fw, impl, unit string) float64 {
		a, b := get(fw, impl, midN), get(fw, impl, bigN)
		if a == nil || b == nil {
			return math.NaN()
		}
		return b.median(unit) / a.median(unit)
	}
	inTreeGrowth := growth(pytorch.Name, "in-tree", "ns/op")
	fmt.Fprintf(w, "Growth of time from %d to %d workers (×%d pods), same run; in-tree %s ×%.1f:\n", midN, bigN, bigN/midN, pytorch.Name, inTreeGrowth)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "framework\tours time\tours cpu\tbytes\tallocs\tin-tree time\t\n")
	for _, fw := range frameworks {
		fmt.Fprintf(tw, "%s\t×%.1f\t×%.1f\t×%.1f\t×%.1f\t×%.1f\t\n", fw, growth(fw, "ours", "ns/op"), growth(fw, "ours", cpuUnit),
			growth(fw, "ours", "B/op"), growth(fw, "ours", "allocs/op"), growth(fw, "in-tree", "ns/op"))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nTF_CONFIG-related bytes stored per job (pods' TF_CONFIG and TF_CONFIG_CLUSTER entries, cluster ConfigMap data):\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workers\tours (auto)\tours-inline\tin-tree\t\n")
	for _, n := range sizes(results) {
		cell := func(impl string) string {
			if r := get(tensorflow.Name, impl, n); r != nil {
				return size(r.median(tfConfigUnit))
			}
			return "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\n", n, cell("ours"), cell("ours-inline"), cell("in-tree"))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nHeap retained once a job's pods exist (%d workers; ours, in-tree):\n", bigN)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, fw := range frameworks {
		o, t := get(fw, "ours", bigN), get(fw, "in-tree", bigN)
		if o == nil {
			continue
		}
		in := "-"
		if t != nil {
			in = size(t.median(retainedUnit))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", fw, size(o.median(retainedUnit)), in)
	}
	tw.Flush()

	// Targets.
	fmt.Fprintf(w, "\nTargets (wall-time limits with a %.0f%% measurement tolerance; CPU ratio and bytes without):\n", tolerance*100)
	check := func(ok bool, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		status := "PASS"
		if !ok {
			status = "FAIL"
			failed = append(failed, msg)
		}
		fmt.Fprintf(w, "  %s  %s\n", status, msg)
	}
	missing := func(what string) { check(false, "%s: no benchmark results", what) }
	ratioAt := func(fw, unit string, n int) (float64, bool) {
		o, t := get(fw, "ours", n), get(fw, "in-tree", n)
		if o == nil || t == nil {
			return 0, false
		}
		return o.median(unit) / t.median(unit), true
	}
	tf := tensorflow.Name
	if r, ok := ratioAt(tf, cpuUnit, bigN); ok {
		check(r <= tfCPURatio, "%s, %d workers: CPU time ours (reference)/in-tree = %s (1/%.0f), limit 1/%.0f", tf, bigN, ratio(r), 1/r, 1/tfCPURatio)
	} else {
		missing(tf + " CPU time")
	}
	if o := get(tf, "ours", bigN); o != nil {
		b := o.median(tfConfigUnit)
		check(b <= tfStoredMax, "%s, %d workers: TF_CONFIG-related bytes stored per job, ours (reference) = %s, limit %s", tf, bigN, size(b), size(tfStoredMax))
	} else {
		missing(tf + " TF_CONFIG bytes")
	}
	if r, ok := ratioAt(tf, retainedUnit, bigN); ok {
		check(r <= tfRetainedRatio, "%s, %d workers: retained heap ours/in-tree = %s, limit %.2f", tf, bigN, ratio(r), tfRetainedRatio)
	} else {
		missing(tf + " retained heap")
	}
	for _, fw := range perPodTargeted {
		if o := get(fw, "ours", bigN); o != nil {
			perPod := o.median("ns/op") / (bigN + 1)
			check(perPod <= maxPodTime*(1+tolerance), "%s, %d workers: %s per pod (CPU %s), limit %s (+%.0f%% tolerance)",
				fw, bigN, dur(perPod), dur(o.median(cpuUnit)/(bigN+1)), dur(maxPodTime), tolerance*100)
		} else {
			missing(fw + " time")
		}
	}
	for _, fw := range perPodTargeted {
		if g := growth(fw, "ours", "ns/op"); !math.IsNaN(g) && !math.IsNaN(inTreeGrowth) {
			limit := growthVsInTree * inTreeGrowth
			check(g <= limit, "%s: time grows ×%.1f from %d to %d workers, limit ×%.1f (%.1f × in-tree %s's ×%.1f)",
				fw, g, midN, bigN, limit, growthVsInTree, pytorch.Name, inTreeGrowth)
		} else {
			missing(fw + " growth")
		}
	}
	return failed
}

func dur(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "-"
	case ns >= 1e9:
		return fmt.Sprintf("%.2fs", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2fms", ns/1e6)
	default:
		return fmt.Sprintf("%.1fus", ns/1e3)
	}
}

func size(b float64) string {
	switch {
	case math.IsNaN(b):
		return "-"
	case b >= 1<<20:
		return fmt.Sprintf("%.1fMiB", b/(1<<20))
	default:
		return fmt.Sprintf("%.1fKiB", b/(1<<10))
	}
}

func count(n float64) string {
	if math.IsNaN(n) {
		return "-"
	}
	return strconv.FormatFloat(n, 'f', 0, 64)
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

func ratio(r float64) string {
	if r < 1 {
		return fmt.Sprintf("%.3f", r)
	}
	return fmt.Sprintf("%.2f", r)
}
