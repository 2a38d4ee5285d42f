// The real node on a host booted with systemd: the kubelet and runc use the
// systemd cgroup driver there, and the node's cgroups are a transient slice
// of its own, which systemd manages and make local-down stops.

package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// The kubelet's and runc's cgroup drivers (KubeletConfiguration.CgroupDriver).
const (
	cgroupDriverCgroupfs = "cgroupfs"
	cgroupDriverSystemd  = "systemd"
)

// sdBootedDir exists, as a directory, exactly when systemd booted the host
// and runs as PID 1: sd_booted(3)'s test.
const sdBootedDir = "/run/systemd/system"

// systemdPrivateSocket is systemd's own D-Bus socket, on which root talks to
// PID 1 without a dbus-daemon: the node starts and stops its slice there, and
// the kubelet and runc fall back to it where the system bus is missing.
const systemdPrivateSocket = "/run/systemd/private"

// hostCgroupDriver returns the cgroup driver for the real node: "systemd" if
// sdBooted (sdBootedDir, or a stand-in in tests) is a directory, so that the
// node's cgroups are units of the host's one cgroup manager; "cgroupfs"
// otherwise (no systemd, nothing else manages the tree).
func hostCgroupDriver(sdBooted string) string {
	if fi, err := os.Stat(sdBooted); err == nil && fi.IsDir() {
		return cgroupDriverSystemd
	}
	return cgroupDriverCgroupfs
}

// checkSystemdDriver returns nil unless the host runs systemd (sdBooted is a
// directory) and socket (systemdPrivateSocket) is not a socket: then a
// one-line reason, since the node could neither make its slice nor would
// the kubelet and runc reach systemd.
func checkSystemdDriver(sdBooted, socket string) error {
	if hostCgroupDriver(sdBooted) != cgroupDriverSystemd {
		return nil
	}
	fi, err := os.Stat(socket)
	if err == nil && fi.Mode()&os.ModeSocket == 0 {
		err = errors.New("not a socket")
	}
	if err != nil {
		return fmt.Errorf("this host runs systemd (%s), so the node uses the systemd cgroup driver, which needs systemd's private socket %s: %v", sdBooted, socket, unwrapPathError(err))
	}
	return nil
}

// unwrapPathError drops the operation and path of a *fs.PathError, which
// the message that carries it names already.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// systemdSliceName returns the slice unit the kubelet's systemd driver makes
// of cgroupRoot, a cgroup in cgroupfs form such as "/vcplugins-1a2b3c4d":
// each path component with '-' escaped to '_', joined with '-', plus
// ".slice", so "vcplugins_1a2b3c4d.slice" (pkg/kubelet/cm's
// CgroupName.ToSystemd). "" for the root cgroup.
func systemdSliceName(cgroupRoot string) string {
	var parts []string
	for _, p := range strings.Split(cgroupRoot, "/") {
		if p != "" {
			parts = append(parts, strings.ReplaceAll(p, "-", "_"))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "-") + ".slice"
}

// systemdSlicePath returns the cgroup of the slice unit slice below a
// hierarchy's root: systemd nests "a-b.slice" in "a.slice", so
// "a-b.slice" is "/a.slice/a-b.slice" (runc's systemd.ExpandSlice, which the
// kubelet uses).
func systemdSlicePath(slice string) string {
	name := strings.TrimSuffix(slice, ".slice")
	path, prefix := "", ""
	for _, part := range strings.Split(name, "-") {
		path += "/" + prefix + part + ".slice"
		prefix += part + "-"
	}
	return path
}

// cgroupPath is the node's cgroup below every hierarchy's root: its slice's
// with the systemd driver, else the kubelet's cgroup root itself.
func (rn *RealNodeState) cgroupPath() string {
	if rn.SystemdSlice != "" {
		return systemdSlicePath(rn.SystemdSlice)
	}
	return rn.CgroupRoot
}

// sliceProperties are those of the node's transient slice: CPU, memory and
// tasks accounting, so that systemd enables those controllers for it on
// cgroup v2 and makes its cgroup in those v1 hierarchies too.
func sliceProperties(slice string) []sddbus.Property {
	return []sddbus.Property{
		sddbus.PropDescription("framework-plugins local cluster real node (" + slice + ")"),
		{Name: "CPUAccounting", Value: dbus.MakeVariant(true)},
		{Name: "MemoryAccounting", Value: dbus.MakeVariant(true)},
		{Name: "TasksAccounting", Value: dbus.MakeVariant(true)},
	}
}

// systemdTimeout bounds each job the node gives systemd (its slice's start
// and stop) and the wait for it.
const systemdTimeout = 30 * time.Second

// startSlice starts slice as a transient unit of the host's systemd (over
// systemdPrivateSocket, as root) and waits for its start job. It fails if
// the unit exists already (a node of an earlier run not taken down).
func startSlice(ctx context.Context, slice string) error {
	return systemdJob(ctx, "starting", slice, func(ctx context.Context, c *sddbus.Conn, ch chan<- string) error {
		_, err := c.StartTransientUnitContext(ctx, slice, "fail", sliceProperties(slice), ch)
		return err
	})
}

// stopSlice stops slice and waits for the stop job: systemd stops every unit
// in it (the kubelet's sub-slices, runc's cri-containerd-*.scope units),
// kills what still runs there and removes their cgroups. A slice systemd
// does not know (stopped already, or never started) is nothing to do.
func stopSlice(slice string) error {
	err := systemdJob(context.Background(), "stopping", slice, func(ctx context.Context, c *sddbus.Conn, ch chan<- string) error {
		_, err := c.StopUnitContext(ctx, slice, "replace", ch)
		return err
	})
	if noSuchUnit(err) {
		return nil
	}
	return err
}

// noSuchUnit reports whether err is systemd's answer for a unit it has not
// loaded (org.freedesktop.systemd1.NoSuchUnit).
func noSuchUnit(err error) bool {
	var de dbus.Error
	return errors.As(err, &de) && de.Name == "org.freedesktop.systemd1.NoSuchUnit"
}

// systemdJob connects to systemd, queues a job for slice with queue and
// waits, within systemdTimeout, for its result: an error unless "done".
func systemdJob(ctx context.Context, what, slice string, queue func(context.Context, *sddbus.Conn, chan<- string) error) error {
	ctx, cancel := context.WithTimeout(ctx, systemdTimeout)
	defer cancel()
	c, err := sddbus.NewSystemdConnectionContext(ctx)
	if err != nil {
		return fmt.Errorf("%s systemd slice %s: connecting to %s: %w", what, slice, systemdPrivateSocket, err)
	}
	defer c.Close()
	ch := make(chan string, 1)
	if err := queue(ctx, c, ch); err != nil {
		return fmt.Errorf("%s systemd slice %s: %w", what, slice, err)
	}
	select {
	case result := <-ch:
		if result != "done" {
			return fmt.Errorf("%s systemd slice %s: job %s", what, slice, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s systemd slice %s: no job result in %v", what, slice, systemdTimeout)
	}
}

// kubeletCgroupDriver is rn's CgroupDriver, cgroupfs where none is recorded.
func (rn *RealNodeState) kubeletCgroupDriver() string {
	if rn.CgroupDriver == "" {
		return cgroupDriverCgroupfs
	}
	return rn.CgroupDriver
}
