package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/stats"
)

// runResult is one run of an example's Job in make startup.
type runResult struct {
	// Impl is the controller manager: implOurs, implStock or implStockWait.
	Impl      string `json:"impl"`
	Framework string `json:"framework"`
	// Example is the example's Job name; Job is this run's (Example-r<N>).
	Example string `json:"example"`
	Job     string `json:"job"`
	// Run numbers the measured runs from 1; warm-ups are 0 and below.
	Run int `json:"run"`
	// OK: the Job completed, its result was judged good (ours; a stock run
	// is not judged), every rank joined and no pod restarted.
	OK       bool          `json:"ok"`
	Reason   string        `json:"reason,omitempty"`
	Restarts int           `json:"restarts"`
	Timeline timeline      `json:"timeline"`
	Waits    []waitRelease `json:"waits,omitempty"`
}

func (r runResult) warmup() bool { return r.Run <= 0 }

// result sums up the finished, judged run r of controller manager impl, the
// n-th run (n ≤ 0: a warm-up) of the example whose Job is named example.
func (r *run) result(impl, example string, n int) runResult {
	var completed time.Time
	if phaseOf(r.job) == batch.Completed {
		completed = r.ended
	}
	pods := sortedPods(r)
	res := runResult{
		Impl: impl, Framework: r.framework, Example: example, Job: r.job.Name, Run: n,
		Restarts: restarts(pods, r.replaced),
		Timeline: timelineOf(r.submitted, r.example.job, r.want, pods, r.boundAt, r.real.Container, r.real.Joined, r.lines, completed),
		Waits: waitReleases(pods, func(name string) (map[string]string, error) {
			data, ok := r.configMaps[name]
			if !ok {
				return nil, fmt.Errorf("ConfigMap %s was not seen while the job ran", name)
			}
			return data, nil
		}, r.waitLines, r.lines, r.real.Listening, r.readyAt),
	}
	var why []string
	if !r.ok {
		why = append(why, r.reason)
	}
	if len(r.logErrs) > 0 {
		why = append(why, "log timestamps unreadable: "+strings.Join(r.logErrs, "; "))
	}
	if res.Timeline.JoinErr != "" && r.ok {
		why = append(why, "not every rank joined: "+res.Timeline.JoinErr)
	}
	if res.Restarts > 0 {
		why = append(why, fmt.Sprintf("%d container restarts or replaced pods", res.Restarts))
	}
	res.OK, res.Reason = len(why) == 0, strings.Join(why, "; ")
	return res
}

// stageText formats the time from t.Created to at as "6.21s", or "-".
func stageText(t timeline, at time.Time) string {
	if d, ok := t.stage(at); ok {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return "-"
}

// runLine is the line make startup prints for one run.
func runLine(r runResult) string {
	n := fmt.Sprintf("run %2d", r.Run)
	if r.warmup() {
		n = "warm-up"
	}
	status := "ok"
	if !r.OK {
		status = "FAILED"
	}
	t := r.Timeline
	line := fmt.Sprintf("%-10s  %-20s %-7s  %-6s  bound %6s  started %6s  joined %6s  completed %6s",
		r.Impl, r.Example, n, status, stageText(t, t.Bound), stageText(t, t.Started), stageText(t, t.Joined), stageText(t, t.Completed))
	var waits []string
	for _, w := range r.Waits {
		switch {
		case w.Err != "":
			waits = append(waits, "?")
		case !w.Waited:
			waits = append(waits, "at once")
		default:
			waits = append(waits, fmt.Sprintf("%.2fs", w.Latency().Seconds()))
		}
	}
	if len(waits) > 0 {
		line += "  waits released " + strings.Join(waits, " ")
	}
	if !r.OK {
		line += "\n         " + r.Reason
	}
	return line
}

// summary is what the measured runs (warm-ups left out) of one example under
// one controller manager came to.
type summary struct {
	impl, framework, example    string
	runs, ok, failed, restarted int
	// warmupsFailed counts the failed warm-ups.
	warmupsFailed int
	// Medians over the successful runs of the time from create to each
	// stage, and the fastest successful run's time to every rank joined.
	bound, started, joined, completed time.Duration
	bestJoined                        time.Duration
	// reached counts the successful runs that reached bound, started,
	// joined and completed: the medians' sample sizes.
	reached [4]int
}

// summarize groups results by controller manager and example, in the order
// they first appear.
func summarize(results []runResult) []summary {
	var out []summary
	index := map[[2]string]int{}
	stages := map[[2]string][4][]time.Duration{}
	for _, r := range results {
		key := [2]string{r.Impl, r.Example}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, summary{impl: r.Impl, framework: r.Framework, example: r.Example})
		}
		s := &out[i]
		if r.warmup() {
			if !r.OK {
				s.warmupsFailed++
			}
			continue
		}
		s.runs++
		if r.Restarts > 0 {
			s.restarted++
		}
		if !r.OK {
			s.failed++
			continue
		}
		s.ok++
		st := stages[key]
		t := r.Timeline
		for j, at := range []time.Time{t.Bound, t.Started, t.Joined, t.Completed} {
			if d, reached := t.stage(at); reached {
				st[j] = append(st[j], d)
			}
		}
		stages[key] = st
		if d, _ := t.stage(t.Joined); s.ok == 1 || d < s.bestJoined {
			s.bestJoined = d
		}
	}
	for i := range out {
		st := stages[[2]string{out[i].impl, out[i].example}]
		out[i].bound, out[i].started, out[i].joined, out[i].completed = stats.Median(st[0], 0), stats.Median(st[1], 0), stats.Median(st[2], 0), stats.Median(st[3], 0)
		for j := range st {
			out[i].reached[j] = len(st[j])
		}
	}
	return out
}

// check is one target of make startup with its measured value.
type check struct {
	name, measured string
	ok             bool
}

// checkTargets evaluates the targets of make startup on results:
//
//   - every run of ours (warm-ups too) of each example successful;
//   - for each example stock ran too: ours' median time from create to
//     every rank joined at most joinSlack above the fastest stock run that
//     succeeded (met when none did: stock never got there);
//   - ours' wait containers release their pods at most releaseLimit
//     (median, over the measured runs' waits that waited) after the last
//     dependency answered.
func checkTargets(results []runResult, joinSlack, releaseLimit time.Duration) []check {
	sums := summarize(results)
	var out []check
	for _, s := range sums {
		if s.impl != implOurs {
			continue
		}
		warm := "no warm-up"
		if n := countWarmups(results, s.impl, s.example); n > 0 {
			warm = fmt.Sprintf("warm-ups: %d of %d failed", s.warmupsFailed, n)
		}
		out = append(out, check{
			name:     fmt.Sprintf("ours, %s: every run successful", s.example),
			measured: fmt.Sprintf("%d/%d runs successful (%d failed, %d restarted a pod; %s)", s.ok, s.runs, s.failed, s.restarted, warm),
			ok:       s.runs > 0 && s.ok == s.runs && s.warmupsFailed == 0,
		})
	}
	for _, ours := range sums {
		if ours.impl != implOurs {
			continue
		}
		for _, stock := range sums {
			if stock.impl != implStock || stock.example != ours.example {
				continue
			}
			c := check{name: fmt.Sprintf("%s: create → every rank joined, ours' median ≤ fastest successful stock run + %s", ours.example, secs(joinSlack))}
			switch {
			case ours.ok == 0:
				c.measured = "no successful run of ours"
			case stock.ok == 0:
				c.measured = fmt.Sprintf("ours %s (median of %d); no stock run succeeded (%d of %d failed): nothing to be slower than", secs(ours.joined), ours.ok, stock.failed, stock.runs)
				c.ok = true
			default:
				limit := stock.bestJoined + joinSlack
				c.measured = fmt.Sprintf("ours %s (median of %d); stock fastest %s (%d of %d succeeded, median %s) + %s = %s",
					secs(ours.joined), ours.ok, secs(stock.bestJoined), stock.ok, stock.runs, secs(stock.joined), secs(joinSlack), secs(limit))
				c.ok = ours.joined <= limit
			}
			out = append(out, c)
		}
	}
	var lat []time.Duration
	atOnce, unmeasured, ran := 0, 0, false
	for _, r := range results {
		if r.Impl != implOurs || r.warmup() {
			continue
		}
		ran = true
		for _, w := range r.Waits {
			switch {
			case w.Err != "":
				unmeasured++
			case !w.Waited:
				atOnce++
			default:
				lat = append(lat, w.Latency())
			}
		}
	}
	if ran {
		c := check{name: fmt.Sprintf("ours: a wait container releases its pod ≤ %s (median) after its last dependency answered", secs(releaseLimit))}
		if len(lat) == 0 {
			c.measured = fmt.Sprintf("no wait measured (%d released at their first check, %d not measurable)", atOnce, unmeasured)
		} else {
			c.measured = fmt.Sprintf("median %s over %d waits (max %s); %d released at their first check and %d not measurable, not counted",
				secs(stats.Median(lat, 0)), len(lat), secs(maxOf(lat)), atOnce, unmeasured)
			c.ok = stats.Median(lat, 0) <= releaseLimit
		}
		out = append(out, c)
	}
	return out
}

func countWarmups(results []runResult, impl, example string) int {
	n := 0
	for _, r := range results {
		if r.Impl == impl && r.Example == example && r.warmup() {
			n++
		}
	}
	return n
}

func maxOf(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// secs formats d as seconds with two decimals: "0.42s".
func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// writeReport prints every run, the summary per example and controller
// manager, the wait containers' releases per example and the targets with
// their measured values; it returns the names of the targets not met.
func writeReport(w io.Writer, results []runResult, checks []check) []string {
	fmt.Fprintln(w, "Runs (seconds from the create call):")
	for _, r := range results {
		fmt.Fprintln(w, "  "+runLine(r))
	}
	fmt.Fprintln(w, "\nMedians over the successful runs (warm-ups left out), seconds from the create call:")
	fmt.Fprintf(w, "  %-10s  %-20s %5s %5s %7s %10s  %7s %8s %7s %10s  %12s\n", "impl", "example", "runs", "ok", "failed", "restarted", "bound", "started", "joined", "completed", "fastest join")
	for _, s := range summarize(results) {
		fmt.Fprintf(w, "  %-10s  %-20s %5d %5d %7d %10d  %7s %8s %7s %10s  %12s\n", s.impl, s.example, s.runs, s.ok, s.failed, s.restarted,
			orDash(s.reached[0], s.bound), orDash(s.reached[1], s.started), orDash(s.reached[2], s.joined), orDash(s.reached[3], s.completed), orDash(s.ok, s.bestJoined))
	}
	fmt.Fprintln(w, "\nWait containers of ours (measured runs): release after the last dependency answered")
	for _, s := range summarize(results) {
		if s.impl != implOurs {
			continue
		}
		var lat []time.Duration
		atOnce, unmeasured := 0, 0
		proxies := map[string]bool{}
		var errs []string
		for _, r := range results {
			if r.Impl != s.impl || r.Example != s.example || r.warmup() {
				continue
			}
			for _, wr := range r.Waits {
				switch {
				case wr.Err != "":
					unmeasured++
					errs = append(errs, r.Job+"/"+wr.Pod+": "+wr.Err)
				case !wr.Waited:
					atOnce++
				default:
					lat = append(lat, wr.Latency())
					proxies[wr.Proxy] = true
				}
			}
		}
		if len(lat)+atOnce+unmeasured == 0 {
			fmt.Fprintf(w, "  %-20s no wait containers\n", s.example)
			continue
		}
		fmt.Fprintf(w, "  %-20s %3d waited: median %s, max %s (answered: %s); %d released at their first check; %d not measurable\n",
			s.example, len(lat), orDash(len(lat), stats.Median(lat, 0)), orDash(len(lat), maxOf(lat)), strings.Join(sortedKeys(proxies), ", "), atOnce, unmeasured)
		if len(errs) > 0 {
			fmt.Fprintf(w, "  %-20s first not measurable: %s\n", "", errs[0])
		}
	}
	fmt.Fprintln(w, "\nTargets:")
	var failed []string
	for _, c := range checks {
		mark := "ok    "
		if !c.ok {
			mark = "FAILED"
			failed = append(failed, c.name)
		}
		fmt.Fprintf(w, "  %s %s\n         %s\n", mark, c.name, c.measured)
	}
	return failed
}

// orDash formats d as secs, or "-" when it is a median of no values (n 0).
func orDash(n int, d time.Duration) string {
	if n == 0 {
		return "-"
	}
	return secs(d)
}
