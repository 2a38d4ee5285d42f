// Package localcluster runs a Volcano control plane as plain processes on
// 127.0.0.1, for `make local-up`, `make demo`, the e2e suite and the tools
// under hack/: etcd, kube-apiserver, kube-controller-manager, Volcano's CRDs,
// optionally the webhook manager, vc-scheduler, the controller manager of
// this repository and KWOK with a few fake nodes, and where the machine allows
// it a real node (realnode.go: a kubelet with containerd, in a network
// namespace of its own). The control plane and the KWOK nodes need no
// container engine or root, the real node both; every component picks a free
// port at start, and all files live under one root directory:
//
//	<root>/kubeconfig             admin kubeconfig (client certificate, system:masters)
//	<root>/state.json             ports, PIDs, command lines, node names (State)
//	<root>/logs/<component>.log   stdout and stderr of each process
//	<root>/pids/<component>.pid   PID of each process
//	<root>/pki/                   CA, serving and client certificates, service-account keys;
//	                              etcd's own CA, serving and client pairs
//	<root>/admission.yaml         kube-apiserver's admission configuration (Pod Security)
//	<root>/etcd/                  etcd data
//
// Up starts a cluster (or returns the running one), Down stops it and removes
// the root, Status inspects it. The processes outlive the caller of Up, so a
// cluster started by `make local-up` serves many test runs.
package localcluster

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"
)

const (
	stateFileName = "state.json"
	// stopGrace is how long Down lets components handle SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// pollInterval is the period of readiness polls.
	pollInterval = 250 * time.Millisecond
)

// insecureClient probes health endpoints served with self-signed certificates.
var insecureClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health probe only
}

// ComponentState records one process of the cluster.
type ComponentState struct {
	Name   string   `json:"name"`   // component name, e.g. "kube-apiserver"
	PID    int      `json:"pid"`    // process ID, also its process group ID
	Binary string   `json:"binary"` // absolute path of the executable
	Args   []string `json:"args"`   // command-line arguments, without the binary
	Log    string   `json:"log"`    // log file receiving stdout and stderr
	// Launcher is the executable started when it is not Binary: nsenter,
	// which enters the real node's network namespace and then executes
	// Binary (Args are nsenter's then).
	Launcher string `json:"launcher,omitempty"`
	// Env is what the component's environment adds to the starting process's.
	Env []string `json:"env,omitempty"`
}

// State is what Up records in <root>/state.json, enough for another process to
// use, inspect or stop the cluster.
type State struct {
	RootDir    string `json:"rootDir"`
	BinDir     string `json:"binDir"`
	Kubeconfig string `json:"kubeconfig"`
	// Server is the kube-apiserver URL, https://127.0.0.1:<port>.
	Server string `json:"server"`
	// Ports are the TCP ports in use on 127.0.0.1, by component name (plus
	// "etcd-peer").
	Ports map[string]int `json:"ports"`
	// Components in start order.
	Components []ComponentState `json:"components"`
	// Nodes are the names of the fake nodes.
	Nodes []string `json:"nodes"`
	// RealNode is set when the real node was started (or its start begun):
	// what Down must undo on the host.
	RealNode *RealNodeState `json:"realNode,omitempty"`
	// Webhook reports whether the webhook manager runs and its webhooks are registered.
	Webhook   bool      `json:"webhook"`
	StartedAt time.Time `json:"startedAt"`
	// ReadyAt is when Up finished; zero if it has not (yet) succeeded.
	ReadyAt time.Time `json:"readyAt,omitempty"`
}

// Cluster is a running local cluster.
type Cluster struct {
	State
	// RESTConfig is the admin client configuration (QPS 200, burst 400).
	RESTConfig *rest.Config
}

// KubeClient returns a Kubernetes clientset for the admin user.
func (c *Cluster) KubeClient() (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(c.RESTConfig)
}

// VolcanoClient returns a Volcano clientset (batch, scheduling, bus, flow) for the admin user.
func (c *Cluster) VolcanoClient() (vcclientset.Interface, error) {
	return vcclientset.NewForConfig(c.RESTConfig)
}

// Up starts a local cluster as described by cfg and waits until it is usable:
// kube-apiserver /readyz is ok, every node is Ready and untainted, the
// default ServiceAccount exists in namespace default and the default Queue is
// Open. It prints one line per step with its duration to cfg.Out.
//
// If a cluster is already running in cfg.RootDir (all recorded processes alive
// and /readyz ok), Up returns it without changing anything, whatever cfg says
// otherwise. Leftovers of a dead or half-started cluster are cleared first, as
// by Down.
//
// Up returns an error if a binary is missing, a component exits early (the
// error quotes the last 30 lines of its log), a step fails or cfg.Timeout
// expires. It then stops the processes it started but keeps the root
// directory, logs included, for inspection; the next Up or Down clears it.
func Up(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if st, err := Status(cfg.RootDir); err == nil && st.Running() {
		fmt.Fprintf(cfg.Out, "local cluster already running in %s (since %s)\n", cfg.RootDir, st.State.ReadyAt.Format(time.RFC3339))
		// `make local-up` rebuilds this repository's binaries; a running
		// cluster keeps the old ones, which is easy to miss.
		for _, c := range st.State.Components {
			if info, err := os.Stat(c.Binary); err == nil && info.ModTime().After(st.State.StartedAt) {
				fmt.Fprintf(cfg.Out, "warning: %s was rebuilt after the cluster started; restart the cluster (make local-down local-up) to run the new one\n", c.Binary)
			}
		}
		return Load(cfg.RootDir)
	}
	if err := Down(cfg.RootDir); err != nil {
		return nil, fmt.Errorf("clearing the previous cluster in %s: %w", cfg.RootDir, err)
	}

	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	u := &upper{cfg: cfg}
	cl, err := u.run(ctx)
	if err != nil {
		states := make([]ComponentState, len(u.procs))
		for i, p := range u.procs {
			states[i] = p.ComponentState
		}
		if terr := terminate(states, stopGrace); terr != nil {
			err = errors.Join(err, terr)
		}
		if rn := u.state.RealNode; rn != nil {
			if cerr := cleanupRealNode(cfg.RootDir, rn); cerr != nil {
				err = errors.Join(err, fmt.Errorf("cleaning up the real node: %w", cerr))
			}
		}
		fmt.Fprintf(cfg.Out, "local cluster failed after %.1fs; stopped its processes; logs are in %s\n",
			time.Since(u.started).Seconds(), filepath.Join(cfg.RootDir, "logs"))
		return nil, err
	}
	return cl, nil
}

// Load returns the cluster recorded in dir ("" means the default root) without
// checking that it runs; see Status for that. It returns an error if dir has no
// readable state or kubeconfig.
func Load(dir string) (*Cluster, error) {
	dir, err := resolveDir(dir)
	if err != nil {
		return nil, err
	}
	st, err := readState(dir)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("no local cluster in %s (no %s)", dir, stateFileName)
	}
	cfg, err := restConfigFrom(st.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return &Cluster{State: *st, RESTConfig: cfg}, nil
}

// Down stops the cluster recorded in dir ("" means the default root) and
// removes dir. Each live component's process group gets SIGTERM, then SIGKILL
// after 5 seconds. A process is only signalled if it still runs the recorded
// binary, so a stale state file cannot hit an unrelated process that reused a
// PID. The real node's changes to the host are undone (cleanupRealNode); if
// state.json cannot be read, the components are those of pids/ and the real
// node is the one whose names follow from dir (realNodeStateFor). Everything
// mounted at or below dir is unmounted before dir is removed, so the removal
// never reaches into a mount. Down on a missing dir does nothing. It returns
// an error, and keeps dir, if dir does not look like a cluster root (no
// state.json, pids/ or kubeconfig: a guard against removing the wrong
// directory), if a process survives SIGKILL, if undoing the real node's
// changes fails or if a mount below dir stays.
func Down(dir string) error {
	dir, err := resolveDir(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if !looksLikeClusterRoot(dir) {
		return fmt.Errorf("%s does not look like a local cluster root (no %s, pids/ or kubeconfig); not removing it", dir, stateFileName)
	}
	st, stateErr := readState(dir)
	if err := terminate(recordedComponents(dir, st), stopGrace); err != nil {
		return err
	}
	var rn *RealNodeState
	if st != nil {
		rn = st.RealNode
	} else if stateErr != nil {
		// Nothing says whether a real node ran: undo one if its namespace
		// or cgroups are there. What it recorded only in the state (the
		// sysctls' old values, the host paths it created) is lost.
		rn = realNodeLeft(realNodeStateFor(dir), "/run/netns", cgroupHierarchies())
	}
	if rn != nil {
		if err := cleanupRealNode(dir, rn); err != nil {
			return fmt.Errorf("cleaning up the real node (its state stays in %s): %w", dir, err)
		}
	}
	// os.RemoveAll descends into mount points: it would delete what a
	// mount below dir shows (a pod volume's source, a container's root).
	if err := unmountUnder([]string{dir}); err != nil {
		return fmt.Errorf("not removing %s: %w", dir, err)
	}
	return os.RemoveAll(dir)
}

// realNodeLeft returns guess, the node's names derived from its cluster's
// root, if its network namespace (in netnsDir, a /run/netns) or its cgroup
// (below one of hiers) exists, else nil. Where its cgroup is the systemd
// slice of its cgroup root, the result has the systemd driver and that
// slice, so that Down stops the slice too.
func realNodeLeft(guess *RealNodeState, netnsDir string, hiers []string) *RealNodeState {
	exists := func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	}
	slice := systemdSliceName(guess.CgroupRoot)
	found := exists(filepath.Join(netnsDir, guess.Netns))
	for _, h := range hiers {
		if exists(filepath.Join(h, systemdSlicePath(slice))) {
			guess.CgroupDriver, guess.SystemdSlice = cgroupDriverSystemd, slice
			found = true
		}
		if exists(filepath.Join(h, guess.CgroupRoot)) {
			found = true
		}
	}
	if !found {
		return nil
	}
	return guess
}

// ComponentStatus is a recorded component and whether its process runs.
type ComponentStatus struct {
	ComponentState
	Alive bool
}

// ClusterStatus describes the cluster recorded in a root directory.
type ClusterStatus struct {
	Dir string
	// State is nil if there is no cluster in Dir.
	State      *State
	Components []ComponentStatus
	// APIServerReady reports whether /readyz answered ok; APIServerError says
	// why not.
	APIServerReady bool
	APIServerError string
}

// Running reports whether Up completed and every component is alive with the
// apiserver ready.
func (s *ClusterStatus) Running() bool {
	if s.State == nil || s.State.ReadyAt.IsZero() || !s.APIServerReady {
		return false
	}
	for _, c := range s.Components {
		if !c.Alive {
			return false
		}
	}
	return true
}

// Status inspects the cluster recorded in dir ("" means the default root): which
// processes are alive and whether the apiserver is ready. A missing or empty
// dir yields a status with a nil State. It returns an error only if the state
// file exists but cannot be read.
func Status(dir string) (*ClusterStatus, error) {
	dir, err := resolveDir(dir)
	if err != nil {
		return nil, err
	}
	st, err := readState(dir)
	if err != nil || st == nil {
		return &ClusterStatus{Dir: dir}, err
	}
	s := &ClusterStatus{Dir: dir, State: st}
	for _, c := range st.Components {
		s.Components = append(s.Components, ComponentStatus{ComponentState: c, Alive: alive(c.PID, c.Binary)})
	}
	if cfg, err := restConfigFrom(st.Kubeconfig); err != nil {
		s.APIServerError = err.Error()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.APIServerReady, err = apiserverReady(ctx, cfg)
		if err != nil {
			s.APIServerError = err.Error()
		}
	}
	return s, nil
}

// resolveDir returns dir as an absolute path, the default root if empty.
func resolveDir(dir string) (string, error) {
	cfg, err := Config{RootDir: dir, BinDir: "/"}.withDefaults()
	if err != nil {
		return "", err
	}
	return cfg.RootDir, nil
}

// readState reads <dir>/state.json; it returns nil, nil if there is none.
func readState(dir string) (*State, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := &State{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, stateFileName), err)
	}
	return st, nil
}

// writeState replaces <root>/state.json atomically, so a concurrent Status
// never reads half a file.
func writeState(st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	file := filepath.Join(st.RootDir, stateFileName)
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

func looksLikeClusterRoot(dir string) bool {
	for _, name := range []string{stateFileName, "pids", "kubeconfig"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// recordedComponents returns the components of st (nil if state.json is
// missing or unreadable) plus any found only in pids/ (state.json is written
// after each start, but Up may have been killed between writing a PID file
// and the state). For the latter the binary is unknown, so the process must
// run a binary named after the component (vc-controller-manager also matches
// vc-controller-manager-stock).
func recordedComponents(dir string, st *State) []ComponentState {
	var comps []ComponentState
	known := map[string]bool{}
	if st != nil {
		comps = st.Components
		for _, c := range comps {
			known[c.Name] = true
		}
	}
	pidFiles, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	for _, f := range pidFiles {
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		if known[name] {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			continue
		}
		if bin := binaryOf(pid); strings.HasPrefix(filepath.Base(bin), name) {
			comps = append(comps, ComponentState{Name: name, PID: pid, Binary: bin})
		}
	}
	return comps
}

// binaryOf returns argv[0] of pid, or "".
func binaryOf(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	argv0, _, _ := strings.Cut(string(data), "\x00")
	return argv0
}
