package chart

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// volcanoModuleVersion is the version of volcano.sh/volcano that the
// repository's go.mod requires, e.g. v1.15.1.
func volcanoModuleVersion(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "volcano.sh/volcano")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m volcano.sh/volcano: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// volcanoLine is a Volcano line of the repository (lines/README.md): its
// name (its Volcano release), Volcano's chart of its module file and its
// values for that chart (relative to the repository).
type volcanoLine struct {
	name, chartDir, values string
}

// volcanoLines are the default line (go.mod) and every line with a module
// file lines/<line>.mod, whose Volcano is downloaded into the module cache
// if it is not there.
func volcanoLines(t *testing.T) []volcanoLine {
	t.Helper()
	lines := []volcanoLine{{volcanoModuleVersion(t), volcanoChartDir(t), "installer/helm/volcano-values.yaml"}}
	mods, err := filepath.Glob(filepath.Join(repoRoot, "lines", "*.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		line := strings.TrimSuffix(filepath.Base(m), ".mod")
		abs, err := filepath.Abs(m)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "mod", "download", "-modfile="+abs, "-json", "volcano.sh/volcano")
		cmd.Dir = repoRoot
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go mod download -modfile=%s volcano.sh/volcano: %v\n%s", abs, err, ee.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		var mod struct{ Dir, Version string }
		if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" || mod.Version != line {
			t.Fatalf("go mod download -modfile=%s volcano.sh/volcano: %v: %s", abs, err, out)
		}
		lines = append(lines, volcanoLine{line, filepath.Join(mod.Dir, "installer", "helm", "chart", "volcano"), filepath.Join("lines", line, "volcano-values.yaml")})
	}
	return lines
}

// chartHasValue reports whether the values.yaml of Volcano's chart in dir
// has section.key.
func chartHasValue(t *testing.T, dir, section, key string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	_, ok := v[section][key]
	return ok
}

// The upgrade from stock Volcano to this project (helm upgrade --reuse-values
// -f installer/helm/volcano-values.yaml) keeps everything Volcano's chart
// configures but what the values are for: the same objects; the Deployments
// and the admission-init Job alike but for the images, the security contexts
// (Pod Security Standard "restricted"), the admission Deployment's replicas
// and resources, and the controller manager's API client limits (this
// project's 500/1000 for the chart's 50/100; the admission-init hook gets the
// admission resources too). Every other object (the CRDs,
// Volcano's webhook configurations, Services, ConfigMaps, RBAC) renders
// byte for byte the same. For every line: its values on its Volcano's chart
// (lines/<line>/volcano-values.yaml on v1.14.1's).
func TestVolcanoValuesKeepTheChart(t *testing.T) {
	for _, line := range volcanoLines(t) {
		t.Run(line.name, func(t *testing.T) { volcanoValuesKeepTheChart(t, line.chartDir, line.values) })
	}
}

func volcanoValuesKeepTheChart(t *testing.T, dir, valuesFile string) {
	stock, err := renderChart(t, dir, "volcano", "1.35.3", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := renderChart(t, dir, "volcano", "1.35.3", nil, readValues(t, valuesFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stock.keys(), ours.keys()); diff != "" {
		t.Fatalf("objects (-stock +with volcano-values.yaml):\n%s", diff)
	}
	const (
		controllers   = "Deployment/volcano-controllers"
		admission     = "Deployment/volcano-admission"
		scheduler     = "Deployment/volcano-scheduler"
		admissionInit = "Job/volcano-admission-init"
	)
	for _, key := range stock.keys() {
		if key == controllers || key == admission || key == scheduler || key == admissionInit {
			continue
		}
		if diff := cmp.Diff(stock.docs[key], ours.docs[key]); diff != "" {
			t.Errorf("%s changed (-stock +with volcano-values.yaml):\n%s", key, diff)
		}
	}

	// What the stock chart configures that the managers must keep (and
	// this project's managers must accept): Volcano v1.15's arguments
	// (v1.14's chart has no sharding ConfigMap).
	sc := decode[appsv1.Deployment](t, stock, controllers)
	sa := decode[appsv1.Deployment](t, stock, admission)
	wantArgs := []string{"--enable-metrics=true", "--kube-api-qps=50", "--kube-api-burst=100"}
	if chartHasValue(t, dir, "custom", "sharding_configmap_enable") {
		wantArgs = append(wantArgs, "--sharding-configmap=volcano-sharding-configmap")
	}
	for _, want := range wantArgs {
		if !slices.Contains(sc.Spec.Template.Spec.Containers[0].Args, want) {
			t.Errorf("Volcano's chart no longer passes the controller manager %s: %q", want, sc.Spec.Template.Spec.Containers[0].Args)
		}
	}
	if args := strings.Join(sa.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--enabled-admission=/jobs/mutate,/jobs/validate,/podgroups/validate,") {
		t.Errorf("Volcano's chart's webhook manager arguments: %s", args)
	}

	// The Deployments: ours with the fields the values set put back to the
	// stock ones equal the stock ones.
	oc := decode[appsv1.Deployment](t, ours, controllers)
	ctr := &oc.Spec.Template.Spec.Containers[0]
	var limits []string
	ctr.Args = slices.DeleteFunc(ctr.Args, func(a string) bool {
		if strings.HasPrefix(a, "--kube-api-qps=") || strings.HasPrefix(a, "--kube-api-burst=") {
			limits = append(limits, a)
			return true
		}
		return false
	})
	if diff := cmp.Diff([]string{"--kube-api-qps=500", "--kube-api-burst=1000"}, limits); diff != "" {
		t.Errorf("controller manager API client limits (-want +got):\n%s", diff)
	}
	stockCtr := &sc.Spec.Template.Spec.Containers[0]
	stockCtr.Args = slices.DeleteFunc(stockCtr.Args, func(a string) bool {
		return strings.HasPrefix(a, "--kube-api-qps=") || strings.HasPrefix(a, "--kube-api-burst=")
	})
	if got := ctr.Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("4Gi")) != 0 || ctr.Resources.Requests.Memory().IsZero() {
		t.Errorf("%s resources %v, want a memory request and a 4Gi limit", controllers, ctr.Resources)
	}
	ctr.Resources = stockCtr.Resources
	takeGoMemLimit(t, controllers, ctr)
	restoreStockPod(&sc.Spec.Template.Spec, &oc.Spec.Template.Spec)
	if diff := cmp.Diff(sc, oc); diff != "" {
		t.Errorf("%s differs beyond image, security contexts, API limits and resources (-stock +ours):\n%s", controllers, diff)
	}

	oa := decode[appsv1.Deployment](t, ours, admission)
	if oa.Spec.Replicas == nil || *oa.Spec.Replicas != 2 {
		t.Errorf("%s replicas %v, want 2", admission, oa.Spec.Replicas)
	}
	if got := oa.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("%s memory limit %s, want 1Gi", admission, got.String())
	}
	checkSpread(t, admission, oa.Spec.Template.Spec.Affinity)
	oa.Spec.Replicas = sa.Spec.Replicas
	oa.Spec.Template.Spec.Containers[0].Resources = sa.Spec.Template.Spec.Containers[0].Resources
	oa.Spec.Template.Spec.Affinity = sa.Spec.Template.Spec.Affinity
	takeGoMemLimit(t, admission, &oa.Spec.Template.Spec.Containers[0])
	restoreStockPod(&sa.Spec.Template.Spec, &oa.Spec.Template.Spec)
	if diff := cmp.Diff(sa, oa); diff != "" {
		t.Errorf("%s differs beyond image, security contexts, replicas, resources and affinity (-stock +ours):\n%s", admission, diff)
	}

	// The scheduler: only the image (ours, Volcano's scheduler under our
	// name and tag) and the GOMEMLIMIT that go_memlimit_enable gives every
	// manager (its limit, or node memory without one); it keeps the chart's
	// security contexts.
	ss := decode[appsv1.Deployment](t, stock, scheduler)
	osch := decode[appsv1.Deployment](t, ours, scheduler)
	osch.Spec.Template.Spec.Containers[0].Image = ss.Spec.Template.Spec.Containers[0].Image
	takeGoMemLimit(t, scheduler, &osch.Spec.Template.Spec.Containers[0])
	if diff := cmp.Diff(ss, osch); diff != "" {
		t.Errorf("%s differs beyond the image (-stock +ours):\n%s", scheduler, diff)
	}

	sj := decode[batchv1.Job](t, stock, admissionInit)
	oj := decode[batchv1.Job](t, ours, admissionInit)
	// The chart gives the hook the admission pods' resources too.
	oj.Spec.Template.Spec.Containers[0].Resources = sj.Spec.Template.Spec.Containers[0].Resources
	// And their affinity.
	oj.Spec.Template.Spec.Affinity = sj.Spec.Template.Spec.Affinity
	restoreStockPod(&sj.Spec.Template.Spec, &oj.Spec.Template.Spec)
	if diff := cmp.Diff(sj, oj); diff != "" {
		t.Errorf("%s differs beyond image, security contexts, resources and affinity (-stock +ours):\n%s", admissionInit, diff)
	}
}

// checkSpread: the admission pods prefer different nodes (#38 L7), and
// only prefer: a one-node cluster runs both.
func checkSpread(t *testing.T, what string, a *corev1.Affinity) {
	t.Helper()
	want := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
			TopologyKey:   "kubernetes.io/hostname",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "volcano-admission"}},
		}}},
	}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("%s affinity (-want +got):\n%s", what, diff)
	}
}

// restoreStockPod puts the stock pod's image and security contexts (pod and
// first container) into ours; the Pod Security Standard check of those is
// installer/manifests_test.go's.
// takeGoMemLimit checks that ctr has GOMEMLIMIT from its memory limit, in
// bytes (volcano-values.yaml's go_memlimit_enable; security round 4, H2), and
// removes it, so that the rest compares with the stock chart's.
func takeGoMemLimit(t *testing.T, what string, ctr *corev1.Container) {
	t.Helper()
	want := corev1.EnvVar{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
		Resource: "limits.memory", Divisor: resource.MustParse("1")}}}
	i := slices.IndexFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == want.Name })
	if i < 0 {
		t.Errorf("%s: no GOMEMLIMIT in %v", what, ctr.Env)
		return
	}
	if diff := cmp.Diff(want, ctr.Env[i]); diff != "" {
		t.Errorf("%s: GOMEMLIMIT (-want +got):\n%s", what, diff)
	}
	ctr.Env = slices.Delete(ctr.Env, i, i+1)
	if len(ctr.Env) == 0 {
		ctr.Env = nil
	}
}

func restoreStockPod(stock, ours *corev1.PodSpec) {
	ours.SecurityContext = stock.SecurityContext
	ours.Containers[0].Image = stock.Containers[0].Image
	ours.Containers[0].SecurityContext = stock.Containers[0].SecurityContext
}
