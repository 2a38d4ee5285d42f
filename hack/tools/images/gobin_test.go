package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// TestBinaryImageRefs: ours carry --version, the stock-built ones the
// version of volcano.sh/volcano in the repository's go.mod under volcanosh/,
// and ours cannot be built without a version.
func TestBinaryImageRefs(t *testing.T) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "volcano.sh/volcano")
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m volcano.sh/volcano: %v", err)
	}
	stock := strings.TrimSpace(string(out))
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"list", "--only", strings.Join(installNames, ","), "--version", "v1.15.1-fp.7"}, &stdout, &stderr); rc != 0 {
		t.Fatalf("list: exit %d: %s", rc, stderr.String())
	}
	want := `localhost/framework-plugins/vc-controller-manager:v1.15.1-fp.7
localhost/framework-plugins/vc-webhook-manager:v1.15.1-fp.7
localhost/framework-plugins/vc-scheduler:v1.15.1-fp.7
localhost/framework-plugins/gen-admission-secret:v1.15.1-fp.7
docker.io/volcanosh/vc-controller-manager:` + stock + `
docker.io/volcanosh/vc-webhook-manager:` + stock + `
docker.io/volcanosh/vc-scheduler:` + stock + `
`
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	stdout.Reset()
	stderr.Reset()
	if rc := run([]string{"build", "--out", t.TempDir(), "--only", "gen-admission-secret"}, &stdout, &stderr); rc != 1 || !strings.Contains(stderr.String(), "--version is required") {
		t.Errorf("build without --version: exit %d, %q; want 1 and --version is required", rc, stderr.String())
	}
}

// The stock images' descriptions name the volcano module's version.
func TestStockDescriptions(t *testing.T) {
	o := &options{}
	v, err := stockVersion(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, gi := range goImages {
		d, err := gi.description(o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(d, volcanoMark) || (gi.stock && !strings.Contains(d, "Volcano "+v+"'s ")) {
			t.Errorf("%s: description %q", gi.name, d)
		}
	}
}

// installNames are the binary images in goImages order.
var installNames = func() []string {
	var n []string
	for _, gi := range goImages {
		n = append(n, gi.name)
	}
	return n
}()

// TestWebhookImagesRunTheSecretTool: Volcano's chart runs the admission image
// as ./gen-admission-secret.sh from /; both webhook images must have it.
func TestWebhookImagesRunTheSecretTool(t *testing.T) {
	for _, gi := range goImages {
		if !strings.Contains(gi.name, "webhook") {
			continue
		}
		var files []string
		for _, b := range gi.binaries {
			files = append(files, b.file+"<-"+b.pkg)
		}
		if len(files) != 2 || files[1] != "gen-admission-secret.sh<-./installer/gen-admission-secret" || !strings.HasPrefix(files[0], "vc-webhook-manager<-") {
			t.Errorf("%s: binaries %q, want the manager then gen-admission-secret.sh", gi.name, files)
		}
	}
}

// TestBuildBinaryImage builds the smallest binary image (the secret tool) from
// this repository for this machine's platform and checks what the cluster and
// users read: the tarball's tag, the config (entrypoint, nonroot user,
// labels), the one layer's files (CA bundle, passwd with nonroot, a static
// binary), the index of the OCI layout and the digest printed, then that a
// second build is up to date and another --version gives another tag.
// (TestImagesWithoutDpkg builds every image for both platforms.)
func TestBuildBinaryImage(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	build := func(version string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := []string{"build", "--out", out, "--only", "gen-admission-secret", "--version", version, "--revision", "abc1234", "--ca-certs", ca,
			"--platforms", hostPlatform().String()}
		if rc := run(args, &stdout, &stderr); rc != 0 {
			t.Fatalf("build: exit %d\n%s%s", rc, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	first := build("v1.15.1-fp.1")
	idx, tag, err := readLayout(filepath.Join(out, "gen-admission-secret.oci"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if want := "image localhost/framework-plugins/gen-admission-secret:v1.15.1-fp.1@" + d.String() + " (" + hostPlatform().String() + ") ... built ("; !strings.Contains(first, want) {
		t.Fatalf("first build: %q, want %q", first, want)
	}
	if tag.String() != "localhost/framework-plugins/gen-admission-secret:v1.15.1-fp.1" {
		t.Errorf("the layout names the index %s", tag)
	}
	img := loadImage(t, filepath.Join(out, "gen-admission-secret.tar"), "localhost/framework-plugins/gen-admission-secret:v1.15.1-fp.1")
	cfg := configOf(t, img)
	if diff := cmp.Diff([]string{"/gen-admission-secret"}, cfg.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if cfg.Config.User != "65532:65532" || cfg.Config.WorkingDir != "/" {
		t.Errorf("user %q workdir %q, want 65532:65532 and /", cfg.Config.User, cfg.Config.WorkingDir)
	}
	labels := map[string]string{}
	for _, k := range []string{"source", "revision", "version"} {
		labels[k] = cfg.Config.Labels["org.opencontainers.image."+k]
	}
	if diff := cmp.Diff(map[string]string{"source": ourSource, "revision": "abc1234", "version": "v1.15.1-fp.1"}, labels); diff != "" {
		t.Errorf("OCI labels (-want +got):\n%s", diff)
	}
	if len(cfg.RootFS.DiffIDs) != 1 || len(cfg.History) != 1 {
		t.Errorf("rootfs %d layers, history %d entries; want 1 and 1", len(cfg.RootFS.DiffIDs), len(cfg.History))
	}
	files := layerFiles(t, img)
	if f := files["etc/ssl/certs/ca-certificates.crt"]; f == nil || !strings.Contains(string(f.data), "test") {
		t.Errorf("CA bundle: %+v, want the --ca-certs file", f)
	}
	if f := files["etc/passwd"]; f == nil || !strings.Contains(string(f.data), "nonroot:x:65532:65532:") {
		t.Errorf("etc/passwd lacks nonroot 65532")
	}
	if f := files["etc/group"]; f == nil || !strings.Contains(string(f.data), "nonroot:x:65532:") {
		t.Errorf("etc/group lacks nonroot 65532")
	}
	if h := files["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("tmp/: %+v, want mode 1777", h)
	}
	bin := files["gen-admission-secret"]
	if bin == nil || bin.Mode&0o111 == 0 {
		t.Fatalf("no executable gen-admission-secret: %+v", bin)
	}
	checkStaticELF(t, bin.data)

	if got := build("v1.15.1-fp.1"); !strings.Contains(got, "@"+d.String()+" ("+hostPlatform().String()+") ... up to date") {
		t.Errorf("second build: %q, want up to date", got)
	}
	if got := build("v1.15.1-fp.2"); !regexp.MustCompile(`gen-admission-secret:v1\.15\.1-fp\.2@sha256:[0-9a-f]{64} \(linux/[a-z0-9]+\) \.\.\. built \(`).MatchString(got) {
		t.Errorf("build with another version: %q, want built", got)
	}
	loadImage(t, filepath.Join(out, "gen-admission-secret.tar"), "localhost/framework-plugins/gen-admission-secret:v1.15.1-fp.2")
}

// pemBlocks returns the DER bytes of each PEM block of data, as strings.
func pemBlocks(data []byte) []string {
	var out []string
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		out = append(out, string(b.Bytes))
	}
}

// The default CA bundle is Mozilla's roots from the Go module (no dpkg, no
// file of the build machine): every unconstrained root of the module, each
// a parsable certificate, none of those with a distrust-after date, and the
// description names the module and its version.
func TestDefaultCABundleFromModule(t *testing.T) {
	base, err := planDistrolessBase(&options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	constrained := map[string]bool{}
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			constrained[string(root.Certificate)] = true
		} else {
			want[string(root.Certificate)] = true
		}
	}
	got := pemBlocks(base.ca)
	if len(got) != len(want) || len(got) < 100 {
		t.Errorf("bundle has %d certificates, the module %d unconstrained (want 100 or more)", len(got), len(want))
	}
	for i, c := range got {
		if constrained[c] || !want[c] {
			t.Errorf("certificate %d of the bundle is not an unconstrained root of the module", i)
		}
		if _, err := x509.ParseCertificate([]byte(c)); err != nil {
			t.Errorf("certificate %d: %v", i, err)
		}
	}
	if v := rootsVersion(); v == "" || !strings.Contains(base.desc, rootsModule+" "+v) {
		t.Errorf("description %q, want the module %s and its version %q", base.desc, rootsModule, v)
	}
}
