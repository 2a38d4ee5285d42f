package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCgroupLayoutOf(t *testing.T) {
	cases := []struct {
		name      string
		mountinfo string
		node, all []string
		unified   string
	}{
		{
			name: "cgroup v1 with an empty unified hierarchy beside (hybrid, this project's CI machines): the node uses the v1 ones",
			mountinfo: `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`,
			node:    []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/systemd"},
			all:     []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"},
			unified: "/sys/fs/cgroup/unified",
		},
		{
			name: "cgroup v1 only, a hierarchy mounted twice: once",
			mountinfo: `35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
`,
			node: []string{"/sys/fs/cgroup/memory"},
			all:  []string{"/sys/fs/cgroup/memory"},
		},
		{
			name: "cgroup v2 (unified): the node uses the unified hierarchy",
			mountinfo: `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
27 23 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`,
			node:    []string{"/sys/fs/cgroup"},
			all:     []string{"/sys/fs/cgroup"},
			unified: "/sys/fs/cgroup",
		},
		{
			name:      "no cgroups mounted",
			mountinfo: "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := cgroupLayoutOf([]byte(tc.mountinfo))
			type view struct {
				Node, All []string
				Unified   string
			}
			if diff := cmp.Diff(view{tc.node, tc.all, tc.unified}, view{l.nodeHierarchies(), l.all(), l.unified}); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckCgroups(t *testing.T) {
	cases := []struct {
		name        string
		fsType      string
		memoryDir   bool   // <root>/memory exists
		controllers string // <root>/cgroup.controllers; "-" for none
		want        string // error, "" for nil
	}{
		{name: "cgroup v1", fsType: "tmpfs", memoryDir: true, controllers: "-"},
		{name: "cgroup v2 with every controller", fsType: "cgroup2fs", controllers: "cpuset cpu io memory hugetlb pids rdma misc\n"},
		{name: "cgroup v2 without hugetlb and cpuset (optional to the kubelet)", fsType: "cgroup2fs", controllers: "cpu io memory pids\n"},
		{
			name: "cgroup v2 without the memory controller", fsType: "cgroup2fs", controllers: "cpuset cpu io pids\n",
			want: "cgroup v2 at ROOT lacks the memory controller (cgroup.controllers: cpuset cpu io pids)",
		},
		{
			name: "cgroup v2 root unreadable", fsType: "cgroup2fs", controllers: "-",
			want: "cgroup v2 at ROOT: open ROOT/cgroup.controllers: no such file or directory",
		},
		{
			name: "a tmpfs without the v1 memory hierarchy", fsType: "tmpfs", controllers: "-",
			want: "needs cgroup v1 (the memory hierarchy at ROOT/memory) or v2 (cgroup2 at ROOT, which is tmpfs here)",
		},
		{
			name: "nothing there", fsType: "", controllers: "-",
			want: "needs cgroup v1 (the memory hierarchy at ROOT/memory) or v2 (cgroup2 at ROOT, which is unreadable here)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.memoryDir {
				if err := os.Mkdir(filepath.Join(root, "memory"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.controllers != "-" {
				if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte(tc.controllers), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := ""
			if err := checkCgroups(root, tc.fsType); err != nil {
				got = err.Error()
			}
			got = strings.ReplaceAll(got, root, "ROOT")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checkCgroups (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubtreeControl checks which controllers the node enables for its cgroup
// root on a cgroup v2 host, what it writes to enable them, which ones Down
// finds added (by the node or by runc, which enables every controller on the
// way to a container's cgroup) and what it writes to disable those, with a
// fake hierarchy root whose cgroup.subtree_control is a plain file (the
// kernel's applies each +/- word; the file keeps the last write).
func TestSubtreeControl(t *testing.T) {
	cases := []struct {
		name                 string
		controllers, subtree string
		enable               []string
		enableWrite          string
		running              string // cgroup.subtree_control while the node ran
		added                []string
		offWrite             string
	}{
		{
			name:        "no systemd: nothing enabled at the root",
			controllers: "cpuset cpu io memory hugetlb pids rdma misc\n", subtree: "\n",
			enable:      []string{"cpu", "cpuset", "memory", "hugetlb", "pids"},
			enableWrite: "+cpu +cpuset +memory +hugetlb +pids",
			running:     "cpuset cpu io memory hugetlb pids rdma misc\n",
			added:       []string{"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"},
			offWrite:    "-cpuset -cpu -io -memory -hugetlb -pids -rdma -misc",
		},
		{
			name:        "some enabled, no hugetlb in the kernel",
			controllers: "cpuset cpu io memory pids\n", subtree: "cpu memory\n",
			enable:      []string{"cpuset", "pids"},
			enableWrite: "+cpuset +pids",
			running:     "cpuset cpu memory pids\n",
			added:       []string{"cpuset", "pids"},
			offWrite:    "-cpuset -pids",
		},
		{
			name:        "systemd: all enabled already, nothing written",
			controllers: "cpuset cpu io memory hugetlb pids\n", subtree: "cpuset cpu io memory hugetlb pids\n",
			enableWrite: "cpuset cpu io memory hugetlb pids\n",
			running:     "cpuset cpu io memory hugetlb pids\n",
			offWrite:    "cpuset cpu io memory hugetlb pids\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			subtree := filepath.Join(dir, "cgroup.subtree_control")
			write := func(file, content string) {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			check := func(what, want string) {
				got, err := os.ReadFile(subtree)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != want {
					t.Errorf("%s: cgroup.subtree_control holds %q, want %q", what, got, want)
				}
			}
			write("cgroup.controllers", tc.controllers)
			write("cgroup.subtree_control", tc.subtree)
			before, err := readControllers(subtree)
			if err != nil {
				t.Fatal(err)
			}
			enable, err := controllersToEnable(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.enable, enable); diff != "" {
				t.Errorf("controllersToEnable (-want +got):\n%s", diff)
			}
			if err := setSubtreeControl(dir, enable, true); err != nil {
				t.Fatal(err)
			}
			check("enabling", tc.enableWrite)

			write("cgroup.subtree_control", tc.running)
			added, err := controllersAdded(dir, before)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.added, added); diff != "" {
				t.Errorf("controllersAdded (-want +got):\n%s", diff)
			}
			if err := setSubtreeControl(dir, added, false); err != nil {
				t.Fatal(err)
			}
			check("disabling", tc.offWrite)
		})
	}
	if _, err := controllersToEnable(t.TempDir()); err == nil {
		t.Error("controllersToEnable of a directory without cgroup.controllers: no error")
	}
}
