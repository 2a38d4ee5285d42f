package main

import (
	"bytes"
	"debug/elf"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// pathWithout is a PATH of one directory holding a symbolic link to every
// command of the current PATH (the first of each name, as a lookup finds
// it) except those whose names start with one of hide.
func pathWithout(t *testing.T, hide ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			hidden := false
			for _, h := range hide {
				hidden = hidden || strings.HasPrefix(n, h)
			}
			if hidden {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
				continue
			}
			if err := os.Symlink(filepath.Join(d, n), filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// The ELF machine of each platform the images are built for.
var elfMachines = map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}

// nodpkgImages are the images TestImagesWithoutDpkg builds: the one of our
// four whose binary is smallest (client-go, not Volcano), so that make test
// does not compile Kubernetes and Volcano for a second architecture before
// the e2e suite. The install test builds and pushes all four, two platforms
// each, beside the suite (make install-prereqs), and pulls them by digest.
var nodpkgImages = []string{"gen-admission-secret"}

// TestImagesWithoutDpkg is make images and make images-push on a machine
// without dpkg (macOS, Fedora, Arch...): with dpkg and dpkg-query hidden from
// PATH, build writes an image index of linux/amd64 and linux/arm64 for each
// of nodpkgImages (the default platforms of every image), printing each pinned by the index's
// digest; push sends them to a registry, which serves each index under that
// digest with both images whole; each image's binaries are static ELF
// executables of its architecture, its config says that architecture, and
// its CA bundle is the one made from the Go module.
func TestImagesWithoutDpkg(t *testing.T) {
	t.Setenv("PATH", pathWithout(t, "dpkg"))
	for _, c := range []string{"dpkg", "dpkg-query"} {
		if p, err := exec.LookPath(c); err == nil {
			t.Fatalf("%s is still on PATH at %s", c, p)
		}
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go is not on the PATH without dpkg: %v", err)
	}
	ca, _, _, err := caBundle()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	const version = "v0.0.0-nodpkg"
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"build", "--out", out, "--only", strings.Join(nodpkgImages, ","), "--version", version, "--revision", "nodpkg"}, &stdout, &stderr); rc != 0 {
		t.Fatalf("build: exit %d\n%s%s", rc, stdout.String(), stderr.String())
	}
	t.Logf("images build:\n%s", stdout.String())
	built := map[string]string{} // image -> index digest build printed
	for _, n := range nodpkgImages {
		re := regexp.MustCompile(`image localhost/framework-plugins/` + regexp.QuoteMeta(n) + `:` + regexp.QuoteMeta(version) +
			`@(sha256:[0-9a-f]{64}) \(linux/amd64, linux/arm64\) \.\.\. built \(`)
		m := re.FindStringSubmatch(stdout.String())
		if m == nil {
			t.Fatalf("build printed no index of linux/amd64 and linux/arm64 for %s:\n%s", n, stdout.String())
		}
		built[n] = m[1]
	}

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/framework-plugins"
	stdout.Reset()
	if rc := run([]string{"push", "--dir", out, "--repo", repo, "--only", strings.Join(nodpkgImages, ",")}, &stdout, &stderr); rc != 0 {
		t.Fatalf("push: exit %d\n%s%s", rc, stdout.String(), stderr.String())
	}
	t.Logf("images push:\n%s", stdout.String())
	for _, n := range nodpkgImages {
		ref := repo + "/" + n + ":" + version
		if line := ref + "@" + built[n] + " (linux/amd64, linux/arm64)\n"; !strings.Contains(stdout.String(), line) {
			t.Errorf("push printed no %q", line)
		}
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Get(r)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if desc.Digest.String() != built[n] {
			t.Errorf("%s: the registry serves %s, build printed %s", ref, desc.Digest, built[n])
		}
		idx, err := desc.ImageIndex()
		if err != nil {
			t.Fatalf("%s: not an image index: %v", ref, err)
		}
		if err := validate.Index(idx); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var platforms []string
		for _, d := range m.Manifests {
			pl := d.Platform.String()
			platforms = append(platforms, pl)
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cfg := configOf(t, img)
			if got := cfg.OS + "/" + cfg.Architecture; got != pl {
				t.Errorf("%s %s: config says %s", n, pl, got)
			}
			files := layerFiles(t, img)
			if f := files["etc/ssl/certs/ca-certificates.crt"]; f == nil || !bytes.Equal(f.data, ca) {
				t.Errorf("%s %s: the CA bundle is not the Go module's", n, pl)
			}
			entry := strings.TrimPrefix(cfg.Config.Entrypoint[0], "/")
			bin := files[entry]
			if bin == nil {
				t.Fatalf("%s %s: no %s", n, pl, entry)
			}
			checkStaticELF(t, bin.data)
			f, err := elf.NewFile(bytes.NewReader(bin.data))
			if err != nil {
				t.Fatal(err)
			}
			if f.Machine != elfMachines[pl] {
				t.Errorf("%s %s: /%s is for %v", n, pl, entry, f.Machine)
			}
		}
		if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
			t.Errorf("%s: platforms (-want +got):\n%s", ref, diff)
		}
	}
}
