package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
)

// VcctlTimeout bounds one vcctl command.
const VcctlTimeout = 30 * time.Second

// KubeconfigPath returns a kubeconfig file for the cluster, for command-line
// tools: the local cluster's admin kubeconfig, or the KUBECONFIG the suite
// was given (when it lists several files, their merge, written once into a
// temporary file).
func (tc *TestCluster) KubeconfigPath() (string, error) {
	if tc.Local != nil {
		return tc.Local.Kubeconfig, nil
	}
	files := filepath.SplitList(os.Getenv(EnvKubeconfig))
	if len(files) == 1 {
		return filepath.Abs(files[0])
	}
	mergedOnce.Do(func() {
		cfg, err := clientcmd.NewDefaultClientConfigLoadingRules().Load()
		if err != nil {
			mergedErr = err
			return
		}
		f, err := os.CreateTemp("", "e2e-kubeconfig-")
		if err != nil {
			mergedErr = err
			return
		}
		_ = f.Close()
		mergedPath, mergedErr = f.Name(), clientcmd.WriteToFile(*cfg, f.Name())
	})
	return mergedPath, mergedErr
}

var (
	mergedOnce sync.Once
	mergedPath string
	mergedErr  error
)

// BinDir is the directory of the binaries `make binaries` builds: the local
// cluster's, else <module root>/_output/bin.
func (tc *TestCluster) BinDir() string {
	if tc.Local != nil && tc.Local.BinDir != "" {
		return tc.Local.BinDir
	}
	return Path(filepath.Join("_output", "bin"))
}

// Vcctl runs Volcano's vcctl (volcano.sh/volcano cmd/cli of the line's
// module, v1.15.1 by default, built into BinDir by `make binaries`) with args followed by --kubeconfig of the
// cluster, and returns its standard output. It fails the spec if vcctl is
// missing, and returns an error with its output if it exits non-zero (vcctl
// prints its errors on standard output).
func (f *Framework) Vcctl(ctx context.Context, args ...string) (string, error) {
	tc := Cluster()
	bin := filepath.Join(tc.BinDir(), "vcctl")
	_, err := os.Stat(bin)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "vcctl is built by `make binaries`")
	kubeconfig, err := tc.KubeconfigPath()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ctx, cancel := context.WithTimeout(ctx, VcctlTimeout)
	defer cancel()
	args = append(args, "--kubeconfig", kubeconfig)
	cmd := exec.CommandContext(ctx, bin, args...)
	// vcctl also reads $KUBECONFIG for its flag's default.
	cmd.Env = append(os.Environ(), EnvKubeconfig+"="+kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ginkgo.GinkgoWriter.Printf("vcctl %s\n", strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("vcctl %s: %w\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}
