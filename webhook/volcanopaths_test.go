package webhook

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	jobflowvalidate "volcano.sh/volcano/pkg/webhooks/admission/jobflows/validate"
	"volcano.sh/volcano/pkg/webhooks/router"
)

var jobflowsResource = metav1.GroupVersionResource{Group: "flow.volcano.sh", Version: "v1alpha1", Resource: "jobflows"}

// flowReview is the review of op on a JobFlow of flows, each given as
// name → its dependsOn targets (nil: no dependsOn).
func flowReview(t testing.TB, op admissionv1.Operation, names []string, deps map[string][]string) admissionv1.AdmissionReview {
	t.Helper()
	var flows []map[string]any
	for _, n := range names {
		f := map[string]any{"name": n}
		if d, ok := deps[n]; ok && d != nil {
			f["dependsOn"] = map[string]any{"targets": d}
		}
		flows = append(flows, f)
	}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
		"metadata": map[string]any{"name": "flow", "namespace": "default"},
		"spec":     map[string]any{"flows": flows},
	})
	if err != nil {
		t.Fatal(err)
	}
	return admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
		UID: "u", Operation: op, Resource: jobflowsResource, Namespace: "default", Name: "flow", Object: runtime.RawExtension{Raw: raw},
	}}
}

// layered is a JobFlow of layers of width flows, every flow depending on
// every flow of the next layer: the paths double (width 2) with each layer.
func layered(flows, width int) ([]string, map[string][]string) {
	var names []string
	deps := map[string][]string{}
	for i := 0; i < flows; i++ {
		names = append(names, fmt.Sprintf("f%d", i))
	}
	for i, n := range names {
		layer := i / width
		for j := (layer + 1) * width; j < min((layer+2)*width, flows); j++ {
			deps[n] = append(deps[n], names[j])
		}
	}
	return names, deps
}

// JobFlowsAnswered gives Volcano's answer: on generated JobFlows small
// enough for Volcano's check (acyclic or not, with missing targets, self
// dependencies and repeated names), the wrapped validation answers as
// Volcano's own does.
func TestJobFlowsAnsweredAsVolcano(t *testing.T) {
	r := rand.New(rand.NewPCG(48, 2))
	wrapped := JobFlowsAnswered(jobflowvalidate.AdmitJobFlows)
	var cyclic, acyclic, missing int
	for i := 0; i < 2000; i++ {
		n := 1 + r.IntN(9)
		var names []string
		for j := 0; j < n; j++ {
			names = append(names, fmt.Sprintf("f%d", r.IntN(n+1))) // names may repeat
		}
		deps := map[string][]string{}
		for _, name := range names {
			if r.IntN(3) == 0 {
				continue
			}
			for k := r.IntN(4); k > 0; k-- {
				deps[name] = append(deps[name], fmt.Sprintf("f%d", r.IntN(n+2))) // may be missing, or itself
			}
		}
		ar := flowReview(t, admissionv1.Create, names, deps)
		want := jobflowvalidate.AdmitJobFlows(ar)
		got := wrapped(ar)
		if want.Result != nil && strings.Contains(want.Result.Message, "not defined") {
			missing++
			// Volcano names one missing target, from a map: either may be named.
			want.Result.Message, got.Result.Message = "", ""
		} else if want.Allowed {
			acyclic++
		} else {
			cyclic++
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%v %v: (-Volcano +wrapped):\n%s", names, deps, diff)
		}
	}
	if cyclic == 0 || acyclic == 0 || missing == 0 {
		t.Errorf("generated %d cyclic, %d acyclic, %d with a missing target: want some of each", cyclic, acyclic, missing)
	}
}

// A JobFlow whose acyclic graph has more paths than MaxJobFlowPaths is
// answered without Volcano's check (which walks every path: layered flows of
// width 2, 48 flows took it 2.3 s, every 2 more double it), as Volcano
// would answer; a cyclic one is denied with Volcano's message.
func TestJobFlowsAnsweredLinear(t *testing.T) {
	volcano := func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "reached Volcano"}}
	}
	wrapped := JobFlowsAnswered(volcano)
	names60, deps60 := layered(60, 2)
	cycle := map[string][]string{}
	for k, v := range deps60 {
		cycle[k] = v
	}
	cycle["f59"] = []string{"f0"}
	names8, deps8 := layered(8, 2)
	for _, tc := range []struct {
		name string
		ar   admissionv1.AdmissionReview
		want *admissionv1.AdmissionResponse
	}{
		{"60 layered flows", flowReview(t, admissionv1.Create, names60, deps60), &admissionv1.AdmissionResponse{Allowed: true}},
		{"60 layered flows and a cycle", flowReview(t, admissionv1.Update, names60, cycle),
			&admissionv1.AdmissionResponse{Result: &metav1.Status{Message: jobflowvalidate.FlowNotDAGError.Error()}}},
		{"8 layered flows: Volcano's check", flowReview(t, admissionv1.Create, names8, deps8),
			&admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "reached Volcano"}}},
		{"a missing target: Volcano's check", flowReview(t, admissionv1.Create, []string{"a"}, map[string][]string{"a": {"b"}}),
			&admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "reached Volcano"}}},
		{"DELETE: Volcano's check", flowReview(t, admissionv1.Delete, names60, deps60),
			&admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "reached Volcano"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, wrapped(tc.ar)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// countPaths counts what Volcano's check walks: the calls of its
// recursion, from every flow, on small layered graphs.
func TestCountPaths(t *testing.T) {
	for _, tc := range []struct {
		flows, width, want int
	}{
		// One flow: itself. A chain of 3: 3 + 2 + 1.
		{1, 1, 1},
		{3, 1, 6},
		// Layers of 2, 3 layers: the last layer 1 each, the middle 1+2,
		// the first 1+2×3: 2×1 + 2×3 + 2×7.
		{6, 2, 22},
		{60, 2, MaxJobFlowPaths + 1},
	} {
		names, deps := layered(tc.flows, tc.width)
		graph := map[string][]string{}
		for _, n := range names {
			graph[n] = deps[n]
		}
		got, acyclic := countPaths(graph)
		if got != tc.want || !acyclic {
			t.Errorf("%d flows in layers of %d: %d paths, acyclic %v; want %d", tc.flows, tc.width, got, acyclic, tc.want)
		}
	}
}

// BenchmarkVolcanoJobFlowCheck measures Volcano's own check on layered
// flows, for the record of why JobFlowsAnswered exists.
func BenchmarkVolcanoJobFlowCheck(b *testing.B) {
	for _, flows := range []int{20, 30, 36} {
		names, deps := layered(flows, 2)
		ar := flowReview(b, admissionv1.Create, names, deps)
		for _, f := range []struct {
			name  string
			admit router.AdmitFunc
		}{{"volcano", jobflowvalidate.AdmitJobFlows}, {"wrapped", JobFlowsAnswered(jobflowvalidate.AdmitJobFlows)}} {
			b.Run(fmt.Sprintf("%s/%d", f.name, flows), func(b *testing.B) {
				for b.Loop() {
					f.admit(ar)
				}
			})
		}
	}
}
