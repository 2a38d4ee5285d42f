package localcluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/google/go-cmp/cmp"
)

func TestHostCgroupDriver(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error // makes <root>/run/systemd/system, or not
		want string
	}{
		{name: "booted with systemd", make: func(p string) error { return os.MkdirAll(p, 0o755) }, want: "systemd"},
		{name: "no /run/systemd/system (this machine, make vm-test's default init)", make: func(string) error { return nil }, want: "cgroupfs"},
		{name: "/run/systemd/system a file, not a directory", make: func(p string) error {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			return os.WriteFile(p, nil, 0o644)
		}, want: "cgroupfs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run", "systemd", "system")
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			if got := hostCgroupDriver(path); got != tc.want {
				t.Errorf("hostCgroupDriver = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckSystemdDriver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		systemd bool   // <root>/run/systemd/system exists
		socket  string // <root>/run/systemd/private: "socket", "file" or "" (none)
		want    string // error, "" for nil; ROOT for the fake root
	}{
		{name: "no systemd: nothing needed", systemd: false, socket: ""},
		{name: "systemd with its private socket", systemd: true, socket: "socket"},
		{
			name: "systemd without its private socket", systemd: true, socket: "",
			want: "this host runs systemd (ROOT/run/systemd/system), so the node uses the systemd cgroup driver, which needs systemd's private socket ROOT/run/systemd/private: no such file or directory",
		},
		{
			name: "systemd, a file where the socket should be", systemd: true, socket: "file",
			want: "this host runs systemd (ROOT/run/systemd/system), so the node uses the systemd cgroup driver, which needs systemd's private socket ROOT/run/systemd/private: not a socket",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A short root: a socket's path has at most 107 bytes.
			root, err := os.MkdirTemp("", "sd")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(root) })
			booted, socket := filepath.Join(root, "run", "systemd", "system"), filepath.Join(root, "run", "systemd", "private")
			if err := os.MkdirAll(filepath.Dir(socket), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.systemd {
				if err := os.Mkdir(booted, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			switch tc.socket {
			case "socket":
				l, err := net.Listen("unix", socket)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
			case "file":
				if err := os.WriteFile(socket, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := ""
			if err := checkSystemdDriver(booted, socket); err != nil {
				got = strings.ReplaceAll(err.Error(), root, "ROOT")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checkSystemdDriver (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSystemdSlice checks the slice the kubelet's systemd driver makes of a
// cgroup root (pkg/kubelet/cm's ParseCgroupfsToCgroupName, then ToSystemd:
// '-' escaped to '_', components joined with '-') and where its cgroup is.
func TestSystemdSlice(t *testing.T) {
	for _, tc := range []struct {
		cgroupRoot, slice, path string
	}{
		{"/vcplugins-1a2b3c4d", "vcplugins_1a2b3c4d.slice", "/vcplugins_1a2b3c4d.slice"},
		// An id with '-' stays one slice under the root, not a nested one.
		{"/vcplugins-1a2b-3c4d", "vcplugins_1a2b_3c4d.slice", "/vcplugins_1a2b_3c4d.slice"},
		{"vcplugins-x/", "vcplugins_x.slice", "/vcplugins_x.slice"},
		// Nested components become a nested slice.
		{"/a/b-c", "a-b_c.slice", "/a.slice/a-b_c.slice"},
		{"/a/b/c", "a-b-c.slice", "/a.slice/a-b.slice/a-b-c.slice"},
		{"/", "", ""},
	} {
		t.Run(tc.cgroupRoot, func(t *testing.T) {
			slice := systemdSliceName(tc.cgroupRoot)
			path := ""
			if slice != "" {
				path = systemdSlicePath(slice)
			}
			if diff := cmp.Diff([]string{tc.slice, tc.path}, []string{slice, path}); diff != "" {
				t.Errorf("slice and its cgroup (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRealNodeCgroupPath checks where each driver's node has its cgroups,
// as Down finds them from the state alone.
func TestRealNodeCgroupPath(t *testing.T) {
	for _, tc := range []struct {
		name             string
		rn               RealNodeState
		path, kubeletDrv string
	}{
		{"cgroupfs", RealNodeState{CgroupRoot: "/vcplugins-1a2b3c4d", CgroupDriver: "cgroupfs"}, "/vcplugins-1a2b3c4d", "cgroupfs"},
		{"systemd", RealNodeState{CgroupRoot: "/vcplugins-1a2b3c4d", CgroupDriver: "systemd", SystemdSlice: "vcplugins_1a2b3c4d.slice"}, "/vcplugins_1a2b3c4d.slice", "systemd"},
		{"a state of before the driver was recorded", RealNodeState{CgroupRoot: "/vcplugins-1a2b3c4d"}, "/vcplugins-1a2b3c4d", "cgroupfs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff([]string{tc.path, tc.kubeletDrv}, []string{tc.rn.cgroupPath(), tc.rn.kubeletCgroupDriver()}); diff != "" {
				t.Errorf("cgroup path and driver (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRealNodeStateRoundTrip checks that what Down needs of the systemd
// driver survives state.json, and that a state written before it reads as
// the cgroupfs driver.
func TestRealNodeStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rn := realNodeStateFor(dir)
	rn.CgroupDriver, rn.SystemdSlice = cgroupDriverSystemd, systemdSliceName(rn.CgroupRoot)
	rn.UnifiedCgroup, rn.SubtreeBefore = "/sys/fs/cgroup", []string{"cpu", "memory"}
	if err := writeState(&State{RootDir: dir, RealNode: rn}); err != nil {
		t.Fatal(err)
	}
	st, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rn, st.RealNode); diff != "" {
		t.Errorf("real node state after state.json (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(filepath.Join(dir, stateFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cgroupDriver": "systemd"`, `"systemdSlice": "` + strings.ReplaceAll(strings.TrimPrefix(rn.CgroupRoot, "/"), "-", "_") + `.slice"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("state.json lacks %s:\n%s", want, data)
		}
	}

	old := `{"rootDir": "` + dir + `", "realNode": {"netns": "vcplugins-1a2b3c4d", "cgroupRoot": "/vcplugins-1a2b3c4d"}}`
	if err := os.WriteFile(filepath.Join(dir, stateFileName), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err = readState(dir); err != nil {
		t.Fatal(err)
	}
	got := []string{st.RealNode.kubeletCgroupDriver(), st.RealNode.SystemdSlice, st.RealNode.cgroupPath()}
	if diff := cmp.Diff([]string{"cgroupfs", "", "/vcplugins-1a2b3c4d"}, got); diff != "" {
		t.Errorf("a state of before the driver (-want +got):\n%s", diff)
	}
}

// TestRealNodeLeft checks what Down undoes when state.json is unreadable:
// the node whose names follow from the root, with the systemd driver where
// its slice's cgroup is there.
func TestRealNodeLeft(t *testing.T) {
	for _, tc := range []struct {
		name        string
		netns       bool
		dirs        []string // made below the fake hierarchies, relative to them
		wantNil     bool
		wantDriver  string
		wantSliceOK bool // SystemdSlice is the cgroup root's slice
	}{
		{name: "nothing left", wantNil: true},
		{name: "the network namespace", netns: true, wantDriver: ""},
		{name: "the cgroupfs root in a v1 hierarchy", dirs: []string{"memory/CGROUP"}, wantDriver: ""},
		{name: "the slice in the unified hierarchy", dirs: []string{"unified/SLICE"}, wantDriver: "systemd", wantSliceOK: true},
		{name: "another node's slice only", dirs: []string{"unified/vcplugins_00000000.slice"}, wantNil: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			guess := realNodeStateFor(filepath.Join(root, "cluster"))
			slice := systemdSliceName(guess.CgroupRoot)
			netnsDir := filepath.Join(root, "netns")
			hiers := []string{filepath.Join(root, "memory"), filepath.Join(root, "unified")}
			for _, d := range append([]string{"netns", "memory", "unified"}, tc.dirs...) {
				d = strings.NewReplacer("CGROUP", strings.TrimPrefix(guess.CgroupRoot, "/"), "SLICE", slice).Replace(d)
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.netns {
				if err := os.WriteFile(filepath.Join(netnsDir, guess.Netns), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := realNodeLeft(guess, netnsDir, hiers)
			if (got == nil) != tc.wantNil {
				t.Fatalf("realNodeLeft = %+v, want nil: %v", got, tc.wantNil)
			}
			if got == nil {
				return
			}
			wantSlice := ""
			if tc.wantSliceOK {
				wantSlice = slice
			}
			if diff := cmp.Diff([]string{tc.wantDriver, wantSlice}, []string{got.CgroupDriver, got.SystemdSlice}); diff != "" {
				t.Errorf("driver and slice (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoSuchUnit(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("stopping systemd slice x.slice: %w", dbus.Error{Name: "org.freedesktop.systemd1.NoSuchUnit", Body: []any{"Unit x.slice not loaded."}}), true},
		{fmt.Errorf("stopping systemd slice x.slice: %w", dbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied"}), false},
		{fmt.Errorf("stopping systemd slice x.slice: job failed"), false},
		{nil, false},
	} {
		if got := noSuchUnit(tc.err); got != tc.want {
			t.Errorf("noSuchUnit(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestRemoveCgroupTrees checks that the node's cgroup goes from every
// hierarchy, deepest first, and that one missing is no error.
func TestRemoveCgroupTrees(t *testing.T) {
	root := t.TempDir()
	hiers := []string{filepath.Join(root, "cpu"), filepath.Join(root, "memory"), filepath.Join(root, "unified")}
	for _, d := range []string{
		"cpu/vcplugins_x.slice/vcplugins_x-kubepods.slice/vcplugins_x-kubepods-besteffort.slice",
		"memory/vcplugins_x.slice",
		"unified/other.slice",
	} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeCgroupTrees(hiers, "/vcplugins_x.slice", time.Second); err != nil {
		t.Fatal(err)
	}
	var left []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != root {
			rel, _ := filepath.Rel(root, p)
			left = append(left, rel)
		}
		return nil
	})
	if diff := cmp.Diff([]string{"cpu", "memory", "unified", "unified/other.slice"}, left); diff != "" {
		t.Errorf("directories left (-want +got):\n%s", diff)
	}
}
