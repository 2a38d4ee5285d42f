package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// Environment variables the suite reads.
const (
	// EnvKubeconfig selects an existing cluster: when set, the suite runs
	// against it and starts nothing.
	EnvKubeconfig = "KUBECONFIG"
	// EnvKeepCluster=1 leaves a local cluster the suite started running after
	// the suite, for inspection; stop it with `go run ./hack/local-cluster down
	// --dir _output/e2e-cluster`.
	EnvKeepCluster = "E2E_KEEP_CLUSTER"
)

// ClusterDir is the root of the local cluster the suite starts, relative to
// the module root. It is not `make local-up`'s _output/local, so a demo or
// development cluster is neither reused nor stopped by the suite.
const ClusterDir = "_output/e2e-cluster"

// LogsDir receives the local cluster's component logs when a spec failed,
// relative to the module root (the cluster root itself is removed by Down).
const LogsDir = "_output/e2e-logs"

// TestCluster is the cluster the suite runs against.
type TestCluster struct {
	RESTConfig *rest.Config
	Kube       kubernetes.Interface
	Volcano    vcclientset.Interface
	// Local is set when the cluster is a localcluster (KUBECONFIG unset).
	Local *localcluster.Cluster
	// Dir is the local cluster's root directory ("" for KUBECONFIG clusters).
	Dir string
	// StartedBySuite is true when SetupCluster started the local cluster; only
	// then does TeardownCluster stop it. A local cluster that already ran in
	// Dir before the suite is left running.
	StartedBySuite bool
	// HostBefore is the host as SetupCluster found it, before starting the
	// local cluster; TeardownCluster checks that Down restored it.
	HostBefore localcluster.HostSnapshot
}

// cluster is set by SetupCluster; every Framework uses it.
var cluster *TestCluster

// Cluster returns the cluster SetupCluster connected to, nil before.
func Cluster() *TestCluster { return cluster }

// SetupCluster connects the suite to its cluster; it is the body of the
// suite's BeforeSuite. With KUBECONFIG set it uses that cluster as it is.
// Otherwise it starts a local cluster in ClusterDir (etcd, kube-apiserver,
// kube-controller-manager, vc-scheduler, this repository's controller and
// webhook managers, KWOK nodes) from the binaries of `make binaries`, or reuses
// the one already running there. Progress goes to out.
func SetupCluster(ctx context.Context, out io.Writer) (*TestCluster, error) {
	if kubeconfig := os.Getenv(EnvKubeconfig); kubeconfig != "" {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", EnvKubeconfig, kubeconfig, err)
		}
		cfg.QPS, cfg.Burst = 100, 200
		fmt.Fprintf(out, "using the cluster of %s=%s (%s)\n", EnvKubeconfig, kubeconfig, cfg.Host)
		tc, err := newTestCluster(cfg)
		if err != nil {
			return nil, err
		}
		cluster = tc
		return tc, nil
	}

	root, err := localcluster.ModuleRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, ClusterDir)
	// Logs saved by an earlier failed run would pass for this run's.
	if err := os.RemoveAll(filepath.Join(root, LogsDir)); err != nil {
		return nil, err
	}
	// Up on a running cluster returns it unchanged; Status tells the two
	// cases apart, so that only a cluster started here is stopped afterwards.
	st, err := localcluster.Status(dir)
	if err != nil {
		return nil, err
	}
	existing := st.Running()
	before := localcluster.TakeHostSnapshot(filepath.Join(root, "_output", "bin"))
	cl, err := localcluster.Up(ctx, localcluster.Config{
		RootDir:  dir,
		Webhook:  localcluster.WebhookOn,
		RealNode: RealNodeMode(root),
		Timeout:  ClusterUpTimeout,
		Out:      out,
	})
	if err != nil {
		// Up stopped whatever it started; its logs stay in dir.
		return nil, fmt.Errorf("starting the local cluster in %s (build its binaries with `make binaries`): %w", dir, err)
	}
	tc, err := newTestCluster(cl.RESTConfig)
	if err != nil {
		if !existing {
			err = errors.Join(err, localcluster.Down(dir))
		}
		return nil, err
	}
	tc.Local, tc.Dir, tc.StartedBySuite, tc.HostBefore = cl, dir, !existing, before
	if existing {
		fmt.Fprintf(out, "reusing the local cluster already running in %s; it is left running\n", dir)
	}
	fmt.Fprintf(out, "kubeconfig: %s\n", cl.Kubeconfig)
	cluster = tc
	return tc, nil
}

// EnvRealNode overrides the suite's real-node mode: auto, on or off.
const EnvRealNode = "E2E_REAL_NODE"

// NodePrereqsState is the file, relative to the module root, where `make
// node-prereqs` writes "ready" when the real node's packages are there (root
// on Debian 12 with cgroup v1 and no container runtime of the host's own,
// hack/node-prereqs.sh); it removes it on any other machine.
const NodePrereqsState = "_output/node-prereqs"

// RealNodeMode is the real-node mode of the suite's local cluster: E2E_REAL_NODE
// if set; else on where `make node-prereqs` found or installed the node's
// packages (NodePrereqsState under root says "ready"), so that such a machine
// fails loudly when the node does not start; else auto (a one-line note, KWOK
// nodes only, real-node specs skipped with that reason).
func RealNodeMode(root string) localcluster.RealNodeMode {
	if m := os.Getenv(EnvRealNode); m != "" {
		return localcluster.RealNodeMode(m)
	}
	if b, err := os.ReadFile(filepath.Join(root, NodePrereqsState)); err == nil && strings.TrimSpace(string(b)) == "ready" {
		return localcluster.RealNodeOn
	}
	return localcluster.RealNodeAuto
}

// HasRealNode reports whether the suite's cluster has the real node.
func (tc *TestCluster) HasRealNode() bool {
	return tc.Local != nil && tc.Local.RealNode != nil
}

func newTestCluster(cfg *rest.Config) (*TestCluster, error) {
	// The API server's warnings go to the GinkgoWriter, less the one every
	// Job create draws (kubeutil.Warnings).
	cs, err := kubeutil.NewClients(cfg, kubeutil.Warnings{Out: ginkgo.GinkgoWriter, Prefix: "warning from the API server: "})
	if err != nil {
		return nil, err
	}
	return &TestCluster{RESTConfig: cs.Config, Kube: cs.Kube, Volcano: cs.Volcano}, nil
}

// TeardownCluster is the body of the suite's AfterSuite, which Ginkgo also runs
// after failures, interrupts (SIGINT, SIGTERM) and the suite timeout. It stops
// the local cluster if SetupCluster started it (unless E2E_KEEP_CLUSTER=1) and
// leaves any other cluster alone. With failed set it first copies the
// components' logs to LogsDir, since Down removes the cluster's directory.
func TeardownCluster(failed bool, out io.Writer) error {
	tc := cluster
	if tc == nil || tc.Local == nil || !tc.StartedBySuite {
		return nil
	}
	var errs []error
	if failed {
		if dst, err := saveLogs(tc.Dir); err != nil {
			errs = append(errs, fmt.Errorf("saving the cluster logs: %w", err))
		} else {
			fmt.Fprintf(out, "component logs of the local cluster copied to %s\n", dst)
		}
	}
	if os.Getenv(EnvKeepCluster) == "1" {
		fmt.Fprintf(out, "%s=1: leaving the local cluster in %s running (kubeconfig %s)\n", EnvKeepCluster, tc.Dir, tc.Local.Kubeconfig)
		return errors.Join(errs...)
	}
	fmt.Fprintf(out, "stopping the local cluster in %s\n", tc.Dir)
	if err := localcluster.Down(tc.Dir); err != nil {
		errs = append(errs, err)
	}
	// Host hygiene: whatever the cluster started, mounted, created or changed
	// outside its directory must be gone or restored.
	if changes := localcluster.HostChanges(tc.HostBefore, localcluster.TakeHostSnapshot(tc.Local.BinDir)); len(changes) > 0 {
		errs = append(errs, fmt.Errorf("the local cluster left the host changed after Down:\n  %s", strings.Join(changes, "\n  ")))
	} else {
		fmt.Fprintln(out, "host check: no process, mount, network namespace, interface, cgroup, path or sysctl change left behind")
	}
	return errors.Join(errs...)
}

// saveLogs copies <dir>/logs/*.log into LogsDir (replacing an earlier copy) and
// returns LogsDir's absolute path.
func saveLogs(dir string) (string, error) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(root, LogsDir)
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), data, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}
