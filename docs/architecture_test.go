package docs_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the module's import path, which go list puts before every
// package's path in the map.
const modulePath = "github.com/vcplugins/framework-plugins"

// mapRow is a row of architecture.md's package map: a package's path in
// backquotes, then its non-test lines ("1,234").
var mapRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([0-9][0-9,]*) \\|")

// packageMap returns the packages of architecture.md's "Package map" section
// with their line counts, failing on a package listed twice.
func packageMap(t *testing.T) map[string]int {
	t.Helper()
	data, err := os.ReadFile("dev/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Package map\n")
	if !ok {
		t.Fatal(`architecture.md has no "## Package map" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	out := map[string]int{}
	for _, line := range strings.Split(section, "\n") {
		m := mapRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
		if err != nil {
			t.Fatalf("package map row %q: %v", line, err)
		}
		if _, dup := out[m[1]]; dup {
			t.Errorf("package map lists %s twice", m[1])
		}
		out[m[1]] = n
	}
	if len(out) == 0 {
		t.Fatal("the package map has no rows")
	}
	return out
}

// nonTestLines returns the lines of the .go files of dir that are not
// _test.go files, whatever their build tags, as wc -l counts them.
func nonTestLines(dir string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n, nil
}

// modulePackages returns the module's packages (go list ./..., test-only
// ones included) by path relative to the module, with their non-test lines.
func modulePackages(t *testing.T) map[string]int {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-find", "-f", "{{.ImportPath}}\t{{.Dir}}", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("go list printed %q", line)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, modulePath), "/")
		if rel == "" {
			rel = "."
		}
		n, err := nonTestLines(dir)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[rel] = n
	}
	return pkgs
}

// withinTolerance reports whether a count listed in the map still holds for
// the tree's count: it is off by at most 10% of the tree's count, or by at
// most 10 lines (architecture.md says so).
func withinTolerance(listed, actual int) bool {
	d := listed - actual
	if d < 0 {
		d = -d
	}
	return d <= 10 || 10*d <= actual
}

// TestPackageMap holds architecture.md's package map to the module: every
// package go list ./... finds is listed, every listed package exists, and
// each count is within the tolerance of its non-test lines.
func TestPackageMap(t *testing.T) {
	listed := packageMap(t)
	actual := modulePackages(t)
	for _, pkg := range slices.Sorted(maps.Keys(actual)) {
		n := actual[pkg]
		m, ok := listed[pkg]
		switch {
		case !ok:
			t.Errorf("package %s (%d non-test lines) is missing from architecture.md's package map; add a row:\n| `%s` | %s | ... |", pkg, n, pkg, thousands(n))
		case !withinTolerance(m, n):
			t.Errorf("package %s: the package map says %d non-test lines, the tree has %d (more than 10%% and 10 lines off); write %s", pkg, m, n, thousands(n))
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(listed)) {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("architecture.md's package map lists %s, which go list ./... does not find", pkg)
		}
	}
}

// thousands formats n as the map writes it: 1,234.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func TestWithinTolerance(t *testing.T) {
	for _, c := range []struct {
		listed, actual int
		want           bool
	}{
		{100, 100, true},
		{100, 110, true}, // 10 lines
		{100, 111, true}, // 11 lines, 9.9%
		{100, 89, false}, // 11 lines, 12.4%
		{20, 30, true},   // 10 lines, 33%
		{20, 31, false},  // 11 lines, 35%
		{1000, 1100, true},
		{1000, 1112, false},
		{0, 0, true},
	} {
		if got := withinTolerance(c.listed, c.actual); got != c.want {
			t.Errorf("withinTolerance(%d, %d) = %v, want %v", c.listed, c.actual, got, c.want)
		}
	}
	if got := fmt.Sprint(thousands(1234567), " ", thousands(999), " ", thousands(1000)); got != "1,234,567 999 1,000" {
		t.Errorf("thousands: %s", got)
	}
}

// layerOf returns the layer of a package of the module (its path without
// the module's): 0 pkg/, 1 plugins/, 2 webhook/, 3 cmd/, -1 lines/ (which
// imports none of ours), and 9 for tooling and tests (internal/, hack/,
// test/, docs, installer, and the samples and test-only frameworks under
// plugins/, which no manager links).
func layerOf(p string) int {
	top, _, _ := strings.Cut(p, "/")
	switch {
	case strings.HasPrefix(p, "plugins/") && (strings.HasSuffix(p, "sample") || p == "plugins/catalog/samples" || p == "plugins/catalog/ninthtest"):
		return 9
	case top == "pkg":
		return 0
	case top == "plugins":
		return 1
	case top == "webhook":
		return 2
	case top == "cmd":
		return 3
	case top == "lines":
		return -1
	}
	return 9
}

// The product's code imports downward only, as the package map says: pkg/
// none of the other layers, plugins/ pkg/, webhook/ both, cmd/ all three and
// lines/; lines/ none of ours; and no product package imports tooling (go
// list's non-test imports; Go itself forbids cycles).
func TestImportsRunDownward(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := strings.TrimPrefix(strings.TrimPrefix(f[0], modulePath), "/")
		lf := layerOf(from)
		if lf == 9 {
			continue
		}
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, modulePath+"/") {
				continue
			}
			to := strings.TrimPrefix(imp, modulePath+"/")
			lt := layerOf(to)
			checked++
			switch {
			case lt == 9:
				t.Errorf("%s (product) imports %s (tooling or tests)", from, to)
			case lf == -1:
				t.Errorf("%s (lines/) imports %s: lines/ imports none of ours", from, to)
			case lt == -1 && lf != 3:
				t.Errorf("%s imports %s: only cmd/ imports lines/", from, to)
			case lt > lf:
				t.Errorf("%s imports %s, a layer above it", from, to)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d imports of the module's own packages checked; the listing is wrong", checked)
	}
}
