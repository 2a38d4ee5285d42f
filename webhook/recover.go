package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime/debug"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"volcano.sh/volcano/pkg/webhooks/router"
	"volcano.sh/volcano/pkg/webhooks/schema"
	"volcano.sh/volcano/pkg/webhooks/util"
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
// operation and the object (InternalErrorPrefix), logged with its stack.
func guard(verb string, admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) (resp *admissionv1.AdmissionResponse) {
		what := verb + " a request without an object"
		if r := ar.Request; r != nil {
			what = fmt.Sprintf("%s %s %s/%s on %s", verb, r.Kind.Kind, r.Namespace, r.Name, r.Operation)
		}
		if err := protect(what, func() { resp = admit(ar) }); err != nil {
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
// sends; a panic anywhere in here is a denial too.
func handler(path string, admit router.AdmitFunc) router.AdmissionHandler {
	return func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			http.Error(w, "admission reviews are application/json", http.StatusUnsupportedMediaType)
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			http.Error(w, fmt.Sprintf("reading the admission review: %v", err), http.StatusRequestEntityTooLarge)
			return
		}
		var uid types.UID
		var resp *admissionv1.AdmissionResponse
		if err := protect("serving "+path, func() {
			ar := admissionv1.AdmissionReview{}
			if _, _, err := schema.Codecs.UniversalDeserializer().Decode(body, nil, &ar); err != nil {
				resp = util.ToAdmissionResponse(fmt.Errorf("decoding the admission review: %v", err))
				return
			}
			if ar.Request != nil {
				uid = ar.Request.UID
			}
			resp = admit(ar)
		}); err != nil {
			resp = denial(err.Error())
		}
		if resp == nil {
			resp = denial(InternalErrorPrefix + "serving " + path + ": no response")
		}
		resp.UID = uid
		out, err := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
			Response: resp,
		})
		if err != nil {
			klog.ErrorS(err, "Encoding an admission response", "path", path)
			out, _ = json.Marshal(admissionv1.AdmissionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
				Response: &admissionv1.AdmissionResponse{UID: uid, Result: denial(InternalErrorPrefix + "encoding the response").Result},
			})
		}
		w.Header().Set("Content-Type", "application/json")
		if _, err := w.Write(out); err != nil {
			klog.ErrorS(err, "Writing an admission response", "path", path)
		}
	}
}

// readBody reads a request body of at most MaxReviewBytes, into one buffer of
// the announced length when there is one (io.ReadAll would grow its buffer by
// doubling, allocating about twice the body).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, MaxReviewBytes)
	if n := r.ContentLength; n > 0 && n <= MaxReviewBytes {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		// The server ends the body at the announced length; read on anyway
		// rather than trust it.
		rest, err := io.ReadAll(body)
		return append(buf, rest...), err
	}
	return io.ReadAll(body)
}
