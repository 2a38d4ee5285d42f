package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"

	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// metricsTimeout bounds one scrape of a manager's metrics.
const metricsTimeout = 10 * time.Second

// MetricsEndpoints returns a client for the managers' healthz listeners
// (ControllerManagerHealthz, WebhookManagerHealthz), which also serve this
// project's metrics at metrics.Path, and the URLs of their metrics. The
// webhook manager's listener speaks TLS with its serving certificate (it has
// --tls-cert-file), which the client verifies against the cluster's CA
// (<root>/pki/ca.crt); the controller manager's, given none, plain HTTP.
// Volcano's stock controller manager serves no metrics there: its URL then
// answers 404. It returns an error if the CA cannot be read.
func (c *Cluster) MetricsEndpoints() (client *http.Client, webhookURL, controllerURL string, err error) {
	ca, err := os.ReadFile(filepath.Join(c.RootDir, "pki", "ca.crt"))
	if err != nil {
		return nil, "", "", err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, "", "", errors.New("the local cluster's CA (pki/ca.crt) holds no PEM certificate")
	}
	webhookURL = fmt.Sprintf("https://127.0.0.1:%d%s", c.Ports[WebhookManagerHealthz], metrics.Path)
	controllerURL = fmt.Sprintf("http://127.0.0.1:%d%s", c.Ports[ControllerManagerHealthz], metrics.Path)
	client = &http.Client{Timeout: metricsTimeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return client, webhookURL, controllerURL, nil
}

// ScrapeMetrics fetches url's metrics in Prometheus' text format with client
// and returns them by family name. It returns an error if the request fails,
// does not answer 200 or the text does not parse.
func ScrapeMetrics(ctx context.Context, client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// CounterSum adds the values of the counters of family name in families (as
// ScrapeMetrics returns them) whose labels include every label of match; 0
// when there are none.
func CounterSum(families map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	total := 0.0
next:
	for _, m := range families[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range match {
			if have[k] != v {
				continue next
			}
		}
		total += m.GetCounter().GetValue()
	}
	return total
}

// APIServerLiveHeap forces a garbage collection in kube-apiserver (its
// /debug/pprof/heap?gc=1, served with --profiling, the default) and then
// returns go_memstats_heap_alloc_bytes from its /metrics, in bytes: the heap
// its live objects hold, with what was allocated between the two requests.
// kube is a client with the cluster's admin credentials. It returns an error
// if either request fails or the metric is missing.
func APIServerLiveHeap(ctx context.Context, kube kubernetes.Interface) (int64, error) {
	rc := kube.Discovery().RESTClient()
	if _, err := rc.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx); err != nil {
		return 0, fmt.Errorf("forcing a garbage collection in kube-apiserver: %w", err)
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("kube-apiserver's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("kube-apiserver's metrics: %w", err)
	}
	const heap = "go_memstats_heap_alloc_bytes"
	ms := families[heap].GetMetric()
	if len(ms) == 0 {
		return 0, fmt.Errorf("kube-apiserver's metrics have no %s", heap)
	}
	return int64(ms[0].GetGauge().GetValue()), nil
}
