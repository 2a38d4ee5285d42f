package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestBuildSmallImages builds busybox and pause into a temp dir the way
// `images build` does and checks what containerd's import reads: the tarball's
// manifest.json RepoTags, the config, and the layer's files. A second build
// must find both up to date.
func TestBuildSmallImages(t *testing.T) {
	if _, err := debianBusybox(); err != nil {
		t.Skipf("needs Debian's busybox-static: %v", err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"build", "--out", out}, &stdout, &stderr); rc != 0 {
		t.Fatalf("build: exit %d\n%s%s", rc, stdout.String(), stderr.String())
	}
	if n := strings.Count(stdout.String(), "... built ("); n != 2 {
		t.Fatalf("want 2 images built, got:\n%s", stdout.String())
	}

	bb := loadImage(t, filepath.Join(out, "busybox.tar"), "localhost/framework-plugins/busybox:1.35.0-debian")
	cfg := configOf(t, bb)
	if got := strings.Join(cfg.Config.Cmd, " "); got != "sh" || len(cfg.Config.Entrypoint) != 0 {
		t.Errorf("busybox Cmd %q Entrypoint %q, want sh and none", cfg.Config.Cmd, cfg.Config.Entrypoint)
	}
	if cfg.Config.Labels["org.opencontainers.image.description"] == "" || cfg.OS != "linux" || cfg.Architecture == "" {
		t.Errorf("busybox config lacks description label or platform: %+v", cfg)
	}
	files := layerFiles(t, bb)
	if h := files["bin/busybox"]; h == nil || h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
		t.Errorf("bin/busybox: %+v, want an executable file", h)
	}
	if h := files["bin/sh"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
		t.Errorf("bin/sh: %+v, want a symlink to busybox", h)
	}
	for _, a := range []string{"nc", "wget", "timeout", "sleep"} { // what the wait container runs
		if files["bin/"+a] == nil {
			t.Errorf("no bin/%s applet link", a)
		}
	}
	if h := files["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("tmp/: %+v, want mode 1777", h)
	}
	if !strings.Contains(string(files["etc/passwd"].data), ":65534:65534:") || !strings.Contains(string(files["etc/group"].data), "nogroup:x:65534:") {
		t.Errorf("etc/passwd or etc/group lacks nobody/nogroup 65534")
	}

	pause := loadImage(t, filepath.Join(out, "pause.tar"), "localhost/framework-plugins/pause:local")
	pcfg := configOf(t, pause)
	if got := strings.Join(pcfg.Config.Entrypoint, " "); got != "/pause" || pcfg.Config.User != "65535:65535" {
		t.Errorf("pause Entrypoint %q User %q, want /pause and 65535:65535", got, pcfg.Config.User)
	}
	pf := layerFiles(t, pause)["pause"]
	if pf == nil || pf.Mode&0o111 == 0 {
		t.Fatalf("layer has no executable pause: %+v", pf)
	}
	checkStaticELF(t, pf.data)
	checkPauseExitsOnTERM(t, pf.data)

	stdout.Reset()
	if rc := run([]string{"build", "--out", out}, &stdout, &stderr); rc != 0 {
		t.Fatalf("second build: exit %d\n%s", rc, stderr.String())
	}
	if n := strings.Count(stdout.String(), "... up to date"); n != 2 {
		t.Errorf("second build: want 2 images up to date, got:\n%s", stdout.String())
	}
}

// loadImage checks manifest.json names exactly ref, then loads the image.
func loadImage(t *testing.T, path, ref string) v1.Image {
	t.Helper()
	opener := func() (io.ReadCloser, error) { return os.Open(path) }
	m, err := tarball.LoadManifest(opener)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != ref {
		t.Fatalf("%s: manifest.json %+v, want one image tagged %s", path, m, ref)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.Image(opener, &tag)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func configOf(t *testing.T, img v1.Image) *v1.ConfigFile {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type layerFile struct {
	*tar.Header
	data []byte
}

// layerFiles reads the image's only layer into name -> header and content.
func layerFiles(t *testing.T, img v1.Image) map[string]*layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*layerFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = &layerFile{Header: h, data: b}
	}
}

// checkStaticELF: an executable ELF without an interpreter or shared libraries,
// as the images without a libc need (pause, the binary images).
func checkStaticELF(t *testing.T, b []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not ELF: %v", err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		t.Errorf("ELF type %v, want ET_EXEC (static, non-PIE)", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("ELF has %v: dynamically linked", p.Type)
		}
	}
}

// checkPauseExitsOnTERM runs the binary and expects exit status 0 after SIGTERM.
func checkPauseExitsOnTERM(t *testing.T, b []byte) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pause")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let it install its handlers
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("pause after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Errorf("pause did not exit on SIGTERM")
	}
}

func TestSelectRecipes(t *testing.T) {
	rs, err := selectRecipes("pause, busybox,pause")
	if err != nil || len(rs) != 2 || rs[0].name != "pause" || rs[1].name != "busybox" {
		t.Errorf("selectRecipes: %v, %v", rs, err)
	}
	if _, err := selectRecipes("busybox,nope"); err == nil {
		t.Error("unknown image accepted")
	}
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"list"}, &stdout, &stderr); rc != 0 || stdout.String() != "localhost/framework-plugins/busybox:1.35.0-debian\nlocalhost/framework-plugins/pause:local\n" {
		t.Errorf("list: exit %d, %q", rc, stdout.String())
	}
	stdout.Reset()
	if rc := run([]string{"list", "--only", "training"}, &stdout, &stderr); rc != 0 || stdout.String() != "localhost/framework-plugins/training:local\n" {
		t.Errorf("list --only training: exit %d, %q", rc, stdout.String())
	}
	if args := strings.Join(mmdebstrapArgs(), " "); !strings.Contains(args, "python3-torch") || !strings.HasSuffix(args, " bookworm") {
		t.Errorf("mmdebstrap args %q lack the packages or the suite", args)
	}
	if rc := run([]string{"build"}, &stdout, &stderr); rc != 2 {
		t.Errorf("build without --out: exit %d, want 2", rc)
	}
}

// The busybox image's tag is the version inside: a binary of another version
// is refused rather than built under the wrong name.
func TestBusyboxVersionMatchesTag(t *testing.T) {
	for _, tc := range []struct {
		banner  string
		wantErr bool
	}{
		{"BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.", false},
		{"BusyBox v1.36.1 (2023-01-01 00:00:00 UTC) multi-call binary.", true},
	} {
		bin := filepath.Join(t.TempDir(), "busybox")
		script := "#!/bin/sh\necho '" + tc.banner + "'\necho 'Usage: busybox [function [arguments]...]'\n"
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := planBusybox(&options{busybox: bin})
		if gotErr := err != nil; gotErr != tc.wantErr {
			t.Errorf("%q: error %v, want one: %v", tc.banner, err, tc.wantErr)
		}
		if err == nil {
			if v := p.Config.Config.Labels["org.opencontainers.image.version"]; v != busyboxVersion || !strings.HasSuffix(busyboxRecipe.ref, ":"+v+"-debian") {
				t.Errorf("version label %q, ref %s", v, busyboxRecipe.ref)
			}
		}
	}
}
