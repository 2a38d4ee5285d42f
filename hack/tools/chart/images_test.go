package chart

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

const (
	repoRoot = "../../.."
	// placeholderRegistry stands for the user's registry in
	// volcano-values.yaml and the patches: .invalid never resolves (RFC 6761).
	placeholderRegistry = "REGISTRY.example.invalid"
)

// owned reports whether image is in a registry namespace this project
// documents as safe to pull by default: the placeholder, which cannot
// resolve, or Volcano's own images (docker.io/volcanosh/*, which Volcano's
// chart names). Anything else, docker.io/vcplugins/* among it, is somebody
// else's to publish under: a default naming it runs their code with the
// rights of Volcano's controllers.
func owned(image string) (bool, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return false, err
	}
	repo := ref.Context()
	switch {
	case repo.RegistryStr() == placeholderRegistry:
		return true, nil
	case repo.RegistryStr() == name.DefaultRegistry && strings.HasPrefix(repo.RepositoryStr(), "volcanosh/"):
		return true, nil
	}
	return false, nil
}

func TestOwned(t *testing.T) {
	for image, want := range map[string]bool{
		"REGISTRY.example.invalid/framework-plugins/vc-controller-manager:v1.15.1-fp.1": true,
		"docker.io/volcanosh/vc-scheduler:v1.15.1":                                      true,
		"volcanosh/vc-webhook-manager:v1.15.1":                                          true,
		"docker.io/vcplugins/vc-controller-manager:v1.15.1":                             false,
		"vcplugins/vc-scheduler:v1.15.1-fp.1":                                           false,
		"busybox:1.36.1":                                                                false,
		"grafana/grafana:latest":                                                        false,
		"registry.example.invalid.evil.com/volcanosh/x:1":                               false,
		"quay.io/volcanosh/vc-scheduler:v1.15.1":                                        false,
	} {
		got, err := owned(image)
		if err != nil || got != want {
			t.Errorf("owned(%q) = %v, %v; want %v", image, got, err, want)
		}
	}
}

// images returns every string under an "image" key in the YAML documents of
// manifest, with the "Kind/name" of its document, sorted.
func images(t *testing.T, manifest string) []string {
	t.Helper()
	var out []string
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "image" {
					out = append(out, where+" "+s)
				} else {
					walk(where, x)
				}
			}
		case []any:
			for _, x := range v {
				walk(where, x)
			}
		}
	}
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		meta, _ := obj["metadata"].(map[string]any)
		walk(obj["kind"].(string)+"/"+meta["name"].(string), obj)
	}
	sort.Strings(out)
	return out
}

// volcanoChartDir returns Volcano's Helm chart in the Go module cache, at the
// version the repository's go.mod requires.
func volcanoChartDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "volcano.sh/volcano")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list -m volcano.sh/volcano: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "installer", "helm", "chart", "volcano")
}

// readValues reads a values file of the repository.
func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{}
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// No default of the installer names an image somebody else may publish: not
// our chart (with each of its ci/ value sets), not Volcano's chart with
// installer/helm/volcano-values.yaml (which pulls with imagePullPolicy
// Always), not the kubectl patches of installer/volcano-patches. The images
// this project builds appear only as the placeholder, for the user to
// replace.
func TestDefaultImagesAreOwned(t *testing.T) {
	check := func(t *testing.T, found []string) {
		t.Helper()
		for _, f := range found {
			image := f[strings.LastIndex(f, " ")+1:]
			if ok, err := owned(image); err != nil || !ok {
				t.Errorf("%s: not in a registry namespace of the project's (%s/..., docker.io/volcanosh/...); err %v", f, placeholderRegistry, err)
			}
		}
	}

	ciValues, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(ciValues) == 0 {
		t.Fatalf("no ci/*-values.yaml: %v", err)
	}
	for _, f := range append([]string{""}, ciValues...) {
		t.Run("framework-plugins chart "+filepath.Base(f), func(t *testing.T) {
			vals := map[string]any{}
			if f != "" {
				vals = readValues(t, strings.TrimPrefix(f, repoRoot+"/"))
			}
			r, err := renderChart(t, chartDir, "framework-plugins", "1.35.3", vapAPI, vals)
			if err != nil {
				t.Fatal(err)
			}
			var manifest []string
			for _, d := range r.docs {
				manifest = append(manifest, d)
			}
			// The chart runs no workload today; should it name an image, it
			// must be owned too.
			check(t, images(t, strings.Join(manifest, "\n---\n")))
		})
	}

	lines := volcanoLines(t)
	for _, line := range lines {
		name := "Volcano's chart with volcano-values.yaml"
		if line.name != lines[0].name {
			name = "Volcano " + line.name + "'s chart with " + line.values
		}
		t.Run(name, func(t *testing.T) {
			volcanoImagesOwned(t, check, line, lines[0].name)
		})
	}

	t.Run("volcano-patches", func(t *testing.T) {
		dirs := []string{filepath.Join(repoRoot, "installer", "volcano-patches")}
		for _, line := range lines[1:] {
			dirs = append(dirs, filepath.Join(repoRoot, "lines", line.name, "volcano-patches"))
		}
		for _, dir := range dirs {
			patches, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
			if err != nil || len(patches) == 0 {
				t.Fatalf("no patches in %s: %v", dir, err)
			}
			var found []string
			for _, p := range patches {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				// A patch has no kind or name: name it by its file.
				doc := "kind: Patch\nmetadata: {name: " + filepath.Base(p) + "}\n" + string(data)
				found = append(found, images(t, doc)...)
			}
			if len(found) != 2 {
				t.Errorf("%s: images %v, want the controller and webhook manager ones", dir, found)
			}
			check(t, found)
		}
	})
}

// volcanoImagesOwned checks the images of the line's Volcano chart rendered
// with the line's values: owned, and the three the values replace this
// project's at the placeholder with the line's tag (the chart's appVersion
// with the line's Volcano release for the default line's, defaultLine).
func volcanoImagesOwned(t *testing.T, check func(*testing.T, []string), line volcanoLine, defaultLine string) {
	t.Helper()
	r, err := renderChart(t, line.chartDir, "volcano", "1.35.3", nil, readValues(t, line.values))
	if err != nil {
		t.Fatal(err)
	}
	var manifest []string
	for _, d := range r.docs {
		manifest = append(manifest, d)
	}
	found := images(t, strings.Join(manifest, "\n---\n"))
	check(t, found)
	// The three images the values replace are this project's, at the
	// placeholder; the scheduler's too (one registry, one tag).
	version := line.name + strings.TrimPrefix(chartAppVersion(t), defaultLine)
	want := []string{
		"Deployment/volcano-admission " + placeholderRegistry + "/framework-plugins/vc-webhook-manager:" + version,
		"Deployment/volcano-controllers " + placeholderRegistry + "/framework-plugins/vc-controller-manager:" + version,
		"Deployment/volcano-scheduler " + placeholderRegistry + "/framework-plugins/vc-scheduler:" + version,
		"Job/volcano-admission-init " + placeholderRegistry + "/framework-plugins/vc-webhook-manager:" + version,
	}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}

// chartAppVersion is the chart's appVersion, this project's release and the
// tag of its images.
func chartAppVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil || c.AppVersion == "" {
		t.Fatalf("Chart.yaml appVersion: %q, %v", c.AppVersion, err)
	}
	return c.AppVersion
}
