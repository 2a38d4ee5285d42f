package localcluster

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MetricsEndpoints' client verifies the webhook manager's listener against
// the cluster's CA, and ScrapeMetrics parses what it serves; a listener
// that does not answer 200 is an error.
func TestMetricsEndpointsAndScrape(t *testing.T) {
	root := t.TempDir()
	p, err := newPKI(filepath.Join(root, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(p.WebhookCert, p.WebhookK)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("# TYPE a_total counter\na_total{x=\"1\"} 3\n"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	webhookPort, _ := strconv.Atoi(port)

	cl := &Cluster{State: State{RootDir: root, Ports: map[string]int{WebhookManagerHealthz: webhookPort, ControllerManagerHealthz: 1}}}
	client, webhookURL, controllerURL, err := cl.MetricsEndpoints()
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:1/metrics"; controllerURL != want {
		t.Errorf("controller URL %q, want %q", controllerURL, want)
	}
	got, err := ScrapeMetrics(context.Background(), client, webhookURL)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{3}, []float64{got["a_total"].GetMetric()[0].GetCounter().GetValue()}); diff != "" {
		t.Errorf("a_total (-want +got):\n%s", diff)
	}
	if _, err := ScrapeMetrics(context.Background(), client, srv.URL+"/nothing"); err == nil {
		t.Error("a 404: no error")
	}
	if _, _, _, err := (&Cluster{State: State{RootDir: t.TempDir()}}).MetricsEndpoints(); err == nil {
		t.Error("no CA: no error")
	}
}

func TestCounterSum(t *testing.T) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(`# TYPE apiserver_audit_error_total counter
apiserver_audit_error_total{plugin="log"} 2
apiserver_audit_error_total{plugin="buffered"} 3
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"apiserver_audit_error_total", nil, 5},
		{"apiserver_audit_error_total", map[string]string{"plugin": "log"}, 2},
		{"apiserver_audit_error_total", map[string]string{"plugin": "webhook"}, 0},
		{"missing_total", nil, 0},
	} {
		if got := CounterSum(fams, c.name, c.match); got != c.want {
			t.Errorf("CounterSum(%s, %v) = %v, want %v", c.name, c.match, got, c.want)
		}
	}
}
