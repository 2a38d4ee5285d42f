package webhook

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	whv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestWithoutPaths(t *testing.T) {
	for in, want := range map[string]string{
		"/jobs/mutate,/jobs/validate": "/jobs/mutate,/jobs/validate",
		"":                            "",
		" /jobs/frameworks/validate , /pods/mutate,":              "/pods/mutate",
		"/jobs/frameworks/mutate,/pods,/jobs/frameworks/validate": "/pods",
	} {
		if got := WithoutPaths(in); got != want {
			t.Errorf("WithoutPaths(%q) = %q, want %q", in, got, want)
		}
	}
}

// admissionServer starts an HTTPS server like a manager pod: ours serves the
// framework admissions (Handle), Volcano's stock manager does not (404). It
// returns the server's host and port, and the number of requests it got.
func admissionServer(t *testing.T, ours bool) (host string, port int32, hits *atomic.Int64) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/jobs/mutate", func(w http.ResponseWriter, _ *http.Request) {})
	if ours {
		Handle(mux, Options{})
	}
	hits = new(atomic.Int64)
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	h, p, err := net.SplitHostPort(strings.TrimPrefix(s.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, int32(n), hits
}

const (
	testNS  = "volcano-system"
	testSvc = "volcano-admission-service"
)

// Endpoint conditions as the EndpointSlice controller sets them.
var (
	isReady       = discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)}
	isStarting    = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(false), Terminating: ptr.To(false)}
	isStopping    = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}
	isStopped     = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(false), Terminating: ptr.To(true)}
	isUnspecified = discoveryv1.EndpointConditions{}
)

// slice is an EndpointSlice of the admission service, as the EndpointSlice
// controller writes it, with one pod's endpoint on the port named portName.
func slice(name, host string, port int32, c discoveryv1.EndpointConditions, portName string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, Labels: map[string]string{
			discoveryv1.LabelServiceName: testSvc,
			discoveryv1.LabelManagedBy:   EndpointSliceControllerName,
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: c,
			TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: testNS, Name: name}}},
	}
}

// edited returns s after edit.
func edited(s *discoveryv1.EndpointSlice, edit func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	edit(s)
	return s
}

// service is the admission Service with ports (port: name).
func service(ports map[int32]string) *v1.Service {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: testSvc, Namespace: testNS}}
	for p, n := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, v1.ServicePort{Name: n, Port: p})
	}
	return svc
}

// volcanoService is Volcano's chart's: one unnamed port, 443.
var volcanoService = map[int32]string{443: ""}

func TestKeeperServed(t *testing.T) {
	ctx := context.Background()
	oursHost, oursPort, _ := admissionServer(t, true)
	stockHost, stockPort, _ := admissionServer(t, false)
	ep := Endpoint{ServiceNamespace: testNS, ServiceName: testSvc}
	ours := func(c discoveryv1.EndpointConditions) *discoveryv1.EndpointSlice {
		return slice("ours", oursHost, oursPort, c, "")
	}
	stock := func(c discoveryv1.EndpointConditions) *discoveryv1.EndpointSlice {
		return slice("stock", stockHost, stockPort, c, "")
	}
	for _, tc := range []struct {
		name     string
		ports    map[int32]string // nil: no Service
		slices   []*discoveryv1.EndpointSlice
		existing *int32 // the port an existing mutating configuration names
		wantErr  string // substring; "" means served
	}{
		{name: "only our pod", ports: volcanoService, slices: []*discoveryv1.EndpointSlice{ours(isReady)}},
		{name: "conditions unset count as serving", ports: volcanoService, slices: []*discoveryv1.EndpointSlice{ours(isUnspecified)}},
		{name: "the old stock pod is still ready", ports: volcanoService, wantErr: "1 of 2 endpoints do not serve",
			slices: []*discoveryv1.EndpointSlice{ours(isReady), stock(isReady)}},
		{name: "only the stock pod", ports: volcanoService, wantErr: ":" + strconv.Itoa(int(stockPort)) + "/jobs/frameworks/mutate: 404",
			slices: []*discoveryv1.EndpointSlice{stock(isReady)}},
		{name: "the old stock pod serves through its preStop pause", ports: volcanoService, wantErr: "1 of 2 endpoints do not serve",
			slices: []*discoveryv1.EndpointSlice{ours(isReady), stock(isStopping)}},
		{name: "the old stock pod has stopped serving", ports: volcanoService, slices: []*discoveryv1.EndpointSlice{ours(isReady), stock(isStopped)}},
		{name: "a stock pod still starting", ports: volcanoService, slices: []*discoveryv1.EndpointSlice{ours(isReady), stock(isStarting)}},
		{name: "no serving endpoint", ports: volcanoService, wantErr: "has no serving endpoint", slices: []*discoveryv1.EndpointSlice{ours(isStarting)}},
		{name: "named port: the slices of another port are not probed", ports: map[int32]string{443: "https", 80: "metrics"},
			slices: []*discoveryv1.EndpointSlice{slice("ours", oursHost, oursPort, isReady, "https"), slice("metrics", stockHost, stockPort, isReady, "metrics")}},
		{name: "the port of an existing configuration", ports: map[int32]string{443: "a", 8443: "b"}, existing: ptr.To(int32(8443)),
			wantErr: "1 of 1 endpoints do not serve",
			slices:  []*discoveryv1.EndpointSlice{slice("ours", oursHost, oursPort, isReady, "a"), slice("stock", stockHost, stockPort, isReady, "b")}},
		{name: "no port 443", ports: map[int32]string{8443: ""}, wantErr: "has no port 443", slices: []*discoveryv1.EndpointSlice{ours(isReady)}},
		{name: "no service", wantErr: "reading service volcano-system/volcano-admission-service"},
		// Slices anyone may write in the namespace must not steer the probes
		// (stock answers 404, so a probe of it would show as an error).
		{name: "a slice another manager wrote is not probed", ports: volcanoService,
			slices: []*discoveryv1.EndpointSlice{ours(isReady), edited(stock(isReady), func(s *discoveryv1.EndpointSlice) {
				s.Labels[discoveryv1.LabelManagedBy] = "someone"
			})}},
		{name: "a slice without managed-by is not probed", ports: volcanoService,
			slices: []*discoveryv1.EndpointSlice{ours(isReady), edited(stock(isReady), func(s *discoveryv1.EndpointSlice) {
				delete(s.Labels, discoveryv1.LabelManagedBy)
			})}},
		{name: "an FQDN slice is not probed", ports: volcanoService,
			slices: []*discoveryv1.EndpointSlice{ours(isReady), edited(stock(isReady), func(s *discoveryv1.EndpointSlice) {
				s.AddressType = discoveryv1.AddressTypeFQDN
				s.Endpoints[0].Addresses = []string{"localhost"}
			})}},
		{name: "an endpoint without a target is not probed", ports: volcanoService,
			slices: []*discoveryv1.EndpointSlice{ours(isReady), edited(stock(isReady), func(s *discoveryv1.EndpointSlice) {
				s.Endpoints[0].TargetRef = nil
			})}},
		{name: "an endpoint targeting a node is not probed", ports: volcanoService,
			slices: []*discoveryv1.EndpointSlice{ours(isReady), edited(stock(isReady), func(s *discoveryv1.EndpointSlice) {
				s.Endpoints[0].TargetRef = &v1.ObjectReference{Kind: "Node", Name: "n"}
			})}},
		{name: "IPv6 pod endpoints are probed", ports: volcanoService, wantErr: "1 of 2 endpoints do not serve",
			slices: []*discoveryv1.EndpointSlice{ours(isReady), edited(stock(isReady), func(s *discoveryv1.EndpointSlice) {
				s.AddressType = discoveryv1.AddressTypeIPv6
			})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			if tc.ports != nil {
				mustCreate(t, client, service(tc.ports))
			}
			for _, s := range tc.slices {
				mustCreate(t, client, s)
			}
			if tc.existing != nil {
				m := MutatingConfiguration(ep)
				m.Webhooks[0].ClientConfig.Service.Port = tc.existing
				if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			err := Keeper{Client: client, Endpoint: ep}.Served(ctx)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Served() = %v, want %q", err, tc.wantErr)
			}
		})
	}

	t.Run("a URL is probed itself", func(t *testing.T) {
		client := fake.NewSimpleClientset()
		url := "https://" + net.JoinHostPort(oursHost, strconv.Itoa(int(oursPort)))
		if err := (Keeper{Client: client, Endpoint: Endpoint{URL: url + "/"}}).Served(ctx); err != nil {
			t.Errorf("our URL: %v", err)
		}
		url = "https://" + net.JoinHostPort(stockHost, strconv.Itoa(int(stockPort)))
		if err := (Keeper{Client: client, Endpoint: Endpoint{URL: url}}).Served(ctx); err == nil {
			t.Error("stock URL: want an error")
		}
	})
}

func mustCreate(t *testing.T, client kubernetes.Interface, obj any) {
	t.Helper()
	var err error
	switch o := obj.(type) {
	case *v1.Service:
		_, err = client.CoreV1().Services(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{})
	case *discoveryv1.EndpointSlice:
		_, err = client.DiscoveryV1().EndpointSlices(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A rolling upgrade from Volcano's manager: the configurations appear only
// after the old pod has left the Service's endpoints.
func TestKeeperWaitsForTheOldPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	oursHost, oursPort, _ := admissionServer(t, true)
	stockHost, stockPort, stockHits := admissionServer(t, false)
	client := fake.NewSimpleClientset()
	mustCreate(t, client, service(volcanoService))
	mustCreate(t, client, slice("a", oursHost, oursPort, isReady, ""))
	mustCreate(t, client, slice("b", stockHost, stockPort, isStopping, ""))
	ep := Endpoint{ServiceNamespace: testNS, ServiceName: testSvc, CABundle: []byte("ca")}

	done := make(chan error, 1)
	go func() {
		done <- Keeper{Client: client, Endpoint: ep, Create: true, Interval: 20 * time.Millisecond}.Run(ctx)
	}()
	// The Keeper has asked the stock pod a few times, and created nothing.
	for stockHits.Load() < 3 {
		select {
		case err := <-done:
			t.Fatalf("Keeper returned while the stock pod serves: %v", err)
		case <-ctx.Done():
			t.Fatal("the Keeper never probed the stock pod")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("configuration while the stock pod serves: err = %v, want NotFound", err)
	}
	if err := client.DiscoveryV1().EndpointSlices(testNS).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(MutatingConfiguration(ep), m); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, ConfigurationName(ValidatePath), metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

// Without Create the Keeper waits for an installer's configurations and only
// sets their CA bundle.
func TestKeeperSetsCABundle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewSimpleClientset()
	installed := Endpoint{URL: "https://127.0.0.1:9443", CABundle: []byte("old")}
	done := make(chan error, 1)
	go func() {
		done <- Keeper{Client: client, Endpoint: Endpoint{URL: "https://elsewhere:1", CABundle: []byte("new")}, Interval: 20 * time.Millisecond}.Run(ctx)
	}()
	time.Sleep(100 * time.Millisecond)
	api := client.AdmissionregistrationV1()
	if _, err := api.MutatingWebhookConfigurations().Create(ctx, MutatingConfiguration(installed), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.ValidatingWebhookConfigurations().Create(ctx, ValidatingConfiguration(installed), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m, _ := api.MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{})
	v, _ := api.ValidatingWebhookConfigurations().Get(ctx, ConfigurationName(ValidatePath), metav1.GetOptions{})
	for _, cc := range []*struct {
		url *string
		ca  []byte
	}{{m.Webhooks[0].ClientConfig.URL, m.Webhooks[0].ClientConfig.CABundle}, {v.Webhooks[0].ClientConfig.URL, v.Webhooks[0].ClientConfig.CABundle}} {
		if string(cc.ca) != "new" || !strings.HasPrefix(*cc.url, installed.URL) {
			t.Errorf("client config: URL %s, CA %q; want the installer's URL and CA \"new\"", *cc.url, cc.ca)
		}
	}
}

// With CA, the Keeper goes on after setting the bundle and sets every renewed
// CA on both configurations and on the others named (Volcano's own).
func TestKeeperFollowsTheCA(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewSimpleClientset()
	api := client.AdmissionregistrationV1()
	installed := Endpoint{URL: "https://127.0.0.1:9443", CABundle: []byte("old")}
	volcano := MutatingConfiguration(installed)
	volcano.Name = "volcano-admission-service-jobs-mutate"
	for _, obj := range []any{MutatingConfiguration(installed), ValidatingConfiguration(installed), volcano} {
		var err error
		switch o := obj.(type) {
		case *whv1.MutatingWebhookConfiguration:
			_, err = api.MutatingWebhookConfigurations().Create(ctx, o, metav1.CreateOptions{})
		case *whv1.ValidatingWebhookConfiguration:
			_, err = api.ValidatingWebhookConfigurations().Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var current atomic.Value
	current.Store([]byte("first"))
	done := make(chan error, 1)
	go func() {
		done <- Keeper{Client: client, Endpoint: Endpoint{URL: installed.URL, CABundle: []byte("first")}, Interval: 10 * time.Millisecond,
			CA:     func() []byte { return current.Load().([]byte) },
			Others: Configurations{Mutating: []string{volcano.Name}},
		}.Run(ctx)
	}()
	// bundles returns the CA bundles of ours and Volcano's configuration.
	bundles := func() []string {
		m, _ := api.MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{})
		v, _ := api.ValidatingWebhookConfigurations().Get(ctx, ConfigurationName(ValidatePath), metav1.GetOptions{})
		o, _ := api.MutatingWebhookConfigurations().Get(ctx, volcano.Name, metav1.GetOptions{})
		return []string{string(m.Webhooks[0].ClientConfig.CABundle), string(v.Webhooks[0].ClientConfig.CABundle), string(o.Webhooks[0].ClientConfig.CABundle)}
	}
	waitFor := func(want []string) {
		t.Helper()
		for {
			got := bundles()
			if cmp.Equal(want, got) {
				return
			}
			select {
			case err := <-done:
				t.Fatalf("Keeper returned (%v); CA bundles %q, want %q", err, got, want)
			case <-ctx.Done():
				t.Fatalf("CA bundles %q, want %q", got, want)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	// At start only ours get the bundle (Volcano's manager sets its own).
	waitFor([]string{"first", "first", "old"})
	current.Store([]byte("renewed"))
	waitFor([]string{"renewed", "renewed", "renewed"})
	cancel()
	if err := <-done; err == nil {
		t.Error("Run returned nil when its context ended, want the context's error")
	}
}
