package metrics

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apiserver/pkg/server/routes"
)

func TestFrameworkLabels(t *testing.T) {
	cases := map[string]struct {
		plugins map[string][]string
		want    string
	}{
		"none":              {plugins: map[string][]string{"svc": nil, "ssh": nil}, want: FrameworkNone},
		"one":               {plugins: map[string][]string{"svc": nil, "pytorch": nil}, want: "pytorch"},
		"first by name":     {plugins: map[string][]string{"tensorflow": nil, "mpi": nil}, want: "mpi"},
		"a user's plugin":   {plugins: map[string][]string{"my-plugin": nil}, want: FrameworkNone},
		"no plugins at all": {want: FrameworkNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := FrameworkOf(tc.plugins); got != tc.want {
				t.Errorf("FrameworkOf = %q, want %q", got, tc.want)
			}
		})
	}
	// A name a user wrote never becomes a label value.
	if got := Framework("my-plugin"); got != FrameworkUnknown {
		t.Errorf("Framework(my-plugin) = %q, want %q", got, FrameworkUnknown)
	}
	if got := Framework("mxnet"); got != "mxnet" {
		t.Errorf("Framework(mxnet) = %q", got)
	}
}

// The metrics follow Prometheus' naming conventions (promlint) and all
// carry Prefix.
func TestLint(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collectors()...)
	// Unlabelled vectors export nothing until a series exists.
	AdmissionRequests.WithLabelValues("/p", "mpi", ResultAllowed, ReasonNone)
	AdmissionDuration.WithLabelValues("/p", ResultAllowed).Observe(0.01)
	PlanBuilds.WithLabelValues("mpi", PlanValid)
	PlanCacheHits.WithLabelValues("mpi")
	ConfigMapSyncs.WithLabelValues("mpi", SyncOK)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("lint: %+v", problems)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != len(Collectors()) {
		t.Errorf("%d families, want %d", len(families), len(Collectors()))
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), Prefix) {
			t.Errorf("%s lacks the prefix %s", f.GetName(), Prefix)
		}
	}
}

// ServeHealthz serves /healthz and, once registered, the metrics at Path,
// over plain HTTP without certificates.
func TestServeHealthz(t *testing.T) {
	Register()
	Register() // a second call does nothing (MustRegister would panic)
	WaitTimeouts.Inc()
	addr, err := ServeHealthz("127.0.0.1:0", "test", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	code, body := get("/healthz")
	if code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz: %d %q, want 200 ok", code, body)
	}
	code, body = get(Path)
	if code != http.StatusOK || !strings.Contains(body, "\n"+Prefix+"wait_timeouts_total ") {
		t.Errorf("%s: %d, want 200 with %swait_timeouts_total:\n%s", Path, code, Prefix, body)
	}
	// The legacy registry's own collectors come along, as on Kubernetes' components.
	if !strings.Contains(body, "go_goroutines") {
		t.Errorf("%s lacks the Go collector's metrics", Path)
	}
}

// What install adds is served beside /healthz and the metrics, and only then.
func TestServeHealthzInstall(t *testing.T) {
	status := func(addr net.Addr) int {
		t.Helper()
		resp, err := http.Get("http://" + addr.String() + "/debug/pprof/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	with, err := ServeHealthz("127.0.0.1:0", "test", nil, nil, nil, routes.Profiling{}.Install)
	if err != nil {
		t.Fatal(err)
	}
	without, err := ServeHealthz("127.0.0.1:0", "test", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := status(with); got != http.StatusOK {
		t.Errorf("/debug/pprof/ with routes.Profiling installed: %d, want 200", got)
	}
	if got := status(without); got != http.StatusNotFound {
		t.Errorf("/debug/pprof/ without: %d, want 404", got)
	}
}

func TestServeHealthzBadCertificate(t *testing.T) {
	if _, err := ServeHealthz("127.0.0.1:0", "test", []byte("ca"), []byte("not a cert"), []byte("not a key")); err == nil {
		t.Error("ServeHealthz with an unparsable certificate: no error")
	}
}
