package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Outcome is what became of one spec in one variant.
type Outcome string

const (
	Passed  Outcome = "passed"
	Failed  Outcome = "failed" // failed, timed out, panicked, interrupted or aborted
	Skipped Outcome = "skipped"
	// NotRun: left out by --focus or --skip, or absent from the variant's report.
	NotRun Outcome = "not run"
)

// Spec is one spec's outcome in one variant's JUnit report.
type Spec struct {
	Name    string
	Outcome Outcome
	// Status is Ginkgo's state (passed, failed, timedout...); Message the
	// failure or skip message.
	Status, Message string
	Seconds         float64
}

// junitSuites is the part of a Ginkgo JUnit report the comparison reads.
type junitSuites struct {
	Suites []struct {
		Name  string  `xml:"name,attr"`
		Time  float64 `xml:"time,attr"`
		Cases []struct {
			Name    string  `xml:"name,attr"`
			Status  string  `xml:"status,attr"`
			Time    float64 `xml:"time,attr"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit reads a Ginkgo JUnit report: its specs in order and the suite's
// run time.
func readJUnit(r io.Reader) ([]Spec, time.Duration, error) {
	var js junitSuites
	if err := xml.NewDecoder(r).Decode(&js); err != nil {
		return nil, 0, err
	}
	var specs []Spec
	var total float64
	for _, s := range js.Suites {
		total += s.Time
		for _, c := range s.Cases {
			sp := Spec{Name: c.Name, Status: c.Status, Seconds: c.Time}
			switch {
			case c.Status == "passed":
				sp.Outcome = Passed
			case c.Status == "skipped" || c.Status == "pending":
				sp.Outcome = Skipped
				if c.Skipped != nil {
					sp.Message = c.Skipped.Message
				}
				// Ginkgo writes a bare "skipped" for specs its filters
				// left out, "skipped - <why>" for a Skip() call.
				if c.Status == "skipped" && sp.Message == "skipped" {
					sp.Outcome = NotRun
				}
			default:
				sp.Outcome = Failed
				if c.Failure != nil {
					sp.Message = c.Failure.Message
				} else if c.Error != nil {
					sp.Message = c.Error.Message
				}
			}
			specs = append(specs, sp)
		}
	}
	return specs, time.Duration(total * float64(time.Second)), nil
}

// SuiteRun is one suite's report in one variant; Missing when there is none.
type SuiteRun struct {
	Specs    []Spec
	Duration time.Duration
	Missing  bool
}

// Row is one spec across the variants.
type Row struct {
	Name     string
	Outcomes map[string]Spec
}

// Comparison is every suite's specs across the variants.
type Comparison struct {
	Suites   []string
	Variants []string
	Runs     map[string]map[string]*SuiteRun // suite, variant
	Rows     map[string][]Row                // suite: specs in the first report's order
	// RunInfo is each variant's run.txt, if any.
	RunInfo map[string]string
}

// compareDir reads <out>/<variant>/<suite>.xml of every suite and variant.
func compareDir(out string, suites, variants []string) (*Comparison, error) {
	runs := map[string]map[string]*SuiteRun{}
	for _, s := range suites {
		runs[s] = map[string]*SuiteRun{}
		for _, v := range variants {
			run := &SuiteRun{}
			f, err := os.Open(filepath.Join(out, v, s+".xml"))
			if errors.Is(err, os.ErrNotExist) {
				run.Missing = true
			} else if err != nil {
				return nil, err
			} else {
				run.Specs, run.Duration, err = readJUnit(f)
				f.Close()
				if err != nil {
					return nil, fmt.Errorf("%s: %w", f.Name(), err)
				}
			}
			runs[s][v] = run
		}
	}
	c := compare(suites, variants, runs)
	c.RunInfo = map[string]string{}
	for _, v := range variants {
		if b, err := os.ReadFile(filepath.Join(out, v, runInfoFile)); err == nil {
			c.RunInfo[v] = string(b)
		}
	}
	return c, nil
}

// compare lines the variants' specs up by name.
func compare(suites, variants []string, runs map[string]map[string]*SuiteRun) *Comparison {
	c := &Comparison{Suites: suites, Variants: variants, Runs: runs, Rows: map[string][]Row{}}
	for _, s := range suites {
		index := map[string]int{}
		var rows []Row
		for _, v := range variants {
			for _, sp := range runs[s][v].Specs {
				i, ok := index[sp.Name]
				if !ok {
					i = len(rows)
					index[sp.Name] = i
					rows = append(rows, Row{Name: sp.Name, Outcomes: map[string]Spec{}})
				}
				rows[i].Outcomes[v] = sp
			}
		}
		for i := range rows {
			for _, v := range variants {
				if _, ok := rows[i].Outcomes[v]; !ok {
					rows[i].Outcomes[v] = Spec{Name: rows[i].Name, Outcome: NotRun, Message: "not in the report"}
				}
			}
		}
		c.Rows[s] = rows
	}
	return c
}

// outcome returns row's outcome in variant; a spec absent from a report that
// is missing altogether counts as failed there.
func (c *Comparison) outcome(suite string, row Row, variant string) Outcome {
	if run := c.Runs[suite][variant]; run == nil || run.Missing {
		return Failed
	}
	return row.Outcomes[variant].Outcome
}

// regressionRows are the specs of suite that passed with stock and not with ours.
func (c *Comparison) regressionRows(suite string) []Row {
	if !slices.Contains(c.Variants, Stock) || !slices.Contains(c.Variants, Ours) {
		return nil
	}
	var out []Row
	for _, r := range c.Rows[suite] {
		if c.outcome(suite, r, Stock) == Passed && c.outcome(suite, r, Ours) != Passed {
			out = append(out, r)
		}
	}
	return out
}

func (c *Comparison) regressions() int {
	n := 0
	for _, s := range c.Suites {
		n += len(c.regressionRows(s))
	}
	// A suite whose ours report is missing while stock's exists counts
	// even when stock passed nothing.
	for _, s := range c.Suites {
		if stock, ours := c.Runs[s][Stock], c.Runs[s][Ours]; stock != nil && ours != nil && !stock.Missing && ours.Missing && len(c.regressionRows(s)) == 0 {
			n++
		}
	}
	return n
}

// missingReports names the suite/variant pairs without a report.
func (c *Comparison) missingReports() []string {
	var out []string
	for _, s := range c.Suites {
		for _, v := range c.Variants {
			if c.Runs[s][v].Missing {
				out = append(out, v+"/"+s)
			}
		}
	}
	return out
}

// count returns how many specs of suite had outcome o in variant.
func (c *Comparison) count(suite, variant string, o Outcome) int {
	n := 0
	for _, r := range c.Rows[suite] {
		if c.outcome(suite, r, variant) == o && !(o == Failed && c.Runs[suite][variant].Missing) {
			n++
		}
	}
	return n
}

// typeDumpRE matches Gomega's dump of an error's type ("<*errors.StatusError | 0xc000123>:").
var typeDumpRE = regexp.MustCompile(`^<[^>]*>:?$`)

// summary is the gist of a failure message: its first line and, when that
// only introduces what follows ("Unexpected error:"), the next line that is
// not a type dump, shortened.
func summary(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || typeDumpRE.MatchString(l) || l == "{" {
			continue
		}
		out = append(out, l)
		if !strings.HasSuffix(l, ":") || len(out) == 2 {
			break
		}
	}
	line := strings.Join(out, " ")
	if len(line) > 400 {
		line = line[:400] + "…"
	}
	return line
}

// writeReport writes the comparison as Markdown.
func writeReport(w io.Writer, o options, c *Comparison) {
	line := o.line
	if line == "" {
		line = "(line not given)"
	}
	fmt.Fprintf(w, "# Volcano conformance: line %s\n\n", line)
	fmt.Fprintf(w, "Volcano's own e2e suites (volcano.sh/volcano/test/e2e/...), run against %s on fresh KWOK-only local clusters.\n", strings.Join(c.Variants, " and "))
	if o.focus != "" || o.skip != "" {
		fmt.Fprintf(w, "Filter: focus %q, skip %q (specs left out count as not run).\n", o.focus, o.skip)
	}
	for _, v := range c.Variants {
		if info := strings.TrimSpace(c.RunInfo[v]); info != "" {
			fmt.Fprintf(w, "- %s\n", info)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "| suite | specs |")
	for _, v := range c.Variants {
		fmt.Fprintf(w, " %s passed | %s failed | %s skipped | %s time |", v, v, v, v)
	}
	both := len(c.Variants) == 2 && slices.Contains(c.Variants, Stock) && slices.Contains(c.Variants, Ours)
	if both {
		fmt.Fprint(w, " passed with both | stock only | ours only | passed with neither |")
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "|---|---:|")
	for range c.Variants {
		fmt.Fprint(w, "---:|---:|---:|---:|")
	}
	if both {
		fmt.Fprint(w, "---:|---:|---:|---:|")
	}
	fmt.Fprintln(w)
	type listed struct {
		suite string
		row   Row
	}
	var regress, oursOnly, neither, skipped []listed
	for _, s := range c.Suites {
		run := 0
		for _, r := range c.Rows[s] {
			for _, v := range c.Variants {
				if c.outcome(s, r, v) != NotRun {
					run++
					break
				}
			}
		}
		fmt.Fprintf(w, "| %s | %d |", s, run)
		for _, v := range c.Variants {
			r := c.Runs[s][v]
			if r.Missing {
				fmt.Fprint(w, " no report | | | |")
				continue
			}
			fmt.Fprintf(w, " %d | %d | %d | %s |", c.count(s, v, Passed), c.count(s, v, Failed), c.count(s, v, Skipped), r.Duration.Round(time.Second))
		}
		if both {
			var nb, ns, no, nn int
			for _, r := range c.Rows[s] {
				st, ou := c.outcome(s, r, Stock), c.outcome(s, r, Ours)
				switch {
				case st == Passed && ou == Passed:
					nb++
				case st == Passed:
					ns++
					regress = append(regress, listed{s, r})
				case ou == Passed:
					no++
					oursOnly = append(oursOnly, listed{s, r})
				case st == Failed || ou == Failed: // and neither passed
					nn++
					neither = append(neither, listed{s, r})
				}
				if st == Skipped || ou == Skipped {
					skipped = append(skipped, listed{s, r})
				}
			}
			fmt.Fprintf(w, " %d | %d | %d | %d |", nb, ns, no, nn)
		}
		fmt.Fprintln(w)
	}
	if !both {
		return
	}
	section := func(title string, rows []listed, show func(listed) string) {
		fmt.Fprintf(w, "\n## %s (%d)\n\n", title, len(rows))
		if len(rows) == 0 {
			fmt.Fprintln(w, "None.")
			return
		}
		for _, l := range rows {
			fmt.Fprintf(w, "- %s: %s", l.suite, l.row.Name)
			if m := show(l); m != "" {
				fmt.Fprintf(w, "  \n  %s", m)
			}
			fmt.Fprintln(w)
		}
	}
	msg := func(v string) func(listed) string {
		return func(l listed) string {
			if c.Runs[l.suite][v].Missing {
				return v + ": no report"
			}
			sp := l.row.Outcomes[v]
			if m := summary(sp.Message); m != "" {
				return fmt.Sprintf("%s (%s): `%s`", v, sp.Status, strings.ReplaceAll(m, "`", "'"))
			}
			return fmt.Sprintf("%s: %s", v, sp.Outcome)
		}
	}
	section("Passed with stock, not with ours (regressions)", regress, msg(Ours))
	section("Passed with ours only", oursOnly, msg(Stock))
	section("Passed with neither", neither, msg(Stock))
	section("Skipped by the suite", skipped, msg(Stock))
}
