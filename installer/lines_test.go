package installer

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The installer files of the Volcano lines other than the default
// (lines/README.md): lines/<line>/volcano-values.yaml and
// lines/<line>/volcano-patches/, which make test-install LINE=<line> uses and
// a user of that line's Volcano applies. They are checked as the default
// line's are, against that line's Volcano (its chart and
// volcano-development.yaml in the Go module cache), and kept the default
// line's settings but for what that Volcano needs otherwise.

// otherLines are the lines with a module file lines/<line>.mod.
func otherLines(t *testing.T) []string {
	t.Helper()
	mods, err := filepath.Glob(filepath.Join("..", "lines", "*.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Skip("no other Volcano line (lines/*.mod)")
	}
	var lines []string
	for _, m := range mods {
		lines = append(lines, strings.TrimSuffix(filepath.Base(m), ".mod"))
	}
	return lines
}

// lineChartDir is Volcano's chart of the line's module file, downloaded into
// the module cache if it is not there.
func lineChartDir(t *testing.T, line string) string {
	t.Helper()
	modfile, err := filepath.Abs(filepath.Join("..", "lines", line+".mod"))
	if err != nil {
		t.Fatal(err)
	}
	// -modfile on the command line overrides one in GOFLAGS.
	out, err := exec.Command("go", "mod", "download", "-modfile="+modfile, "-json", "volcano.sh/volcano").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go mod download -modfile=%s volcano.sh/volcano: %v\n%s", modfile, err, ee.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	var m struct{ Dir, Version string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download: %v: %s", err, out)
	}
	// A line is named after its Volcano release.
	if m.Version != line {
		t.Fatalf("lines/%s.mod requires volcano.sh/volcano %s", line, m.Version)
	}
	return filepath.Join(m.Dir, "installer", "helm", "chart", "volcano")
}

// lineVersion is the Makefile's VERSION with LINE=line.
func lineVersion(t *testing.T, line string) string {
	t.Helper()
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	v, err := makeVariableWith(string(mk), "VERSION", map[string]string{"LINE": line})
	if err != nil {
		t.Fatalf("../Makefile: %v", err)
	}
	return v
}

// A line's volcano-values.yaml: every key a value of that line's chart, the
// tag the line's VERSION; and the default line's settings, but for the keys
// the line's chart has not (v1.14's has no per-component tags) and the tag.
func TestLineVolcanoValues(t *testing.T) {
	def := volcanoValues(t)
	for _, line := range otherLines(t) {
		t.Run(line, func(t *testing.T) {
			file := filepath.Join("..", "lines", line, "volcano-values.yaml")
			chartDir := lineChartDir(t, line)
			version := lineVersion(t, line)
			checkVolcanoValues(t, file, chartDir, version)

			chart := chartValues(t, chartDir)
			want := map[string]any{}
			for section, v := range def {
				keys := map[string]any{}
				for k, x := range v.(map[string]any) {
					if _, ok := chart[section].(map[string]any)[k]; ok {
						keys[k] = x
					}
				}
				want[section] = keys
			}
			want["basic"].(map[string]any)["image_tag_version"] = version
			if diff := cmp.Diff(want, volcanoValuesOf(t, file)); diff != "" {
				t.Errorf("%s is not %s with the tag %s and only the keys of Volcano %s's chart (-want +got):\n%s", file, volcanoValuesFile, version, line, diff)
			}
		})
	}
}

// A line's two patches are the default line's with the line's release, its
// values file and its patch directory in place of the default's, and pass
// TestVolcanoPatches's checks against that line's volcano-development.yaml.
// (The readiness patch of step 0 is every line's; make test-install
// LINE=<line> applies it to that line's Deployment.)
func TestLineVolcanoPatches(t *testing.T) {
	version, err := volcanoVersion()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range otherLines(t) {
		t.Run(line, func(t *testing.T) {
			dir := filepath.Join("..", "lines", line, "volcano-patches")
			replacer := strings.NewReplacer(
				"installer/volcano-patches/", "lines/"+line+"/volcano-patches/",
				"installer/helm/volcano-values.yaml", "lines/"+line+"/volcano-values.yaml",
				version, line)
			for _, name := range []string{"volcano-controllers.yaml", "volcano-admission.yaml"} {
				def, err := os.ReadFile(filepath.Join("volcano-patches", name))
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(replacer.Replace(string(def)), string(got)); diff != "" {
					t.Errorf("%s is not volcano-patches/%s with %s's names (-want +got):\n%s", filepath.Join(dir, name), name, line, diff)
				}
			}
			chartDir := lineChartDir(t, line)
			values := volcanoValuesOf(t, filepath.Join("..", "lines", line, "volcano-values.yaml"))
			checkVolcanoPatches(t, dir, chartDir, values, lineVersion(t, line))
		})
	}
}
