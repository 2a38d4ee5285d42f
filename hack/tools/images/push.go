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

// pushOne sends the image index of DIR/<name>.oci (build writes it: one
// image per platform) to <repo>/<last element of its repository>:<its tag,
// or o.tag>, with the credentials of the Docker config
// (~/.docker/config.json, $DOCKER_CONFIG) or anonymously, and prints
// "pushed DIR/<name>.oci -> REF@sha256:... (linux/amd64, linux/arm64)": the
// digest of the index the registry now serves, the one build printed, for
// pinning (docs/install.md). A runtime pulling it takes its own platform's
// image. Blobs the registry already has are not uploaded again.
func pushOne(ctx context.Context, r *recipe, o *pushOptions, stdout io.Writer) (name.Digest, error) {
	dir := filepath.Join(o.dir, r.name+layoutSuffix)
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return name.Digest{}, fmt.Errorf("%w (make images writes it)", err)
	}
	idx, src, err := readLayout(dir)
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
	if err := remote.WriteIndex(dst, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return name.Digest{}, err
	}
	d, err := idx.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	pinned, err := pinnedRef(dst.String(), idx)
	if err != nil {
		return name.Digest{}, err
	}
	fmt.Fprintf(stdout, "pushed %s -> %s\n", dir, pinned)
	return dst.Context().Digest(d.String()), nil
}
