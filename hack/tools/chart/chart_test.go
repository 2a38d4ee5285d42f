// Package chart tests the framework-plugins Helm chart
// (installer/helm/framework-plugins) by rendering it with the Helm library,
// as `helm install --dry-run` does (schema, kubeVersion, templates, NOTES), for
// the value sets users install with, and checking the objects and RBAC each
// renders. The chart's agreement with the webhook manager's own
// configurations is tested against the rendered manifest in installer/.
package chart

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	admv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "../../../installer/helm/framework-plugins"

// rendered is a dry-run install's result.
type rendered struct {
	docs  map[string]string // "Kind/name" -> YAML
	notes string
}

// render installs the chart client-only as release "framework-plugins" in
// volcano-system on Kubernetes kubeVersion with vals.
func render(t *testing.T, kubeVersion string, vals map[string]any) (*rendered, error) {
	t.Helper()
	return renderChart(t, chartDir, "framework-plugins", kubeVersion, nil, vals)
}

// vapAPI is what a cluster that serves ValidatingAdmissionPolicy v1 (1.30+)
// adds to Helm's capabilities; without a cluster Helm knows only versions.
var vapAPI = []string{"admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy"}

// renderChart installs the chart in dir client-only as release in
// volcano-system on Kubernetes kubeVersion, whose API also serves
// apiVersions ("group/version/Kind"), with vals.
func renderChart(t *testing.T, dir, release, kubeVersion string, apiVersions []string, vals map[string]any) (*rendered, error) {
	t.Helper()
	return renderEdited(t, dir, release, kubeVersion, apiVersions, vals, nil)
}

// renderEdited is renderChart with the loaded chart changed by edit first
// (nil: unchanged), e.g. its appVersion as make chart-package sets it.
func renderEdited(t *testing.T, dir, release, kubeVersion string, apiVersions []string, vals map[string]any, edit func(*chart.Chart)) (*rendered, error) {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(ch)
	}
	in := action.NewInstall(&action.Configuration{})
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = release, "volcano-system"
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	in.KubeVersion = kv
	in.APIVersions = apiVersions
	rel, err := in.Run(ch, vals)
	if err != nil {
		return nil, err
	}
	r := &rendered{docs: map[string]string{}, notes: rel.Info.Notes}
	// Hooks (Volcano's admission-init Job) too: they run like the rest.
	all := rel.Manifest
	for _, h := range rel.Hooks {
		all += "\n---\n" + h.Manifest
	}
	for _, doc := range releaseutil.SplitManifests(all) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if meta.Kind != "" {
			r.docs[meta.Kind+"/"+meta.Metadata.Name] = doc
		}
	}
	return r, nil
}

func (r *rendered) keys() []string {
	var k []string
	for n := range r.docs {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func decode[T any](t *testing.T, r *rendered, key string) *T {
	t.Helper()
	doc, ok := r.docs[key]
	if !ok {
		t.Fatalf("no %s among %v", key, r.keys())
	}
	var obj T
	if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return &obj
}

const (
	mutating   = "MutatingWebhookConfiguration/volcano-admission-service-jobs-frameworks-mutate"
	validating = "ValidatingWebhookConfiguration/volcano-admission-service-jobs-frameworks-validate"
	ctrlRole   = "ClusterRole/framework-plugins-controller"
	ctrlBind   = "ClusterRoleBinding/framework-plugins-controller"
	whRole     = "ClusterRole/framework-plugins-webhook-manager"
	whBind     = "ClusterRoleBinding/framework-plugins-webhook-manager"
	epRole     = "Role/framework-plugins-admission-endpoints"
	epBind     = "RoleBinding/framework-plugins-admission-endpoints"
	cert       = "Certificate/volcano-admission-service-cert"
	pdb        = "PodDisruptionBudget/framework-plugins-admission"
)

func TestRenderedObjects(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals string
		want []string
	}{
		{"defaults: RBAC only, the manager creates the configurations", ``, []string{ctrlRole, whRole, ctrlBind, whBind, epRole, epBind, pdb}},
		{"configurations from the chart", "webhook: {create: true}\nrbac: {webhookManager: false}", []string{ctrlRole, ctrlBind, epRole, epBind, mutating, validating, pdb}},
		{"no RBAC", "webhook: {create: true}\nrbac: {controller: false, webhookManager: false, admissionEndpoints: false}", []string{mutating, validating, pdb}},
		{"no disruption budget", "admissionDisruptionBudget: {create: false}", []string{ctrlRole, whRole, ctrlBind, whBind, epRole, epBind}},
		{"a URL has no service endpoints nor admission pods", "webhook: {create: true, url: \"https://127.0.0.1:8443\"}", []string{ctrlRole, whRole, ctrlBind, whBind, mutating, validating}},
		{"cert-manager", "webhook: {create: true}\ncertManager: {enabled: true, issuerRef: {name: ca}}", []string{cert, ctrlRole, whRole, ctrlBind, whBind, epRole, epBind, mutating, validating, pdb}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := render(t, "1.35.3", values(t, tc.vals))
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if diff := cmp.Diff(want, r.keys()); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func values(t *testing.T, s string) map[string]any {
	t.Helper()
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The values the chart refuses: Kubernetes below kubeVersion, unknown or
// mistyped values (schema), cert-manager without an issuer.
func TestRenderRejects(t *testing.T) {
	for _, tc := range []struct {
		name, kube, vals, wantErr string
	}{
		{"Kubernetes 1.20", "1.20.15", ``, "incompatible with Kubernetes v1.20.15"},
		{"unknown value", "1.35.3", "webhook: {creat: true}", "Additional property creat is not allowed"},
		{"port out of range", "1.35.3", "webhook: {service: {port: 70000}}", "port"},
		{"issuer missing", "1.35.3", "certManager: {enabled: true}", "certManager.issuerRef.name is required"},
		{"issuer kind", "1.35.3", "certManager: {enabled: true, issuerRef: {name: ca, kind: Vault}}", "kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.kube, values(t, tc.vals))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// The webhook configurations: Volcano's admission service by default, a URL
// when given, and cert-manager's CA injection with a Certificate for that
// service when enabled.
func TestRenderedWebhookConfigurations(t *testing.T) {
	r, err := render(t, "1.35.3", values(t, "webhook: {create: true}"))
	if err != nil {
		t.Fatal(err)
	}
	m := decode[admv1.MutatingWebhookConfiguration](t, r, mutating)
	v := decode[admv1.ValidatingWebhookConfiguration](t, r, validating)
	port := int32(443)
	for path, cc := range map[string]admv1.WebhookClientConfig{"/jobs/frameworks/mutate": m.Webhooks[0].ClientConfig, "/jobs/frameworks/validate": v.Webhooks[0].ClientConfig} {
		p := path
		want := admv1.WebhookClientConfig{Service: &admv1.ServiceReference{Name: "volcano-admission-service", Namespace: "volcano-system", Path: &p, Port: &port}}
		if diff := cmp.Diff(want, cc); diff != "" {
			t.Errorf("%s clientConfig (-want +got):\n%s", path, diff)
		}
	}
	if len(m.Annotations) != 0 {
		t.Errorf("annotations %v without cert-manager", m.Annotations)
	}

	r, err = render(t, "1.35.3", values(t, "webhook: {create: true, url: 'https://127.0.0.1:8443/'}"))
	if err != nil {
		t.Fatal(err)
	}
	m = decode[admv1.MutatingWebhookConfiguration](t, r, mutating)
	if u := m.Webhooks[0].ClientConfig.URL; u == nil || *u != "https://127.0.0.1:8443/jobs/frameworks/mutate" || m.Webhooks[0].ClientConfig.Service != nil {
		t.Errorf("with webhook.url: clientConfig %+v", m.Webhooks[0].ClientConfig)
	}

	r, err = render(t, "1.35.3", values(t, "webhook: {create: true}\ncertManager: {enabled: true, issuerRef: {name: ca, kind: ClusterIssuer}}"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{mutating, validating} {
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(r.docs[key]), &obj); err != nil {
			t.Fatal(err)
		}
		if got := obj.Metadata.Annotations["cert-manager.io/inject-ca-from"]; got != "volcano-system/volcano-admission-service-cert" {
			t.Errorf("%s: inject-ca-from %q", key, got)
		}
	}
	var c struct {
		Metadata struct{ Namespace string } `json:"metadata"`
		Spec     struct {
			SecretName string            `json:"secretName"`
			DNSNames   []string          `json:"dnsNames"`
			IssuerRef  map[string]string `json:"issuerRef"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(r.docs[cert]), &c); err != nil {
		t.Fatal(err)
	}
	got := []string{c.Metadata.Namespace, c.Spec.SecretName, strings.Join(c.Spec.DNSNames, ","), c.Spec.IssuerRef["name"], c.Spec.IssuerRef["kind"]}
	want := []string{"volcano-system", "volcano-admission-secret",
		"volcano-admission-service,volcano-admission-service.volcano-system,volcano-admission-service.volcano-system.svc", "ca", "ClusterIssuer"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Certificate (-want +got):\n%s", diff)
	}
}

// RBAC: the controller role is what the plugins do (the tensorflow and mpi
// ConfigMaps, Events, the wait-timeout controller's pod patch), bound to
// Volcano's controller service account; the webhook manager's, when enabled,
// is what it calls on its two webhook configurations.
func TestRenderedRBAC(t *testing.T) {
	r, err := render(t, "1.35.3", values(t, "volcano: {controllerServiceAccount: vc-ctrl, admissionServiceAccount: vc-adm}"))
	if err != nil {
		t.Fatal(err)
	}
	role := decode[rbacv1.ClusterRole](t, r, ctrlRole)
	wantRules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"bus.volcano.sh"}, Resources: []string{"commands"}, Verbs: []string{"create"}},
	}
	if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
		t.Errorf("controller rules (-want +got):\n%s", diff)
	}
	for key, sa := range map[string]string{ctrlBind: "vc-ctrl", whBind: "vc-adm"} {
		b := decode[rbacv1.ClusterRoleBinding](t, r, key)
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: "volcano-system"}}
		if diff := cmp.Diff(want, b.Subjects); diff != "" {
			t.Errorf("%s subjects (-want +got):\n%s", key, diff)
		}
		if role := strings.TrimPrefix(key, "ClusterRoleBinding/"); b.RoleRef.Name != role || b.RoleRef.Kind != "ClusterRole" {
			t.Errorf("%s roleRef %+v, want ClusterRole %s", key, b.RoleRef, role)
		}
	}
	// The endpoints Role: get the admission service and list EndpointSlices in
	// its namespace, nothing else, bound to the webhook manager.
	ep := decode[rbacv1.Role](t, r, epRole)
	if diff := cmp.Diff([]rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{"volcano-admission-service"}, Verbs: []string{"get"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
	}, ep.Rules); diff != "" {
		t.Errorf("endpoints rules (-want +got):\n%s", diff)
	}
	epb := decode[rbacv1.RoleBinding](t, r, epBind)
	if diff := cmp.Diff([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "vc-adm", Namespace: "volcano-system"}}, epb.Subjects); diff != "" || ep.Namespace != "volcano-system" || epb.Namespace != "volcano-system" ||
		epb.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: ep.Name}) {
		t.Errorf("endpoints role %s/%s, binding %s/%s to %+v, subjects (-want +got):\n%s", ep.Namespace, ep.Name, epb.Namespace, epb.Name, epb.RoleRef, diff)
	}
	// The webhook manager's: the verbs webhook/configurations.go calls (Get,
	// Update of the two configurations by name; Create, which RBAC cannot
	// narrow by name), no patch.
	wh := decode[rbacv1.ClusterRole](t, r, whRole)
	g := []string{"admissionregistration.k8s.io"}
	if diff := cmp.Diff([]rbacv1.PolicyRule{
		{APIGroups: g, Resources: []string{"mutatingwebhookconfigurations"}, ResourceNames: []string{"volcano-admission-service-jobs-frameworks-mutate"}, Verbs: []string{"get", "update"}},
		{APIGroups: g, Resources: []string{"validatingwebhookconfigurations"}, ResourceNames: []string{"volcano-admission-service-jobs-frameworks-validate"}, Verbs: []string{"get", "update"}},
		{APIGroups: g, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, Verbs: []string{"create"}},
	}, wh.Rules); diff != "" {
		t.Errorf("webhook manager rules (-want +got):\n%s", diff)
	}
}

// NOTES end with complete commands: the upgrade of Volcano's release (the
// step after the chart in both install orders) and a test Job.
func TestNotesGiveTheNextCommand(t *testing.T) {
	// Volcano's chart version is its release's, volcano.sh/volcano in go.mod
	// (the chart's vcplugins.io/volcano-version annotation).
	upgrade := "helm upgrade volcano volcano-sh/volcano --version " + strings.TrimPrefix(volcanoModuleVersion(t), "v") +
		" -n volcano-system --reuse-values -f installer/helm/volcano-values.yaml --set basic.image_registry=<your registry> --wait"
	r, err := render(t, "1.35.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.notes, upgrade) {
		t.Errorf("NOTES lack the complete helm upgrade command:\n%s", r.notes)
	}
	// Step 0 before it, with the patch file the repository has.
	step0 := "kubectl -n volcano-system patch deployment volcano-admission --patch-file installer/volcano-patches/volcano-admission-readiness.yaml"
	if i := strings.Index(r.notes, step0); i < 0 || i > strings.Index(r.notes, upgrade) {
		t.Errorf("NOTES lack step 0 before the upgrade:\n%s", r.notes)
	}
	if _, err := os.Stat(filepath.Join(chartDir, "..", "..", "volcano-patches", "volcano-admission-readiness.yaml")); err != nil {
		t.Errorf("the patch NOTES name: %v", err)
	}
	if !strings.Contains(r.notes, "Role framework-plugins-admission-endpoints") || !strings.Contains(r.notes, "kubectl create -f example/tensorflow/tensorflow.yaml") {
		t.Errorf("NOTES with the defaults (webhook.create=false):\n%s", r.notes)
	}
	r, err = render(t, "1.35.3", values(t, "webhook: {create: true}"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.notes, upgrade) ||
		!strings.Contains(r.notes, "denies every Volcano Job create") {
		t.Errorf("NOTES with webhook.create=true:\n%s", r.notes)
	}
	// Another line's users get its chart version and values file.
	r, err = render(t, "1.35.3", values(t, "volcano: {line: v1.14.1}"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "helm upgrade volcano volcano-sh/volcano --version 1.14.1 -n volcano-system --reuse-values -f lines/v1.14.1/volcano-values.yaml --set basic.image_registry=<your registry> --wait"; !strings.Contains(r.notes, want) {
		t.Errorf("NOTES with volcano.line=v1.14.1 lack %q:\n%s", want, r.notes)
	}
	// The chart as make chart-package LINE=v1.14.1 packs it (appVersion
	// v1.14.1-fp.<n>) says the same without volcano.line.
	r, err = renderEdited(t, chartDir, "framework-plugins", "1.35.3", nil, values(t, ""), func(c *chart.Chart) { c.Metadata.AppVersion = "v1.14.1-fp.3" })
	if err != nil {
		t.Fatal(err)
	}
	if want := "helm upgrade volcano volcano-sh/volcano --version 1.14.1 -n volcano-system --reuse-values -f lines/v1.14.1/volcano-values.yaml --set basic.image_registry=<your registry> --wait"; !strings.Contains(r.notes, want) {
		t.Errorf("NOTES of the chart packed for v1.14.1 lack %q:\n%s", want, r.notes)
	}
	if _, err := render(t, "1.35.3", values(t, "volcano: {line: '1.14'}")); err == nil {
		t.Errorf("volcano.line=1.14 rendered; want the schema to refuse it")
	}
}
