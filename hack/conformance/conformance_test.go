package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// junit is a Ginkgo JUnit report of the cases given as name=status[:message].
func junit(cases ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<testsuites>\n" + `<testsuite name="Volcano Job Test Suite" time="12.5">` + "\n")
	for _, c := range cases {
		name, rest, _ := strings.Cut(c, "=")
		status, msg, _ := strings.Cut(rest, ":")
		b.WriteString(`<testcase name="` + name + `" status="` + status + `" time="1">`)
		switch status {
		case "skipped":
			b.WriteString(`<skipped message="` + msg + `"></skipped>`)
		case "failed", "timedout":
			b.WriteString(`<failure message="` + msg + `" type="` + status + `"></failure>`)
		case "panicked":
			b.WriteString(`<error message="` + msg + `" type="panicked"></error>`)
		}
		b.WriteString("</testcase>\n")
	}
	b.WriteString("</testsuite>\n</testsuites>\n")
	return b.String()
}

func writeReports(t *testing.T, dir string, reports map[string]string) {
	t.Helper()
	for file, content := range reports {
		path := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadJUnit(t *testing.T) {
	specs, d, err := readJUnit(strings.NewReader(junit(
		"[It] a=passed", "[It] b=failed:expected job Running, actual got Completed", "[It] c=skipped:skipped - no PVC",
		"[It] d=skipped:skipped", "[It] e=pending:pending", "[It] f=timedout:A suite timeout occurred", "[It] g=panicked:boom")))
	if err != nil {
		t.Fatal(err)
	}
	want := []Outcome{Passed, Failed, Skipped, NotRun, Skipped, Failed, Failed}
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d", len(specs), len(want))
	}
	for i, sp := range specs {
		if sp.Outcome != want[i] {
			t.Errorf("%s: %s, want %s", sp.Name, sp.Outcome, want[i])
		}
	}
	if specs[1].Message != "expected job Running, actual got Completed" || specs[6].Message != "boom" {
		t.Errorf("messages %q, %q", specs[1].Message, specs[6].Message)
	}
	if d.Seconds() != 12.5 {
		t.Errorf("duration %v, want 12.5s", d)
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	writeReports(t, dir, map[string]string{
		"stock/jobp.xml":  junit("[It] both=passed", "[It] regress=passed", "[It] fixed=failed:x", "[It] neither=failed:image", "[It] skip=skipped:skipped - PVC", "[It] filtered=skipped:skipped"),
		"ours/jobp.xml":   junit("[It] both=passed", "[It] regress=failed:expected Running", "[It] fixed=passed", "[It] neither=failed:image", "[It] skip=skipped:skipped - PVC", "[It] filtered=skipped:skipped"),
		"stock/vcctl.xml": junit("[It] only-stock-report=passed"),
	})
	c, err := compareDir(dir, []string{"jobp", "vcctl"}, []string{Stock, Ours})
	if err != nil {
		t.Fatal(err)
	}
	regress := c.regressionRows("jobp")
	if len(regress) != 1 || regress[0].Name != "[It] regress" {
		t.Fatalf("regressions %v, want [It] regress", regress)
	}
	// vcctl: ours left no report, so stock's passed spec is a regression too.
	if got := c.regressions(); got != 2 {
		t.Errorf("regressions() = %d, want 2", got)
	}
	if m := c.missingReports(); len(m) != 1 || m[0] != "ours/vcctl" {
		t.Errorf("missingReports() = %v, want [ours/vcctl]", m)
	}
	if got := c.count("jobp", Stock, Passed); got != 2 {
		t.Errorf("stock passed %d, want 2", got)
	}
	var b strings.Builder
	writeReport(&b, options{line: "v1.15.1"}, c)
	out := b.String()
	for _, want := range []string{
		"| jobp | 5 | 2 | 2 | 1 |",
		"| 2 | 2 | 1 |",
		"| 1 | 1 | 1 | 1 |",
		"## Passed with stock, not with ours (regressions) (2)",
		"- vcctl: [It] only-stock-report  \n  ours: no report",
		"- jobp: [It] regress  \n  ours (failed): `expected Running`",
		"## Passed with ours only (1)",
		"## Passed with neither (1)",
		"## Skipped by the suite (1)",
		"| vcctl | 1 | 1 | 0 | 0 | 13s | no report |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestProgress(t *testing.T) {
	var b strings.Builder
	p := &progress{out: &b, prefix: "ours jobp"}
	for _, l := range strings.Split(`Will run 3 of 51 specs
SSSSSSSS
------------------------------
Job Life Cycle Delete job that is Running state
/root/go/pkg/mod/volcano.sh/volcano@v1.15.1/test/e2e/jobp/job_lifecycle.go:80
  STEP: Creating Job
• [12.345 seconds]
------------------------------
Job Life Cycle Delete job that is Failed job
/root/go/pkg/mod/volcano.sh/volcano@v1.15.1/test/e2e/jobp/job_lifecycle.go:140
  [FAILED] in [It] - /root/go/pkg/mod/volcano.sh/volcano@v1.15.1/test/e2e/jobp/job_lifecycle.go:160
• [FAILED] [30.100 seconds]
------------------------------
Test job restart Retain failed pod on last Retry
/x.go:1
S [SKIPPED] [0.001 seconds]`, "\n") {
		p.line(l)
	}
	if p.total != 3 || p.done != 3 || p.passed != 1 || p.failed != 1 || p.skipped != 1 {
		t.Errorf("total %d done %d passed %d failed %d skipped %d, want 3 3 1 1 1", p.total, p.done, p.passed, p.failed, p.skipped)
	}
	for _, want := range []string{
		"ours jobp: running 3 specs",
		"passed   Job Life Cycle Delete job that is Running state",
		"failed   Job Life Cycle Delete job that is Failed job",
		"skipped  Test job restart Retain failed pod on last Retry",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, b.String())
		}
	}
}

func TestKwokConfig(t *testing.T) {
	conf, err := kwokConfig()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(conf, "$SCRIPT") {
		t.Error("a $SCRIPT placeholder is left")
	}
	for _, name := range []string{readyStage, "conformance-sleep-succeeded", "conformance-sleep-failed", "conformance-program-done", "conformance-pod-delete", "conformance-pod-delete-ended"} {
		if !strings.Contains(conf, "  name: "+name+"\n") {
			t.Errorf("no stage %s", name)
		}
	}
	// The default configuration's other stages would end the suites' pods
	// at once (pod-complete) or delete them without a Terminating phase.
	for _, name := range []string{"pod-complete", "pod-fail", "pod-delete"} {
		if strings.Contains(conf, "  name: "+name+"\n") {
			t.Errorf("stage %s of the default configuration is in", name)
		}
	}
	if strings.Count(strings.TrimSpace(scriptQuery), "\n") != 0 {
		t.Error("script.jq must be one line: it is substituted into YAML strings")
	}
}

func TestE2EWebhooks(t *testing.T) {
	hooks := e2eWebhooks()
	if len(hooks) != 11 {
		t.Fatalf("%d webhooks, want the 11 of Volcano's e2e", len(hooks))
	}
	seen := map[string]bool{}
	for _, h := range hooks {
		if seen[h.Path] {
			t.Errorf("path %s twice", h.Path)
		}
		seen[h.Path] = true
		if strings.HasSuffix(h.Path, "/mutate") != h.Mutating {
			t.Errorf("%s: Mutating %v", h.Path, h.Mutating)
		}
	}
}

func TestSummary(t *testing.T) {
	msg := "Unexpected error:\n    <*errors.StatusError | 0x23878440640>: \n    admission webhook \"x\" denied the request: no\n    {\n        ErrStatus: {"
	if got, want := summary(msg), `Unexpected error: admission webhook "x" denied the request: no`; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	if got := summary("expected job Running\nmore"); got != "expected job Running" {
		t.Errorf("summary = %q", got)
	}
}
