package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// specFormat is hashed into every image's inputs: bump it when the way this
// program lays out a rootfs or a config changes, so existing tarballs rebuild.
const specFormat = 1

// options are the build command's flags.
type options struct {
	out      string // output directory
	force    bool   // ignore DIR/<name>.inputs
	busybox  string // busybox binary; "" = from dpkg -L busybox-static
	toolsDir string // hack/tools module dir; "" = search from the working directory
	goCmd    string // go command for pause and the binary images
	version  string // this project's images' tag and version label, e.g. v1.15.1-fp.1
	revision string // their revision label (a git commit)
	repoRoot string // framework-plugins module dir; "" = two levels above toolsDir
	caCerts  string // CA bundle of the binary images; "" = the one made from rootsModule
	// platforms are the binary images' platforms (--platforms); none = this
	// machine's architecture. Each is one image of the image's index.
	platforms []v1.Platform
}

// recipe is one image this program knows how to build.
type recipe struct {
	name string // short name: DIR/<name>.tar, and what --only takes
	ref  string // the reference containerd lists after import
	// refOf, if set, computes ref from the options (images tagged --version
	// or with the volcano module's version).
	refOf func(o *options) (string, error)
	// plan resolves the image's inputs from this machine (cheaply: no
	// building) into a plan whose hash decides whether to rebuild.
	plan func(o *options) (*plan, error)
}

// plan is a resolved image: everything in its exported fields goes into the
// inputs hash; layer makes the one filesystem layer (it may take long).
// A plan with Variants is an image index (the binary images): one image per
// platform, each with its own config and layer; Config, CreatedBy and layer
// are then unused.
type plan struct {
	Format    int
	Ref       string
	Config    v1.ConfigFile     // without RootFS.DiffIDs and History: the layer adds them
	Inputs    map[string]string // content hashes and versions of the files the layer is made from
	CreatedBy string            // the layer's history entry
	Variants  []*variant        `json:",omitempty"`
	layer     func(work string) (v1.Layer, error)
}

// variant is the image of one platform in an index.
type variant struct {
	Platform  string        // os/arch, as v1.Platform.String gives it
	Config    v1.ConfigFile // as plan.Config
	CreatedBy string
	layer     func(work string) (v1.Layer, error)
}

// reference is the image reference containerd lists after import.
func (r *recipe) reference(o *options) (string, error) {
	if r.refOf != nil {
		return r.refOf(o)
	}
	return r.ref, nil
}

// inputsHash is the hex sha256 of the plan's JSON (maps marshal with sorted keys).
func (p *plan) inputsHash() (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// The images in the order list and the default build use; training is opt-in
// because it downloads and installs a Debian system with PyTorch and MPI, and
// so are the Volcano images (goImages), which only the install test runs.
var (
	recipes      = append([]*recipe{busyboxRecipe, pauseRecipe, trainingRecipe}, goRecipes()...)
	defaultNames = []string{"busybox", "pause"}
)

func allNames() []string {
	var n []string
	for _, r := range recipes {
		n = append(n, r.name)
	}
	return n
}

func findRecipe(n string) *recipe {
	for _, r := range recipes {
		if r.name == n {
			return r
		}
	}
	return nil
}

// buildOne builds r into o.out unless its inputs are unchanged, and prints one
// line: "image REF ... up to date" or "image REF ... built (Ns, N MB) -> PATH"
// (an index: REF@DIGEST (platforms) ... built ... -> DIR/<name>.oci). The
// outputs are written under temporary names and renamed, and the .inputs
// file is written last, so an interrupted build is never taken as up to date.
func buildOne(r *recipe, o *options, stdout io.Writer) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	p, err := r.plan(o)
	if err != nil {
		return err
	}
	p.Format = specFormat
	ref, err := r.reference(o)
	if err != nil {
		return err
	}
	p.Ref = ref
	hash, err := p.inputsHash()
	if err != nil {
		return err
	}
	tarPath := filepath.Join(o.out, r.name+".tar")
	inputsPath := filepath.Join(o.out, r.name+".inputs")
	layoutPath := filepath.Join(o.out, r.name+layoutSuffix)
	if !o.force {
		old, err := os.ReadFile(inputsPath)
		if err == nil && strings.TrimSpace(string(old)) == hash && p.outputsExist(tarPath, layoutPath) {
			if p.Variants == nil {
				fmt.Fprintf(stdout, "image %s ... up to date\n", ref)
				return nil
			}
			// A layout that cannot be read is built again.
			if idx, _, err := readLayout(layoutPath); err == nil {
				if pinned, err := pinnedRef(ref, idx); err == nil {
					fmt.Fprintf(stdout, "image %s ... up to date\n", pinned)
					return nil
				}
			}
		}
	}
	start := time.Now()
	if err := os.Remove(inputsPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	work, err := os.MkdirTemp(o.out, "."+r.name+"-work-")
	if err != nil {
		return err
	}
	// Absolute: layer funcs run commands in other directories (go build in hack/tools).
	if work, err = filepath.Abs(work); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return err
	}
	shown, out := ref, tarPath
	if p.Variants != nil {
		if shown, err = buildIndex(p, tag, work, tarPath, layoutPath); err != nil {
			return err
		}
		out = layoutPath
	} else {
		layer, err := p.layer(work)
		if err != nil {
			return fmt.Errorf("making the layer: %w", err)
		}
		img, err := assemble(p.Config, p.CreatedBy, layer)
		if err != nil {
			return err
		}
		tmp := filepath.Join(work, r.name+".tar")
		if err := tarball.WriteToFile(tmp, tag, img); err != nil {
			return fmt.Errorf("writing the tarball: %w", err)
		}
		if err := os.Rename(tmp, tarPath); err != nil {
			return err
		}
	}
	if err := os.WriteFile(inputsPath, []byte(hash+"\n"), 0o644); err != nil {
		return err
	}
	size, err := treeSize(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "image %s ... built (%ds, %.1f MB) -> %s\n", shown,
		int(time.Since(start).Round(time.Second).Seconds()), float64(size)/1e6, out)
	return nil
}

// outputsExist reports whether what buildOne writes for p is all there: the
// tarball, or for an index its layout and, when one of its platforms is this
// machine's, the tarball of that platform's image.
func (p *plan) outputsExist(tarPath, layoutPath string) bool {
	if p.Variants == nil {
		return isFile(tarPath)
	}
	if !isFile(filepath.Join(layoutPath, "index.json")) {
		return false
	}
	return hostVariant(p) == nil || isFile(tarPath)
}

// treeSize is the size of a file, or of the files under a directory.
func treeSize(path string) (int64, error) {
	var n int64
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// assemble makes a one-layer image: config first, then the layer appended, which
// fills in rootfs.diff_ids and the history entry.
func assemble(config v1.ConfigFile, createdBy string, layer v1.Layer) (v1.Image, error) {
	cfg := config.DeepCopy()
	cfg.RootFS = v1.RootFS{Type: "layers"}
	cfg.History = nil
	// A fixed date like the layer's mtimes: same inputs, same image digest.
	cfg.Created = v1.Time{Time: layerTime}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: layerTime}, CreatedBy: createdBy, Comment: "built by hack/tools/images"},
	})
}

// baseConfig is the config every image shares: this machine's architecture
// (containerd's import unpacks only images matching its platform) and Linux.
func baseConfig() v1.ConfigFile {
	return v1.ConfigFile{Architecture: runtime.GOARCH, OS: "linux"}
}

// fileSHA256 is the hex sha256 of a file's content.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// dirSHA256 hashes the names and contents of a directory's regular files (not
// recursive), in name order.
func dirSHA256(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// layerFromBytes wraps an uncompressed tar held in memory (busybox and pause are
// a few MB); go-containerregistry gzips it when it needs the compressed form.
func layerFromBytes(b []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
}
