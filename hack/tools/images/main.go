// Command images builds the container images that the local cluster's real node
// (kubelet + containerd) needs, and the images of Volcano and of this project
// that users install and the install test runs, without a container engine:
// each image is assembled with go-containerregistry from files of this
// machine (Debian's busybox-static, Go programs built here, or a Debian root
// filesystem made by mmdebstrap), and written as a docker-save tarball
// (manifest.json with RepoTags, the config blob and gzip layers) that
// containerd imports offline:
//
//	ctr -n k8s.io images import _output/images/busybox.tar
//
// Usage:
//
//	images build --out DIR [--only NAMES] [--force]
//	             [--busybox PATH] [--tools-dir DIR] [--go PATH]
//	             [--version V] [--revision SHA] [--repo-root DIR] [--ca-certs FILE]
//	             [--platforms linux/amd64,linux/arm64]
//	images list [--only NAMES] [--version V] [--repo-root DIR]
//	images push --repo REGISTRY/PATH [--dir DIR] [--only NAMES] [--insecure] [--tag T]
//
// The binary images (gobin.go) are static Go binaries on a distroless-style
// base (a CA bundle, /etc/passwd with nonroot 65532, USER 65532:65532) with
// the OCI labels source, revision and version: this project's
// localhost/framework-plugins/{vc-controller-manager,vc-webhook-manager,vc-scheduler,
// gen-admission-secret}:<--version>, and Volcano's own managers and
// scheduler built from the volcano.sh/volcano module in go.mod,
// docker.io/volcanosh/{vc-controller-manager,vc-webhook-manager,vc-scheduler}:<its
// version in go.mod, e.g. v1.15.1> (short names stock-vc-*). They need Go
// and nothing else of the build machine (no dpkg, no Docker; Linux or
// macOS): the binaries are cross-compiled for every platform of --platforms
// (GOOS=linux, GOARCH of each, CGO_ENABLED=0) and the CA bundle is Mozilla's
// roots from the Go module golang.org/x/crypto/x509roots/fallback
// (roots.go; --ca-certs for another). Each is an OCI image index, one image
// per platform, written as the OCI image layout DIR/<name>.oci, and the
// image of this machine's platform also as DIR/<name>.tar (index.go); build
// prints each reference pinned by the index's digest with its platforms,
// "REF@sha256:... (linux/amd64, linux/arm64)". Their inputs are the
// binaries' sha256 (built on every run into DIR/.bin/<os>-<arch>; Go's
// build cache makes that a link step), the platforms and the CA bundle's.
//
// build writes DIR/<name>.tar (and for a binary image DIR/<name>.oci) for
// each selected image and, next to it, DIR/<name>.inputs: the sha256 of
// everything the image is made from (the image spec in this program, the
// busybox binary's sha256, the pause source and Go version, or training's
// package list). An image whose .inputs still matches and whose outputs
// exist is skipped ("up to date"); --force rebuilds it anyway (the
// training image's packages come from the archive, which the hash cannot see).
// The default selection is busybox,pause; training must be named.
//
// list prints the image references, one per line, in the selection's order.
//
// push sends the image indexes build wrote (DIR/<name>.oci, default
// _output/install-images) to a registry with go-containerregistry, so that
// neither Docker nor crane is needed: each to REGISTRY/PATH/<name>:<its tag>,
// with the credentials of the Docker config file ($DOCKER_CONFIG or
// ~/.docker/config.json; `docker login` or a hand-written auths entry) or
// anonymously. Its default selection is what Volcano's chart needs under one
// registry path: vc-controller-manager, vc-webhook-manager, vc-scheduler and
// gen-admission-secret. It prints each pushed reference pinned by the
// index's digest (the same build printed) with its platforms.
//
// Exit status: 0 on success, 2 on a usage error, 1 when an image cannot be built
// (missing busybox-static or mmdebstrap, a failed go build, an unwritable DIR);
// the error names the image and the step that failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage:
  images build --out DIR [--only NAMES] [--force] [--busybox PATH] [--tools-dir DIR] [--go PATH]
               [--version V] [--revision SHA] [--repo-root DIR] [--ca-certs FILE] [--platforms LIST]
  images list [--only NAMES] [--version V] [--repo-root DIR]
  images push --repo REGISTRY/PATH [--dir DIR] [--only NAMES] [--insecure] [--tag T]
images: `+strings.Join(allNames(), ", ")+` (default: `+strings.Join(defaultNames, ",")+`)`)
}

// run is main without os.Exit, so the test can drive it.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("images "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("only", strings.Join(defaultNames, ","), "comma-separated images to act on")
	var opts options
	var push pushOptions
	var platforms string
	switch cmd {
	case "build":
		fs.StringVar(&opts.out, "out", "", "directory for <name>.tar and <name>.inputs (created if missing)")
		fs.BoolVar(&opts.force, "force", false, "rebuild even when the inputs hash is unchanged")
		fs.StringVar(&opts.busybox, "busybox", "", "busybox binary (default: /bin/busybox of the busybox-static package)")
		fs.StringVar(&opts.toolsDir, "tools-dir", "", "the hack/tools module directory holding pause/ (default: found from the working directory)")
		fs.StringVar(&opts.goCmd, "go", "go", "go command used to build pause and the binary images")
		fs.StringVar(&opts.revision, "revision", "unknown", "org.opencontainers.image.revision of this project's images (a git commit)")
		fs.StringVar(&opts.repoRoot, "repo-root", "", "the framework-plugins module directory the binary images are built from (default: two levels above --tools-dir)")
		fs.StringVar(&opts.caCerts, "ca-certs", "", "PEM CA bundle of the binary images (default: Mozilla's roots from the Go module "+rootsModule+", not the build machine's)")
		fs.StringVar(&platforms, "platforms", defaultPlatforms, "platforms of the binary images, comma-separated linux/<GOARCH>: one image each in the image's index")
		fs.StringVar(&opts.version, "version", "", "tag and version label of this project's images, e.g. v1.15.1-fp.1 (required to build them)")
	case "list":
		fs.StringVar(&opts.version, "version", "", "tag of this project's images")
		fs.StringVar(&opts.repoRoot, "repo-root", "", "the framework-plugins module directory whose go.mod gives the stock images' tag (default: found from the working directory)")
	case "push":
		fs.StringVar(&push.dir, "dir", "_output/install-images", "directory holding <name>.tar (make images)")
		fs.StringVar(&push.repo, "repo", "", "registry path to push to, e.g. registry.example.com/framework-plugins (required)")
		fs.BoolVar(&push.insecure, "insecure", false, "plain HTTP to the registry (localhost and 127.0.0.1 always are)")
		fs.StringVar(&push.tag, "tag", "", "tag to push under (default: the tarball's, the Makefile's VERSION)")
		*only = strings.Join(pushDefaultNames, ",")
		fs.Lookup("only").DefValue = *only
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "images: unknown command %q\n", cmd)
		usage(stderr)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "images %s: unexpected arguments %q\n", cmd, fs.Args())
		return 2
	}
	recipes, err := selectRecipes(*only)
	if err != nil {
		fmt.Fprintf(stderr, "images %s: %v\n", cmd, err)
		return 2
	}
	if cmd == "push" {
		if push.repo == "" {
			fmt.Fprintln(stderr, "images push: --repo is required")
			return 2
		}
		for _, r := range recipes {
			if _, err := pushOne(context.Background(), r, &push, stdout); err != nil {
				fmt.Fprintf(stderr, "images push: %s: %v\n", r.name, err)
				return 1
			}
		}
		return 0
	}
	if cmd == "list" {
		for _, r := range recipes {
			ref, err := r.reference(&opts)
			if err != nil {
				fmt.Fprintf(stderr, "images list: %s: %v\n", r.name, err)
				return 1
			}
			fmt.Fprintln(stdout, ref)
		}
		return 0
	}
	if opts.out == "" {
		fmt.Fprintln(stderr, "images build: --out is required")
		return 2
	}
	if opts.platforms, err = parsePlatforms(platforms); err != nil {
		fmt.Fprintf(stderr, "images build: %v\n", err)
		return 2
	}
	for _, r := range recipes {
		if err := buildOne(r, &opts, stdout); err != nil {
			fmt.Fprintf(stderr, "images build: %s: %v\n", r.name, err)
			return 1
		}
	}
	return 0
}

// selectRecipes resolves a comma-separated list of short names, keeping the
// order given and dropping repeats; an unknown name is an error.
func selectRecipes(list string) ([]*recipe, error) {
	var out []*recipe
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		r := findRecipe(n)
		if r == nil {
			return nil, fmt.Errorf("unknown image %q (known: %s)", n, strings.Join(allNames(), ", "))
		}
		seen[n] = true
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--only selects no image")
	}
	return out, nil
}
