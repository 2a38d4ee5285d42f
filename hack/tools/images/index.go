package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The binary images are multi-platform: one OCI image index per image, an
// image per platform in it (linux/amd64 and linux/arm64 by default, the
// binaries cross-compiled with GOOS/GOARCH and CGO off), written as an OCI
// image layout, DIR/<name>.oci. Its index.json has one entry, the image
// index, named with the image's reference (the annotations containerd and
// OCI tools read); push sends that index to a registry, under the digest
// build printed. Beside it DIR/<name>.tar is a docker-save tarball of this
// machine's platform's image, the one a local containerd imports (make
// images-load, the install test's Volcano images).

// layoutSuffix names an image's OCI layout directory: DIR/<name>.oci.
const layoutSuffix = ".oci"

// defaultPlatforms are the binary images' platforms unless --platforms says
// otherwise; the Makefile's IMAGE_PLATFORMS has the same default.
const defaultPlatforms = "linux/amd64,linux/arm64"

// Annotations of the layout's entry: the image's full reference (containerd's
// import names the image with it) and its tag (the OCI layout's convention).
const (
	containerdNameAnnotation = "io.containerd.image.name"
	ociRefNameAnnotation     = "org.opencontainers.image.ref.name"
)

// hostPlatform is the Linux platform of this machine's architecture: what a
// container runtime here runs, and what the tarball beside a layout holds.
func hostPlatform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
}

// parsePlatforms parses --platforms: comma-separated linux/<GOARCH>, each
// once. The binaries are cross-compiled with GOOS=linux GOARCH=<arch>.
func parsePlatforms(list string) ([]v1.Platform, error) {
	var out []v1.Platform
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return nil, err
		}
		if p.OS != "linux" || p.Architecture == "" || p.Variant != "" || p.OSVersion != "" {
			return nil, fmt.Errorf("platform %q: want linux/<GOARCH>, e.g. linux/amd64", s)
		}
		if seen[p.String()] {
			continue
		}
		seen[p.String()] = true
		out = append(out, *p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--platforms names no platform")
	}
	return out, nil
}

// hostVariant is the variant of p for this machine's platform, or nil.
func hostVariant(p *plan) *variant {
	for _, v := range p.Variants {
		if v.Platform == hostPlatform().String() {
			return v
		}
	}
	return nil
}

// ociLayerFromBytes is layerFromBytes with the OCI layer media type, for
// the images of an OCI index.
func ociLayerFromBytes(b []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// buildIndex makes p's image of every platform (OCI media types) and their
// index, writes the index as the OCI layout layoutPath and this machine's
// platform's image, if the index has it, as the docker-save tarball
// tarPath, and returns tag pinned by the index's digest with the platforms.
func buildIndex(p *plan, tag name.Tag, work, tarPath, layoutPath string) (string, error) {
	var adds []mutate.IndexAddendum
	var host v1.Image
	for _, v := range p.Variants {
		layer, err := v.layer(work)
		if err != nil {
			return "", fmt.Errorf("%s: making the layer: %w", v.Platform, err)
		}
		img, err := assemble(v.Config, v.CreatedBy, layer)
		if err != nil {
			return "", err
		}
		img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
		pl, err := v1.ParsePlatform(v.Platform)
		if err != nil {
			return "", err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pl}})
		if v == hostVariant(p) {
			host = img
		}
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	tmpLayout := filepath.Join(work, "layout")
	lp, err := layout.Write(tmpLayout, empty.Index)
	if err != nil {
		return "", err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		containerdNameAnnotation: tag.String(),
		ociRefNameAnnotation:     tag.TagStr(),
	})); err != nil {
		return "", fmt.Errorf("writing the OCI layout: %w", err)
	}
	if host != nil {
		tmp := filepath.Join(work, "image.tar")
		if err := tarball.WriteToFile(tmp, tag, host); err != nil {
			return "", fmt.Errorf("writing the tarball: %w", err)
		}
		if err := os.Rename(tmp, tarPath); err != nil {
			return "", err
		}
	} else if err := os.Remove(tarPath); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	if err := os.RemoveAll(layoutPath); err != nil {
		return "", err
	}
	if err := os.Rename(tmpLayout, layoutPath); err != nil {
		return "", err
	}
	return pinnedRef(tag.String(), idx)
}

// readLayout reads the image index of an OCI layout build wrote and the
// reference it was built as.
func readLayout(dir string) (v1.ImageIndex, name.Tag, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, name.Tag{}, err
	}
	m, err := root.IndexManifest()
	if err != nil {
		return nil, name.Tag{}, err
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, name.Tag{}, fmt.Errorf("%s: index.json has %d entries, want one image index", dir, len(m.Manifests))
	}
	ref := m.Manifests[0].Annotations[containerdNameAnnotation]
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return nil, name.Tag{}, fmt.Errorf("%s: the index's name %q: %w", dir, ref, err)
	}
	idx, err := root.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return nil, name.Tag{}, err
	}
	return idx, tag, nil
}

// indexPlatforms are the platforms of an index's images, in its order.
func indexPlatforms(idx v1.ImageIndex) ([]string, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range m.Manifests {
		if d.Platform == nil {
			out = append(out, "unknown")
			continue
		}
		out = append(out, d.Platform.String())
	}
	return out, nil
}

// pinnedRef is "REF@DIGEST (platform, ...)": ref pinned by the index's
// digest, which a registry serves the index under once pushed.
func pinnedRef(ref string, idx v1.ImageIndex) (string, error) {
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	ps, err := indexPlatforms(idx)
	if err != nil {
		return "", err
	}
	return ref + "@" + d.String() + " (" + strings.Join(ps, ", ") + ")", nil
}
