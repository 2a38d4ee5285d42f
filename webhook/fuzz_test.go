package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// maxResponseTime bounds one admission call in the fuzz test. The webhook's
// timeout is 10 s; admission of any Job takes milliseconds.
const maxResponseTime = 2 * time.Second

// FuzzAdmission feeds generated Jobs through both admissions' HTTP handlers,
// as the API server calls them: the mutation on the raw AdmissionReview of a
// CREATE, its patch applied to the raw object, then the validation of the
// result on CREATE and as an UPDATE of the original. It fails on a panic
// (recovered ones included: an internal-error denial), a response that is not
// a 200 with an AdmissionReview, a patch that does not apply (which the API
// server reports as an internal error), and a call over maxResponseTime.
//
// Inputs are a Job (JSON; the seeds are the e2e corpus of invalid Jobs and the
// valid examples) and choices that edit it: task counts and names, replicas
// (negative and huge included), minAvailable, null or missing templates and
// plugin lists, plugin arguments drawn from the plugins' real flags and
// plausible values. An input that is not a JSON object starts from a Job
// chosen by the first choice.
//
//	go test -run XXX -fuzz FuzzAdmission -fuzztime 60s ./webhook/
func FuzzAdmission(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{"../test/e2e/testdata/invalid/*.yaml", "../test/e2e/testdata/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		seeds = append(seeds, files...)
	}
	for i, file := range seeds {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		f.Add(js, []byte{})
		f.Add(js, []byte{byte(i), 1, byte(i), 3, 0, 7, 2, byte(i * 7), 11, 4})
	}
	f.Add([]byte("null"), []byte{0, 2, 1, 0, 2, 5, 0})
	f.Add([]byte(""), []byte{1, 3, 0, 1, 9, 2, 1, 0, 3})
	f.Add([]byte("{}"), []byte{2, 6, 4, 1, 8, 6, 0, 2, 12, 1})
	f.Add([]byte("[]"), []byte{3, 8, 10, 0, 0, 1, 5, 1, 0, 12, 0})

	mutateH, validateH := MutateService(Options{}).Handler, ValidateService().Handler
	f.Fuzz(func(t *testing.T, base, choices []byte) {
		c := &chooser{b: choices}
		doc := fuzzJob(base, c)
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Skip()
		}
		create := fuzzReview(admissionv1.Create, raw, nil)
		mutated := fuzzCall(t, "mutation", mutateH, create)
		if !mutated.Allowed {
			// Only a Job that does not decode is denied by the mutation.
			return
		}
		patched := raw
		if len(mutated.Patch) > 0 {
			p, err := jsonpatch.DecodePatch(mutated.Patch)
			if err != nil {
				t.Fatalf("patch %s: %v", mutated.Patch, err)
			}
			if patched, err = p.Apply(raw); err != nil {
				t.Fatalf("patch %s does not apply to %s: %v", mutated.Patch, raw, err)
			}
		}
		fuzzCall(t, "validation of the create", validateH, fuzzReview(admissionv1.Create, patched, nil))
		fuzzCall(t, "validation of an update", validateH, fuzzReview(admissionv1.Update, patched, raw))
	})
}

// fuzzCall posts ar to an admission handler and checks the answer.
func fuzzCall(t *testing.T, what string, h func(http.ResponseWriter, *http.Request), ar []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(ar)))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	h(rec, req)
	if d := time.Since(start); d > maxResponseTime {
		t.Errorf("%s took %v, more than %v", what, d, maxResponseTime)
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", what, rec.Code, rec.Body)
	}
	out := admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("%s: response %s: %v", what, rec.Body, err)
	}
	resp := out.Response
	if resp.UID != "fuzz" {
		t.Errorf("%s: response UID %q", what, resp.UID)
	}
	if !resp.Allowed {
		if resp.Result == nil || resp.Result.Message == "" {
			t.Fatalf("%s: denial without a message: %+v", what, resp)
		}
		if resp.Result.Code >= 500 || strings.Contains(resp.Result.Message, InternalErrorPrefix) {
			t.Fatalf("%s: %d %s", what, resp.Result.Code, resp.Result.Message)
		}
	}
	return resp
}

func fuzzReview(op admissionv1.Operation, object, old []byte) []byte {
	req := &admissionv1.AdmissionRequest{
		UID:       "fuzz",
		Kind:      metav1.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"},
		Resource:  jobsResource,
		Namespace: "fuzz",
		Operation: op,
		Object:    runtime.RawExtension{Raw: object},
	}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: old}
	}
	raw, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	return raw
}

// chooser hands out the fuzzer's choices; past their end every choice is 0.
type chooser struct{ b []byte }

func (c *chooser) next() int {
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return v
}

func (c *chooser) intn(n int) int { return c.next() % n }

func pick[T any](c *chooser, from []T) T { return from[c.intn(len(from))] }

var (
	fuzzTaskNames = []string{"ps", "worker", "chief", "evaluator", "master", "scheduler", "server", "launcher", "a", "b", "",
		"Worker_1", "tf.v2", "w-1", "w_1", strings.Repeat("x", 70)}
	fuzzReplicas = []int64{0, 1, 2, 3, 8, -1, -2147483648, 2147483647, 99999, 100000, 100001, 8000, 65536, 4000}
	fuzzValues   = []string{"ps", "worker", "chief", "evaluator", "master", "scheduler", "server", "a", "", " ",
		"0", "1", "-1", "2", "65535", "65536", "1048577", "2147483648", "auto", "gpu", "cpu", "true", "false", "maybe",
		"5m", "-5s", "300", "1y", "intel", "openmpi", "mpich", "MPICH", "busybox:1.36.1", "x y", "c10d"}
	fuzzFlags = map[string][]string{
		"tensorflow": {"ps", "worker", "chief", "evaluator", "port", "wait", "wait-timeout", "wait-image"},
		"pytorch": {"master", "worker", "port", "nproc-per-node", "min-nodes", "max-nodes", "rdzv-backend", "max-restarts",
			"wait", "wait-timeout", "wait-image", "wait-master-port", "wait-master-enabled", "wait-master-timeout", "wait-master-image"},
		"mpi":   {"master", "worker", "port", "mpi-implementation", "slots-per-worker", "launcher-as-worker", "wait", "wait-timeout", "wait-image"},
		"mxnet": {"scheduler", "server", "worker", "port", "wait", "wait-timeout", "wait-image"},
		"svc":   {"publish-not-ready-addresses", "disable-network-policy"},
		"ssh":   {"no-root", "ssh-key-file-path"},
	}
	fuzzPlugins = []string{"tensorflow", "pytorch", "mpi", "mxnet", "svc", "ssh", "env"}
	fuzzBases   = [][2]any{
		{"tensorflow", []string{"ps", "worker"}}, {"pytorch", []string{"master", "worker"}},
		{"mpi", []string{"master", "worker"}}, {"mxnet", []string{"scheduler", "server", "worker"}},
	}
)

// fuzzArg is an argument for plugin: mostly --flag=value of a real flag, and
// the other spellings and mistakes users make.
func fuzzArg(c *chooser, plugin string) string {
	flags := fuzzFlags[plugin]
	if len(flags) == 0 {
		flags = []string{"bogus"}
	}
	flag, value := pick(c, flags), pick(c, fuzzValues)
	switch c.intn(8) {
	case 0:
		return "--" + flag
	case 1:
		return "--" + flag + " " + value
	case 2:
		return "-" + flag + "=" + value
	case 3:
		return flag
	case 4:
		return "--" + flag[:len(flag)/2+1] + "=" + value
	}
	return "--" + flag + "=" + value
}

func fuzzTask(c *chooser, name string, replicas int64) map[string]any {
	container := map[string]any{"name": "main", "image": "train:latest"}
	if c.intn(3) == 0 {
		n := strconv.Itoa(c.intn(9))
		container["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": n}}
	}
	return map[string]any{
		"name": name, "replicas": replicas,
		"template": map[string]any{"spec": map[string]any{"containers": []any{container}}},
	}
}

// fuzzJob decodes base as a JSON object, or makes a Job, and edits it.
func fuzzJob(base []byte, c *chooser) map[string]any {
	var doc map[string]any
	if json.Unmarshal(base, &doc) != nil || doc == nil {
		b := pick(c, fuzzBases)
		var tasks []any
		for _, name := range b[1].([]string) {
			tasks = append(tasks, fuzzTask(c, name, pick(c, fuzzReplicas)))
		}
		doc = map[string]any{
			"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
			"metadata": map[string]any{"name": "fuzz"},
			"spec":     map[string]any{"plugins": map[string]any{b[0].(string): []any{}}, "tasks": tasks},
		}
	}
	if m, ok := doc["metadata"].(map[string]any); ok {
		m["namespace"] = "fuzz"
		m["uid"] = "uid-fuzz"
		m["generation"] = 2
	}
	spec, _ := doc["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		doc["spec"] = spec
	}
	tasks, _ := spec["tasks"].([]any)
	task := func() map[string]any {
		if len(tasks) == 0 {
			return nil
		}
		t, _ := tasks[c.intn(len(tasks))].(map[string]any)
		return t
	}
	plugins, _ := spec["plugins"].(map[string]any)
	if plugins == nil {
		plugins = map[string]any{}
		spec["plugins"] = plugins
	}
	for edits := c.intn(12); edits > 0; edits-- {
		switch c.intn(14) {
		case 0:
			if t := task(); t != nil {
				t["replicas"] = pick(c, fuzzReplicas)
			}
		case 1:
			if t := task(); t != nil {
				t["template"] = nil
			}
		case 2:
			if t := task(); t != nil {
				if tmpl, ok := t["template"].(map[string]any); ok {
					delete(tmpl, "spec")
				} else {
					delete(t, "template")
				}
			}
		case 3:
			if t := task(); t != nil {
				t["minAvailable"] = pick(c, fuzzReplicas)
			}
		case 4:
			p := pick(c, fuzzPlugins)
			args, _ := plugins[p].([]any)
			plugins[p] = append(args, fuzzArg(c, p))
		case 5:
			p := pick(c, fuzzPlugins)
			plugins[p] = []any{nil, []any{}}[c.intn(2)]
		case 6:
			tasks = append(tasks, fuzzTask(c, pick(c, fuzzTaskNames), pick(c, fuzzReplicas)))
		case 7:
			if t := task(); t != nil {
				t["name"] = pick(c, fuzzTaskNames)
			}
		case 8:
			spec["minAvailable"] = pick(c, fuzzReplicas)
		case 9:
			if t := task(); t != nil {
				if tmpl, ok := t["template"].(map[string]any); ok {
					if s, ok := tmpl["spec"].(map[string]any); ok {
						s[[]string{"hostname", "subdomain"}[c.intn(2)]] = pick(c, fuzzTaskNames)
					}
				}
			}
		case 10:
			if t := task(); t != nil {
				t["dependsOn"] = map[string]any{"name": []any{pick(c, fuzzTaskNames)}}
			}
		case 11:
			if len(tasks) > 0 {
				tasks = tasks[:len(tasks)-1]
			}
		case 12:
			if t := task(); t != nil {
				t["policies"] = []any{map[string]any{"event": "TaskCompleted", "action": "CompleteJob"}}
			}
		case 13:
			if len(tasks) > 0 {
				tasks[c.intn(len(tasks))] = nil
			}
		}
	}
	spec["tasks"] = tasks
	return doc
}
