package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	whv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// Handle serves both admissions on mux (vc-webhook-manager passes the mux of
// its admission port, beside Volcano's admissions), at MutatePath and
// ValidatePath, each behind the structure bounds (BoundStructure, with
// MaxReviewBytes).
//
// They are not registered with Volcano's admission router: its manager listens
// only once the configuration of every admission it serves exists, which would
// make ours exist before any pod of the new manager can answer them (see
// Keeper).
func Handle(mux *http.ServeMux, opts Options) {
	for path, h := range map[string]http.HandlerFunc{
		MutatePath: http.HandlerFunc(MutateService(opts).Handler), ValidatePath: http.HandlerFunc(ValidateService().Handler),
	} {
		// The structure bounds first, as on Volcano's paths: a direct
		// caller's 6 MiB review of empty objects cost 400 to 600 MB here.
		mux.Handle(path, BoundStructure(MaxReviewBytes, h, structureAnswers[path]))
	}
}

// WithoutPaths returns Volcano's --enabled-admission list without MutatePath
// and ValidatePath (Handle serves them), in its order, blanks dropped.
func WithoutPaths(enabled string) string {
	var out []string
	for _, p := range strings.Split(enabled, ",") {
		if p = strings.TrimSpace(p); p != "" && p != MutatePath && p != ValidatePath {
			out = append(out, p)
		}
	}
	return strings.Join(out, ",")
}

// Keeper looks after the two webhook configurations for a running
// vc-webhook-manager.
//
// With Create, it creates or repoints them (EnsureConfigurations) only once
// every address the API server may send their calls to answers their paths:
// the URL of a manager outside the cluster, or every endpoint of the
// admission Service that is ready or still serving while it terminates.
// During a rolling upgrade from Volcano's own manager the old pod stays a
// ready endpoint until the new one is ready, then serves through its
// preStop pause, and answers /jobs/frameworks/* with 404 ("the server could not find the requested
// resource"); a configuration with failurePolicy Fail created meanwhile makes
// every Job create that reaches the old pod fail. Jobs created before the
// configurations exist are admitted by Volcano's own job admissions alone, as
// before the upgrade.
//
// Without Create, configurations an installer made are only given the CA
// bundle, as Volcano's manager does for its own.
//
// With CA, the CA bundle then follows the CA file: see CA.
type Keeper struct {
	Client   kubernetes.Interface
	Endpoint Endpoint
	Create   bool
	// CA, when set, returns the CA bundle as it is now (the --ca-cert-file's
	// latest content; Endpoint.CABundle is the one at start). Run then keeps
	// going once the configurations are in place: every Interval it compares
	// it with the bundle last set and sets a changed one on both
	// configurations and on Others, retrying errors, until ctx ends.
	CA func() []byte
	// Others names more configurations whose CA bundle follows CA: the
	// MutatingWebhookConfigurations and ValidatingWebhookConfigurations of
	// Volcano's own admissions, which its manager sets only at start.
	Others Configurations
	// Interval between checks; 0 means 2 s.
	Interval time.Duration
	// ProbeTimeout bounds one probe of one address; 0 means 3 s.
	ProbeTimeout time.Duration
}

// Configurations names webhook configurations.
type Configurations struct {
	Mutating, Validating []string
}

// Run does the Keeper's work and returns nil once done (never, with CA), or
// ctx's error. It retries every error (the Service's endpoints unreadable for
// lack of RBAC, the configurations missing without Create), logging why at
// most every 30 s.
func (k Keeper) Run(ctx context.Context) error {
	interval := k.Interval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	var lastLog time.Time
	report := func(msg string, err error) {
		if time.Since(lastLog) >= 30*time.Second {
			klog.InfoS(msg, "reason", err)
			lastLog = time.Now()
		}
	}
	for {
		if err := k.step(ctx, interval); err != nil {
			report("Framework admissions' webhook configurations not in place yet", err)
		} else if k.CA == nil {
			return nil
		} else {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	set := k.Endpoint.CABundle
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
		ca := k.CA()
		if len(ca) == 0 || bytes.Equal(ca, set) {
			continue
		}
		if err := SetCABundle(ctx, k.Client, ca); err != nil {
			report("Renewed CA bundle not set yet", err)
			continue
		}
		if err := SetCABundleOn(ctx, k.Client, ca, k.Others); err != nil {
			report("Renewed CA bundle not set yet", err)
			continue
		}
		klog.InfoS("Set the renewed CA bundle on the webhook configurations", "frameworks", Paths(), "others", k.Others)
		set = ca
	}
}

// SetCABundleOn sets caBundle on every webhook of the named configurations,
// updating only those that differ. It returns the first API error (a missing
// configuration is NotFound).
func SetCABundleOn(ctx context.Context, client kubernetes.Interface, caBundle []byte, names Configurations) error {
	admission := client.AdmissionregistrationV1()
	for _, name := range names.Mutating {
		if err := setCABundle[*whv1.MutatingWebhookConfiguration](ctx, admission.MutatingWebhookConfigurations(), name, caBundle, mutatingHooks); err != nil {
			return fmt.Errorf("MutatingWebhookConfiguration %s: %w", name, err)
		}
	}
	for _, name := range names.Validating {
		if err := setCABundle[*whv1.ValidatingWebhookConfiguration](ctx, admission.ValidatingWebhookConfigurations(), name, caBundle, validatingHooks); err != nil {
			return fmt.Errorf("ValidatingWebhookConfiguration %s: %w", name, err)
		}
	}
	return nil
}

func (k Keeper) step(ctx context.Context, settle time.Duration) error {
	if !k.Create {
		if err := SetCABundle(ctx, k.Client, k.Endpoint.CABundle); err != nil {
			return err
		}
		klog.InfoS("Set the CA bundle of the framework admissions' webhook configurations")
		return nil
	}
	if err := k.Served(ctx); err != nil {
		return err
	}
	// The API server learns of endpoint changes from its own watch; ask once
	// more after a pause so that it has seen what this check saw.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(settle):
	}
	if err := k.Served(ctx); err != nil {
		return err
	}
	if err := EnsureConfigurations(ctx, k.Client, k.Endpoint); err != nil {
		return err
	}
	klog.InfoS("Framework admissions' webhook configurations in place; every endpoint serves them")
	return nil
}

// Served returns nil when every address the API server may call for the
// configurations (the Service's endpoints that are ready, or serving while
// they terminate) answers both paths with a status other than 404 (Volcano's
// manager answers 404 on paths it does not serve). Otherwise it returns an
// error naming the addresses that do not, or why none could be listed: a
// Service without serving endpoints or without the port, or one the manager
// may not read (services get, endpointslices list).
func (k Keeper) Served(ctx context.Context) error {
	bases, err := k.addresses(ctx)
	if err != nil {
		return err
	}
	if len(bases) == 0 {
		return fmt.Errorf("service %s/%s has no serving endpoint", k.Endpoint.ServiceNamespace, k.Endpoint.ServiceName)
	}
	timeout := k.ProbeTimeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	// The probe only tells a served path from an unknown one, and carries
	// nothing; the API server verifies the certificate on real calls.
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
		DisableKeepAlives: true,
	}}
	var not []string
	for _, base := range bases {
		for _, p := range Paths() {
			if err := probe(ctx, client, base+p); err != nil {
				not = append(not, err.Error())
				break
			}
		}
	}
	if len(not) > 0 {
		return fmt.Errorf("%d of %d endpoints do not serve the framework admissions yet: %s", len(not), len(bases), strings.Join(not, "; "))
	}
	return nil
}

func probe(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: 404", url)
	}
	return nil
}

// EndpointSliceControllerName is the endpointslice.kubernetes.io/managed-by
// value of the EndpointSlices kube-controller-manager derives from a
// Service's selector (unexported in k8s.io/kubernetes/pkg/controller/endpointslice).
const EndpointSliceControllerName = "endpointslice-controller.k8s.io"

// addresses returns the base URLs (https://host:port) to probe: the
// Endpoint's URL, or one per endpoint that may serve (mayServe) of the
// Service's port the configurations name (configuredPort), sorted. Only
// IPv4 and IPv6 addresses of Pods, from EndpointSlices managed by
// EndpointSliceControllerName, are probed.
func (k Keeper) addresses(ctx context.Context) ([]string, error) {
	ep := k.Endpoint
	if ep.URL != "" {
		return []string{strings.TrimSuffix(ep.URL, "/")}, nil
	}
	svc, err := k.Client.CoreV1().Services(ep.ServiceNamespace).Get(ctx, ep.ServiceName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading service %s/%s: %w", ep.ServiceNamespace, ep.ServiceName, err)
	}
	port, err := configuredPort(ctx, k.Client, svc)
	if err != nil {
		return nil, err
	}
	// Only the slices Kubernetes' EndpointSlice controller derives from the
	// Service's selector: anyone allowed to write EndpointSlices in the
	// namespace could otherwise point the manager's probes anywhere.
	slices, err := k.Client.DiscoveryV1().EndpointSlices(ep.ServiceNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{
			discoveryv1.LabelServiceName: ep.ServiceName,
			discoveryv1.LabelManagedBy:   EndpointSliceControllerName,
		}).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing the endpoints of service %s/%s: %w", ep.ServiceNamespace, ep.ServiceName, err)
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range slices.Items {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue // FQDN: a name the manager would resolve and call
		}
		target, ok := slicePort(s.Ports, port.Name)
		if !ok {
			continue
		}
		for _, e := range s.Endpoints {
			if !mayServe(e.Conditions) || e.TargetRef == nil || e.TargetRef.Kind != "Pod" {
				continue
			}
			for _, a := range e.Addresses {
				u := "https://" + net.JoinHostPort(a, strconv.Itoa(int(target)))
				if !seen[u] {
					seen[u] = true
					out = append(out, u)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// mayServe reports whether the API server may still reach an endpoint: it is
// serving, ready or terminating. A pod that stops keeps serving (and, on
// Volcano's image, answering 404) through its preStop pause, while proxies
// that route by EndpointSlices may still send it calls; only a pod that does
// not serve yet (starting, or failing its readiness probe) is left out.
func mayServe(c discoveryv1.EndpointConditions) bool {
	serving := c.Serving
	if serving == nil {
		serving = c.Ready
	}
	return serving == nil || *serving
}

// configuredPort returns the Service's port the configurations call: the one
// an existing configuration names, else 443 (what EnsureConfigurations
// writes), or an error when the Service has no such port.
func configuredPort(ctx context.Context, client kubernetes.Interface, svc *v1.Service) (v1.ServicePort, error) {
	want := int32(443)
	if m, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{}); err == nil {
		for _, w := range m.Webhooks {
			if s := w.ClientConfig.Service; s != nil && s.Port != nil {
				want = *s.Port
			}
		}
	} else if !apierrors.IsNotFound(err) {
		return v1.ServicePort{}, err
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == want {
			return p, nil
		}
	}
	return v1.ServicePort{}, fmt.Errorf("service %s/%s has no port %d", svc.Namespace, svc.Name, want)
}

// slicePort returns the port an EndpointSlice gives the Service port named
// name (EndpointSlices name their ports after the Service's).
func slicePort(ports []discoveryv1.EndpointPort, name string) (int32, bool) {
	for _, p := range ports {
		if p.Port != nil && (p.Name == nil && name == "" || p.Name != nil && *p.Name == name) {
			return *p.Port, true
		}
	}
	return 0, false
}

// ServingTLS is a TLS configuration whose serving certificate follows a
// certificate and key file pair, as mounted from a Secret (cert-manager
// renews its certificates every 60 to 90 days; the kubelet swaps the
// volume's ..data symlink to the new files).
type ServingTLS struct {
	// Config is the server's configuration: base with GetConfigForClient
	// answering every handshake with the files' latest valid pair.
	Config  *tls.Config
	content *dynamiccertificates.DynamicCertKeyPairContent
	ctrl    *dynamiccertificates.DynamicServingCertificateController
}

// NewServingTLS loads certFile and keyFile (PEM) into a copy of base, or
// returns the error of reading or pairing them. Until Run, the certificate
// stays the one loaded here.
//
// The watching is k8s.io/apiserver's dynamiccertificates, as kube-apiserver
// serves: fsnotify on both files (re-added after the remove or rename a
// symlink swap causes) and a check each minute; a half-written pair (a
// certificate that does not match the key) is not applied, the previous pair
// stays.
func NewServingTLS(base *tls.Config, certFile, keyFile string) (*ServingTLS, error) {
	content, err := dynamiccertificates.NewDynamicServingContentFromFiles("serving-cert", certFile, keyFile)
	if err != nil {
		return nil, err
	}
	ctrl := dynamiccertificates.NewDynamicServingCertificateController(base, nil, content, nil, nil)
	content.AddListener(ctrl)
	if err := ctrl.RunOnce(); err != nil {
		return nil, err
	}
	cfg := base.Clone()
	cfg.Certificates = nil
	cfg.GetConfigForClient = ctrl.GetConfigForClient
	return &ServingTLS{Config: cfg, content: content, ctrl: ctrl}, nil
}

// Run watches the files until ctx ends; it returns at once.
func (s *ServingTLS) Run(ctx context.Context) {
	go s.content.Run(ctx, 1)
	go s.ctrl.Run(1, ctx.Done())
}
