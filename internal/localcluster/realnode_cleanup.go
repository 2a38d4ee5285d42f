// The real node's cleanup: what make local-down undoes on the host (processes,
// network namespaces, cgroups, sysctls and paths the real node made).

package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cleanupRealNode undoes what the real node did to the host, after its
// processes were signalled: it kills what is left in the node's cgroups and
// containerd's shims, unmounts everything under root and the pod network
// namespaces, deletes the node's network namespace (and with it the bridge),
// stops its systemd slice (systemd driver), removes its cgroups (in every
// hierarchy, v1 and unified) and the host paths it created, disables the
// cgroup v2 controllers it enabled, and writes back the sysctls. It carries
// on past failures and returns them all.
func cleanupRealNode(root string, rn *RealNodeState) error {
	var errs []error
	hiers := cgroupHierarchies()
	cgroup := rn.cgroupPath()
	// The pods' network namespaces are known by their processes, so they
	// are found before those are killed.
	before := map[string]bool{}
	for _, n := range rn.NetnsBefore {
		before[n] = true
	}
	var podNetns []string
	for _, p := range podNetnsOf("/run/netns", "/proc", cgroupPIDs(hiers, cgroup)) {
		if !before[filepath.Base(p)] {
			podNetns = append(podNetns, p)
		}
	}
	// Container processes: everything in the node's cgroups. Killed here
	// also under systemd: stopping a scope sends SIGTERM first and waits
	// (90 s by default) for a container's PID 1, which ignores it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := cgroupPIDs(hiers, cgroup)
		pids = append(pids, shimPIDs(rn.ContainerdSocket)...)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			errs = append(errs, fmt.Errorf("processes of the real node survived SIGKILL: %v", pids))
			break
		}
		for _, pid := range pids {
			_ = syscallKill(pid)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Only the cluster's own directory and the pods' namespaces: the node's
	// containerd and kubelet mount nothing else, and a containerd of the host
	// may have mounts under /run/containerd that are not ours to touch (the
	// paths the node created are unmounted with their removal below).
	under := append([]string{root}, podNetns...)
	if err := unmountUnder(under); err != nil {
		errs = append(errs, err)
	}
	for _, p := range podNetns {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if _, err := os.Stat("/run/netns/" + rn.Netns); err == nil {
		if out, err := exec.Command("ip", "netns", "delete", rn.Netns).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip netns delete %s: %v: %s", rn.Netns, err, out))
		}
	}
	if rn.SystemdSlice != "" {
		if err := stopSlice(rn.SystemdSlice); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeCgroupTrees(hiers, cgroup, 10*time.Second); err != nil {
		errs = append(errs, err)
	}
	if rn.UnifiedCgroup != "" {
		extra, err := controllersAdded(rn.UnifiedCgroup, rn.SubtreeBefore)
		if err == nil {
			err = setSubtreeControl(rn.UnifiedCgroup, extra, false)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for i := len(rn.CreatedPaths) - 1; i >= 0; i-- {
		if err := removeHostPath(rn.CreatedPaths[i]); err != nil {
			errs = append(errs, err)
		}
	}
	// Sockets of the node's shims (killed above, so they did not remove
	// them) and libcni's results of its pods' networks, which it keeps in
	// /var/lib/cni whatever the configuration says.
	if err := removeHostPath(rn.shimSocketDir()); err != nil {
		errs = append(errs, err)
	}
	if err := removeCNIResults(cniResultsDir, rn.Netns); err != nil {
		errs = append(errs, err)
	}
	// The kubelet links every container's log into /var/log/containers,
	// whatever its configuration. Where that directory was there before the
	// node, and so is not among CreatedPaths, the links into root are the
	// node's: left, they would dangle there.
	if !slices.Contains(rn.CreatedPaths, containerLogLinks) {
		if err := removeLinksInto(containerLogLinks, root); err != nil {
			errs = append(errs, err)
		}
	}
	names := make([]string, 0, len(rn.Sysctls))
	for k := range rn.Sysctls {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := os.WriteFile(sysctlPath(k), []byte(rn.Sysctls[k]), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s=%s: %w", k, rn.Sysctls[k], err))
		}
	}
	return errors.Join(errs...)
}

// podNetnsOf returns the entries of netnsDir (a /run/netns) named cni-*, as
// containerd names pod network namespaces, that are the network namespace of
// one of pids, read in procDir (a /proc): those of the real node's pods, whose
// sandbox processes live in its cgroups. A namespace of the host's own
// containerd or k3s, which has the same kind of name, is never among them.
// Unreadable entries are skipped.
func podNetnsOf(netnsDir, procDir string, pids []int) []string {
	var ours []os.FileInfo
	for _, pid := range pids {
		// Stat follows ns/net to the namespace: the device and inode that a
		// bind mount of it under netnsDir shows too.
		if fi, err := os.Stat(filepath.Join(procDir, strconv.Itoa(pid), "ns", "net")); err == nil {
			ours = append(ours, fi)
		}
	}
	var out []string
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "cni-") {
			continue
		}
		p := filepath.Join(netnsDir, e.Name())
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		for _, o := range ours {
			if os.SameFile(fi, o) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// sysctlPath returns the /proc/sys file of a sysctl name such as kernel.panic.
func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

// cgroupLayout is where the host mounts its cgroup hierarchies.
type cgroupLayout struct {
	// v1 are the mount points of the cgroup v1 hierarchies
	// (/sys/fs/cgroup/cpu, memory, ...), each once.
	v1 []string
	// unified is the mount point of the cgroup2 (unified) hierarchy, "" if
	// none: /sys/fs/cgroup on a host booted with cgroup v2, or an empty
	// /sys/fs/cgroup/unified beside the v1 hierarchies on a hybrid one.
	unified string
}

// cgroupLayoutOf reads the cgroup mounts of a mountinfo table.
func cgroupLayoutOf(mountinfo []byte) cgroupLayout {
	var l cgroupLayout
	for _, m := range parseMountinfo(mountinfo) {
		switch m.fstype {
		case "cgroup":
			if !slices.Contains(l.v1, m.point) {
				l.v1 = append(l.v1, m.point)
			}
		case "cgroup2":
			if l.unified == "" {
				l.unified = m.point
			}
		}
	}
	return l
}

// hostCgroupLayout is the layout of this host ("" and nil where its mount
// table cannot be read).
func hostCgroupLayout() cgroupLayout {
	data, err := os.ReadFile(mountinfoFile)
	if err != nil {
		return cgroupLayout{}
	}
	return cgroupLayoutOf(data)
}

// nodeHierarchies are where the real node's cgroup root is made: under every
// v1 hierarchy where there are any (the kubelet and runc then use only those,
// also on a hybrid host), else under the unified hierarchy.
func (l cgroupLayout) nodeHierarchies() []string {
	if len(l.v1) > 0 || l.unified == "" {
		return l.v1
	}
	return []string{l.unified}
}

// all are the mount points of every hierarchy, v1 and unified: where Down
// looks for the node's processes and cgroups, and the host check for
// top-level cgroups.
func (l cgroupLayout) all() []string {
	if l.unified == "" {
		return l.v1
	}
	return append(slices.Clip(l.v1), l.unified)
}

// cgroupHierarchies returns the mount points of every cgroup hierarchy of
// the host, v1 and unified, each once.
func cgroupHierarchies() []string {
	return hostCgroupLayout().all()
}

// cgroupPIDs returns the processes in cgroup (and below) of every hierarchy.
func cgroupPIDs(hiers []string, cgroup string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, h := range hiers {
		_ = filepath.WalkDir(filepath.Join(h, cgroup), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// shimPIDs returns containerd shims serving the containerd at socket: they
// leave containerd's process group on purpose (so containers survive a
// containerd restart), so Down finds them by their -address argument.
func shimPIDs(socket string) []int {
	procs, _ := os.ReadDir("/proc")
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-address" && args[i+1] == socket {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// containerLogLinks is the kubelet's fixed directory of links to container
// logs (one of hostPaths).
const containerLogLinks = "/var/log/containers"

// removeLinksInto removes the symbolic links in dir whose target is root or
// below it, and leaves every other entry; a missing dir is nothing to do.
func removeLinksInto(dir, root string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if root, err = filepath.Abs(root); err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		target, err := os.Readlink(p)
		if err != nil {
			continue // gone meanwhile
		}
		rel, err := filepath.Rel(root, target)
		if !filepath.IsAbs(target) || err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cniResultsDir is libcni's cache of ADD results, one file per network and
// interface of a sandbox, named <network>-<container ID>-<interface>.
const cniResultsDir = "/var/lib/cni/results"

// removeCNIResults removes from dir the results of network (the node's CNI
// network, named as its network namespace) and the loopback results
// (containerd's network "cni-loopback") of the same sandboxes; others stay.
func removeCNIResults(dir, network string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var remove []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), network+"-")
		if !ok {
			continue
		}
		remove = append(remove, e.Name())
		if id, _, ok := strings.Cut(rest, "-"); ok {
			remove = append(remove, "cni-loopback-"+id+"-lo")
		}
	}
	var errs []error
	for _, name := range remove {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCgroupTrees removes the cgroup at path below each of hiers, and all
// below it, retrying for up to timeout while one stays: a cgroup whose last
// process is exiting is busy, and systemd removes a stopped slice's cgroups
// itself, concurrently. The error names what is left.
func removeCgroupTrees(hiers []string, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var errs []error
		for _, h := range hiers {
			if err := removeCgroupTree(filepath.Join(h, path)); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 || time.Now().After(deadline) {
			return errors.Join(errs...)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// removeCgroupTree removes the cgroup dir and every cgroup below it, deepest
// first (a cgroup directory is removed with rmdir, never by deleting files).
func removeCgroupTree(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	var errs []error
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeHostPath unmounts whatever is mounted at or below path (`ip netns add`
// bind-mounts /run/netns onto itself, for instance) and removes it.
func removeHostPath(path string) error {
	if err := unmountUnder([]string{path}); err != nil {
		return err
	}
	return os.RemoveAll(path)
}
