package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
)

func TestStructureOver(t *testing.T) {
	list := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	members := func(n int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":1`, i)
		}
		b.WriteByte('}')
		return b.String()
	}
	review := func(object string) string { return `{"request":{"uid":"u","object":` + object + `}}` }
	for _, tc := range []struct {
		name, json string
		want       string
		notObject  bool
	}{
		{name: "a small review", json: review(`{"spec":{"tasks":[{"name":"a"},{"name":"b"}]}}`)},
		{name: "a list at the bound", json: review(`{"spec":{"tasks":` + list(MaxJSONEntries, "{}") + `}}`)},
		{name: "a list over the bound", json: review(`{"spec":{"tasks":` + list(MaxJSONEntries+1, "{}") + `}}`),
			want: "request.object.spec.tasks has more than 16384 elements (at most 16384)"},
		{name: "a list of numbers over the bound", json: review(`{"a":` + list(MaxJSONEntries+1, "-1.5e3") + `}`),
			want: "request.object.a has more than 16384 elements (at most 16384)"},
		{name: "a list of lists", json: review(`{"a":[` + list(3, "[]") + "," + list(MaxJSONEntries+1, "null") + `]}`),
			want: "request.object.a[1] has more than 16384 elements (at most 16384)"},
		{name: "an object over the bound", json: review(`{"metadata":{"labels":` + members(MaxJSONEntries+1) + `}}`),
			want: "request.object.metadata.labels has more than 16384 members (at most 16384)"},
		{name: "brackets, commas and colons in strings count for nothing",
			json: review(`{"a":["` + strings.Repeat(`[,:{\"`, MaxJSONEntries) + `"]}`)},
		{name: "a key with brackets", json: review(`{"a[0]":` + list(MaxJSONEntries+1, "1") + `}`),
			want: "request.object.a[0] has more than 16384 elements (at most 16384)"},
		{name: "entries in all over the bound", json: review(`{"a":[` + strings.Repeat(list(MaxJSONEntries, "1")+",", MaxReviewEntries/MaxJSONEntries) + `1]}`),
			want: "the review has more than 131072 array elements and object members in all (at most 131072; the 131073th at request.object.a[7])"},
		{name: "nested at the bound", json: review(strings.Repeat("[", MaxJSONDepth-2) + strings.Repeat("]", MaxJSONDepth-2))},
		{name: "nested over the bound", json: review(strings.Repeat("[", MaxJSONDepth-1) + strings.Repeat("]", MaxJSONDepth-1)),
			want: "request.object" + strings.Repeat("[0]", MaxJSONDepth-2) + " is nested more than 128 deep (at most 128)"},
		{name: "YAML", json: "request:\n  uid: u\n", notObject: true},
		{name: "a list", json: "[{}]", notObject: true},
		{name: "empty", json: " \n", notObject: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over, isObject := structureOver([]byte(tc.json))
			if diff := cmp.Diff(tc.want, over); diff != "" {
				t.Errorf("over (-want +got):\n%s", diff)
			}
			if isObject == tc.notObject {
				t.Errorf("isObject = %v", isObject)
			}
		})
	}
}

// randomJSON writes a random JSON value of at most depth levels, with
// strings that hold JSON's structural characters and escapes.
func randomJSON(r *rand.Rand, b *bytes.Buffer, depth int) {
	switch k := r.IntN(8); {
	case depth > 0 && k < 2:
		b.WriteByte('[')
		for i, n := 0, r.IntN(6); i < n; i++ {
			if i > 0 {
				b.WriteString(pick(r, ",", " , ", ",\n"))
			}
			randomJSON(r, b, depth-1)
		}
		b.WriteByte(']')
	case depth > 0 && k < 4:
		b.WriteByte('{')
		for i, n := 0, r.IntN(6); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, `"k%d%s"%s`, i, pick(r, "", `\"`, "[", "{", ":", ",", `\\`, `\u005d`), pick(r, ":", " : "))
			randomJSON(r, b, depth-1)
		}
		b.WriteByte('}')
	case k == 4:
		b.WriteString(pick(r, `"a"`, `"[{,:}]"`, `"\"]"`, `"\\"`, `"\\\""`, `"é\u00e9"`, `""`))
	case k == 5:
		b.WriteString(pick(r, "0", "-12.5e+3", "1E9", "true", "false", "null"))
	default:
		b.WriteString(pick(r, "[]", "{}", " [ ] ", "{ }"))
	}
}

func pick(r *rand.Rand, from ...string) string { return from[r.IntN(len(from))] }

// counts returns the most entries of one array or object of a decoded JSON
// value, their total, and its depth: what structureOver measures, by
// another route.
func counts(v any) (most, total, depth int) {
	var n int
	var children []any
	switch v := v.(type) {
	case []any:
		n, children = len(v), v
	case map[string]any:
		n = len(v)
		for _, c := range v {
			children = append(children, c)
		}
	default:
		return 0, 0, 0
	}
	most, total = n, n
	for _, c := range children {
		m, t, d := counts(c)
		most, total, depth = max(most, m), total+t, max(depth, d)
	}
	return most, total, depth + 1
}

// On generated JSON, structureOver passes a bound exactly when the decoded
// value does (bounds lowered for the test by using small values: the counts
// are compared with what encoding/json decodes). Keys never repeat in a
// generated object, so the decoder keeps every member.
func TestStructureOverAgreesWithDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 7))
	for i := 0; i < 3000; i++ {
		var b bytes.Buffer
		b.WriteString(`{"request":{"object":`)
		randomJSON(r, &b, 4)
		b.WriteString(`}}`)
		var v any
		if err := json.Unmarshal(b.Bytes(), &v); err != nil {
			t.Fatalf("generated invalid JSON %s: %v", b.String(), err)
		}
		most, total, depth := scanCounts(b.Bytes())
		wantMost, wantTotal, wantDepth := counts(v)
		if most != wantMost || total != wantTotal || depth != wantDepth {
			t.Fatalf("%s: scanned most %d, total %d, depth %d; decoded %d, %d, %d", b.String(), most, total, depth, wantMost, wantTotal, wantDepth)
		}
	}
}

// scanCounts finds, by bisecting structureOver's bounds, the counts it
// measures: the smallest bounds it does not pass.
func scanCounts(raw []byte) (most, total, depth int) {
	defer func(e, r, d int) { maxJSONEntries, maxReviewEntries, maxJSONDepth = e, r, d }(maxJSONEntries, maxReviewEntries, maxJSONDepth)
	find := func(set func(int)) int {
		for n := 0; ; n++ {
			set(n)
			if over, _ := structureOver(raw); over == "" {
				set(1 << 20)
				return n
			}
		}
	}
	maxReviewEntries, maxJSONDepth = 1<<20, 1<<20
	most = find(func(n int) { maxJSONEntries = n })
	total = find(func(n int) { maxReviewEntries = n })
	depth = find(func(n int) { maxJSONDepth = n })
	return most, total, depth
}

// BoundStructure answers a review over the bounds with a denial carrying
// the request's uid, wherever the uid is and however deep the rest is
// nested; other bodies reach the handler whole.
func TestBoundStructure(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	long := "[" + strings.Repeat("1,", MaxJSONEntries) + "1]"
	for _, tc := range []struct {
		name, body string
		answer     func(*admissionv1.AdmissionRequest, string) *admissionv1.AdmissionResponse
		wantCode   int
		wantReach  bool
		want       *admissionv1.AdmissionResponse
	}{
		{name: "within", body: `{"request":{"uid":"u1","object":{}}}`, wantCode: http.StatusOK, wantReach: true},
		{name: "nested 20,000 deep, uid after it", body: `{"request":{"object":{"x":` + deep + `},"uid":"u2"}}`, wantCode: http.StatusOK,
			want: denial(StructureDenialPrefix + "request.object.x" + strings.Repeat("[0]", MaxJSONDepth-3) + " is nested more than 128 deep (at most 128)")},
		{name: "answered by the path's answer", body: `{"request":{"uid":"u3","operation":"DELETE","object":{"x":` + long + `}}}`, wantCode: http.StatusOK,
			answer: func(req *admissionv1.AdmissionRequest, over string) *admissionv1.AdmissionResponse {
				return &admissionv1.AdmissionResponse{Allowed: req.Operation == admissionv1.Delete && strings.HasPrefix(over, "request.object.x has more than")}
			},
			want: &admissionv1.AdmissionResponse{Allowed: true}},
		{name: "YAML", body: "request:\n  uid: u4\n", wantCode: http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reached := false
			h := CapBody(VolcanoMaxBody, BoundStructure(VolcanoMaxBody, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached = true
				var got bytes.Buffer
				_, _ = got.ReadFrom(r.Body)
				if got.String() != tc.body {
					t.Errorf("the handler read %d bytes, not the body's %d", got.Len(), len(tc.body))
				}
			}), tc.answer))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode || reached != tc.wantReach {
				t.Fatalf("HTTP %d, reached %v; want %d, %v: %.300s", rec.Code, reached, tc.wantCode, tc.wantReach, rec.Body.String())
			}
			if tc.want == nil {
				return
			}
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			tc.want.UID = out.Response.UID
			if !strings.Contains(tc.body, `"uid":"`+string(out.Response.UID)+`"`) || out.Response.UID == "" {
				t.Errorf("answered uid %q", out.Response.UID)
			}
			if diff := cmp.Diff(tc.want, out.Response); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" {
				t.Errorf("answered %s %s", out.APIVersion, out.Kind)
			}
		})
	}
}
