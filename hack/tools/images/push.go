package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// pushDefaultNames are the images Volcano's chart needs under one registry
// path and tag (installer/helm/volcano-values.yaml): this project's two
// managers, Volcano's scheduler rebuilt under our name, and the secret tool.
var pushDefaultNames = []string{"vc-controller-manager", "vc-webhook-manager", "vc-scheduler", "gen-admission-secret"}

// pushOptions are the push command's flags.
type pushOptions struct {
	dir      string // where build wrote DIR/<name>.tar
	repo     string // registry path pushed to, e.g. registry.example.com/framework-plugins
	insecure bool   // plain HTTP to the registry (localhost and 127.0.0.1 are always)
	tag      string // tag pushed under; "" for the tarball's own
}

// pushOne sends DIR/<name>.tar to <repo>/<last element of its repository>:<its
// tag, or o.tag>, with the credentials of the Docker config (~/.docker/config.json,
// $DOCKER_CONFIG) or anonymously, and prints "pushed REF@sha256:..." (the
// digest of the manifest the registry now holds, for pinning: docs/install.md).
// The tarball must hold one image with one tag, as build writes them. Blobs
// the registry already has are not uploaded again.
func pushOne(ctx context.Context, r *recipe, o *pushOptions, stdout io.Writer) (name.Digest, error) {
	tarPath := filepath.Join(o.dir, r.name+".tar")
	if _, err := os.Stat(tarPath); err != nil {
		return name.Digest{}, fmt.Errorf("%w (make images writes it)", err)
	}
	src, err := tarballTag(tarPath)
	if err != nil {
		return name.Digest{}, err
	}
	img, err := tarball.ImageFromPath(tarPath, &src)
	if err != nil {
		return name.Digest{}, err
	}
	var nameOpts []name.Option
	if o.insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	tag := src.TagStr()
	if o.tag != "" {
		tag = o.tag
	}
	dst, err := name.NewTag(o.repo+"/"+path.Base(src.RepositoryStr())+":"+tag, append(nameOpts, name.StrictValidation)...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("--repo %q: %w", o.repo, err)
	}
	if err := remote.Write(dst, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return name.Digest{}, err
	}
	d, err := img.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	ref := dst.Context().Digest(d.String())
	fmt.Fprintf(stdout, "pushed %s -> %s@%s\n", tarPath, dst, d)
	return ref, nil
}

// tarballTag is the one tag of a docker-save tarball's manifest.json.
func tarballTag(tarPath string) (name.Tag, error) {
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(tarPath) })
	if err != nil {
		return name.Tag{}, fmt.Errorf("%s: %w", tarPath, err)
	}
	if len(m) != 1 || len(m[0].RepoTags) != 1 {
		return name.Tag{}, fmt.Errorf("%s holds %d images, want one with one tag", tarPath, len(m))
	}
	return name.NewTag(m[0].RepoTags[0])
}
