package localcluster

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
)

func TestNewPKIChainsToCA(t *testing.T) {
	p, err := newPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(p.CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	for _, tc := range []struct {
		cert, key string
		usage     x509.ExtKeyUsage
		host      string
	}{
		{p.ServingCert, p.ServKey, x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{p.ServingCert, p.ServKey, x509.ExtKeyUsageServerAuth, "kubernetes.default.svc"},
		{p.WebhookCert, p.WebhookK, x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{p.AdminCert, p.AdminKey, x509.ExtKeyUsageClientAuth, ""},
	} {
		pair, err := tls.LoadX509KeyPair(tc.cert, tc.key)
		if err != nil {
			t.Fatalf("%s: %v", tc.cert, err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: tc.host, KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
			t.Errorf("%s for %q: %v", filepath.Base(tc.cert), tc.host, err)
		}
	}
	admin, _ := tls.LoadX509KeyPair(p.AdminCert, p.AdminKey)
	leaf, _ := x509.ParseCertificate(admin.Certificate[0])
	if got := leaf.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin organization = %v, want [system:masters]", got)
	}
	saKey, _ := os.ReadFile(p.SAKey)
	if b, _ := pem.Decode(saKey); b == nil || b.Type != "RSA PRIVATE KEY" {
		t.Errorf("sa.key is not an RSA private key")
	}
}

func TestTail(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.log")
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(tail(file, 30), "\n")
	if len(got) != 30 || got[0] != "line 21" || got[29] != "line 50" {
		t.Errorf("tail = %q ... %q (%d lines), want line 21 ... line 50", got[0], got[len(got)-1], len(got))
	}
	if !strings.Contains(tail(filepath.Join(t.TempDir(), "missing"), 30), "cannot read log") {
		t.Error("tail of a missing file should say so")
	}
}

func TestProcessLifecycle(t *testing.T) {
	root := componentRoot(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	p, err := startProcess(root, "sleeper", sleep, []string{"60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !alive(p.PID, sleep) {
		t.Fatal("started process not alive")
	}
	if alive(p.PID, "/not/the/binary") {
		t.Error("alive must check the binary, to survive PID reuse")
	}
	if err := p.exited(); err != nil {
		t.Fatalf("exited() = %v for a running process", err)
	}
	if err := terminate([]ComponentState{p.ComponentState}, time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("process not reaped after terminate")
	}
	if err := p.exited(); err == nil || !strings.Contains(err.Error(), "sleeper") {
		t.Errorf("exited() = %v, want an error naming the component", err)
	}

	// A process that dies at once reports its log tail.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	q, err := startProcess(root, "crasher", sh, []string{"-c", "echo boom-marker; exit 3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-q.done
	if err := q.exited(); err == nil || !strings.Contains(err.Error(), "boom-marker") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("exited() = %v, want exit status and log tail", err)
	}
}

func TestDownRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Down(dir); err == nil {
		t.Fatal("Down removed a directory that is not a cluster root")
	}
	if _, err := os.Stat(filepath.Join(dir, "precious")); err != nil {
		t.Fatal(err)
	}
	if err := Down(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("Down on a missing dir = %v, want nil", err)
	}
}

// The cluster serves Volcano v1.15.1's default admissions, and /jobflows/validate,
// with the webhook configurations of v1.15.1's own chart, rendered here from the
// module cache (templates/webhooks.yaml with values.yaml) as Helm would.
func TestVolcanoWebhooks(t *testing.T) {
	hooks := VolcanoWebhooks()
	if got, want := enabledAdmission(hooks), VolcanoPaths+","+JobFlowsPath; got != want {
		t.Errorf("enabledAdmission = %q, want %q", got, want)
	}
	if got := webhookConfigName("/jobs/mutate"); got != "volcano-admission-service-jobs-mutate" {
		t.Errorf("webhookConfigName = %q", got)
	}

	chart := volcanoChart(t)
	values := map[string]any{}
	raw, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	custom, _ := values["custom"].(map[string]any)
	if custom == nil {
		t.Fatal("values.yaml has no custom section")
	}
	if got := custom["enabled_admissions"]; got != VolcanoPaths {
		t.Errorf("VolcanoPaths = %q; the chart's custom.enabled_admissions is %q", VolcanoPaths, got)
	}
	custom["enabled_admissions"] = enabledAdmission(hooks)
	rendered := renderVolcanoWebhooks(t, chart, values)

	const port = 8443
	ca := []byte("ca")
	// What the chart's service clientConfig becomes here: our URL and CA.
	ignoreClient := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ClientConfig" }, cmp.Ignore())
	seen := map[string]bool{}
	for _, h := range hooks {
		name := webhookConfigName(h.Path)
		seen[name] = true
		want, ok := rendered[name]
		if !ok {
			t.Errorf("%s: the chart renders no configuration %s", h.Path, name)
			continue
		}
		m, v := h.configurations(port, ca)
		var got any = v
		if m != nil {
			got = m
		}
		if diff := cmp.Diff(want, got, ignoreClient); diff != "" {
			t.Errorf("%s: configuration (-chart +cluster):\n%s", h.Path, diff)
		}
		url := fmt.Sprintf("https://127.0.0.1:%d%s", port, h.Path)
		if m != nil && (*m.Webhooks[0].ClientConfig.URL != url || string(m.Webhooks[0].ClientConfig.CABundle) != "ca") ||
			v != nil && (*v.Webhooks[0].ClientConfig.URL != url || string(v.Webhooks[0].ClientConfig.CABundle) != "ca") {
			t.Errorf("%s: clientConfig does not point at %s with the CA", h.Path, url)
		}
	}
	for name := range rendered {
		if !seen[name] {
			t.Errorf("the chart renders %s, which the cluster does not register", name)
		}
	}
}

// volcanoChart returns Volcano v1.15.1's chart directory in the module cache;
// the test is skipped on another line's module file.
func volcanoChart(t *testing.T) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "volcano.sh/volcano")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m volcano.sh/volcano: %v", err)
	}
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if version != "v1.15.1" {
		t.Skipf("volcano.sh/volcano is %s here; VolcanoWebhooks follows v1.15.1's chart", version)
	}
	if dir == "" {
		t.Fatal("volcano.sh/volcano is not in the module cache (go mod download volcano.sh/volcano)")
	}
	return filepath.Join(dir, "installer", "helm", "chart", "volcano")
}

// renderVolcanoWebhooks renders the chart's templates/webhooks.yaml with
// values (release volcano in volcano-system), implementing the three Helm
// functions it uses, and returns the configurations by name, their rules'
// unset scope set to "*" as the API server defaults it.
func renderVolcanoWebhooks(t *testing.T, chart string, values map[string]any) map[string]any {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(chart, "templates", "webhooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := template.FuncMap{
		"regexMatch": func(re, s string) bool { return regexp.MustCompile(re).MatchString(s) },
		"toYaml": func(v any) string {
			b, err := yaml.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSuffix(string(b), "\n")
		},
		"nindent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
	}
	tmpl, err := template.New("webhooks.yaml").Funcs(funcs).Option("missingkey=zero").Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	data := map[string]any{"Values": values, "Release": map[string]any{"Name": "volcano", "Namespace": "volcano-system"}}
	if err := tmpl.Execute(&buf, data); err != nil {
		t.Fatal(err)
	}
	docs, err := kubeutil.YAMLDocuments(buf.Bytes())
	if err != nil {
		t.Fatalf("the rendered webhooks.yaml: %v\n%s", err, buf.String())
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	all := admissionregistrationv1.AllScopes
	out := map[string]any{}
	for _, doc := range docs {
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decoding the rendered webhooks.yaml: %v\n%s", err, doc)
		}
		switch c := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			for i := range c.Webhooks {
				for j := range c.Webhooks[i].Rules {
					if c.Webhooks[i].Rules[j].Scope == nil {
						c.Webhooks[i].Rules[j].Scope = &all
					}
				}
			}
			c.Labels = nil // common_labels: ~ renders an empty labels key
			c.TypeMeta = metav1.TypeMeta{}
			out[c.Name] = c
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			for i := range c.Webhooks {
				for j := range c.Webhooks[i].Rules {
					if c.Webhooks[i].Rules[j].Scope == nil {
						c.Webhooks[i].Rules[j].Scope = &all
					}
				}
			}
			c.Labels = nil
			c.TypeMeta = metav1.TypeMeta{}
			out[c.Name] = c
		default:
			t.Fatalf("webhooks.yaml renders a %T", obj)
		}
	}
	return out
}

func TestDefaults(t *testing.T) {
	cfg, err := Config{RootDir: "/tmp/x", BinDir: "/tmp/b"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Nodes != 4 || cfg.Webhook != WebhookAuto || cfg.ControllerManagerBinary != "vc-controller-manager" || cfg.WebhookManagerBinary != "vc-webhook-manager" {
		t.Errorf("defaults = %+v", cfg)
	}
	if gpu := cfg.NodeResources[GPUResource]; gpu.String() != "8" {
		t.Errorf("gpu = %s", gpu.String())
	}
	if _, err := (Config{RootDir: "/x", BinDir: "/y", Webhook: "maybe"}).withDefaults(); err == nil {
		t.Error("bad webhook mode accepted")
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RootDir != filepath.Join(root, "_output", "local") || cfg.BinDir != filepath.Join(root, "_output", "bin") {
		t.Errorf("RootDir, BinDir = %s, %s", cfg.RootDir, cfg.BinDir)
	}
}

// The embedded KWOK stages name the annotations the constants document.
func TestKwokStagesAnnotations(t *testing.T) {
	for _, a := range []string{AnnotationPodResult, AnnotationPodRunFor, AnnotationPodExitCode} {
		if !strings.Contains(DefaultKwokConfig, `annotations["`+a+`"]`) && !strings.Contains(DefaultKwokConfig, `annotations "`+a+`"`) {
			t.Errorf("kwokstages.yaml does not read annotation %s", a)
		}
	}
}

// Helm's output starts each template with "---" and a "# Source:" comment; a
// template that renders nothing leaves a comment-only document.
func TestDecodeWebhookConfigurations(t *testing.T) {
	rendered := "---\n# Source: chart/templates/mutatingwebhookconfiguration.yaml\n" +
		"apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: m\n" +
		"---\n# Source: chart/templates/empty.yaml\n# rendered nothing\n" +
		"---\n# Source: chart/templates/validatingwebhookconfiguration.yaml\n" +
		"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: v\n"
	m, v, err := decodeWebhookConfigurations([]byte(rendered))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "m" || v.Name != "v" {
		t.Errorf("decoded %q and %q, want m and v", m.Name, v.Name)
	}
}
