package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"
)

// secretVolume lays out dir as the kubelet does for a Secret volume: the
// files live in a timestamped directory, ..data links to it and each key
// links to ..data/key. update swaps in new contents as the kubelet does on a
// change: a new directory, a new link renamed over ..data (atomic), the old
// directory removed.
type secretVolume struct {
	t   *testing.T
	dir string
	gen int
}

func (v *secretVolume) update(files map[string][]byte) {
	v.t.Helper()
	v.gen++
	ts := "..2026_11_25_00_00_0" + string(rune('0'+v.gen))
	if err := os.Mkdir(filepath.Join(v.dir, ts), 0o755); err != nil {
		v.t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(v.dir, ts, name), data, 0o600); err != nil {
			v.t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(v.dir, "..data"))
	if err := os.Symlink(ts, filepath.Join(v.dir, "..data_tmp")); err != nil {
		v.t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(v.dir, "..data_tmp"), filepath.Join(v.dir, "..data")); err != nil {
		v.t.Fatal(err)
	}
	for name := range files {
		link := filepath.Join(v.dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				v.t.Fatal(err)
			}
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, old)); err != nil {
			v.t.Fatal(err)
		}
	}
}

// selfSigned returns a PEM certificate and key for host, and the
// certificate's DER bytes.
func selfSigned(t *testing.T, host string) (certPEM, keyPEM, der []byte) {
	t.Helper()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(host, []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	return certPEM, keyPEM, block.Bytes
}

// servedCertificate returns the leaf certificate a TLS handshake with addr
// gets.
func servedCertificate(t *testing.T, addr string) []byte {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only the certificate is looked at
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Raw
}

// A renewed certificate in the Secret's volume is served without a restart.
func TestServingTLSFollowsTheSecretVolume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	vol := &secretVolume{t: t, dir: t.TempDir()}
	certA, keyA, derA := selfSigned(t, "a.example")
	certB, keyB, derB := selfSigned(t, "b.example")
	vol.update(map[string][]byte{"tls.crt": certA, "tls.key": keyA})

	st, err := NewServingTLS(&tls.Config{MinVersion: tls.VersionTLS12}, filepath.Join(vol.dir, "tls.crt"), filepath.Join(vol.dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	st.Run(ctx)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", st.Config)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}
	go srv.Serve(ln) //nolint:errcheck // closed below
	defer srv.Close()

	if got := servedCertificate(t, ln.Addr().String()); !bytes.Equal(got, derA) {
		t.Fatal("before the renewal: not certificate A")
	}
	vol.update(map[string][]byte{"tls.crt": certB, "tls.key": keyB})
	// fsnotify reports the swap at once; the library's fallback check runs
	// every minute, so 10 s tells the two apart.
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Equal(servedCertificate(t, ln.Addr().String()), derB) {
		if time.Now().After(deadline) {
			t.Fatal("certificate B not served 10 s after the Secret volume's update")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A certificate that does not match the key is refused at start (and, while
// running, not applied: the library keeps the last good pair).
func TestNewServingTLSRejectsMismatchedPair(t *testing.T) {
	vol := &secretVolume{t: t, dir: t.TempDir()}
	certA, _, _ := selfSigned(t, "a.example")
	_, keyB, _ := selfSigned(t, "b.example")
	vol.update(map[string][]byte{"tls.crt": certA, "tls.key": keyB})
	if _, err := NewServingTLS(&tls.Config{}, filepath.Join(vol.dir, "tls.crt"), filepath.Join(vol.dir, "tls.key")); err == nil {
		t.Error("NewServingTLS accepted a certificate with another key")
	}
}
