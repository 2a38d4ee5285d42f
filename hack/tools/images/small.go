package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// layerTime is every entry's mtime, so the same inputs give the same layer digest.
var layerTime = time.Unix(0, 0).UTC()

// tarEntry is one file of a hand-made layer. Names have no leading slash.
type tarEntry struct {
	name string
	mode int64 // permission bits, plus 01000 for sticky
	typ  byte  // tar.TypeDir, tar.TypeReg or tar.TypeSymlink
	link string
	data []byte
}

// writeLayerTar writes the entries, owned by root, as an uncompressed tar.
func writeLayerTar(entries []tarEntry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link,
			ModTime: layerTime, Format: tar.FormatPAX,
		}
		if e.typ == tar.TypeDir {
			h.Name += "/"
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// busyboxVersion is the upstream version of the busybox-static package
// hack/node.mk pins (1:1.35.0-4+deb12u1+b1), part of the image's tag: the
// build fails when the binary is another version, so that the name says
// what is inside.
const busyboxVersion = "1.35.0"

// busyboxRef is the busybox image's name.
const busyboxRef = "localhost/framework-plugins/busybox:" + busyboxVersion + "-debian"

// The local cluster's wait image (internal/localcluster.WaitImage, passed to
// the controller manager as --wait-image) and the image of the tests' own
// containers: Debian's busybox-static under a local name of its own, not
// Docker Hub's busybox, which it is not.
var busyboxRecipe = &recipe{
	name: "busybox",
	ref:  busyboxRef,
	plan: planBusybox,
}

// debianBusybox finds /bin/busybox of the installed busybox-static package.
func debianBusybox() (string, error) {
	files, err := exec.Command("dpkg", "-L", "busybox-static").Output()
	if err != nil {
		return "", fmt.Errorf("busybox-static is not installed (apt-get install busybox-static): dpkg -L: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(files))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasSuffix(l, "/bin/busybox") {
			return l, nil
		}
	}
	return "", errors.New("dpkg -L busybox-static lists no .../bin/busybox")
}

// busyboxVersions reads the versions from the binary's banner, e.g.
// "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.":
// upstream 1.35.0, build "Debian 1:1.35.0-4+deb12u1+b1" ("" if none).
func busyboxVersions(bin string) (upstream, build string, err error) {
	// busybox with no applet prints the banner and usage, exiting 0 or 1.
	out, _ := exec.Command(bin).CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "BusyBox v")
	if !ok {
		return "", "", fmt.Errorf("%s prints no BusyBox banner: %q", bin, line)
	}
	upstream, rest, _ = strings.Cut(rest, " ")
	if i, j := strings.Index(rest, "("), strings.Index(rest, ")"); i >= 0 && j > i {
		build = rest[i+1 : j]
	}
	return upstream, build, nil
}

func planBusybox(o *options) (*plan, error) {
	bin := o.busybox
	if bin == "" {
		var err error
		if bin, err = debianBusybox(); err != nil {
			return nil, err
		}
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		return nil, err
	}
	upstream, build, err := busyboxVersions(bin)
	if err != nil {
		return nil, err
	}
	if upstream != busyboxVersion {
		return nil, fmt.Errorf("%s is BusyBox %s, but the image is tagged %s (busyboxVersion): update the tag and the references to it (internal/localcluster.WaitImage)",
			bin, upstream, busyboxRef)
	}
	cfg := baseConfig()
	cfg.Config = v1.Config{
		Cmd: []string{"sh"},
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		Labels: map[string]string{
			"org.opencontainers.image.title":   "busybox",
			"org.opencontainers.image.version": upstream,
			"org.opencontainers.image.description": fmt.Sprintf(
				"BusyBox %s from Debian's busybox-static (banner: %s), built locally by hack/tools/images "+
					"(no registry is reachable): the local cluster's wait image and the tests' container image.",
				upstream, build),
			"org.opencontainers.image.base.name": "scratch",
		},
	}
	return &plan{
		Config:    cfg,
		Inputs:    map[string]string{"busybox-sha256": sum},
		CreatedBy: "busybox " + upstream + " (" + build + "): /bin/busybox, one /bin symlink per applet, /etc/passwd, /etc/group, /tmp",
		layer: func(string) (v1.Layer, error) {
			b, err := busyboxLayer(bin)
			if err != nil {
				return nil, err
			}
			return layerFromBytes(b)
		},
	}, nil
}

// busyboxLayer lays out the rootfs: the binary, a relative symlink per applet
// that `busybox --list` reports (all in /bin), root and nobody (65534).
func busyboxLayer(bin string) ([]byte, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(bin, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %v", bin, err)
	}
	entries := []tarEntry{
		{name: "bin", typ: tar.TypeDir, mode: 0o755},
		{name: "bin/busybox", typ: tar.TypeReg, mode: 0o755, data: data},
	}
	applets := 0
	for _, a := range strings.Fields(string(out)) {
		if a == "busybox" || strings.Contains(a, "/") {
			continue
		}
		entries = append(entries, tarEntry{name: "bin/" + a, typ: tar.TypeSymlink, mode: 0o777, link: "busybox"})
		applets++
	}
	if applets == 0 {
		return nil, fmt.Errorf("%s --list printed no applets", bin)
	}
	entries = append(entries,
		tarEntry{name: "etc", typ: tar.TypeDir, mode: 0o755},
		tarEntry{name: "etc/passwd", typ: tar.TypeReg, mode: 0o644, data: []byte(
			"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")},
		tarEntry{name: "etc/group", typ: tar.TypeReg, mode: 0o644, data: []byte("root:x:0:\nnogroup:x:65534:\n")},
		tarEntry{name: "root", typ: tar.TypeDir, mode: 0o700},
		tarEntry{name: "tmp", typ: tar.TypeDir, mode: 0o1777},
	)
	return writeLayerTar(entries)
}

// pause:local is the sandbox image the node's containerd is configured with
// (sandbox_image), built from hack/tools/pause.
var pauseRecipe = &recipe{
	name: "pause",
	ref:  "localhost/framework-plugins/pause:local",
	plan: planPause,
}

// findToolsDir returns the hack/tools module directory: the first directory
// from the working directory upwards that is it (go.mod and pause/main.go) or
// holds it at hack/tools.
func findToolsDir() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		for _, c := range []string{d, filepath.Join(d, "hack", "tools")} {
			if isFile(filepath.Join(c, "go.mod")) && isFile(filepath.Join(c, "pause", "main.go")) {
				return c, nil
			}
		}
		p := filepath.Dir(d)
		if p == d {
			return "", errors.New("hack/tools/pause/main.go not found above the working directory; pass --tools-dir")
		}
		d = p
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func planPause(o *options) (*plan, error) {
	dir := o.toolsDir
	if dir == "" {
		var err error
		if dir, err = findToolsDir(); err != nil {
			return nil, err
		}
	}
	src, err := dirSHA256(filepath.Join(dir, "pause"))
	if err != nil {
		return nil, err
	}
	goCmd := o.goCmd
	if goCmd == "" {
		goCmd = "go"
	}
	gover, err := exec.Command(goCmd, "env", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("%s env GOVERSION: %v", goCmd, err)
	}
	cfg := baseConfig()
	cfg.Config = v1.Config{
		Entrypoint: []string{"/pause"},
		User:       "65535:65535",
		Labels: map[string]string{
			"org.opencontainers.image.title": "pause",
			"org.opencontainers.image.description": "Sandbox (pause) container of the local cluster's real node: " +
				"a static Go PID 1 from hack/tools/pause that reaps zombies and exits 0 on SIGTERM/SIGINT, " +
				"built locally by hack/tools/images.",
			"org.opencontainers.image.base.name": "scratch",
		},
	}
	return &plan{
		Config:    cfg,
		Inputs:    map[string]string{"pause-source-sha256": src, "go": strings.TrimSpace(string(gover))},
		CreatedBy: "CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' ./pause",
		layer: func(work string) (v1.Layer, error) {
			bin := filepath.Join(work, "pause")
			cmd := exec.Command(goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./pause")
			cmd.Dir = dir
			// The binary goes into an image of this machine's platform; cgo
			// would make it depend on a libc the image does not have.
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("go build ./pause: %v\n%s", err, out)
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				return nil, err
			}
			b, err := writeLayerTar([]tarEntry{{name: "pause", typ: tar.TypeReg, mode: 0o755, data: data}})
			if err != nil {
				return nil, err
			}
			return layerFromBytes(b)
		},
	}, nil
}
