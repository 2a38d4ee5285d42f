package main

import (
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// training:local is a Debian system with the frameworks the e2e Jobs run for
// real: PyTorch (torchrun's env:// rendezvous), scikit-learn, mpi4py over Open MPI
// and MPICH's tools, ssh for the MPI plugin's launcher, XGBoost 1.7 (its
// collective and tracker) and Dask's distributed scheduler and workers.
var trainingRecipe = &recipe{
	name: "training",
	ref:  "localhost/framework-plugins/training:local",
	plan: planTraining,
}

const trainingSuite = "bookworm"

var trainingPackages = []string{
	"python3", "python3-torch", "python3-sklearn", "python3-mpi4py",
	"python3-xgboost", "python3-dask", "python3-distributed",
	"openmpi-bin", "mpich", "openssh-server", "openssh-client",
	// OpenBSD's nc for Volcano's in-tree pytorch wait (`nc -z host port`
	// under sh), which make startup's stock-wait runs in this image.
	"netcat-openbsd",
}

// mmdebstrapArgs is the whole mmdebstrap command line but the target; the mirror
// is mmdebstrap's default for a stable suite (the main archive plus updates and
// security).
func mmdebstrapArgs() []string {
	return []string{
		"--variant=minbase",
		"--include=" + strings.Join(trainingPackages, ","),
		// runc mounts /dev; device nodes in a layer only matter to unprivileged unpacking.
		"--skip=output/dev",
		// Documentation is most of no use in a container and a few hundred MB here.
		"--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-include=/usr/share/doc/*/copyright",
		// sshd refuses to start without its privilege separation directory, and
		// nothing in a pod creates it (no init; the CRI does not mount /run).
		// mmdebstrap empties /run after the hooks unless told not to.
		"--skip=cleanup/run",
		`--customize-hook=mkdir -p "$1/run/sshd" && chmod 0755 "$1/run/sshd"`,
		trainingSuite,
	}
}

func planTraining(o *options) (*plan, error) {
	ver, err := exec.Command("mmdebstrap", "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("mmdebstrap is not installed (apt-get install mmdebstrap): %v", err)
	}
	cfg := baseConfig()
	cfg.Config = v1.Config{
		Cmd: []string{"bash"},
		Env: []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"LANG=C.UTF-8",
			// Pods run as root; Open MPI's mpirun refuses to without these.
			"OMPI_ALLOW_RUN_AS_ROOT=1",
			"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		},
		Labels: map[string]string{
			"org.opencontainers.image.title": "training",
			"org.opencontainers.image.description": "Debian " + trainingSuite + " (mmdebstrap --variant=minbase) with " +
				strings.Join(trainingPackages, ", ") + ", built locally by hack/tools/images.",
			"org.opencontainers.image.base.name": "debian:" + trainingSuite,
		},
	}
	args := mmdebstrapArgs()
	return &plan{
		Config: cfg,
		Inputs: map[string]string{
			"mmdebstrap": strings.TrimSpace(string(ver)),
			"args":       strings.Join(args, "\x00"),
		},
		CreatedBy: "mmdebstrap " + strings.Join(args, " ") + " -",
		layer: func(work string) (v1.Layer, error) {
			gz := filepath.Join(work, "rootfs.tar.gz")
			if err := mmdebstrapToGzip(args, gz); err != nil {
				return nil, err
			}
			// The compressed file is used as is; only the diff ID needs a
			// decompressing pass.
			return tarball.LayerFromFile(gz)
		},
	}, nil
}

// mmdebstrapToGzip runs mmdebstrap with the tarball on its stdout ("-" target)
// and gzips it into path in one pass, so the uncompressed rootfs never lands on
// disk. mmdebstrap's progress goes to stderr.
func mmdebstrapToGzip(args []string, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return err
	}
	cmd := exec.Command("mmdebstrap", append(append([]string(nil), args...), "-")...)
	cmd.Stdout = zw
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mmdebstrap: %v", err)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}
