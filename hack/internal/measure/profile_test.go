package measure

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// ProfileCPU saves each piece the server answers, asks for the piece's
// length in seconds, stops without error when its context ends (the piece
// under way not saved) and reports a refusal.
func TestProfileCPU(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" || r.URL.Query().Get("seconds") != "2" {
			http.NotFound(w, r)
			return
		}
		if n := calls.Add(1); n == 3 {
			cancel() // the sweep ends while the third piece is under way
			<-r.Context().Done()
			return
		}
		fmt.Fprintf(w, "piece %d", calls.Load())
	}))
	defer srv.Close()
	prefix := filepath.Join(t.TempDir(), "cpu")
	n, err := ProfileCPU(ctx, srv.Client(), srv.URL, prefix, 2*time.Second)
	if n != 2 || err != nil {
		t.Fatalf("ProfileCPU = %d, %v; want 2 pieces, no error", n, err)
	}
	for i := 1; i <= 3; i++ {
		b, err := os.ReadFile(fmt.Sprintf("%s-%d.pprof", prefix, i))
		if i == 3 {
			if err == nil {
				t.Errorf("the piece under way when the sweep ended was saved")
			}
			continue
		}
		if want := fmt.Sprintf("piece %d", i); string(b) != want || err != nil {
			t.Errorf("piece %d: %q, %v; want %q", i, b, err, want)
		}
	}

	if n, err := ProfileCPU(context.Background(), srv.Client(), srv.URL+"/nothing", prefix, 2*time.Second); n != 0 || err == nil {
		t.Errorf("ProfileCPU of a path that is not served = %d, %v; want 0 and an error", n, err)
	}
}

// StartCPUProfile profiles the controller manager's healthz listener of
// the cluster's state, and its stop ends the profile, returns ProfileCPU's
// result and may be called again; with no prefix it profiles nothing.
func TestStartCPUProfile(t *testing.T) {
	// A cluster with no CA: any request would have failed.
	none, err := (&Cluster{Cluster: &localcluster.Cluster{State: localcluster.State{RootDir: t.TempDir()}}}).StartCPUProfile(context.Background(), "")
	if err != nil || none() != nil {
		t.Errorf("StartCPUProfile with no prefix: %v; want nothing started", err)
	}

	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) > 1 {
			<-r.Context().Done() // a piece under way when stopped
			return
		}
		fmt.Fprint(w, "piece")
	}))
	defer srv.Close()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "pki"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The controller manager's listener is plain HTTP; the CA is read anyway.
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	tlsSrv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(root, "pki", "ca.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(srv.URL[strings.LastIndex(srv.URL, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	lc := &localcluster.Cluster{State: localcluster.State{RootDir: root, Ports: map[string]int{localcluster.ControllerManagerHealthz: port}}}
	prefix := filepath.Join(t.TempDir(), "cpu")
	stop, err := (&Cluster{Cluster: lc}).StartCPUProfile(context.Background(), prefix)
	if err != nil {
		t.Fatalf("StartCPUProfile: %v", err)
	}
	for calls.Load() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("stop, called again: %v", err)
	}
	if b, err := os.ReadFile(prefix + "-1.pprof"); string(b) != "piece" || err != nil {
		t.Errorf("piece 1: %q, %v; want %q", b, err, "piece")
	}
	if _, err := os.Stat(prefix + "-2.pprof"); err == nil {
		t.Errorf("the piece under way when stopped was saved")
	}
}
