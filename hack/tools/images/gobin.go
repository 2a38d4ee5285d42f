package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The Volcano images: this project's (localhost/framework-plugins/..., tagged
// with --version; local names, for the user to push under their registry)
// and Volcano's own built from the volcano.sh/volcano module of the
// repository's go.mod (volcanosh/..., tagged with that module's version, e.g.
// v1.15.1, what Volcano's chart of that version runs by default). All of them
// are static Go binaries on distrolessBase.
const (
	// ourSource and volcanoSource are the org.opencontainers.image.source labels.
	ourSource     = "https://github.com/vcplugins/framework-plugins"
	volcanoSource = "https://github.com/volcano-sh/volcano"
	// volcanoModule is the module the stock images are built from; its
	// version in the repository's go.mod (stockVersion) is their tag.
	volcanoModule = "volcano.sh/volcano"
	// volcanoMark in an image's description stands for stockVersion.
	volcanoMark = "{volcano}"
	// versionPkg is Volcano's version package; every manager's --version prints its variables.
	versionPkg = "volcano.sh/volcano/pkg/version"
	// nonroot is the user every binary image runs as, distroless's "nonroot".
	nonroot = "65532"
	// admissionSecretTool is where Volcano's chart runs the admission-init
	// hook from (command ./gen-admission-secret.sh, working directory /).
	admissionSecretTool = "gen-admission-secret.sh"
)

// goBinary is one program of a binary image: package pkg built from the
// repository root to /<file>.
type goBinary struct {
	pkg  string
	file string
}

// goImage describes an image of static Go binaries; the first binary is the
// entrypoint.
type goImage struct {
	name     string // short name, also the tarball's
	repo     string // reference without the tag
	stock    bool   // built from the volcano module: version stockVersion, source Volcano's
	title    string
	desc     string // volcanoMark stands for the volcano module's version
	binaries []goBinary
}

// webhookBinaries are the webhook manager's: the manager and, for the chart's
// admission-init hook, installer/gen-admission-secret under the name the chart
// runs. Volcano's own image has a shell script there that needs openssl and
// kubectl; the stock-built image has our Go program instead, so that the
// chart's hook runs without a shell.
func webhookBinaries(manager string) []goBinary {
	return []goBinary{
		{pkg: manager, file: "vc-webhook-manager"},
		{pkg: "./installer/gen-admission-secret", file: admissionSecretTool},
	}
}

var goImages = []goImage{
	{name: "vc-controller-manager", repo: "localhost/framework-plugins/vc-controller-manager",
		title: "vc-controller-manager", desc: "Volcano {volcano}'s controller manager with the framework plugins (cmd/vc-controller-manager)",
		binaries: []goBinary{{pkg: "./cmd/vc-controller-manager", file: "vc-controller-manager"}}},
	{name: "vc-webhook-manager", repo: "localhost/framework-plugins/vc-webhook-manager",
		title: "vc-webhook-manager", desc: "Volcano {volcano}'s webhook manager with the framework admissions (cmd/vc-webhook-manager) and /gen-admission-secret.sh for the chart's admission-init hook",
		binaries: webhookBinaries("./cmd/vc-webhook-manager")},
	{name: "vc-scheduler", repo: "localhost/framework-plugins/vc-scheduler",
		title: "vc-scheduler", desc: "Volcano {volcano}'s scheduler, unchanged, under this project's tag (Volcano's chart shares one tag among all its images)",
		binaries: []goBinary{{pkg: "volcano.sh/volcano/cmd/scheduler", file: "vc-scheduler"}}},
	{name: "gen-admission-secret", repo: "localhost/framework-plugins/gen-admission-secret",
		title: "gen-admission-secret", desc: "Makes the admission webhook's serving certificate Secret (installer/gen-admission-secret)",
		binaries: []goBinary{{pkg: "./installer/gen-admission-secret", file: "gen-admission-secret"}}},
	{name: "stock-vc-controller-manager", repo: "docker.io/volcanosh/vc-controller-manager", stock: true,
		title: "vc-controller-manager", desc: "Volcano {volcano}'s controller manager built from the volcano.sh/volcano module",
		binaries: []goBinary{{pkg: "volcano.sh/volcano/cmd/controller-manager", file: "vc-controller-manager"}}},
	{name: "stock-vc-webhook-manager", repo: "docker.io/volcanosh/vc-webhook-manager", stock: true,
		title: "vc-webhook-manager", desc: "Volcano {volcano}'s webhook manager built from the volcano.sh/volcano module; /gen-admission-secret.sh is installer/gen-admission-secret of framework-plugins instead of Volcano's shell script",
		binaries: webhookBinaries("volcano.sh/volcano/cmd/webhook-manager")},
	{name: "stock-vc-scheduler", repo: "docker.io/volcanosh/vc-scheduler", stock: true,
		title: "vc-scheduler", desc: "Volcano {volcano}'s scheduler built from the volcano.sh/volcano module",
		binaries: []goBinary{{pkg: "volcano.sh/volcano/cmd/scheduler", file: "vc-scheduler"}}},
}

// goRecipes are the recipes of goImages, in that order.
func goRecipes() []*recipe {
	var rs []*recipe
	for i := range goImages {
		gi := &goImages[i]
		rs = append(rs, &recipe{
			name:  gi.name,
			refOf: gi.ref,
			plan:  gi.plan,
		})
	}
	return rs
}

// version is the image's version label and tag: --version for ours, the
// volcano module's version in go.mod for the stock ones.
func (gi *goImage) version(o *options) (string, error) {
	if gi.stock {
		return stockVersion(o)
	}
	return o.version, nil
}

// description is the image's description label, volcanoMark replaced by
// the volcano module's version.
func (gi *goImage) description(o *options) (string, error) {
	if !strings.Contains(gi.desc, volcanoMark) {
		return gi.desc, nil
	}
	v, err := stockVersion(o)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(gi.desc, volcanoMark, v), nil
}

// ref is the image reference containerd lists after import.
func (gi *goImage) ref(o *options) (string, error) {
	v, err := gi.version(o)
	if err != nil {
		return "", err
	}
	return gi.repo + ":" + v, nil
}

// stockVersion is the version of volcano.sh/volcano that the repository's
// module file requires (go.mod, or the one GOFLAGS' -modfile names, as for a
// Volcano line of the Makefile's LINE): the tag and version label of the
// images built from that module, the release Volcano's chart of the same
// version runs. go list reads it as every go build of the images does.
func stockVersion(o *options) (string, error) {
	root, err := repoRoot(o)
	if err != nil {
		return "", err
	}
	goCmd := o.goCmd
	if goCmd == "" {
		goCmd = "go"
	}
	key := goCmd + "\x00" + root
	if v, ok := stockVersions.Load(key); ok {
		return v.(string), nil
	}
	cmd := exec.Command(goCmd, "list", "-m", "-f", "{{.Version}}{{with .Replace}} => {{.Path}}{{end}}", volcanoModule)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v\n%s", volcanoModule, err, stderr.Bytes())
	}
	v := strings.TrimSpace(string(out))
	if strings.Contains(v, "=>") || !strings.HasPrefix(v, "v") {
		return "", fmt.Errorf("the module file of %s requires %s %s: the stock images must be built from a released version", root, volcanoModule, v)
	}
	stockVersions.Store(key, v)
	return v, nil
}

// stockVersions caches stockVersion by go command and repository root.
var stockVersions sync.Map

// repoRoot is the framework-plugins module directory: --repo-root, or two
// levels above the hack/tools module.
func repoRoot(o *options) (string, error) {
	if o.repoRoot != "" {
		return o.repoRoot, nil
	}
	dir := o.toolsDir
	if dir == "" {
		var err error
		if dir, err = findToolsDir(); err != nil {
			return "", err
		}
	}
	return filepath.Abs(filepath.Join(dir, "..", ".."))
}

// plan builds the binaries of every platform of o.platforms (Go's build
// cache makes an unchanged one a link step) into DIR/.bin/<os>-<arch>/<image>/
// and hashes them: the image is rebuilt exactly when a binary, the base or
// the platforms changed. Each platform is one image of the image index
// buildOne writes.
func (gi *goImage) plan(o *options) (*plan, error) {
	version, err := gi.version(o)
	if err != nil {
		return nil, err
	}
	if version == "" {
		return nil, errors.New("--version is required for this project's images")
	}
	desc, err := gi.description(o)
	if err != nil {
		return nil, err
	}
	root, err := repoRoot(o)
	if err != nil {
		return nil, err
	}
	base, err := planDistrolessBase(o)
	if err != nil {
		return nil, err
	}
	platforms := o.platforms
	if len(platforms) == 0 {
		platforms = []v1.Platform{hostPlatform()}
	}
	inputs := map[string]string{}
	for k, v := range base.inputs {
		inputs[k] = v
	}
	revision := o.revision
	if gi.stock {
		// Volcano's release commit is not known here; the module version is the revision.
		revision = version
	}
	source := ourSource
	if gi.stock {
		source = volcanoSource
	}
	var files []string
	for _, b := range gi.binaries {
		files = append(files, "/"+b.file)
	}
	var variants []*variant
	for _, pl := range platforms {
		binDir, err := filepath.Abs(filepath.Join(o.out, ".bin", pl.OS+"-"+pl.Architecture, gi.name))
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(binDir, 0o755); err != nil {
			return nil, err
		}
		for _, b := range gi.binaries {
			out := filepath.Join(binDir, b.file)
			if err := goBuild(o, root, b.pkg, out, version, revision, pl.Architecture); err != nil {
				return nil, fmt.Errorf("%s: %w", pl, err)
			}
			sum, err := fileSHA256(out)
			if err != nil {
				return nil, err
			}
			inputs[pl.String()+" bin/"+b.file] = sum
		}
		cfg := v1.ConfigFile{Architecture: pl.Architecture, OS: pl.OS}
		cfg.Config = v1.Config{
			Entrypoint: []string{"/" + gi.binaries[0].file},
			User:       nonroot + ":" + nonroot,
			WorkingDir: "/",
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=" + caBundlePath},
			Labels: map[string]string{
				"org.opencontainers.image.title":       gi.title,
				"org.opencontainers.image.description": desc + "; built by hack/tools/images on a distroless-style base (CA certificates, nonroot 65532).",
				"org.opencontainers.image.source":      source,
				"org.opencontainers.image.revision":    revision,
				"org.opencontainers.image.version":     version,
				"org.opencontainers.image.base.name":   "scratch",
			},
		}
		variants = append(variants, &variant{
			Platform:  pl.String(),
			Config:    cfg,
			CreatedBy: "distroless-style base (" + base.desc + ") + CGO_ENABLED=0 GOOS=" + pl.OS + " GOARCH=" + pl.Architecture + " go build -trimpath: " + strings.Join(files, ", "),
			layer: func(string) (v1.Layer, error) {
				entries, err := base.entries()
				if err != nil {
					return nil, err
				}
				for _, b := range gi.binaries {
					data, err := os.ReadFile(filepath.Join(binDir, b.file))
					if err != nil {
						return nil, err
					}
					entries = append(entries, tarEntry{name: b.file, typ: tar.TypeReg, mode: 0o755, data: data})
				}
				b, err := writeLayerTar(entries)
				if err != nil {
					return nil, err
				}
				return ociLayerFromBytes(b)
			},
		})
	}
	return &plan{Inputs: inputs, Variants: variants}, nil
}

// goBuild builds pkg from the repository root into out as a static Linux
// binary for goarch (a cross-compile where that is not this machine's), with
// Volcano's version variables set (every manager's --version prints them).
// The flags make the same sources give the same bytes, which the inputs hash
// relies on.
func goBuild(o *options, root, pkg, out, version, revision, goarch string) error {
	goCmd := o.goCmd
	if goCmd == "" {
		goCmd = "go"
	}
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.GitSHA=%s", versionPkg, version, versionPkg, revision)
	cmd := exec.Command(goCmd, "build", "-trimpath", "-buildvcs=false", "-ldflags="+ldflags, "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("GOARCH=%s go build %s: %v\n%s", goarch, pkg, err, b)
	}
	return nil
}

// caBundlePath is where Debian (and distroless) keep the CA bundle; Go's
// crypto/x509 looks there first.
const caBundlePath = "/etc/ssl/certs/ca-certificates.crt"

// distrolessBase is the part of every binary image that is not a binary: what
// gcr.io/distroless/static holds and a static Go program may need. CA
// certificates (Mozilla's roots from rootsModule, or --ca-certs),
// /etc/passwd and /etc/group with root, nobody and nonroot (65532,
// distroless's), the nonroot home and /tmp.
type distrolessBase struct {
	ca     []byte
	inputs map[string]string
	desc   string
}

// planDistrolessBase reads the CA bundle: --ca-certs, or by default the one
// made from rootsModule (roots.go), which needs nothing of the build
// machine: not its distribution's packages, nor its /etc/ssl/certs, where an
// administrator may have added a CA (a proxy's interception CA, say) that
// the images must not trust.
func planDistrolessBase(o *options) (*distrolessBase, error) {
	var ca []byte
	var desc string
	if o.caCerts != "" {
		b, err := os.ReadFile(o.caCerts)
		if err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
		ca, desc = b, "CA certificates from "+o.caCerts
	} else {
		var err error
		if ca, desc, err = moduleCABundle(); err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
	}
	sum := sha256.Sum256(ca)
	return &distrolessBase{ca: ca, desc: desc, inputs: map[string]string{"ca-certificates-sha256": hex.EncodeToString(sum[:])}}, nil
}

// Users of the base, as distroless has them.
const (
	basePasswd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	baseGroup = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

func (b *distrolessBase) entries() ([]tarEntry, error) {
	ca := b.ca
	return []tarEntry{
		{name: "etc", typ: tar.TypeDir, mode: 0o755},
		{name: "etc/passwd", typ: tar.TypeReg, mode: 0o644, data: []byte(basePasswd)},
		{name: "etc/group", typ: tar.TypeReg, mode: 0o644, data: []byte(baseGroup)},
		{name: "etc/ssl", typ: tar.TypeDir, mode: 0o755},
		{name: "etc/ssl/certs", typ: tar.TypeDir, mode: 0o755},
		{name: strings.TrimPrefix(caBundlePath, "/"), typ: tar.TypeReg, mode: 0o644, data: ca},
		{name: "home", typ: tar.TypeDir, mode: 0o755},
		// Owned by root in the tar (writeLayerTar); nonroot only needs it to exist as $HOME.
		{name: "home/nonroot", typ: tar.TypeDir, mode: 0o755},
		{name: "root", typ: tar.TypeDir, mode: 0o700},
		{name: "tmp", typ: tar.TypeDir, mode: 0o1777},
	}, nil
}
