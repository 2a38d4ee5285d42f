// Package measure holds what the commands under hack/ that measure this
// project's vc-controller-manager against Volcano's stock one on the local
// cluster (scale: one large job; sweep: many small ones) share: the
// implementations and their binaries, a fresh cluster per measurement, the
// jobs' pod template and plugin arguments, the CPU and memory of the
// cluster's processes from /proc, the metrics the managers serve, and the
// files of the reports (their medians: package internal/stats).
package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/hack/internal/cli"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// Implementations compared ("impls").
const (
	ImplOurs  = "ours"
	ImplStock = "stock"
	// ImplOursInline is ours with the TensorFlow jobs' --tf-config=inline:
	// every pod holds its whole TF_CONFIG, as with stock.
	ImplOursInline = "ours-inline"
	// ImplOursNoWait is ours with --wait=false on every framework plugin
	// (WithoutWaits): no pod gets the wait init container. It shows what the
	// waits cost; make sweep runs it on request only.
	ImplOursNoWait = "ours-nowait"
	// ImplStockWait is stock with the PyTorch jobs' --wait-master-enabled
	// (WithStockWait): Volcano's in-tree pytorch plugin then gives every
	// worker an init container that waits for the master's port, as ours
	// does by default. It changes no other framework's job, so the tools run
	// it only on jobs of pytorch.
	ImplStockWait = "stock-wait"
)

// Impls are the implementations in the order the reports list them.
var Impls = []string{ImplStock, ImplStockWait, ImplOurs, ImplOursInline, ImplOursNoWait}

// IsStock reports whether impl runs Volcano's stock controller manager
// (stock and stock-wait), which serves none of our metrics or profiles.
func IsStock(impl string) bool { return impl == ImplStock || impl == ImplStockWait }

// ImplBinary is the file in the binary directory that runs each impl as the
// cluster's controller manager (`make binaries stock-controller-manager`).
var ImplBinary = map[string]string{
	ImplOurs:       localcluster.ControllerManager,
	ImplOursInline: localcluster.ControllerManager,
	ImplOursNoWait: localcluster.ControllerManager,
	ImplStock:      localcluster.ControllerManager + "-stock",
	ImplStockWait:  localcluster.ControllerManager + "-stock",
}

// StockWebhookBinary is the file in the binary directory that runs
// Volcano's own webhook manager (`make stock-webhook-manager`).
const StockWebhookBinary = localcluster.WebhookManager + "-stock"

// CheckImpls returns an error naming the first of impls that is not one of
// Impls, and one if a binary of impls is missing in binDir.
func CheckImpls(impls []string, binDir string) error {
	for _, impl := range impls {
		bin, ok := ImplBinary[impl]
		if !ok {
			return fmt.Errorf("unknown impl %q: want one of %s", impl, strings.Join(Impls, ", "))
		}
		if _, err := os.Stat(filepath.Join(binDir, bin)); err != nil {
			return fmt.Errorf("%s controller manager: %w (run `make binaries stock-controller-manager`)", impl, err)
		}
	}
	return nil
}

// upTimeout bounds the start of one cluster (100 nodes take ~30s).
const upTimeout = 5 * time.Minute

// ClusterConfig is the cluster of one measurement.
type ClusterConfig struct {
	// Dir is the cluster's root directory; BinDir holds the binaries. Both
	// absolute.
	Dir, BinDir string
	// Nodes is the number of KWOK nodes (32 CPU, 256Gi, 110 pods each).
	Nodes int
	// Impl selects the controller manager (ImplBinary).
	Impl string
	// QPS and Burst are the --kube-api-qps and --kube-api-burst of the
	// controller manager and the webhook manager, for every impl, and the
	// client rate limits of Cluster.Kube and Cluster.Volcano.
	QPS, Burst int
	// ExtraArgs are added to the components' command lines after those
	// above, by component name (localcluster.Config.ExtraArgs).
	ExtraArgs map[string][]string
	// StockWebhook runs Volcano's own webhook manager
	// (localcluster.WebhookManager + "-stock", `make stock-webhook-manager`)
	// instead of ours: a stock cluster's whole pair. make scale sets it for
	// stock's impls, whose 2,000-pod TensorFlow job ours refuses (its inline
	// TF_CONFIG would pass MAX_ARG_STRLEN) while stock's admits it.
	StockWebhook bool
	// Keep leaves the cluster running after the measurement.
	Keep bool
}

// Cluster is a running cluster of one measurement.
type Cluster struct {
	*localcluster.Cluster
	// Kube speaks protobuf, which keeps a watcher of thousands of pods
	// cheap for the API server; Volcano JSON (its resources are CRDs).
	Kube    kubernetes.Interface
	Volcano vcclientset.Interface
	// PIDs are the cluster's processes, by component name.
	PIDs map[string]int
}

// AllPIDs returns the process IDs of all the cluster's components.
func (c *Cluster) AllPIDs() []int {
	out := make([]int, 0, len(c.Components))
	for _, comp := range c.Components {
		out = append(out, comp.PID)
	}
	return out
}

// WithCluster stops any cluster in cfg.Dir, starts a fresh one running
// cfg.Impl's controller manager, calls run with it and stops it again (unless
// cfg.Keep), also when run fails. It returns run's error, or the start's or
// the stop's.
//
// A measurement gets a cluster of its own: one measured after another on the
// same cluster inherits what the first left in kube-apiserver (stock's
// 2,000-pod TensorFlow job alone is 209 MiB in etcd and grows its heap by
// 2.7 GiB, so its garbage collector then runs seldom) and so measures the
// first as much as its own (docs/dev/performance.md).
func WithCluster(ctx context.Context, cfg ClusterConfig, run func(*Cluster) error) (err error) {
	if err := localcluster.Down(cfg.Dir); err != nil {
		return err
	}
	defer func() {
		if cfg.Keep {
			fmt.Printf("  leaving the cluster running in %s\n", cfg.Dir)
			return
		}
		fmt.Print("  stopping the cluster ... ")
		if derr := localcluster.Down(cfg.Dir); derr != nil {
			fmt.Println("FAILED")
			err = errors.Join(err, derr)
			return
		}
		fmt.Println("done")
	}()
	qps := []string{"--kube-api-qps", strconv.Itoa(cfg.QPS), "--kube-api-burst", strconv.Itoa(cfg.Burst)}
	extra := map[string][]string{localcluster.ControllerManager: qps, localcluster.WebhookManager: qps}
	for name, args := range cfg.ExtraArgs {
		extra[name] = append(append([]string(nil), extra[name]...), args...)
	}
	webhook := localcluster.WebhookManager
	if cfg.StockWebhook {
		webhook = StockWebhookBinary
	}
	lc, err := localcluster.Up(ctx, localcluster.Config{
		RootDir:                 cfg.Dir,
		BinDir:                  cfg.BinDir,
		Nodes:                   cfg.Nodes,
		Webhook:                 localcluster.WebhookOn,
		WebhookManagerBinary:    webhook,
		ControllerManagerBinary: ImplBinary[cfg.Impl],
		// The measurements are of the control plane on KWOK nodes; a real
		// node's kubelet and containerd would only add CPU noise.
		RealNode: localcluster.RealNodeOff,
		// The webhook manager gets the controller's QPS: Volcano's pod
		// validation GETs the PodGroup for every pod created, and at its
		// default QPS (50) that, not the controller, would bound the pod
		// creation rate.
		ExtraArgs: extra,
		Timeout:   upTimeout,
		Out:       cli.Indent(os.Stdout, "  "),
	})
	if err != nil {
		return err
	}
	c := &Cluster{Cluster: lc, PIDs: map[string]int{}}
	for _, comp := range lc.Components {
		c.PIDs[comp.Name] = comp.PID
	}
	if c.PIDs[localcluster.ControllerManager] == 0 {
		return errors.New("the cluster records no controller manager process")
	}
	rc := rest.CopyConfig(lc.RESTConfig)
	rc.QPS, rc.Burst = float32(cfg.QPS), cfg.Burst
	rc.ContentType = runtime.ContentTypeProtobuf // Kube's only (NewClients)
	cs, err := kubeutil.NewClients(rc, cli.Warnings)
	if err != nil {
		return err
	}
	c.Kube, c.Volcano = cs.Kube, cs.Volcano
	return run(c)
}
