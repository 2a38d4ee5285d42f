package localcluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// HostSnapshot is what a local cluster may change on the host, outside its
// root directory: taken before Up and after Down, two snapshots must be equal
// (see HostChanges).
type HostSnapshot struct {
	// Processes are the running programs (argv[0]) that belong to a cluster:
	// binaries in the cluster's BinDir and the real node's host programs.
	Processes []string
	// Mounts are the host's mount points.
	Mounts []string
	// Netns are the entries of /run/netns.
	Netns []string
	// Links are the host's network interfaces.
	Links []string
	// Sysctls are the values of the sysctls the kubelet may set.
	Sysctls map[string]string
	// Paths are those of hostPaths that exist, and real nodes' shim socket
	// directories (/run/vcplugins-*).
	Paths []string
	// Cgroups are the top-level cgroups of every hierarchy: the v1 ones and
	// the unified (cgroup v2) one.
	Cgroups []string
	// CgroupControllers are the controllers the unified hierarchy's root
	// passes on to its children (its cgroup.subtree_control).
	CgroupControllers []string
}

// TakeHostSnapshot records the host state a cluster using the binaries in
// binDir may change. Unreadable parts are left empty: a snapshot is for
// comparison, and both sides of a comparison read the same way.
func TakeHostSnapshot(binDir string) HostSnapshot {
	s := HostSnapshot{Sysctls: map[string]string{}}
	ours := map[string]bool{"containerd": true, "runc": true}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		base := filepath.Base(argv0)
		if ours[base] || strings.HasPrefix(base, "containerd-shim") || (binDir != "" && filepath.Dir(argv0) == filepath.Clean(binDir)) {
			s.Processes = append(s.Processes, argv0)
		}
	}
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, m := range parseMountinfo(data) {
			s.Mounts = append(s.Mounts, m.point)
		}
	}
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			s.Netns = append(s.Netns, e.Name())
		}
	}
	if ifs, err := net.Interfaces(); err == nil {
		for _, i := range ifs {
			s.Links = append(s.Links, i.Name)
		}
	}
	for _, k := range kernelSysctls {
		if v, err := os.ReadFile(sysctlPath(k)); err == nil {
			s.Sysctls[k] = strings.TrimSpace(string(v))
		}
	}
	if v, err := os.ReadFile(sysctlPath("net.ipv4.ip_forward")); err == nil {
		s.Sysctls["net.ipv4.ip_forward"] = strings.TrimSpace(string(v))
	}
	for _, p := range hostPaths {
		if _, err := os.Stat(p); err == nil {
			s.Paths = append(s.Paths, p)
		}
	}
	// A real node's shim socket directory (RealNodeState.shimSocketDir).
	shimDirs, _ := filepath.Glob("/run/" + netnsPrefix + "*")
	s.Paths = append(s.Paths, shimDirs...)
	cgroups := hostCgroupLayout()
	for _, h := range cgroups.all() {
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.IsDir() {
				s.Cgroups = append(s.Cgroups, filepath.Join(h, e.Name()))
			}
		}
	}
	if cgroups.unified != "" {
		s.CgroupControllers, _ = readControllers(filepath.Join(cgroups.unified, "cgroup.subtree_control"))
	}
	for _, l := range [][]string{s.Processes, s.Mounts, s.Netns, s.Links, s.Paths, s.Cgroups, s.CgroupControllers} {
		sort.Strings(l)
	}
	return s
}

// HostChanges returns one line per difference from before to after ("mount
// /x left behind", "sysctl kernel.panic: 0 -> 10"); none means the host was
// left as it was found.
func HostChanges(before, after HostSnapshot) []string {
	var out []string
	// Processes ending and mounts going away during a run are the machine's
	// other work (a build's chroot, a test's server); Down only unmounts below
	// its own directories. What a cluster leaves is what appears.
	diff := func(what string, b, a []string, reportGone bool) {
		count := map[string]int{}
		for _, x := range a {
			count[x]++
		}
		for _, x := range b {
			count[x]--
		}
		keys := make([]string, 0, len(count))
		for x := range count {
			keys = append(keys, x)
		}
		sort.Strings(keys)
		for _, x := range keys {
			switch {
			case count[x] > 0:
				out = append(out, fmt.Sprintf("%s %s left behind", what, x))
			case count[x] < 0 && reportGone:
				out = append(out, fmt.Sprintf("%s %s gone", what, x))
			}
		}
	}
	diff("process", before.Processes, after.Processes, false)
	diff("mount", before.Mounts, after.Mounts, false)
	diff("network namespace", before.Netns, after.Netns, true)
	diff("network interface", before.Links, after.Links, true)
	diff("path", before.Paths, after.Paths, true)
	diff("cgroup", before.Cgroups, after.Cgroups, true)
	diff("cgroup controller", before.CgroupControllers, after.CgroupControllers, true)
	keys := make([]string, 0, len(before.Sysctls))
	for k := range before.Sysctls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if before.Sysctls[k] != after.Sysctls[k] {
			out = append(out, fmt.Sprintf("sysctl %s: %s -> %s", k, before.Sysctls[k], after.Sysctls[k]))
		}
	}
	return out
}
