package webhook

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
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
// framework admissions (Handle), Volcano's stock manager does not (404).
func admissionServer(t *testing.T, ours bool) (host string, port int32) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/jobs/mutate", func(w http.ResponseWriter, _ *http.Request) {})
	if ours {
		Handle(mux, Options{})
	}
	s := httptest.NewTLSServer(mux)
	t.Cleanup(s.Close)
	h, p, err := net.SplitHostPort(strings.TrimPrefix(s.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, int32(n)
}

const (
	testNS  = "volcano-system"
	testSvc = "volcano-admission-service"
)

// slice is an EndpointSlice of the admission service with one endpoint.
func slice(name, host string, port int32, ready bool) *discoveryv1.EndpointSlice {
	portName := ""
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: testNS, Labels: map[string]string{discoveryv1.LabelServiceName: testSvc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}
}

func service() *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: testSvc, Namespace: testNS},
		Spec:       v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 443}}},
	}
}

func TestKeeperServed(t *testing.T) {
	ctx := context.Background()
	oursHost, oursPort := admissionServer(t, true)
	stockHost, stockPort := admissionServer(t, false)
	ep := Endpoint{ServiceNamespace: testNS, ServiceName: testSvc}
	for _, tc := range []struct {
		name    string
		objects []*discoveryv1.EndpointSlice
		noSvc   bool
		wantErr string // substring; "" means served
	}{
		{name: "only our pod", objects: []*discoveryv1.EndpointSlice{slice("a", oursHost, oursPort, true)}},
		{name: "the old stock pod is still ready", wantErr: "1 of 2 endpoints do not serve",
			objects: []*discoveryv1.EndpointSlice{slice("a", oursHost, oursPort, true), slice("b", stockHost, stockPort, true)}},
		{name: "only the stock pod", wantErr: ":" + strconv.Itoa(int(stockPort)) + "/jobs/frameworks/mutate: 404",
			objects: []*discoveryv1.EndpointSlice{slice("b", stockHost, stockPort, true)}},
		{name: "the old stock pod is terminating", objects: []*discoveryv1.EndpointSlice{slice("a", oursHost, oursPort, true), slice("b", stockHost, stockPort, false)}},
		{name: "no ready endpoint", wantErr: "has no ready endpoint",
			objects: []*discoveryv1.EndpointSlice{slice("a", oursHost, oursPort, false)}},
		{name: "no service", noSvc: true, wantErr: "reading service volcano-system/volcano-admission-service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			if !tc.noSvc {
				mustCreate(t, client, service())
			}
			for _, s := range tc.objects {
				mustCreate(t, client, s)
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
// after the old pod stopped being a ready endpoint.
func TestKeeperWaitsForTheOldPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	oursHost, oursPort := admissionServer(t, true)
	stockHost, stockPort := admissionServer(t, false)
	client := fake.NewSimpleClientset()
	mustCreate(t, client, service())
	mustCreate(t, client, slice("a", oursHost, oursPort, true))
	mustCreate(t, client, slice("b", stockHost, stockPort, true))
	ep := Endpoint{ServiceNamespace: testNS, ServiceName: testSvc, CABundle: []byte("ca")}

	done := make(chan error, 1)
	go func() {
		done <- Keeper{Client: client, Endpoint: ep, Create: true, Interval: 20 * time.Millisecond}.Run(ctx)
	}()
	time.Sleep(200 * time.Millisecond) // ten checks
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("configuration while the stock pod is ready: err = %v, want NotFound", err)
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
