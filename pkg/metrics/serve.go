package metrics

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"volcano.sh/apis/pkg/apis/helpers"

	"github.com/vcplugins/framework-plugins/pkg/tlsconfig"
)

// Path is where the managers serve their metrics, on the healthz listener.
const Path = "/metrics"

// Handler serves the legacy registry (Register) in Prometheus' text format.
func Handler() http.Handler { return legacyregistry.Handler() }

// ServeHealthz listens on addr and serves /healthz, as Volcano's
// helpers.StartHealthz (volcano.sh/apis, the same in both lines, v1.15.1 and
// v1.14.1) does for both managers' --enable-healthz and --healthz-address,
// plus Path. As there, the listener speaks TLS with
// certData and keyData when caData, certData and keyData are all given (TLS
// 1.2 at least, Volcano's cipher suites, client certificates verified if
// sent) and plain HTTP otherwise. It returns once it listens, or the listen
// or certificate error; the server runs until the process exits, and a
// failure to serve ends the process, as Volcano's does.
//
// Volcano builds the healthz mux inside StartHealthz, with no way to add a
// path; the managers serve this instead, so that the metrics need no new
// port or flag (Volcano's chart passes --enable-healthz=true to both).
//
// Each of install adds its paths to the mux before it serves (the controller
// manager's --profiling adds /debug/pprof).
func ServeHealthz(addr, name string, caData, certData, keyData []byte, install ...func(*mux.PathRecorderMux)) (net.Addr, error) {
	// The header limit and the timeouts of Volcano's healthz server (both
	// lines); the idle timeout is ours (Volcano's is ReadTimeout's 30 s, Go's
	// default when none is set).
	server := &http.Server{
		MaxHeaderBytes:    1 << 20,
		ReadHeaderTimeout: helpers.DefaultReadHeaderTimeout,
		ReadTimeout:       helpers.DefaultReadTimeout,
		WriteTimeout:      helpers.DefaultWriteTimeout,
		IdleTimeout:       90 * time.Second,
	}
	if len(caData) != 0 && len(certData) != 0 && len(keyData) != 0 {
		cert, err := tls.X509KeyPair(certData, keyData)
		if err != nil {
			return nil, fmt.Errorf("parsing the healthz certificate: %w", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caData)
		server.TLSConfig = tlsconfig.Volcano()
		server.TLSConfig.Certificates = []tls.Certificate{cert}
		server.TLSConfig.RootCAs = pool
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("failed to create listener: %w", err)
	}
	m := mux.NewPathRecorderMux(name)
	healthz.InstallHandler(m)
	m.Handle(Path, Handler())
	for _, f := range install {
		f(m)
	}
	server.Handler = m
	go func() {
		defer utilruntime.HandleCrash()
		var err error
		if server.TLSConfig != nil {
			err = server.ServeTLS(ln, "", "")
		} else {
			err = server.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			klog.Fatalf("Stopped listening on %s due to error: %v", ln.Addr(), err)
		}
	}()
	return ln.Addr(), nil
}
