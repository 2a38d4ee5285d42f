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
