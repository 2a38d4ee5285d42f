package localcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEgressConnectProxy drives the CONNECT proxy over its Unix socket as the
// API server's egress selector does: a loopback target is relayed (the
// kubelet's forwarded port), any address outside the pod subnet and loopback
// is refused, and so are names and other methods.
func TestEgressConnectProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	sock := filepath.Join(t.TempDir(), "egress.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The namespace is never entered: no target here is in the pod subnet.
	go func() {
		done <- InClusterProxy{EgressSocket: sock, PodSubnet: podSubnet}.Run(ctx, "/nonexistent")
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	// The socket is the owner's alone, whatever the umask (022 here).
	old := syscall.Umask(0o022)
	var st os.FileInfo
	for i := 0; i < 50; i++ {
		if st, err = os.Stat(sock); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if mode := st.Mode().Perm(); mode&0o077 != 0 {
		t.Errorf("egress socket mode %o, want no rights for group and others", mode)
	}

	_, port, _ := net.SplitHostPort(echo.Addr().String())
	for _, tc := range []struct {
		method, target string
		wantStatus     int
	}{
		{"CONNECT", "127.0.0.1:" + port, 200},
		{"CONNECT", "localhost:" + port, 200},
		{"CONNECT", "192.0.2.1:443", 403},
		{"CONNECT", "example.com:443", 403},
		{"GET", "/", 405},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			var c net.Conn
			var err error
			for i := 0; i < 50; i++ { // the socket appears once Run listens
				if c, err = net.Dial("unix", sock); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			// The egress selector sends Host: 127.0.0.1 whatever the target.
			fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", tc.method, tc.target)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if tc.wantStatus != 200 {
				return
			}
			fmt.Fprint(c, "ping\n")
			line, err := br.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != "ping" {
				t.Errorf("relayed %q, %v; want the echo of ping", line, err)
			}
		})
	}
}
