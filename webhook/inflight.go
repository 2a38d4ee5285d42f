package webhook

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/semaphore"

	vchelpers "volcano.sh/apis/pkg/apis/helpers"
)

// The admission server's limits. A caller of the manager's port is not
// authenticated (any pod can reach it unless a NetworkPolicy keeps it off:
// the framework-plugins chart's admissionNetworkPolicy), and the manager also
// answers Volcano's own fail-closed admissions: a stalled or flooding caller
// must not keep the API server's reviews out.
const (
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout: Volcano's own.
	ReadHeaderTimeout = vchelpers.DefaultReadHeaderTimeout
	ReadTimeout       = vchelpers.DefaultReadTimeout
	WriteTimeout      = vchelpers.DefaultWriteTimeout
	// IdleTimeout closes a keep-alive connection idle this long (Volcano's
	// server keeps them for ever); the API server reconnects at will.
	IdleTimeout = 90 * time.Second
	// MaxHeaderBytes is net/http's default, stated.
	MaxHeaderBytes = 1 << 20
	// BodyTimeout is how long a request's body may take to arrive once its
	// headers have: the API server sends a 3 MiB review in milliseconds; a
	// caller that trickles one is cut off (HTTP 408) instead of holding
	// memory for ReadTimeout.
	BodyTimeout = 5 * time.Second
	// BodyBudget is the most bytes of request bodies the server holds, all
	// requests together, from their first byte until they are answered; a
	// body that would take more is answered 429 at once. A stalled caller
	// holds at most about twice what it sent.
	BodyBudget = 128 << 20
)

// NewServer returns the admission server: handler behind LimitInFlight(max),
// with the timeouts and header limit above, TLS from tlsConfig (nil: none,
// for tests).
func NewServer(addr string, tlsConfig *tls.Config, maxInFlight int, handler http.Handler) *http.Server {
	return newServer(addr, tlsConfig, LimitInFlight(maxInFlight, handler))
}

func newServer(addr string, tlsConfig *tls.Config, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		TLSConfig:         tlsConfig,
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// LimitInFlight returns next behind two limits. First each request's body is
// read whole, within BodyTimeout (408), at most MaxReviewBytes (413 beyond),
// into a buffer that doubles as bytes arrive, all bodies held together within
// BodyBudget (429 beyond; an HTTP/1 connection is closed after such an
// answer, as the rest of its body is not read); then at most max requests are in next at once: one
// more is answered 429 Too Many Requests with Retry-After: 1 at once, not
// queued. A request takes a place only once its body is there, so callers
// that send their bodies slowly, or not at all, hold no place the API
// server's reviews need. The API server counts a 429 as a failed webhook call
// (the request fails under failurePolicy Fail, and its client retries).
// max < 1 means no limit on requests in next; the body limits hold always.
func LimitInFlight(max int, next http.Handler) http.Handler {
	return limitInFlight(max, semaphore.NewWeighted(BodyBudget), next)
}

func limitInFlight(max int, budget *semaphore.Weighted, next http.Handler) http.Handler {
	var slots chan struct{}
	if max > 0 {
		slots = make(chan struct{}, max)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			body, held, err := readWithin(w, r, MaxReviewBytes, budget)
			defer budget.Release(held)
			if err != nil {
				refuseBody(w, r, err)
				return
			}
			r.Body = &bodyReader{b: body}
			r.ContentLength = int64(len(body))
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			default:
				w.Header().Set("Retry-After", "1")
				http.Error(w, "too many admission requests in flight", http.StatusTooManyRequests)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

var (
	errBudget   = errors.New("too many request bytes in flight")
	errTooLarge = errors.New("request body too large")
)

// refuseBody answers a request whose body readWithin refused: 429 with
// Retry-After: 1 for errBudget, 413 for errTooLarge, 408 for a body that
// did not arrive within BodyTimeout, 400 otherwise.
func refuseBody(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusBadRequest
	switch {
	case errors.Is(err, errBudget):
		code = http.StatusTooManyRequests
		w.Header().Set("Retry-After", "1")
	case errors.Is(err, errTooLarge):
		code = http.StatusRequestEntityTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		code = http.StatusRequestTimeout
	}
	if r.ProtoMajor == 1 {
		// The rest of the body is not read: the server must not wait
		// for it (with no deadline) before it answers. HTTP/2 resets
		// the stream instead.
		w.Header().Set("Connection", "close")
	}
	http.Error(w, "reading the request body: "+err.Error(), code)
}

// readWithin reads r's body, at most max bytes (errTooLarge beyond,
// announced or sent), within BodyTimeout where w has deadlines, and returns
// it with the budget it holds (to release when the request ends, also on
// error). With a nil budget nothing is held. A body LimitInFlight has
// already read is returned as it is, without a copy: every handler behind
// it reads through this function too.
func readWithin(w http.ResponseWriter, r *http.Request, max int64, budget *semaphore.Weighted) (body []byte, held int64, err error) {
	if br, ok := r.Body.(*bodyReader); ok {
		if int64(len(br.b)) > max {
			return nil, 0, errTooLarge
		}
		body, br.b = br.b, nil
		return body, 0, nil
	}
	// Not every ResponseWriter has deadlines (tests' recorders): then
	// ReadTimeout alone bounds the body.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(BodyTimeout))
	defer http.NewResponseController(w).SetReadDeadline(time.Time{})
	// The buffer starts at bodyFirst bytes and doubles as they arrive, up
	// to the announced length and one byte more (to see the end): a caller
	// holds at most about twice what it sent, whatever it announced.
	want := int64(bodyFirst)
	if n := r.ContentLength; n > max {
		return nil, 0, errTooLarge
	} else if n > 0 {
		want = min(n+1, bodyFirst)
	}
	grow := func(to int64) error {
		if to > max+1 {
			to = max + 1
		}
		if to <= int64(cap(body)) {
			return nil
		}
		if budget != nil {
			if !budget.TryAcquire(to - int64(cap(body))) {
				return errBudget
			}
			held += to - int64(cap(body))
		}
		nb := make([]byte, len(body), to)
		copy(nb, body)
		body = nb
		return nil
	}
	if err := grow(want); err != nil {
		return nil, held, err
	}
	for {
		if len(body) == cap(body) {
			to := 2 * int64(cap(body))
			if n := r.ContentLength; n >= int64(cap(body)) {
				to = min(n+1, to)
			}
			if err := grow(to); err != nil {
				return nil, held, err
			}
			if len(body) == cap(body) { // at max+1
				return nil, held, errTooLarge
			}
		}
		n, err := r.Body.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if int64(len(body)) > max {
			return nil, held, errTooLarge
		}
		if errors.Is(err, io.EOF) {
			return body, held, nil
		}
		if err != nil {
			return nil, held, err
		}
	}
}

// bodyFirst is the buffer a body starts in: a stalled caller holds this much.
const bodyFirst = 4 << 10

// bodyReader serves a body read in advance (a request's Body).
type bodyReader struct{ b []byte }

func (r *bodyReader) Close() error { return nil }

func (r *bodyReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
