package webhook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/plugins"
)

// #38 H3: callers of the manager's port that stall in their headers or
// bodies, hold a thousand idle connections, or send bodies that fill the
// budget, do not keep a valid review out: it is answered within 1 s, and
// the stalled bodies are cut off after BodyTimeout. Before, a caller's
// request took its in-flight place before its body arrived: 256 callers that
// sent headers and no body made every review a 429 for ReadTimeout (30 s),
// again and again.
func TestStalledAndFloodingCallers(t *testing.T) {
	if testing.Short() {
		t.Skip("holds connections for BodyTimeout")
	}
	plugins.Register()
	const slots = 8
	mux := http.NewServeMux()
	mux.HandleFunc("/jobs/frameworks/validate", ValidateService().Handler)
	// A budget of 8 MiB, so that three 3 MiB bodies fill it.
	budget := semaphore.NewWeighted(8 << 20)
	srv := newServer("", nil, limitInFlight(slots, budget, mux))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	job := mkJob("valid").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("pytorch").Obj()
	valid, err := json.Marshal(review(t, admissionv1.Create, job, nil))
	if err != nil {
		t.Fatal(err)
	}
	answer := func() (time.Duration, int, *admissionv1.AdmissionResponse) {
		start := time.Now()
		resp, err := http.Post("http://"+addr+"/jobs/frameworks/validate", "application/json", bytes.NewReader(valid))
		if err != nil {
			t.Fatalf("a valid review: %v", err)
		}
		defer resp.Body.Close()
		var ar admissionv1.AdmissionReview
		body, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(body, &ar)
		return time.Since(start), resp.StatusCode, ar.Response
	}

	var conns []net.Conn
	var mu sync.Mutex
	dial := func(prefix string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		if prefix != "" {
			if _, err := io.WriteString(c, prefix); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		return c
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	header := func(length int) string {
		return fmt.Sprintf("POST /jobs/frameworks/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", length)
	}
	// A thousand idle connections; 300 stalled in their headers; 300 that
	// announce 3 MiB and send 1 KiB: more than twice the places.
	for i := 0; i < 1000; i++ {
		dial("")
	}
	for i := 0; i < 300; i++ {
		dial("POST /jobs/frameworks/validate HTTP/1.1\r\nHost: x\r\n")
	}
	var stalled []net.Conn
	for i := 0; i < 300; i++ {
		stalled = append(stalled, dial(header(3<<20)+strings.Repeat(" ", 1024)))
	}
	// 20 that announce the most a review may have and send 64 KiB: each
	// holds about twice what it sent, not what it announced (20 × 6 MiB
	// would take the budget).
	for i := 0; i < 20; i++ {
		dial(header(MaxReviewBytes) + strings.Repeat(" ", 64<<10))
	}
	// One that announces a small body and sends none.
	small := dial(header(1000))
	if d, code, resp := answer(); code != http.StatusOK || resp == nil || !resp.Allowed || d > time.Second {
		t.Errorf("a valid review beside stalled callers: HTTP %d, response %+v, in %v; want 200, allowed, within 1 s", code, resp, d)
	}

	// Bodies that fill the budget: the next body gets 429 at once, not a wait.
	full := make([]byte, 3<<20-1)
	for i := 0; i < 2; i++ {
		c := dial(header(3 << 20))
		if _, err := c.Write(full); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the server has read them: one holds 3 MiB of the budget
	// (the other got 429), leaving less than 2 MiB. A fixed sleep was not
	// enough on a loaded machine: the third body then took the budget
	// first and, one byte short, got 408 after BodyTimeout.
	for deadline := time.Now().Add(10 * time.Second); budget.TryAcquire(2 << 20); {
		budget.Release(2 << 20)
		if time.Now().After(deadline) {
			t.Fatal("the server did not read the two 3 MiB bodies within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	c := dial(header(3 << 20))
	c.Write(full)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || time.Since(start) > time.Second {
		t.Errorf("a body beyond the budget: %v, %v, after %v; want 429 at once", resp, err, time.Since(start))
	}

	// The stalled bodies are cut off after BodyTimeout (408), which frees
	// the budget: the valid review is answered again. The answer is sent
	// and the connection closed even where the rest of the body is small
	// (the server would otherwise wait, without a deadline, to read it).
	for _, c := range []net.Conn{stalled[0], small} {
		c.SetReadDeadline(time.Now().Add(BodyTimeout + 5*time.Second))
		resp, err = http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
			t.Errorf("a stalled body after BodyTimeout: %v, %v; want 408 and the connection closed", resp, err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if d, code, resp := answer(); code != http.StatusOK || resp == nil || !resp.Allowed || d > time.Second {
		t.Errorf("a valid review after the cut-off: HTTP %d, response %+v, in %v; want 200, allowed, within 1 s", code, resp, d)
	}
}

// A body larger than MaxReviewBytes, announced or not, is refused 413
// without being read whole.
func TestLimitInFlightBodyCap(t *testing.T) {
	h := LimitInFlight(4, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a body over the cap reached the handler")
	}))
	srv := newServer("", nil, h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	for _, announce := range []bool{true, false} {
		body := io.LimitReader(zeros{}, MaxReviewBytes+1)
		req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/", body)
		if announce {
			req.ContentLength = MaxReviewBytes + 1
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("announced %v: %v", announce, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("announced %v: HTTP %d, want 413", announce, resp.StatusCode)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
