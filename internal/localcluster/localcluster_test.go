package localcluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
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

func TestYAMLDocuments(t *testing.T) {
	type m = map[string]any
	cases := []struct {
		name    string
		in      string
		want    []any // each document, decoded
		wantErr bool
	}{
		{
			name: "leading separator and empty documents",
			in:   "---\na: 1\n---\n\n---\nb: 2\n",
			want: []any{m{"a": 1.0}, m{"b": 2.0}},
		},
		{
			name: "comment-only documents and a commented separator",
			in:   "# Source: chart/templates/a.yaml\n--- # first\na: 1\n---\n# nothing here\n",
			want: []any{m{"a": 1.0}},
		},
		{
			name: "--- in a block scalar and in a string is content",
			in:   "---\ndescription: |\n  above\n  ---\n  below\nnote: \"a\\n--- b\"\n---\nc: 3",
			want: []any{m{"description": "above\n---\nbelow\n", "note": "a\n--- b"}, m{"c": 3.0}},
		},
		{
			name:    "a separator followed by more than a comment",
			in:      "a: 1\n--- b: 2\n",
			wantErr: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := yamlDocuments([]byte(tc.in))
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Fatalf("error = %v, want error: %v", err, tc.wantErr)
			}
			var got []any
			for _, d := range docs {
				var v any
				if err := yaml.Unmarshal(d, &v); err != nil {
					t.Fatalf("document %q: %v", d, err)
				}
				got = append(got, v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVolcanoWebhooks(t *testing.T) {
	hooks := VolcanoWebhooks()
	// Volcano v1.10.0's default --enabled-admission.
	want := "/jobs/mutate,/jobs/validate,/podgroups/mutate,/pods/validate,/pods/mutate,/queues/mutate,/queues/validate"
	if got := enabledAdmission(hooks); got != want {
		t.Errorf("enabledAdmission = %q, want %q", got, want)
	}
	if got := webhookConfigName("/jobs/mutate"); got != "volcano-admission-service-jobs-mutate" {
		t.Errorf("webhookConfigName = %q", got)
	}
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
