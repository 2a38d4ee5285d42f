package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ModulePath is the module this package belongs to; relative default paths are
// resolved against the directory of its go.mod (see ModuleRoot).
const ModulePath = "github.com/vcplugins/framework-plugins"

// Component names: the log file, PID file and state entry of each process use them.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	WebhookManager        = "vc-webhook-manager"
	Scheduler             = "vc-scheduler"
	ControllerManager     = "vc-controller-manager"
	Kwok                  = "kwok"
)

// Keys of State.Ports that are not components: the healthz listeners
// (--healthz-address) of the two managers, which also serve /metrics; the
// webhook manager's speaks TLS with its serving certificate.
const (
	ControllerManagerHealthz = ControllerManager + "-healthz"
	WebhookManagerHealthz    = WebhookManager + "-healthz"
)

// EnvBinDir names the environment variable that, when set, is the default
// Config.BinDir: `make test-e2e KUBE=1.36` points the e2e suite's cluster at
// the binaries of that Kubernetes release (_output/kube-<version>/bin).
const EnvBinDir = "LOCAL_CLUSTER_BIN_DIR"

// GPUResource is the extended resource the fake nodes advertise for GPUs.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// WebhookMode says whether Up starts the webhook manager.
type WebhookMode string

const (
	// WebhookAuto starts the webhook manager if its binary exists in BinDir.
	WebhookAuto WebhookMode = "auto"
	// WebhookOn requires the webhook manager: Up fails if the binary is missing.
	WebhookOn WebhookMode = "on"
	// WebhookOff never starts it; no webhook configuration is registered.
	WebhookOff WebhookMode = "off"
)

// Config describes the local cluster Up starts. The zero value is usable: every
// empty field takes the default documented on it.
type Config struct {
	// RootDir holds everything of the cluster: kubeconfig, state.json, pki/,
	// logs/<component>.log, pids/<component>.pid and etcd's data. Default
	// <module root>/_output/local; a relative path is taken relative to the
	// module root.
	RootDir string
	// BinDir holds the component binaries (etcd, kube-apiserver,
	// kube-controller-manager, vc-scheduler, vc-controller-manager, kwok and
	// optionally vc-webhook-manager), as built by `make binaries`. Default
	// $LOCAL_CLUSTER_BIN_DIR (EnvBinDir) if set, else <module
	// root>/_output/bin; relative paths as for RootDir.
	BinDir string
	// Nodes is the number of fake KWOK nodes, named kwok-node-0 ... Default 4.
	Nodes int
	// NodeResources is the capacity and allocatable of every node. Default
	// 32 CPU, 256Gi memory, 8 nvidia.com/gpu and 110 pods.
	NodeResources corev1.ResourceList
	// Webhook says whether to start the webhook manager. Default WebhookAuto.
	Webhook WebhookMode
	// Webhooks are the admission webhooks registered for the webhook manager,
	// served at https://127.0.0.1:<port><Path>. Default VolcanoWebhooks().
	Webhooks []Webhook
	// ControllerManagerBinary is the file name in BinDir run as the Volcano
	// controller manager. Default "vc-controller-manager" (this repository's
	// ./cmd/vc-controller-manager); "vc-controller-manager-stock" runs Volcano's.
	ControllerManagerBinary string
	// WebhookManagerBinary is the file name in BinDir run as the Volcano
	// webhook manager. Default "vc-webhook-manager" (this repository's
	// ./cmd/vc-webhook-manager, with the framework admission: its
	// configurations are registered from the Helm chart);
	// "vc-webhook-manager-stock" runs Volcano's own, with Volcano's webhooks
	// only.
	WebhookManagerBinary string
	// SchedulerConf is the vc-scheduler configuration (YAML). Default
	// DefaultSchedulerConf.
	SchedulerConf string
	// KwokConfig is the KWOK configuration (YAML documents, e.g. Stage
	// objects), passed with --config. Default DefaultKwokConfig: pods turn
	// Running at once and, if owned by a Job-kind object (Volcano Jobs
	// included), Succeeded right after, unless the AnnotationPod* annotations
	// say otherwise. KwokBuiltin selects KWOK's compiled-in stages.
	KwokConfig string
	// VolcanoDir is the volcano.sh/volcano module directory whose
	// config/crd/{volcano,jobflow}/bases are applied. Default: the output of
	// `go list -m -f {{.Dir}} volcano.sh/volcano` in the module root.
	VolcanoDir string
	// ExtraArgs are appended to the command line of the component with that
	// name (see the component name constants), after the defaults, so they can
	// override them: pflag keeps the last value of a repeated flag.
	ExtraArgs map[string][]string
	// NoVolcano starts no Volcano: no CRDs, scheduler, controller manager or
	// webhook manager, for installing Volcano into the cluster with its Helm
	// chart (onto the real node, whose pods then reach the API server and are
	// reached by it: incluster.go). Default false.
	NoVolcano bool
	// KubeScheduler starts Kubernetes' kube-scheduler beside Volcano's
	// scheduler, for pods that ask for the default scheduler (Volcano's own
	// e2e suites create some: make conformance). A cluster without Volcano
	// (NoVolcano) runs it anyway. Default false.
	KubeScheduler bool
	// RealNode says whether to start the real node (kubelet, containerd,
	// CNI bridge, CoreDNS) beside the KWOK nodes. Default RealNodeAuto.
	RealNode RealNodeMode
	// Registry starts an image registry with the real node: BinDir/registry
	// (hack/tools/registry, go-containerregistry's) on 127.0.0.1, its port
	// forwarded into the node's network namespace, so that images pushed to
	// State.RegistryAddress are pulled by the node's containerd from the same
	// address, as a user's nodes pull from their registry. Ignored without
	// the real node. Default false.
	Registry bool
	// ImageDir holds the image tarballs the real node loads (RealNodeImages),
	// as `make node-images` writes them. Default <module root>/_output/images.
	ImageDir string
	// Timeout bounds the whole of Up, process starts and readiness waits
	// included. Default 3 minutes.
	Timeout time.Duration
	// Out receives one progress line per step with the seconds it took.
	// Default io.Discard.
	Out io.Writer
}

// DefaultNodeResources returns the default node shape: 32 CPU, 256Gi memory,
// 8 nvidia.com/gpu and 110 pods.
func DefaultNodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		GPUResource:           resource.MustParse("8"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
}

// DefaultSchedulerConf is Volcano's default scheduler configuration
// (pkg/scheduler/util.go, the same in v1.15.1 and v1.14.1) plus binpack. The gang plugin is what makes a job
// wait until minAvailable pods fit at once, so e2e tests see real gang
// scheduling; binpack packs pods onto few nodes as production setups commonly do.
const DefaultSchedulerConf = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`

// withDefaults returns a copy of c with every empty field defaulted and every
// path absolute. It returns an error if the module root cannot be found while
// a relative path needs it.
func (c Config) withDefaults() (Config, error) {
	if c.BinDir == "" {
		c.BinDir = os.Getenv(EnvBinDir)
	}
	needRoot := c.RootDir == "" || c.BinDir == "" || !filepath.IsAbs(c.RootDir) || !filepath.IsAbs(c.BinDir)
	var root string
	if needRoot {
		var err error
		if root, err = ModuleRoot(); err != nil {
			return c, err
		}
	}
	abs := func(p, def string) string {
		if p == "" {
			p = def
		}
		return AbsUnder(root, p)
	}
	c.RootDir = abs(c.RootDir, filepath.Join("_output", "local"))
	c.BinDir = abs(c.BinDir, filepath.Join("_output", "bin"))
	if c.ImageDir == "" && root == "" {
		// A caller with absolute paths and no module root: images beside the binaries.
		c.ImageDir = filepath.Join(filepath.Dir(c.BinDir), "images")
	}
	c.ImageDir = abs(c.ImageDir, filepath.Join("_output", "images"))
	if c.Nodes <= 0 {
		c.Nodes = 4
	}
	if len(c.NodeResources) == 0 {
		c.NodeResources = DefaultNodeResources()
	}
	switch c.Webhook {
	case "":
		c.Webhook = WebhookAuto
	case WebhookAuto, WebhookOn, WebhookOff:
	default:
		return c, fmt.Errorf("webhook mode %q: want %q, %q or %q", c.Webhook, WebhookAuto, WebhookOn, WebhookOff)
	}
	switch c.RealNode {
	case "":
		c.RealNode = RealNodeAuto
	case RealNodeAuto, RealNodeOn, RealNodeOff:
	default:
		return c, fmt.Errorf("real node mode %q: want %q, %q or %q", c.RealNode, RealNodeAuto, RealNodeOn, RealNodeOff)
	}
	if len(c.Webhooks) == 0 {
		c.Webhooks = VolcanoWebhooks()
	}
	if c.ControllerManagerBinary == "" {
		c.ControllerManagerBinary = ControllerManager
	}
	if c.WebhookManagerBinary == "" {
		c.WebhookManagerBinary = WebhookManager
	}
	if c.SchedulerConf == "" {
		c.SchedulerConf = DefaultSchedulerConf
	}
	if c.KwokConfig == "" {
		c.KwokConfig = DefaultKwokConfig
	}
	if c.Timeout <= 0 {
		c.Timeout = 3 * time.Minute
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	return c, nil
}

// AbsUnder returns p cleaned if it is absolute, else p joined to root (the
// module root for this package's relative defaults).
func AbsUnder(root, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(root, p)
}

// ModuleRoot returns the directory of the go.mod declaring ModulePath, searched
// from the working directory upwards, so the defaults work from `make` at the
// top as well as from `go test` in test/e2e/.... It returns an error if no
// such go.mod encloses the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if modulePathOf(filepath.Join(dir, "go.mod")) == ModulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of " + ModulePath + " encloses the working directory; set Config.RootDir and Config.BinDir to absolute paths")
		}
		dir = parent
	}
}

// modulePathOf returns the module path declared by the go.mod file, or "".
func modulePathOf(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
