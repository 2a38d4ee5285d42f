package localcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Names of the real node's components (log files, PID files, state entries).
const (
	Containerd = "containerd"
	Kubelet    = "kubelet"
	CoreDNS    = "coredns"
	NetnsProxy = "netns-proxy"
	Registry   = "registry"
)

// RealNodeMode says whether Up starts a real node beside the KWOK nodes.
type RealNodeMode string

const (
	// RealNodeAuto starts the real node if this machine can run one (Linux,
	// root, cgroups, the node's binaries, packages and images present) and
	// otherwise prints one line saying why not and runs KWOK nodes only.
	RealNodeAuto RealNodeMode = "auto"
	// RealNodeOn requires the real node: Up fails, naming what is missing.
	RealNodeOn RealNodeMode = "on"
	// RealNodeOff never starts it.
	RealNodeOff RealNodeMode = "off"
)

// The real node as pods and users see it.
const (
	// RealNodeName is the real node's name. The kubelet registers as
	// "localhost" because the apiserver reaches kubelets by their Hostname
	// address (--kubelet-preferred-address-types=Hostname), and "localhost" is
	// the one name that resolves to the loopback address the kubelet's port is
	// forwarded to; the kubelet refuses a loopback --node-ip.
	RealNodeName = "localhost"
	// RealNodeLabel (value "true") marks the real node; a Job selects it with
	// nodeSelector {RealNodeLabel: "true"}.
	RealNodeLabel = "node.vcplugins.io/real"
	// RealNodeTaint (value "true", NoSchedule) keeps pods that do not ask for
	// the real node off it: the e2e specs and demos written for KWOK nodes
	// would otherwise try to run their images for real. A Job for the real
	// node tolerates it (RealNodeToleration).
	RealNodeTaint = RealNodeLabel
	// ClusterDomain is the DNS domain of the cluster's Services and pods.
	ClusterDomain = "cluster.local"

	// podSubnet is the real node's pod network. It exists only inside the
	// node's network namespace: the bridge holds podGateway (also the address
	// of the cluster DNS), pods get a route to the subnet and nothing else.
	podSubnet  = "10.245.0.0/24"
	podGateway = "10.245.0.1"
	podBridge  = "vcp0"
	// netnsPrefix starts the name of every real node's network namespace; a
	// second one on the machine would collide on the kubelet's fixed
	// device-plugin socket, so Up refuses to start one while another exists.
	netnsPrefix = "vcplugins-"
	// kubeletCgroupPrefix starts the kubelet's cgroup root, in cgroupfs form,
	// that holds all of the node's pods (under every v1 hierarchy, or the
	// unified one on a cgroup v2 host), so Down finds every process and
	// cgroup. With the systemd driver the cgroup is the slice the kubelet
	// makes of it, "/vcplugins_<id>.slice" (RealNodeState.cgroupPath).
	kubeletCgroupPrefix = "/vcplugins-"
)

// RealNodeToleration is the toleration a pod needs for the real node's taint.
func RealNodeToleration() corev1.Toleration {
	return corev1.Toleration{Key: RealNodeTaint, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}
}

// RealNodeState records what the real node started and changed on the host,
// enough for Down to undo it from state.json alone.
type RealNodeState struct {
	// Netns is the network namespace of containerd, the kubelet, CoreDNS and
	// the pod bridge (a name under /run/netns).
	Netns string `json:"netns"`
	// CgroupRoot is the kubelet's cgroup root, e.g. /vcplugins-1a2b3c4d, in
	// cgroupfs form whatever the driver (as the kubelet takes it).
	CgroupRoot string `json:"cgroupRoot"`
	// CgroupDriver is the kubelet's and runc's cgroup driver, "systemd" on a
	// host booted with systemd, else "cgroupfs" ("" in a state written before
	// the driver was recorded: cgroupfs).
	CgroupDriver string `json:"cgroupDriver,omitempty"`
	// SystemdSlice is, with the systemd driver, the transient slice unit the
	// node started for its cgroup root, e.g. vcplugins_1a2b3c4d.slice; Down
	// stops it. Its cgroup is /vcplugins_1a2b3c4d.slice in every hierarchy.
	SystemdSlice string `json:"systemdSlice,omitempty"`
	// ContainerdSocket is containerd's gRPC socket.
	ContainerdSocket string `json:"containerdSocket"`
	// Ctr is the path of the ctr of the node's containerd (in BinDir/node),
	// for clients of ContainerdSocket: no ctr need be on PATH.
	Ctr string `json:"ctr,omitempty"`
	// KubeletPort is the kubelet's port, on 127.0.0.1 in the namespace and,
	// through the proxy, on the host.
	KubeletPort int `json:"kubeletPort"`
	// DNS is the cluster DNS address pods use (podGateway).
	DNS string `json:"dns"`
	// Sysctls are the values of the sysctls the kubelet sets, read before it
	// started; Down writes them back.
	Sysctls map[string]string `json:"sysctls"`
	// CreatedPaths are host paths outside the cluster root that did not exist
	// before the node started (directories containerd and the kubelet create at
	// fixed places); Down removes them.
	CreatedPaths []string `json:"createdPaths"`
	// NetnsBefore are the entries of /run/netns before the node started. A
	// pod namespace Down deletes is a new cni-* entry that a process of the
	// node's cgroups is in (podNetnsOf), never one of the host's.
	NetnsBefore []string `json:"netnsBefore"`
	// UnifiedCgroup is the unified hierarchy's mount point where the node's
	// cgroups are there (a cgroup v2 host), "" on a cgroup v1 host.
	UnifiedCgroup string `json:"unifiedCgroup,omitempty"`
	// SubtreeBefore are the controllers its root passed on to its children
	// (cgroup.subtree_control) before the node started. The node enables
	// those the kubelet needs, and runc all the others, for its cgroups;
	// Down disables those that were not there before.
	SubtreeBefore []string `json:"subtreeBefore,omitempty"`
}

// kernelSysctls are the sysctls the kubelet sets at start unless
// protectKernelDefaults is on (which makes it fail instead, on a machine
// whose defaults differ): pkg/kubelet/cm's setupKernelTunables.
var kernelSysctls = []string{
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
}

// hostPaths are the places outside the cluster root that containerd 2.4
// (libcni's cache in /var/lib/cni) and the kubelet (1.30 to 1.35) write to
// whatever their configuration says, and
// /run/mount, the directory of util-linux's mount table that the mount(8) the
// kubelet runs creates where it is missing. /usr/libexec/kubernetes is
// kube-controller-manager's default FlexVolume directory, which it creates at
// start: Up points it under the root (--flex-volume-plugin-dir), and the
// path is here so that a host check notices if it is made again; so is
// /run/nri, the directory of the NRI socket containerd 2.x makes unless NRI
// is disabled (containerdConfig disables it), and /run/containerd, where its
// shims' sockets go unless socket_dir says otherwise (containerdConfig puts
// them in shimSocketDir).
var hostPaths = []string{
	"/run/netns",
	"/run/containerd",
	"/run/nri",
	"/run/mount",
	"/var/lib/cni",
	"/var/lib/kubelet",
	"/var/log/containers",
	"/var/log/pods",
	"/usr/libexec/kubernetes",
}

// nodeBinDir is the directory of the real node's container runtime in a
// cluster's BinDir: make node-binaries builds realNodeTools there, from Go
// modules pinned in hack/node.mk, and the CNI plugins in its cni
// subdirectory (nodeCNIBinDir). The node runs them by these paths, never
// from PATH, so no distribution's containerd or runc takes their place.
func nodeBinDir(binDir string) string { return filepath.Join(binDir, "node") }

// nodeCNIBinDir holds realNodeCNIPlugins, containerd's CNI bin_dirs.
func nodeCNIBinDir(binDir string) string { return filepath.Join(nodeBinDir(binDir), "cni") }

// realNodeTools are the runtime programs in nodeBinDir.
var realNodeTools = []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc"}

// realNodeCNIPlugins are the plugins in nodeCNIBinDir: those the node's CNI
// configuration names (bridge, host-local) and loopback, which containerd
// runs to bring up every pod's lo.
var realNodeCNIPlugins = []string{"bridge", "host-local", "loopback"}

// hostTools are the host's own programs the real node runs, and where they
// come from: every Debian has both.
var hostTools = []struct{ name, from string }{{"ip", "iproute2"}, {"nsenter", "util-linux"}}

// realNodePreflight returns nil if this machine can run the real node, or an
// error saying, in one line, what is missing.
func realNodePreflight(cfg Config) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("needs Linux, this is %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root (containerd, network namespaces, cgroups)")
	}
	if err := checkCgroups(cgroupRootDir, cgroupFSType(cgroupRootDir)); err != nil {
		return err
	}
	if err := checkSystemdDriver(sdBootedDir, systemdPrivateSocket); err != nil {
		return err
	}
	if err := checkNodeFiles(cfg, exec.LookPath); err != nil {
		return err
	}
	runc := filepath.Join(nodeBinDir(cfg.BinDir), "runc")
	out, err := exec.Command(runc, "--version").CombinedOutput()
	if err := checkRuncVersion(runc, out, err); err != nil {
		return err
	}
	others, _ := filepath.Glob("/run/netns/" + netnsPrefix + "*")
	if len(others) > 0 {
		return fmt.Errorf("another real node runs on this machine (network namespace %s); one per machine", filepath.Base(others[0]))
	}
	return hostRuntimeRunning("/proc")
}

// checkNodeFiles returns an error naming the first of the real node's
// programs and images that is missing, and the make target or package that
// provides it; lookPath finds the host's programs (exec.LookPath).
func checkNodeFiles(cfg Config, lookPath func(string) (string, error)) error {
	executable := func(path string) bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
	}
	for _, t := range hostTools {
		if _, err := lookPath(t.name); err != nil {
			return fmt.Errorf("%s is not installed (Debian's %s)", t.name, t.from)
		}
	}
	var built []string
	for _, t := range realNodeTools {
		built = append(built, filepath.Join(nodeBinDir(cfg.BinDir), t))
	}
	for _, p := range realNodeCNIPlugins {
		built = append(built, filepath.Join(nodeCNIBinDir(cfg.BinDir), p))
	}
	for _, path := range built {
		if !executable(path) {
			return fmt.Errorf("%s is not built (make node)", path)
		}
	}
	for _, b := range []string{Kubelet, CoreDNS} {
		if !executable(filepath.Join(cfg.BinDir, b)) {
			return fmt.Errorf("%s is not built (make binaries)", filepath.Join(cfg.BinDir, b))
		}
	}
	for _, img := range RealNodeImages {
		if _, err := os.Stat(filepath.Join(cfg.ImageDir, img)); err != nil {
			return fmt.Errorf("image %s is not built (make node-images)", filepath.Join(cfg.ImageDir, img))
		}
	}
	return nil
}

// checkRuncVersion judges the output and error of `runc --version` (the
// runc at path): an error if it does not run (it links libseccomp.so.2,
// which a host may lack) or was built without seccomp, under which every
// container asking for a seccomp profile (RuntimeDefault) would fail.
func checkRuncVersion(path string, out []byte, err error) error {
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if first == "" {
			first = err.Error()
		}
		return fmt.Errorf("%s does not run: %s", path, first)
	}
	if !strings.Contains(string(out), "\nlibseccomp: ") {
		return fmt.Errorf("%s was built without seccomp (make node-binaries needs libseccomp-dev: make node-prereqs)", path)
	}
	return nil
}

// hostRuntimes are the process names (comm) of a kubelet or container
// runtime of the host: k3s runs its kubelet in k3s-server or k3s-agent, and
// Docker and k3s start a containerd of their own. The real node would share
// their fixed paths (/run/containerd, /var/lib/kubelet, /var/lib/cni,
// /run/netns) and Down would undo what they made there.
var hostRuntimes = map[string]bool{"kubelet": true, "containerd": true, "dockerd": true, "k3s-server": true, "k3s-agent": true}

// hostRuntimeRunning returns an error naming the first process (by PID) of
// procDir (a /proc) whose name is one of hostRuntimes, nil if there is none.
// containerd's shims are not such a process (comm "containerd-shim" and
// longer).
func hostRuntimeRunning(procDir string) error {
	entries, _ := os.ReadDir(procDir)
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	for _, pid := range pids {
		dir := filepath.Join(procDir, strconv.Itoa(pid))
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil {
			continue // gone meanwhile
		}
		name := strings.TrimSpace(string(comm))
		if !hostRuntimes[name] {
			continue
		}
		exe, _ := os.Readlink(filepath.Join(dir, "exe"))
		if exe == "" {
			exe = name
		}
		return fmt.Errorf("a %s already runs on this machine (pid %d, %s); the real node would share its paths", name, pid, exe)
	}
	return nil
}

// RealNodeImages are the image tarballs, in Config.ImageDir, the real node
// needs: the pause image every pod sandbox runs and busybox, the image of the
// wait init containers. Every *.tar there is loaded into its containerd.
var RealNodeImages = []string{"pause.tar", "busybox.tar"}

// pauseImage is the sandbox image containerd runs for every pod.
const pauseImage = "localhost/framework-plugins/pause:local"

// registry starts Config.Registry's registry on a free port of 127.0.0.1,
// blobs under <root>/registry, waits until it answers GET /v2/, and returns
// forwards with the proxy's forward of that port into the node's namespace.
func (u *upper) registry(ctx context.Context, forwards []string) ([]string, error) {
	port, err := freePortExcept(u.state.Ports)
	if err != nil {
		return nil, err
	}
	u.state.Ports[Registry] = port
	if err := writeState(&u.state); err != nil {
		return nil, err
	}
	addr := u.state.RegistryAddress()
	if err := u.start(filepath.Join(u.cfg.BinDir, Registry), Registry, nil,
		"--addr", addr, "--dir", filepath.Join(u.cfg.RootDir, Registry)); err != nil {
		return nil, err
	}
	if err := u.waitFor(ctx, "the registry", Registry, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, "http://"+addr+"/v2/")
	}); err != nil {
		return nil, err
	}
	return append(forwards, "--forward", Forward{Port: port}.String()), nil
}

// RegistryAddress is the registry's HOST:PORT (Config.Registry), the same
// on the host and on the real node; "" when the cluster has none.
func (s State) RegistryAddress() string {
	if s.Ports[Registry] == 0 {
		return ""
	}
	return fmt.Sprintf("127.0.0.1:%d", s.Ports[Registry])
}

// WaitImage is busybox.tar's image (Debian's busybox-static 1.35.0, built by
// hack/tools/images), the controller manager's --wait-image here: a local
// name, which no registry serves.
const WaitImage = "localhost/framework-plugins/busybox:1.35.0-debian"

// realNode starts the node's parts in order: network namespace and bridge,
// containerd (with the images), the proxy, CoreDNS and the kubelet, each in the
// namespace. It records the host state it will change in u.state before
// changing it, so that Down undoes a half-started node too.
func (u *upper) realNode(ctx context.Context) error {
	cfg := u.cfg
	root := filepath.Join(cfg.RootDir, "node")
	rn := realNodeStateFor(cfg.RootDir)
	rn.CgroupDriver = hostCgroupDriver(sdBootedDir)
	if rn.CgroupDriver == cgroupDriverSystemd {
		rn.SystemdSlice = systemdSliceName(rn.CgroupRoot)
	}
	rn.DNS = podGateway
	rn.Ctr = filepath.Join(nodeBinDir(cfg.BinDir), "ctr")
	for _, s := range kernelSysctls {
		v, err := os.ReadFile(sysctlPath(s))
		if err != nil {
			return err
		}
		rn.Sysctls[s] = strings.TrimSpace(string(v))
	}
	for _, p := range hostPaths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			rn.CreatedPaths = append(rn.CreatedPaths, p)
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		rn.NetnsBefore = append(rn.NetnsBefore, e.Name())
	}
	port, err := freePortExcept(u.state.Ports)
	if err != nil {
		return err
	}
	rn.KubeletPort = port
	u.state.Ports[Kubelet] = port
	u.state.RealNode = rn
	if err := writeState(&u.state); err != nil {
		return err
	}

	nsPath := "/run/netns/" + rn.Netns
	for _, args := range append([][]string{
		{"netns", "add", rn.Netns},
		{"-n", rn.Netns, "link", "set", "lo", "up"},
		// The bridge exists before the kubelet starts: its address is the
		// kubelet's --node-ip (which must be on an interface) and CoreDNS's.
		{"-n", rn.Netns, "link", "add", podBridge, "type", "bridge"},
		{"-n", rn.Netns, "addr", "add", podGateway + "/24", "dev", podBridge},
		{"-n", rn.Netns, "link", "set", podBridge, "up"},
	}, serviceAddrCommands(rn.Netns)...) {
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	cgroups := hostCgroupLayout()
	v2 := len(cgroups.v1) == 0 && cgroups.unified != ""
	if v2 {
		before, err := readControllers(filepath.Join(cgroups.unified, "cgroup.subtree_control"))
		if err != nil {
			return fmt.Errorf("cgroup v2 at %s: %w", cgroups.unified, err)
		}
		rn.UnifiedCgroup, rn.SubtreeBefore = cgroups.unified, before
		if err := writeState(&u.state); err != nil {
			return err
		}
	}
	if rn.SystemdSlice != "" {
		// Before the controllers below: starting the slice may have systemd
		// rewrite the root's cgroup.subtree_control to what its units need,
		// dropping a controller it manages (cpuset) that none asks for.
		if err := startSlice(ctx, rn.SystemdSlice); err != nil {
			return err
		}
	}
	if v2 {
		// The kubelet validates its cgroup root's controllers, which are
		// those its parent passes on.
		enable, err := controllersToEnable(cgroups.unified)
		if err != nil {
			return fmt.Errorf("cgroup v2 at %s: %w", cgroups.unified, err)
		}
		if err := setSubtreeControl(cgroups.unified, enable, true); err != nil {
			return err
		}
	}
	// The cgroup root in every hierarchy the kubelet checks; under systemd
	// the slice's cgroup is there already in the unified hierarchy (and in
	// the v1 ones of its accounting), not in the other v1 ones.
	for _, hier := range cgroups.nodeHierarchies() {
		if err := os.MkdirAll(filepath.Join(hier, rn.cgroupPath()), 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(cfg.Out, "    cgroup driver %s, cgroups under %s\n", rn.kubeletCgroupDriver(), rn.cgroupPath())

	files, err := writeRealNodeConfig(root, cfg.BinDir, u.pki, u.state.Server, rn)
	if err != nil {
		return err
	}
	bin := func(name string) string { return filepath.Join(cfg.BinDir, name) }
	self := filepath.Join(cfg.BinDir, "local-cluster")
	forwards := []string{
		"--forward", Forward{Port: u.state.Ports[KubeAPIServer]}.String(),
		"--forward", Forward{Port: rn.KubeletPort, IntoNetns: true}.String(),
	}
	if cfg.Registry {
		if forwards, err = u.registry(ctx, forwards); err != nil {
			return err
		}
	}
	if err := u.startIn("", NetnsProxy, self, nil, append(append([]string{"netns-proxy", "--netns", nsPath}, forwards...),
		inClusterProxyArgs(cfg.RootDir, u.state.Ports[KubeAPIServer])...)...); err != nil {
		return err
	}
	// containerd runs the runc shim by the configuration's runtime_path;
	// PATH leads to our binaries too, for anything it looks up by name.
	nodeBin := nodeBinDir(cfg.BinDir)
	env := []string{"PATH=" + nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")}
	if err := u.startIn(nsPath, Containerd, filepath.Join(nodeBin, "containerd"), env, "--config", files.containerd); err != nil {
		return err
	}
	if err := u.waitFor(ctx, "containerd socket", Containerd, func(ctx context.Context) (bool, error) {
		out, err := exec.CommandContext(ctx, rn.Ctr, "--address", rn.ContainerdSocket, "version").CombinedOutput()
		if err != nil {
			return false, fmt.Errorf("ctr version: %v: %s", err, out)
		}
		return true, nil
	}); err != nil {
		return err
	}
	// The required images, then any other tarball there (the training
	// image of `make node-images-training`, say): every *.tar of ImageDir.
	tars, _ := filepath.Glob(filepath.Join(cfg.ImageDir, "*.tar"))
	for _, file := range tars {
		t := time.Now()
		out, err := exec.CommandContext(ctx, rn.Ctr, "--address", rn.ContainerdSocket, "-n", "k8s.io", "images", "import", file).CombinedOutput()
		if err != nil {
			return fmt.Errorf("loading %s into containerd: %v: %s", file, err, out)
		}
		fmt.Fprintf(cfg.Out, "    image %s loaded (%.1fs)\n", filepath.Base(file), time.Since(t).Seconds())
	}
	if err := u.startIn(nsPath, CoreDNS, bin(CoreDNS), nil, "-conf", files.corefile, "-dns.port", "53"); err != nil {
		return err
	}
	return u.startIn(nsPath, Kubelet, bin(Kubelet), nil,
		"--config", files.kubelet,
		"--kubeconfig", files.kubeletKubeconfig,
		"--hostname-override", RealNodeName,
		"--node-ip", podGateway,
		"--root-dir", filepath.Join(root, "kubelet"),
		"--node-labels", RealNodeLabel+"=true",
		"--v", "1",
	)
}

// shimSocketDir is where the node's containerd shims put their sockets:
// /run/<netns name>, the node's own (by the hash in its name) and short
// enough for containerd (socket_dir of at most 42 characters). Down removes
// it: a shim that is killed leaves its socket behind.
func (rn *RealNodeState) shimSocketDir() string { return filepath.Join("/run", rn.Netns) }

// realNodeStateFor returns what of the real node's state of the cluster at
// root follows from root alone: the names of its network namespace, cgroup
// root and containerd socket. Down uses it when state.json cannot be read.
func realNodeStateFor(root string) *RealNodeState {
	sum := sha256.Sum256([]byte(root))
	id := hex.EncodeToString(sum[:4])
	return &RealNodeState{
		Netns:            netnsPrefix + id,
		CgroupRoot:       kubeletCgroupPrefix + id,
		ContainerdSocket: filepath.Join(root, "node", "containerd.sock"),
		Sysctls:          map[string]string{},
	}
}

// startIn starts a component like start, inside the network namespace at
// nsPath ("" for the host's) through nsenter, which enters the namespace and
// then executes binary in the same process: the recorded PID and binary are
// binary's own.
func (u *upper) startIn(nsPath, name, binary string, env []string, args ...string) error {
	if nsPath == "" {
		return u.start(binary, name, env, args...)
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return err
	}
	if err := u.start(nsenter, name, env, append([]string{"--net=" + nsPath, "--", binary}, args...)...); err != nil {
		return err
	}
	// alive() compares argv[0] with the recorded binary, and after the exec
	// argv[0] is binary.
	last := &u.state.Components[len(u.state.Components)-1]
	last.Binary, last.Launcher = binary, nsenter
	u.procs[len(u.procs)-1].Binary, u.procs[len(u.procs)-1].Launcher = binary, nsenter
	return writeState(&u.state)
}

// realNodeFiles are the configuration files written for the node.
type realNodeFiles struct {
	containerd, corefile, kubelet, kubeletKubeconfig string
}

// writeRealNodeConfig writes containerd's, CoreDNS's and the kubelet's
// configuration under root, for the runtime in binDir's node directory, and
// returns their paths.
func writeRealNodeConfig(root, binDir string, p *pki, server string, rn *RealNodeState) (realNodeFiles, error) {
	f := realNodeFiles{
		containerd:        filepath.Join(root, "containerd.toml"),
		corefile:          filepath.Join(root, "Corefile"),
		kubelet:           filepath.Join(root, "kubelet.yaml"),
		kubeletKubeconfig: filepath.Join(root, "kubelet.kubeconfig"),
	}
	for _, d := range []string{"cni/net.d", "cni/ipam", "containerd/tmp", "kubelet", "pod-logs", "volume-plugins"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return f, err
		}
	}
	cni, err := json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       rn.Netns,
		"plugins": []map[string]any{{
			"type":   "bridge",
			"bridge": podBridge,
			// The gateway address is on the bridge already; with it pods reach
			// the cluster DNS. No default route (isDefaultGateway) and no
			// masquerading: pods reach each other, the DNS and the API server
			// at the kubernetes Service's address, nothing else.
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam": map[string]any{
				"type":   "host-local",
				"ranges": [][]map[string]string{{{"subnet": podSubnet, "gateway": podGateway}}},
				// In-cluster clients reach the API server at the kubernetes Service (incluster.go).
				"routes":  podRoutes(),
				"dataDir": filepath.Join(root, "cni", "ipam"),
			},
		}},
	}, "", "  ")
	if err != nil {
		return f, err
	}
	if err := os.WriteFile(filepath.Join(root, "cni", "net.d", "10-vcplugins.conflist"), cni, 0o644); err != nil {
		return f, err
	}

	cd := filepath.Join(root, "containerd")
	containerdConf := containerdConfig(containerdSettings{
		Root: filepath.Join(cd, "root"), State: filepath.Join(cd, "state"), Temp: filepath.Join(cd, "tmp"),
		Opt: filepath.Join(cd, "opt"), Socket: rn.ContainerdSocket, ShimSocketDir: rn.shimSocketDir(), SandboxImage: pauseImage,
		Shim: filepath.Join(nodeBinDir(binDir), "containerd-shim-runc-v2"), Runc: filepath.Join(nodeBinDir(binDir), "runc"),
		RuncRoot: filepath.Join(cd, "runc"), CNIBinDir: nodeCNIBinDir(binDir), CNIConfDir: filepath.Join(root, "cni", "net.d"),
		SystemdCgroup: rn.kubeletCgroupDriver() == cgroupDriverSystemd,
	})
	if err := os.WriteFile(f.containerd, []byte(containerdConf), 0o644); err != nil {
		return f, err
	}

	// CoreDNS reaches the apiserver through the proxy, at the same
	// 127.0.0.1 address as on the host, so the admin kubeconfig serves as is.
	// No forward plugin: the cluster has no network beyond itself, so any
	// other name is refused at once instead of timing out.
	corefile := fmt.Sprintf(`.:53 {
    errors
    kubernetes %s in-addr.arpa ip6.arpa {
        kubeconfig %s
        pods insecure
        ttl 5
        fallthrough in-addr.arpa ip6.arpa
    }
}
`, ClusterDomain, filepath.Join(filepath.Dir(root), "kubeconfig"))
	if err := os.WriteFile(f.corefile, []byte(corefile), 0o644); err != nil {
		return f, err
	}

	if err := writeClientKubeconfig(f.kubeletKubeconfig, server, p.CACert, p.KubeletCert, p.KubeletKey); err != nil {
		return f, err
	}
	kc := kubeletv1beta1.KubeletConfiguration{
		TypeMeta:          metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		Address:           "127.0.0.1",
		Port:              int32(rn.KubeletPort),
		ReadOnlyPort:      0,
		HealthzPort:       ptr.To[int32](0),
		TLSCertFile:       p.KubeletServingCert,
		TLSPrivateKeyFile: p.KubeletServingKey,
		Authentication:    kubeletv1beta1.KubeletAuthentication{X509: kubeletv1beta1.KubeletX509Authentication{ClientCAFile: p.CACert}, Webhook: kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)}, Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)}},
		Authorization:     kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		// systemd where systemd booted the host (the node's cgroups are then
		// its slice's units: one manager of the tree), else cgroupfs: one
		// tree of the node's own under the hierarchy root.
		CgroupDriver: rn.kubeletCgroupDriver(),
		// The kubelet 1.35 refuses cgroup v1 hosts (this project's CI
		// machines) unless told otherwise; v1 is in maintenance upstream.
		FailCgroupV1:  ptr.To(false),
		CgroupRoot:    rn.CgroupRoot,
		ClusterDNS:    []string{rn.DNS},
		ClusterDomain: ClusterDomain,
		// No upstream resolver: the host's would be unreachable from pods.
		ResolverConfig:           ptr.To(""),
		ContainerRuntimeEndpoint: "unix://" + rn.ContainerdSocket,
		FailSwapOn:               ptr.To(false),
		MakeIPTablesUtilChains:   ptr.To(false),
		// Images come from tarballs, not a registry: garbage-collected ones
		// could not be pulled back.
		ImageGCHighThresholdPercent: ptr.To[int32](100),
		ImageGCLowThresholdPercent:  ptr.To[int32](99),
		// A busy CI disk must not evict the pods under test.
		EvictionHard:        map[string]string{"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
		SerializeImagePulls: ptr.To(false),
		RegisterWithTaints:  []corev1.Taint{{Key: RealNodeTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		VolumePluginDir:     filepath.Join(root, "volume-plugins"),
		PodLogsDir:          filepath.Join(root, "pod-logs"),
		// The kubelet's port is reached through the proxy, which the
		// apiserver finds by the node's Hostname address.
		EnableServer: ptr.To(true),
	}
	data, err := yaml.Marshal(kc)
	if err != nil {
		return f, err
	}
	return f, os.WriteFile(f.kubelet, data, 0o644)
}

// containerdSettings are the paths containerdConfig writes: containerd's
// directories and socket, the sandbox image, and the shim, runc and CNI
// plugins it runs.
type containerdSettings struct {
	Root, State, Temp, Opt, Socket, ShimSocketDir, SandboxImage string
	Shim, Runc, RuncRoot, CNIBinDir, CNIConfDir                 string
	// SystemdCgroup has runc use the systemd cgroup driver, as the kubelet.
	SystemdCgroup bool
}

// containerdConfig returns containerd 2.4's configuration (version 4, its
// own, so nothing is migrated at start) for the real node: every path it
// writes is one of s's or, where containerd has a fixed one, in hostPaths.
func containerdConfig(s containerdSettings) string {
	return fmt.Sprintf(`version = 4
root = %[1]q
state = %[2]q
temp = %[3]q
# None of the host's drop-in files (the default imports /etc/containerd/conf.d).
imports = []
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[plugins."io.containerd.server.v1.grpc"]
  address = %[4]q

[plugins."io.containerd.server.v1.ttrpc"]
  address = %[5]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[6]q

[plugins."io.containerd.shim.v1.manager"]
  socket_dir = %[13]q

# Its socket would be in /run/nri on the host; the node runs no NRI plugin.
[plugins."io.containerd.nri.v1.nri"]
  disable = true

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %[7]q

[plugins."io.containerd.cri.v1.runtime"]
  # Root here lacks CAP_SYS_RESOURCE: a negative oom_score_adj (which the
  # kubelet asks for sandboxes and Guaranteed pods) fails every sandbox.
  restrict_oom_score_adj = true
  enable_selinux = false
  # No devices from the host's CDI specs (/etc/cdi, /var/run/cdi).
  cdi_spec_dirs = []
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = %[8]q
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = %[9]q
        Root = %[10]q
        SystemdCgroup = %[14]t
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%[11]q]
    conf_dir = %[12]q

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`, s.Root, s.State, s.Temp, s.Socket, s.Socket+".ttrpc", s.Opt, s.SandboxImage,
		s.Shim, s.Runc, s.RuncRoot, s.CNIBinDir, s.CNIConfDir, s.ShimSocketDir, s.SystemdCgroup)
}

// realNodeReady reports whether the real node is Ready and its DNS answers:
// the Service "kubernetes" resolves through CoreDNS inside the namespace.
func realNodeReady(ctx context.Context, kc kubernetes.Interface, rn *RealNodeState) (bool, error) {
	if ok, err := nodesReady(ctx, kc, []string{RealNodeName}); !ok {
		return false, err
	}
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialInNetns(ctx, "/run/netns/"+rn.Netns, network, net.JoinHostPort(rn.DNS, "53"))
	}}
	name := "kubernetes.default.svc." + ClusterDomain
	if _, err := r.LookupHost(ctx, name); err != nil {
		return false, fmt.Errorf("cluster DNS: %w", err)
	}
	return true, nil
}
