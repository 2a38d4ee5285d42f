package webhook

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	jsonpatch "github.com/evanphx/json-patch"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// rawVariants returns base (a JSON object) with every object and array in it,
// at every level, in turn set to null, left out (object members) and emptied,
// keyed by a description ("/spec/tasks/0/template: null").
func rawVariants(t *testing.T, base []byte) map[string][]byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(base, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	var walk func(path []string, node any)
	walk = func(path []string, node any) {
		var children []string
		switch n := node.(type) {
		case map[string]any:
			for k := range n {
				children = append(children, k)
			}
			sort.Strings(children)
		case []any:
			for i := range n {
				children = append(children, fmt.Sprint(i))
			}
		default:
			return
		}
		if len(path) > 0 {
			_, isObject := node.(map[string]any)
			empty := any([]any{})
			if isObject {
				empty = map[string]any{}
			}
			edits := map[string]func(parent any, key string){
				"null":  func(parent any, key string) { set(parent, key, nil) },
				"empty": func(parent any, key string) { set(parent, key, empty) },
			}
			if _, parentIsObject := parentOf(doc, path).(map[string]any); parentIsObject {
				edits["missing"] = func(parent any, key string) { delete(parent.(map[string]any), key) }
			}
			for name, edit := range edits {
				var copyDoc any
				_ = json.Unmarshal(base, &copyDoc)
				edit(parentOf(copyDoc, path), path[len(path)-1])
				raw, _ := json.Marshal(copyDoc)
				out[pointer(path)+": "+name] = raw
			}
		}
		for _, c := range children {
			child, _ := member(node, c)
			walk(append(append([]string(nil), path...), c), child)
		}
	}
	walk(nil, doc)
	return out
}

func parentOf(doc any, path []string) any {
	v, _ := memberPath(doc, path[:len(path)-1])
	return v
}

func set(parent any, key string, v any) {
	switch p := parent.(type) {
	case map[string]any:
		p[key] = v
	case []any:
		var i int
		fmt.Sscan(key, &i)
		p[i] = v
	}
}

// The mutation's patch applies to the object as the API server sent it, with
// null, missing and empty objects and arrays at every level of a Job, and
// leaves fields the Job types do not know alone. It used to be computed
// against the re-encoded struct: "add operation does not apply:
// .../template/spec/restartPolicy" on `template: null`, which the API server
// reports as an internal error.
func TestMutationPatchAppliesToRawObject(t *testing.T) {
	base := mkJob("raw").SchedulerName("").
		Task(jobtest.MakeTask("ps", 1).RestartPolicy("").Obj()).
		Task(jobtest.MakeTask("worker", 2).GPU(1).RestartPolicy("").Obj()).
		Plugin("tensorflow").Obj()
	var doc map[string]any
	_ = json.Unmarshal(mustJSON(t, base), &doc)
	// A field of a newer API version, which the mutation must keep.
	doc["spec"].(map[string]any)["tasks"].([]any)[1].(map[string]any)["futureField"] = map[string]any{"keep": true}
	baseRaw, _ := json.Marshal(doc)

	variants := rawVariants(t, baseRaw)
	if len(variants) < 60 {
		t.Fatalf("%d variants; the walk missed levels", len(variants))
	}
	variants["as written"] = baseRaw
	for name, raw := range variants {
		t.Run(name, func(t *testing.T) {
			job := &batch.Job{}
			if err := json.Unmarshal(raw, job); err != nil {
				t.Skipf("not a Job: %v", err)
			}
			ar := review(t, admissionv1.Create, job, nil)
			ar.Request.Object = runtime.RawExtension{Raw: raw}
			resp := serveReview(t, MutateService(Options{}).Handler, ar)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			patched := raw
			if len(resp.Patch) > 0 {
				p, err := jsonpatch.DecodePatch(resp.Patch)
				if err != nil {
					t.Fatalf("patch %s: %v", resp.Patch, err)
				}
				if patched, err = p.Apply(raw); err != nil {
					t.Fatalf("patch %s does not apply to %s: %v", resp.Patch, raw, err)
				}
			}
			got := &batch.Job{}
			if err := json.Unmarshal(patched, got); err != nil {
				t.Fatal(err)
			}
			want, _ := MutateJob(job, Options{SchedulerName: DefaultSchedulerName})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patched job (-want +got):\n%s", diff)
			}
			// Whatever raw has there, the patch keeps.
			future := []string{"spec", "tasks", "1", "futureField"}
			var rawDoc, patchedDoc any
			_ = json.Unmarshal(raw, &rawDoc)
			_ = json.Unmarshal(patched, &patchedDoc)
			before, hadIt := memberPath(rawDoc, future)
			after, hasIt := memberPath(patchedDoc, future)
			if diff := cmp.Diff(before, after); diff != "" || hadIt != hasIt {
				t.Errorf("the patch changed a field the types do not know (-before +after):\n%s", diff)
			}
		})
	}
}
