package webhook

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"runtime/debug"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"volcano.sh/volcano/pkg/webhooks/router"
	"volcano.sh/volcano/pkg/webhooks/schema"

	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// InternalErrorPrefix starts the denial of a request whose admission failed
// inside this package (a panic): the request is denied, never answered with an
// HTTP error, so the API server shows the user what was being checked.
const InternalErrorPrefix = "plugin admission: internal error: "

// MaxReviewBytes bounds the body of an AdmissionReview the handlers read: what
// the API server can send. It limits a request body, hence the object, to
// 3 MiB (apiserver's MaxRequestBodyBytes), and it stores no object over etcd's
// 1.5 MiB request limit, so an UPDATE's old object is at most 1.5 MiB; a
// review is both, re-encoded as JSON (a YAML body can grow by its quoting),
// with a few KiB of request metadata. 6 MiB holds that with room.
const MaxReviewBytes = 6 << 20

// panicError is a recovered panic: what was being done, the value, and the
// stack where it happened.
type panicError struct {
	what  string
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("%s%s: %v", InternalErrorPrefix, e.what, e.value)
}

// protect runs f and returns a *panicError, logged with its stack, when f
// panics; nil otherwise.
func protect(what string, f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &panicError{what: what, value: v, stack: debug.Stack()}
			klog.ErrorS(nil, "Recovered from a panic in the framework job admission; the request is denied",
				"while", what, "panic", fmt.Sprint(v), "stack", string(pe.stack))
			err = pe
		}
	}()
	f()
	return nil
}

// denial is the response that denies a request with message (422 Invalid, as
// the validation's denials).
func denial(message string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{
		Allowed: false,
		Result: &metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusUnprocessableEntity,
			Reason:  metav1.StatusReasonInvalid,
			Message: message,
		},
	}
}

// guard wraps an admission so that a panic in it becomes a denial naming the
// operation and the object (InternalErrorPrefix), logged with its stack, and
// counted as metrics.ReasonInternal.
func guard(verb string, admit admitFunc) admitFunc {
	return func(ar admissionv1.AdmissionReview, v *verdict) (resp *admissionv1.AdmissionResponse) {
		what := verb + " a request without an object"
		if r := ar.Request; r != nil {
			what = fmt.Sprintf("%s %s %s/%s on %s", verb, r.Kind.Kind, r.Namespace, r.Name, r.Operation)
		}
		if err := protect(what, func() { resp = admit(ar, v) }); err != nil {
			v.reason = metrics.ReasonInternal
			return denial(err.Error())
		}
		return resp
	}
}

// handler serves an admission over HTTP. It takes the place of Volcano's
// router.Serve for this package's paths: that one dereferences the review's
// request after a body that does not decode or a review without a request
// (a panic net/http turns into a dropped connection, which the API server
// reports as a failed webhook call), and reads bodies of any size. Every
// response here is an AdmissionReview with status 200, except for a body that
// is not JSON (415) or over MaxReviewBytes (413), which the API server never
// sends; a panic anywhere in here is a denial too. Every request, those
// refused with an HTTP error included, is counted and timed in the metrics
// (record).
func handler(path string, admit admitFunc) router.AdmissionHandler {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var v verdict
		var resp *admissionv1.AdmissionResponse
		defer func() { record(path, &v, resp, start) }()
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			v.reason = metrics.ReasonBadRequest
			http.Error(w, "admission reviews are application/json", http.StatusUnsupportedMediaType)
			return
		}
		var body []byte
		if r.Body != nil {
			var err error
			if body, _, err = readWithin(w, r, MaxReviewBytes, nil); err != nil {
				v.reason = metrics.ReasonBadRequest
				refuseBody(w, r, err)
				return
			}
		}
		var uid types.UID
		if err := protect("serving "+path, func() {
			ar := admissionv1.AdmissionReview{}
			if _, _, err := schema.Codecs.UniversalDeserializer().Decode(body, nil, &ar); err != nil {
				resp = badRequest(&v, fmt.Errorf("decoding the admission review: %v", err))
				return
			}
			if ar.Request != nil {
				uid = ar.Request.UID
			}
			resp = admit(ar, &v)
		}); err != nil {
			v.reason = metrics.ReasonInternal
			resp = denial(err.Error())
		}
		if resp == nil {
			v.reason = metrics.ReasonInternal
			resp = denial(InternalErrorPrefix + "serving " + path + ": no response")
		}
		resp.UID = uid
		out, err := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
			Response: resp,
		})
		if err != nil {
			klog.ErrorS(err, "Encoding an admission response", "path", path)
			v.reason = metrics.ReasonInternal
			resp = &admissionv1.AdmissionResponse{UID: uid, Result: denial(InternalErrorPrefix + "encoding the response").Result}
			out, _ = json.Marshal(admissionv1.AdmissionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
				Response: resp,
			})
		}
		w.Header().Set("Content-Type", "application/json")
		if _, err := w.Write(out); err != nil {
			klog.ErrorS(err, "Writing an admission response", "path", path)
		}
	}
}

// record counts and times one request of the admission at path (pkg/metrics):
// allowed when resp allows it; otherwise denied when the admission gave a
// reason of its own (a check of the Job), an error when the reason is
// metrics.ReasonBadRequest or ReasonInternal, or there is none (no
// response: the request was refused with an HTTP error). A framework
// the admission did not learn is metrics.FrameworkUnknown.
func record(path string, v *verdict, resp *admissionv1.AdmissionResponse, start time.Time) {
	framework := v.framework
	if framework == "" {
		framework = metrics.FrameworkUnknown
	}
	result, reason := metrics.ResultDenied, v.reason
	switch {
	case resp != nil && resp.Allowed && reason == metrics.ReasonArguments:
		// Admitted with argument warnings, as Volcano admits it (asStock).
		result = metrics.ResultAllowed
	case resp != nil && resp.Allowed:
		result, reason = metrics.ResultAllowed, metrics.ReasonNone
	case reason == metrics.ReasonBadRequest, reason == metrics.ReasonInternal:
		result = metrics.ResultError
	case reason == "", reason == metrics.ReasonNone:
		result, reason = metrics.ResultError, metrics.ReasonInternal
	}
	metrics.ObserveAdmission(path, framework, result, reason, start)
}

// VolcanoMaxBody caps the request body of every one of Volcano's admission
// paths the webhook manager serves: 3 MiB, as Volcano's own router does
// since v1.14.2 (CVE-2026-44247) and the API server's request limit.
// Volcano v1.14.1's router reads a body whole, however large; the manager
// caps it on every line (CapBody), so that no line's admissions read more.
const VolcanoMaxBody = 3 << 20

// CapBody returns next with its request bodies limited to max bytes (a
// review's JSON), for handlers that read a body whole without a limit of
// their own, such as Volcano v1.14.1's router: a request announcing or
// sending more is answered 413 Request Entity Too Large and never reaches
// next; otherwise next reads the body from memory, at most max bytes. The
// body is read as LimitInFlight reads it (readWithin), without a budget.
func CapBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			body, _, err := readWithin(w, r, max, nil)
			if err != nil {
				refuseBody(w, r, err)
				return
			}
			r.Body = &bodyReader{b: body}
			r.ContentLength = int64(len(body))
		}
		next.ServeHTTP(w, r)
	})
}
