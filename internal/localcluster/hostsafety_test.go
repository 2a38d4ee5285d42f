package localcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeFiles creates each file (relative to dir) with its content.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckNodeFiles checks the preflight's one line for each missing piece
// of the real node, in the order it looks: the host's tools, the runtime
// make node builds, make binaries' kubelet and CoreDNS, the images.
func TestCheckNodeFiles(t *testing.T) {
	complete := []string{
		"bin/node/containerd", "bin/node/containerd-shim-runc-v2", "bin/node/ctr", "bin/node/runc",
		"bin/node/cni/bridge", "bin/node/cni/host-local", "bin/node/cni/loopback",
		"bin/kubelet", "bin/coredns", "images/pause.tar", "images/busybox.tar",
	}
	hostHas := func(names ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, n := range names {
				if n == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	for _, tc := range []struct {
		name     string
		without  string // one of complete
		noExec   string // one of complete, left without x bits
		lookPath func(string) (string, error)
		want     string // with %s the test's directory
	}{
		{name: "everything", lookPath: hostHas("ip", "nsenter")},
		{name: "no nsenter", lookPath: hostHas("ip"), want: "nsenter is not installed (Debian's util-linux)"},
		{name: "no ip", lookPath: hostHas("nsenter"), want: "ip is not installed (Debian's iproute2)"},
		{name: "no containerd", without: "bin/node/containerd", lookPath: hostHas("ip", "nsenter"),
			want: "%s/bin/node/containerd is not built (make node)"},
		{name: "runc not executable", noExec: "bin/node/runc", lookPath: hostHas("ip", "nsenter"),
			want: "%s/bin/node/runc is not built (make node)"},
		{name: "no loopback plugin", without: "bin/node/cni/loopback", lookPath: hostHas("ip", "nsenter"),
			want: "%s/bin/node/cni/loopback is not built (make node)"},
		{name: "no kubelet", without: "bin/kubelet", lookPath: hostHas("ip", "nsenter"),
			want: "%s/bin/kubelet is not built (make binaries)"},
		{name: "no busybox image", without: "images/busybox.tar", lookPath: hostHas("ip", "nsenter"),
			want: "image %s/images/busybox.tar is not built (make node-images)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range complete {
				if f == tc.without {
					continue
				}
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				mode := os.FileMode(0o755)
				if f == tc.noExec {
					mode = 0o644
				}
				if err := os.WriteFile(p, nil, mode); err != nil {
					t.Fatal(err)
				}
			}
			err := checkNodeFiles(Config{BinDir: filepath.Join(dir, "bin"), ImageDir: filepath.Join(dir, "images")}, tc.lookPath)
			got := ""
			if err != nil {
				got = err.Error()
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = strings.ReplaceAll(want, "%s", dir)
			}
			if got != want {
				t.Errorf("checkNodeFiles = %q, want %q", got, want)
			}
		})
	}
}

// TestCheckRuncVersion checks what the preflight makes of `runc --version`.
func TestCheckRuncVersion(t *testing.T) {
	const withSeccomp = "runc version 1.5.3\nspec: 1.3.0\ngo: go1.26.8\nlibseccomp: 2.5.4\n"
	for _, tc := range []struct {
		name string
		out  string
		err  error
		want string
	}{
		{"built with seccomp", withSeccomp, nil, ""},
		{"built without", "runc version 1.5.3\nspec: 1.3.0\ngo: go1.26.8\n", nil,
			"/b/runc was built without seccomp (make node-binaries needs libseccomp-dev: make node-prereqs)"},
		{"no libseccomp.so.2 on the host",
			"/b/runc: error while loading shared libraries: libseccomp.so.2: cannot open shared object file: No such file or directory\n",
			errors.New("exit status 127"),
			"/b/runc does not run: /b/runc: error while loading shared libraries: libseccomp.so.2: cannot open shared object file: No such file or directory"},
		{"no output", "", errors.New("fork/exec /b/runc: exec format error"),
			"/b/runc does not run: fork/exec /b/runc: exec format error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRuncVersion("/b/runc", []byte(tc.out), tc.err)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("checkRuncVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRemoveLinksInto checks that Down removes the kubelet's links to the
// node's container logs from a /var/log/containers it did not create, and
// nothing else there.
func TestRemoveLinksInto(t *testing.T) {
	dir := t.TempDir()
	logs, root := filepath.Join(dir, "containers"), filepath.Join(dir, "cluster")
	entries := []struct {
		name, target string // target "" is a regular file
		removed      bool
	}{
		{"pod_ns_c-1.log", filepath.Join(root, "node", "pod-logs", "ns_pod_1", "c", "0.log"), true},
		{"dangling-but-ours.log", filepath.Join(root, "gone.log"), true},
		{"hosts-own.log", "/var/log/pods/ns_pod_2/c/0.log", false},
		{"sibling.log", root + "-other/node/pod-logs/0.log", false},
		{"relative.log", "../pods/0.log", false},
		{"regular.log", "", false},
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(logs, e.name)
		var err error
		if e.target == "" {
			err = os.WriteFile(p, nil, 0o644)
		} else {
			err = os.Symlink(e.target, p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := removeLinksInto(logs, root); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		_, err := os.Lstat(filepath.Join(logs, e.name))
		if gone := errors.Is(err, os.ErrNotExist); gone != e.removed {
			t.Errorf("%s removed: %v, want %v", e.name, gone, e.removed)
		}
	}
	if err := removeLinksInto(filepath.Join(dir, "absent"), root); err != nil {
		t.Errorf("removeLinksInto of a missing directory = %v, want nil", err)
	}
}

// TestRemoveCNIResults checks that Down removes libcni's results of the
// node's sandboxes, bridge and loopback, and no other network's.
func TestRemoveCNIResults(t *testing.T) {
	dir := t.TempDir()
	entries := []struct {
		name    string
		removed bool
	}{
		{"vcplugins-1a2b3c4d-aaa111-eth0", true},
		{"cni-loopback-aaa111-lo", true},
		{"vcplugins-1a2b3c4d-bbb222-eth0", true},
		{"cni-loopback-ccc333-lo", false},          // a sandbox of the host's containerd
		{"vcplugins-9f9f9f9f-ccc333-eth0", false},  // another cluster's node
		{"vcplugins-1a2b3c4d0-ddd444-eth0", false}, // a name that only starts alike
		{"mynet-eee555-eth0", false},
	}
	for _, e := range entries {
		if err := os.WriteFile(filepath.Join(dir, e.name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeCNIResults(dir, "vcplugins-1a2b3c4d"); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		_, err := os.Stat(filepath.Join(dir, e.name))
		if gone := errors.Is(err, os.ErrNotExist); gone != e.removed {
			t.Errorf("%s removed: %v, want %v", e.name, gone, e.removed)
		}
	}
	if err := removeCNIResults(filepath.Join(dir, "absent"), "vcplugins-1a2b3c4d"); err != nil {
		t.Errorf("removeCNIResults of a missing directory = %v, want nil", err)
	}
}

// TestShimSocketDir checks that the shims' socket directory fits
// containerd's limit (socket_dir of at most 42 characters on Linux) for a
// cluster root of any length, and is the node's own.
func TestShimSocketDir(t *testing.T) {
	for _, root := range []string{"/r", "/work/a/very/long/path/to/a/checkout/of/this/project/_output/local"} {
		rn := realNodeStateFor(root)
		got := rn.shimSocketDir()
		if len(got) > 42 {
			t.Errorf("shimSocketDir for %s = %s, %d characters, over 42", root, got, len(got))
		}
		if want := "/run/" + rn.Netns; got != want {
			t.Errorf("shimSocketDir for %s = %s, want %s", root, got, want)
		}
	}
}

func TestHostRuntimeRunning(t *testing.T) {
	for _, tc := range []struct {
		name    string
		comms   map[string]string // pid -> comm
		wantErr string
	}{
		{"nothing", map[string]string{"1": "systemd", "57": "sshd"}, ""},
		{"containerd's shims alone", map[string]string{"1": "systemd", "80": "containerd-shim"}, ""},
		{"a kubelet", map[string]string{"1": "systemd", "1200": "kubelet"}, "a kubelet already runs on this machine (pid 1200, kubelet)"},
		{"containerd, the lowest pid first", map[string]string{"900": "containerd", "1000": "kubelet", "80": "containerd-shim"}, "a containerd already runs on this machine (pid 900, containerd)"},
		{"k3s", map[string]string{"1": "systemd", "311": "k3s-server"}, "a k3s-server already runs on this machine (pid 311, k3s-server)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proc := t.TempDir()
			files := map[string]string{"self/comm": "go\n", "version": "Linux\n"}
			for pid, comm := range tc.comms {
				files[filepath.Join(pid, "comm")] = comm + "\n"
			}
			writeFiles(t, proc, files)
			err := hostRuntimeRunning(proc)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && !strings.HasPrefix(got, tc.wantErr) {
				t.Errorf("hostRuntimeRunning = %q, want %q", got, tc.wantErr)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("error is not one line: %q", got)
			}
		})
	}
}

// TestPodNetnsOf checks that of the cni-* network namespaces only those a
// process of the node is in are the node's: the host's containerd names its
// pods' namespaces the same way. A fake /run/netns holds files, and the fake
// /proc/<pid>/ns/net links to them as the kernel's do to namespaces.
func TestPodNetnsOf(t *testing.T) {
	dir := t.TempDir()
	netns, proc := filepath.Join(dir, "netns"), filepath.Join(dir, "proc")
	writeFiles(t, netns, map[string]string{"cni-ours-1": "", "cni-ours-2": "", "cni-host": "", "vcplugins-1234": "", "other": ""})
	writeFiles(t, dir, map[string]string{"elsewhere": ""})
	link := func(pid, target string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(proc, pid, "ns"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(proc, pid, "ns", "net")); err != nil {
			t.Fatal(err)
		}
	}
	link("100", filepath.Join(netns, "cni-ours-1"))     // a pod's pause process
	link("101", filepath.Join(netns, "cni-ours-1"))     // its container
	link("102", filepath.Join(netns, "cni-ours-2"))     // another pod's
	link("103", filepath.Join(netns, "vcplugins-1234")) // the kubelet: not a pod's
	link("200", filepath.Join(netns, "cni-host"))       // a pod of the host's containerd
	link("300", filepath.Join(dir, "elsewhere"))
	got := podNetnsOf(netns, proc, []int{100, 101, 102, 103, 300, 999})
	want := []string{filepath.Join(netns, "cni-ours-1"), filepath.Join(netns, "cni-ours-2")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("podNetnsOf (-want +got):\n%s", diff)
	}
}

// TestDownUnmountsBeforeRemoving runs Down on cluster roots with a mount
// below them, in a fake mount table: the mount is unmounted before anything
// is removed, whether state.json is there or not, and a mount that stays
// keeps Down from removing anything through it.
func TestDownUnmountsBeforeRemoving(t *testing.T) {
	for _, tc := range []struct {
		name       string
		state      string // state.json's content; none if empty
		unmountErr error  // the fake unmount fails and the mount stays
		wantErr    bool
	}{
		{name: "state.json unreadable", state: "{not json"},
		{name: "no state.json, pids/ only"},
		{name: "state.json without a real node", state: `{"rootDir": "x"}`},
		{name: "a mount that stays", state: "{not json", unmountErr: errors.New("busy"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			root := filepath.Join(tmp, "local")
			volume := filepath.Join(root, "node", "kubelet", "pods", "uid", "volumes", "kubernetes.io~empty-dir", "data")
			// What the mount shows, say a host directory of a hostPath
			// volume: Down must never delete it.
			shown := filepath.Join(volume, "precious")
			files := map[string]string{"pids/.keep": "", "node/kubelet/pods/uid/volumes/kubernetes.io~empty-dir/data/precious": "x"}
			if tc.state != "" {
				files[stateFileName] = tc.state
			}
			writeFiles(t, root, files)
			table := filepath.Join(tmp, "mountinfo")
			mountLine := "100 22 0:50 / " + volume + " rw,relatime - tmpfs tmpfs rw\n"
			writeFiles(t, tmp, map[string]string{"mountinfo": "22 1 8:1 / / rw,relatime - ext4 /dev/vda rw\n" + mountLine})
			var unmounted []string
			oldInfo, oldUnmount := mountinfoFile, unmount
			t.Cleanup(func() { mountinfoFile, unmount = oldInfo, oldUnmount })
			mountinfoFile = table
			unmount = func(point string) error {
				if _, err := os.Stat(shown); err != nil {
					t.Errorf("unmount %s: what the mount shows is gone already: %v", point, err)
				}
				unmounted = append(unmounted, point)
				if tc.unmountErr != nil {
					return tc.unmountErr
				}
				data, err := os.ReadFile(table)
				if err != nil {
					return err
				}
				return os.WriteFile(table, []byte(strings.ReplaceAll(string(data), mountLine, "")), 0o644)
			}

			err := Down(root)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Down = %v, want error %v", err, tc.wantErr)
			}
			if len(unmounted) == 0 || unmounted[0] != volume {
				t.Errorf("unmounted %v, want %s first", unmounted, volume)
			}
			_, statErr := os.Stat(root)
			if tc.wantErr {
				if _, err := os.Stat(shown); err != nil {
					t.Errorf("Down removed what a mount it could not unmount shows: %v", err)
				}
			} else if !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("root after Down: %v, want it removed", statErr)
			}
		})
	}
}
