// The real node's cgroups on either kind of host: the cgroup v1 hierarchies
// (this project's CI machines) or the unified cgroup v2 hierarchy (most
// current distributions).

package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroupRootDir is where Linux mounts its cgroups: a tmpfs holding the v1
// hierarchies, or the cgroup2 file system itself.
const cgroupRootDir = "/sys/fs/cgroup"

// kubeletControllers are the cgroup v2 controllers the kubelet requires in
// its cgroup root, of those the kernel has (pkg/kubelet/cm's
// getSupportedUnifiedControllers): "cgroup ... has some missing controllers"
// otherwise.
var kubeletControllers = []string{"cpu", "cpuset", "memory", "hugetlb", "pids"}

// requiredControllers are the cgroup v2 controllers without which the real
// node is not started: the pods' CPU and memory limits and the process limit.
var requiredControllers = []string{"cpu", "memory", "pids"}

// cgroupFSType returns the type of the file system at path as stat -f %T
// names it for a cgroup root ("cgroup2fs", "tmpfs"), or its magic number in
// hex for another type, "" if path cannot be read.
func cgroupFSType(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return ""
	}
	switch st.Type {
	case unix.CGROUP2_SUPER_MAGIC:
		return "cgroup2fs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	}
	return fmt.Sprintf("0x%x", st.Type)
}

// checkCgroups returns nil if the cgroups at root (a /sys/fs/cgroup whose
// file system type is fsType, as cgroupFSType gives it) can hold the real
// node: the v1 memory hierarchy at root/memory, or the unified hierarchy at
// root with requiredControllers available. Otherwise a one-line reason.
func checkCgroups(root, fsType string) error {
	if fi, err := os.Stat(filepath.Join(root, "memory")); err == nil && fi.IsDir() {
		return nil
	}
	if fsType != "cgroup2fs" {
		return fmt.Errorf("needs cgroup v1 (the memory hierarchy at %s/memory) or v2 (cgroup2 at %s, which is %s here)", root, root, orUnknown(fsType))
	}
	have, err := readControllers(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroup v2 at %s: %v", root, err)
	}
	for _, c := range requiredControllers {
		if !slices.Contains(have, c) {
			return fmt.Errorf("cgroup v2 at %s lacks the %s controller (cgroup.controllers: %s)", root, c, strings.Join(have, " "))
		}
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unreadable"
	}
	return s
}

// readControllers returns the controller names of a cgroup.controllers or
// cgroup.subtree_control file.
func readControllers(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data)), nil
}

// controllersToEnable returns kubeletControllers that the unified
// hierarchy's cgroup dir has (cgroup.controllers) but does not pass on to its
// children (cgroup.subtree_control): those the node's cgroup root would lack.
// A host run by systemd has them all enabled at the root already; a host
// without systemd, such as the VM of make vm-test, has none.
func controllersToEnable(dir string) ([]string, error) {
	have, err := readControllers(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	enabled, err := readControllers(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range kubeletControllers {
		if slices.Contains(have, c) && !slices.Contains(enabled, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// controllersAdded returns the controllers the unified hierarchy's cgroup dir
// passes on to its children now (cgroup.subtree_control) that were not among
// before.
func controllersAdded(dir string, before []string) ([]string, error) {
	now, err := readControllers(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range now {
		if !slices.Contains(before, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// setSubtreeControl enables (on) or disables controllers for the children of
// the unified hierarchy's cgroup dir, in one write to its
// cgroup.subtree_control ("+cpu +memory", "-cpu -memory"). Disabling fails
// (EBUSY) while a child cgroup still enables one of them for its own
// children.
func setSubtreeControl(dir string, controllers []string, on bool) error {
	if len(controllers) == 0 {
		return nil
	}
	sign := "-"
	if on {
		sign = "+"
	}
	words := make([]string, len(controllers))
	for i, c := range controllers {
		words[i] = sign + c
	}
	file := filepath.Join(dir, "cgroup.subtree_control")
	if err := os.WriteFile(file, []byte(strings.Join(words, " ")), 0o644); err != nil {
		return fmt.Errorf("writing %q to %s: %w", strings.Join(words, " "), file, err)
	}
	return nil
}
