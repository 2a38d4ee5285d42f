package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// Bounds on the structure of an AdmissionReview that one of Volcano's
// admission paths is sent, checked on the body's bytes before anything
// decodes it (BoundStructure). Decoding JSON into Kubernetes's and
// Volcano's types costs up to about 900 bytes for each two-byte empty
// object ({} as a task: a TaskSpec), so 3 MiB of them cost 1 to 3 GB
// (security review round 4, H1 and H2); within these bounds a review costs
// at most MaxReviewEntries of them, about 120 MB at the worst.
//
// The bounds sit far above any object the API server sends: a Job at every
// bound of pkg/jobs has about 20,000 entries, its managedFields as many
// again, and an UPDATE carries it twice; no Kubernetes or Volcano object has
// a list of more than a few thousand entries (bounds.MaxEnv, the longest list
// a Job's template may have, is 2,048), nor JSON nested 30 deep.
const (
	// MaxJSONEntries is the most elements of one JSON array, and the most
	// members of one JSON object, anywhere in a review.
	MaxJSONEntries = 16384
	// MaxReviewEntries is the most array elements and object members of a
	// whole review, object and oldObject together.
	MaxReviewEntries = 131072
	// MaxJSONDepth is the deepest nesting of arrays and objects in a
	// review (the review itself is depth 1, its object 3).
	MaxJSONDepth = 128
)

// The bounds structureOver applies: the constants, but for tests.
var maxJSONEntries, maxReviewEntries, maxJSONDepth = MaxJSONEntries, MaxReviewEntries, MaxJSONDepth

// StructureDenialPrefix starts the denial of a review over the structure
// bounds (MaxJSONEntries, MaxReviewEntries, MaxJSONDepth).
const StructureDenialPrefix = "the admission review is over the bounds vc-webhook-manager admits: "

// BoundStructure serves next only reviews within MaxJSONEntries,
// MaxReviewEntries and MaxJSONDepth, measured on the body's bytes before
// anything decodes it, whatever the path, the operation and the object (the
// request's object, oldObject and the review around them alike). A review
// over them is answered by answer when it is not nil and returns a response
// (given the review's request, its object and oldObject still raw, and
// where the bound is passed), else denied (allowed: false, 422,
// StructureDenialPrefix, then where: "request.object.spec.tasks has more
// than 16384 elements (at most 16384)"); either is written as Volcano's
// router writes its answers, with the request's uid. A body that is not a
// JSON object (the API server sends nothing else; Volcano's decoder would
// read YAML too, at many times the cost) is answered 400, and one over max
// bytes 413. It reads the body whole (as LimitInFlight and CapBody do, which
// hand it on without a copy).
func BoundStructure(max int64, next http.Handler, answer func(req *admissionv1.AdmissionRequest, over string) *admissionv1.AdmissionResponse) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, _, err := readWithin(w, r, max, nil)
		if err != nil {
			refuseBody(w, r, err)
			return
		}
		over, isObject := structureOver(body)
		switch {
		case !isObject:
			http.Error(w, "the body is not a JSON object: vc-webhook-manager reads AdmissionReviews in JSON", http.StatusBadRequest)
			return
		case over != "":
			klog.V(2).InfoS("An admission review over the structure bounds", "path", r.URL.Path, "over", over)
			req := rawRequest(body)
			if req.UID == "" {
				req.UID = requestUID(body)
			}
			var resp *admissionv1.AdmissionResponse
			if answer != nil {
				_ = protect("answering a review over the structure bounds", func() { resp = answer(req, over) })
			}
			if resp == nil {
				resp = denial(StructureDenialPrefix + over)
			}
			writeReview(w, req.UID, resp)
			return
		}
		r.Body = &bodyReader{b: body}
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// rawRequest returns the request of a review's JSON with its object and
// oldObject raw, nothing else of them decoded; an empty request when body
// does not read as a review.
func rawRequest(body []byte) *admissionv1.AdmissionRequest {
	var view struct {
		Request struct {
			UID       types.UID                   `json:"uid"`
			Resource  metav1.GroupVersionResource `json:"resource"`
			Operation admissionv1.Operation       `json:"operation"`
			Namespace string                      `json:"namespace"`
			Name      string                      `json:"name"`
			Object    json.RawMessage             `json:"object"`
			OldObject json.RawMessage             `json:"oldObject"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &view); err != nil {
		// The uid alone, when the rest does not read.
		var uid struct {
			Request struct {
				UID types.UID `json:"uid"`
			} `json:"request"`
		}
		_ = json.Unmarshal(body, &uid)
		return &admissionv1.AdmissionRequest{UID: uid.Request.UID}
	}
	v := view.Request
	req := &admissionv1.AdmissionRequest{UID: v.UID, Resource: v.Resource, Operation: v.Operation, Namespace: v.Namespace, Name: v.Name}
	req.Object.Raw, req.OldObject.Raw = v.Object, v.OldObject
	return req
}

// writeReview writes the AdmissionReview answering uid with resp, as
// Volcano's router writes it.
func writeReview(w http.ResponseWriter, uid types.UID, resp *admissionv1.AdmissionResponse) {
	resp.UID = uid
	out, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: resp,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// requestUID returns request.uid of a review's JSON found by scanning it,
// whatever its nesting (encoding/json refuses JSON nested over 10,000 deep,
// which a direct caller may send), or "".
func requestUID(raw []byte) types.UID {
	depth := 0
	var key1, key2 []byte // the current member names at depths 1 and 2
	wantKey := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			start := i + 1
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			str := raw[start:min(i, len(raw))]
			switch {
			case wantKey && depth == 1:
				key1 = str
			case wantKey && depth == 2:
				key2 = str
			case depth == 2 && string(key1) == "request" && string(key2) == "uid":
				var uid string
				if json.Unmarshal(raw[start-1:min(i+1, len(raw))], &uid) == nil {
					return types.UID(uid)
				}
			}
			wantKey = false
		case '{':
			depth++
			wantKey = true
		case '[':
			depth++
			wantKey = false
		case '}', ']':
			depth--
		case ',':
			wantKey = true
		}
	}
	return ""
}

// jsonFrame is an open JSON array or object while structureOver scans.
type jsonFrame struct {
	array bool
	// entries counted so far; want says a value (array) or a key (object)
	// may start next.
	entries int
	want    bool
	// key is the current member's name (object), as bytes of the body.
	key []byte
	// Where this frame is in its parent: the member name (a slice of the
	// body), or the element index when the parent is an array.
	name    []byte
	index   int
	inArray bool
}

// structureOver scans JSON for the structure bounds, allocating a frame per
// level of nesting and nothing per entry. It returns where the first bound
// is passed ("" when none is), and whether raw starts as a JSON object.
// Malformed JSON is scanned as far as it reads; whatever decodes it next
// refuses it.
func structureOver(raw []byte) (over string, isObject bool) {
	i := 0
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	if i == len(raw) || raw[i] != '{' {
		return "", false
	}
	stack := make([]jsonFrame, 0, 16)
	total := 0
	// count notes one more entry in the top frame.
	count := func() string {
		top := &stack[len(stack)-1]
		top.entries++
		total++
		switch {
		case top.entries > maxJSONEntries:
			what := "members"
			if top.array {
				what = "elements"
			}
			return fmt.Sprintf("%s has more than %d %s (at most %d)", framePath(stack), maxJSONEntries, what, maxJSONEntries)
		case total > maxReviewEntries:
			return fmt.Sprintf("the review has more than %d array elements and object members in all (at most %d; the %dth at %s)", maxReviewEntries, maxReviewEntries, total, framePath(stack))
		}
		return ""
	}
	// startValue is called where a value starts (not a key).
	startValue := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := &stack[len(stack)-1]
		if top.array && top.want {
			top.want = false
			return count()
		}
		return ""
	}
	for ; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '"':
			start := i + 1
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if len(stack) > 0 {
				if top := &stack[len(stack)-1]; !top.array && top.want {
					top.want = false
					top.key = raw[start:min(i, len(raw))]
					continue
				}
			}
			if o := startValue(); o != "" {
				return o, true
			}
		case '{', '[':
			if o := startValue(); o != "" {
				return o, true
			}
			f := jsonFrame{array: c == '[', want: true}
			if len(stack) > 0 {
				if top := &stack[len(stack)-1]; top.array {
					f.inArray, f.index = true, top.entries-1
				} else {
					f.name = top.key
				}
			}
			stack = append(stack, f)
			if len(stack) > maxJSONDepth {
				return fmt.Sprintf("%s is nested more than %d deep (at most %d)", framePath(stack), maxJSONDepth, maxJSONDepth), true
			}
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if len(stack) > 0 {
				stack[len(stack)-1].want = true
			}
		case ':':
			if len(stack) > 0 && !stack[len(stack)-1].array {
				if o := count(); o != "" {
					return o, true
				}
			}
		default:
			if !isSpace(c) {
				// A number, true, false or null: one value, whatever its
				// length.
				if o := startValue(); o != "" {
					return o, true
				}
				for i+1 < len(raw) && !isDelimiter(raw[i+1]) {
					i++
				}
			}
		}
	}
	return "", true
}

// framePath renders where the top frame is: request.object.spec.tasks[3].
func framePath(stack []jsonFrame) string {
	var b strings.Builder
	for i, f := range stack {
		if i == 0 {
			continue // the review
		}
		if f.inArray {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(jobs.Abbrev(string(f.name)))
	}
	if b.Len() == 0 {
		return "the review"
	}
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelimiter(c byte) bool {
	return isSpace(c) || c == ',' || c == ']' || c == '}' || c == ':' || c == '"' || c == '{' || c == '['
}
