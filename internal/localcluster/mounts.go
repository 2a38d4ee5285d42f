package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// mountEntry is one line of /proc/<pid>/mountinfo: the mount point and the
// filesystem type.
type mountEntry struct {
	point, fstype string
}

// parseMountinfo parses mountinfo (proc(5)): field 5 is the mount point
// (octal-escaped), the filesystem type follows the " - " separator.
func parseMountinfo(data []byte) []mountEntry {
	var out []mountEntry
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f := strings.Fields(pre)
		g := strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		out = append(out, mountEntry{point: unescapeMount(f[4]), fstype: g[0]})
	}
	return out
}

// unescapeMount decodes mountinfo's \ooo escapes (space, tab, newline, \).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountinfoFile and unmount are the host's mount table and unmount(2),
// replaced by tests.
var (
	mountinfoFile = "/proc/self/mountinfo"
	unmount       = func(point string) error { return unix.Unmount(point, unix.MNT_DETACH) }
)

// mountsUnder returns the mount points at or below any of dirs, deepest first.
func mountsUnder(dirs []string) ([]string, error) {
	data, err := os.ReadFile(mountinfoFile)
	if err != nil {
		return nil, err
	}
	var points []string
	for _, m := range parseMountinfo(data) {
		for _, d := range dirs {
			d = filepath.Clean(d)
			if m.point == d || strings.HasPrefix(m.point, d+"/") {
				points = append(points, m.point)
				break
			}
		}
	}
	// Deeper mounts first; the same point mounted twice is unmounted twice.
	sort.SliceStable(points, func(i, j int) bool {
		return strings.Count(points[i], "/") > strings.Count(points[j], "/")
	})
	return points, nil
}

// unmountUnder lazily unmounts every mount at or below dirs (containers'
// root filesystems, the kubelet's volumes and its bind-mounted root
// directory, pod network namespaces), repeating while any are left, at most
// ten rounds. It returns an error naming the mounts that stayed.
func unmountUnder(dirs []string) error {
	for round := 0; round < 10; round++ {
		points, err := mountsUnder(dirs)
		if err != nil {
			return err
		}
		if len(points) == 0 {
			return nil
		}
		for _, p := range points {
			_ = unmount(p)
		}
	}
	points, _ := mountsUnder(dirs)
	if len(points) > 0 {
		return fmt.Errorf("mounts left after unmounting: %v", points)
	}
	return nil
}

// syscallKill sends SIGKILL to pid; a process already gone is not an error.
func syscallKill(pid int) error {
	err := syscall.Kill(pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
