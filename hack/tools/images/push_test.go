package main

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// writeTestIndex writes what build writes for a binary image, DIR/<name>.oci
// and DIR/<name>.tar, for ref with random layers, one image per platform,
// and returns the index's digest.
func writeTestIndex(t *testing.T, dir, n, ref string, platforms ...string) string {
	t.Helper()
	p := &plan{}
	for _, pl := range platforms {
		arch := strings.TrimPrefix(pl, "linux/")
		p.Variants = append(p.Variants, &variant{
			Platform:  pl,
			Config:    v1.ConfigFile{OS: "linux", Architecture: arch},
			CreatedBy: "test " + pl,
			layer: func(string) (v1.Layer, error) {
				return random.Layer(1024, types.OCILayer)
			},
		})
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := buildIndex(p, tag, t.TempDir(), filepath.Join(dir, n+".tar"), filepath.Join(dir, n+".oci"))
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(shown, "@")
	return strings.Fields(shown[at+1:])[0]
}

// push sends the image indexes of make images to a registry (here one in
// this process on 127.0.0.1, spoken to over HTTP as ggcr does for loopback
// registries) under --repo, keeping each image's name and tag, and prints
// the digest the registry then serves for that tag: the index's, with an
// image for each platform.
func TestPushToRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	dir := t.TempDir()
	want := map[string]string{} // pushed reference -> digest
	for _, n := range []string{"vc-controller-manager", "vc-webhook-manager"} {
		d := writeTestIndex(t, dir, n, "localhost/framework-plugins/"+n+":v1.15.1-fp.9", "linux/amd64", "linux/arm64")
		want[host+"/team/fp/"+n+":v1.15.1-fp.9"] = d
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{"push", "--dir", dir, "--only", "vc-controller-manager,vc-webhook-manager", "--repo", host + "/team/fp"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := map[string]string{}
	for ref := range want {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Get(r)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		got[ref] = desc.Digest.String()
		// The pulled index is whole, an image for each platform with
		// every blob there.
		idx, err := desc.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		if err := validate.Index(idx); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
		ps, err := indexPlatforms(idx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, ps); diff != "" {
			t.Errorf("%s: platforms (-want +got):\n%s", ref, diff)
		}
		if line := ref + "@" + desc.Digest.String() + " (linux/amd64, linux/arm64)\n"; !strings.Contains(stdout.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, stdout.String())
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("digests served by the registry (-built +registry):\n%s", diff)
	}

	// --tag pushes the same index under another tag (the install test's
	// next release).
	stdout.Reset()
	if code := run([]string{"push", "--dir", dir, "--only", "vc-controller-manager", "--repo", host + "/team/fp", "--tag", "v1.15.1-fp.9-next"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--tag: exit %d: %s", code, stderr.String())
	}
	next, err := name.ParseReference(host + "/team/fp/vc-controller-manager:v1.15.1-fp.9-next")
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(next)
	if err != nil {
		t.Fatalf("pull %s: %v", next, err)
	}
	if w := want[host+"/team/fp/vc-controller-manager:v1.15.1-fp.9"]; desc.Digest.String() != w {
		t.Errorf("--tag: %s is %s, want %s", next, desc.Digest, w)
	}
}

// The push refuses what would send an image nowhere or somewhere unmeant.
func TestPushRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no --repo", []string{"push", "--dir", dir}, 2, "--repo is required"},
		{"no tarball", []string{"push", "--dir", dir, "--repo", "127.0.0.1:1/x", "--only", "vc-scheduler"}, 1, "make images writes it"},
		{"unknown image", []string{"push", "--repo", "127.0.0.1:1/x", "--only", "nope"}, 2, "unknown image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.wantCode || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.wantCode, tc.wantErr)
			}
		})
	}
}
