package docs_test

// Claims of the docs that drifted from the code once and are cheap to check:
// the make targets they name, and the --controllers values they give
// vc-controller-manager.

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"volcano.sh/volcano/cmd/controller-manager/app/options"
	"volcano.sh/volcano/pkg/controllers/framework"

	// The controllers vc-controller-manager links (cmd/vc-controller-manager).
	_ "github.com/vcplugins/framework-plugins/lines/controllers"
	_ "github.com/vcplugins/framework-plugins/pkg/pgresync"
	_ "github.com/vcplugins/framework-plugins/pkg/waitwatch"
)

// claimFiles are the Markdown files whose commands are checked, relative to
// this directory.
var claimFiles = []string{"*.md", "plugins/*.md", "dev/*.md", "../README.md", "../SECURITY.md",
	"../installer/helm/framework-plugins/README.md", "../lines/README.md"}

// codeOf returns the code of a Markdown file: its fenced blocks' lines and
// its inline code spans, one per line.
func codeOf(src string) []string {
	var code []string
	fenced := false
	span := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			code = append(code, line)
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			code = append(code, m[1])
		}
	}
	return code
}

func readClaimFiles(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pattern := range claimFiles {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no file matches %s: %v", pattern, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = string(b)
		}
	}
	return out
}

// makeTargets returns the targets of the Makefile and hack/*.mk, with
// $(LOCAL_BIN) as its default, _output/bin.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	files, _ := filepath.Glob("../hack/*.mk")
	files = append(files, "../Makefile")
	rule := regexp.MustCompile(`^([^\s#:=][^:=]*?)\s*::?(?:[^=]|$)`)
	targets := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			m := rule.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			for _, name := range strings.Fields(m[1]) {
				targets[strings.ReplaceAll(name, "$(LOCAL_BIN)", "_output/bin")] = true
			}
		}
	}
	if !targets["demo"] || !targets["_output/bin/helm"] {
		t.Fatalf("the Makefile's targets were not found: %v", targets)
	}
	return targets
}

// TestMakeTargetsNamedInDocsExist: every `make <target>` in the docs' code
// (fenced blocks and inline spans) is a target of the Makefile or hack/*.mk.
func TestMakeTargetsNamedInDocsExist(t *testing.T) {
	targets := makeTargets(t)
	// make, its variables (VAR=value) before the targets, then the targets
	// and more variables.
	cmd := regexp.MustCompile(`(?:^|[\s;&|(])make((?:\s+[^\s;&|)]+)+)`)
	variable := regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)
	target := regexp.MustCompile(`^[a-z_][a-zA-Z0-9_./-]*$`)
	checked := 0
	for file, src := range readClaimFiles(t) {
		for _, code := range codeOf(src) {
			for _, m := range cmd.FindAllStringSubmatch(code, -1) {
				for _, word := range strings.Fields(m[1]) {
					if strings.HasPrefix(word, "#") {
						break
					}
					if variable.MatchString(word) || strings.HasPrefix(word, "-") {
						continue
					}
					if !target.MatchString(word) {
						break // "make ... LINE=...", prose
					}
					checked++
					if !targets[word] {
						t.Errorf("%s: `make %s`: no such target in the Makefile or hack/*.mk", file, word)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d make targets found in the docs: is the scan broken?", checked)
	}
}

// TestControllersExamples: every --controllers value in the docs names
// controllers vc-controller-manager links, and one that starts from "*"
// keeps what Volcano's default leaves off (its default "*,-sharding-controller").
func TestControllersExamples(t *testing.T) {
	known := map[string]bool{}
	var names []string
	framework.ForeachController(func(c framework.Controller) {
		known[c.Name()] = true
		names = append(names, c.Name())
	})
	sort.Strings(names)
	fs := pflag.NewFlagSet("vc-controller-manager", pflag.ContinueOnError)
	options.NewServerOption().AddFlags(fs, names)
	def := strings.Split(strings.Trim(fs.Lookup("controllers").DefValue, "[]"), ",")
	var offByDefault []string
	for _, c := range def {
		if strings.HasPrefix(c, "-") {
			offByDefault = append(offByDefault, c)
		}
	}
	flag := regexp.MustCompile(`--controllers=([^\s\x60'"]+)`)
	checked := 0
	for file, src := range readClaimFiles(t) {
		for _, m := range flag.FindAllStringSubmatch(src, -1) {
			checked++
			list := strings.Split(m[1], ",")
			star := false
			has := map[string]bool{}
			for _, c := range list {
				has[c] = true
				if c == "*" {
					star = true
					continue
				}
				if name := strings.TrimLeft(c, "+-"); !known[name] {
					t.Errorf("%s: --controllers=%s: %q is not a controller of vc-controller-manager (%s)", file, m[1], name, strings.Join(names, ", "))
				}
			}
			if !star {
				continue
			}
			for _, off := range offByDefault {
				if !has[off] {
					t.Errorf("%s: --controllers=%s turns on %s, which Volcano's default %s leaves off", file, m[1], strings.TrimPrefix(off, "-"), strings.Join(def, ","))
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no --controllers value in the docs: is the scan broken?")
	}
}
