package hack

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pins are the script's arguments, shaped as hack/node.mk's NODE_PACKAGES.
var pins = []string{
	"libseccomp-dev=2.5.4-1+deb12u1",
	"busybox-static=1:1.35.0-4+deb12u1+b1",
	"mmdebstrap=1.3.5-7",
}

// fakeDpkgQuery answers -W (status and version, by glob) and -S (owner of a
// path) from $FAKE_DPKG_DB, whose lines are "pkg NAME STATUS VERSION" and
// "file PATH OWNER".
const fakeDpkgQuery = `#!/bin/bash
found=1
case "$1" in
-W)
	format=$2 pattern=$3
	while read -r kind name status version; do
		[[ $kind == pkg ]] || continue
		[[ $name == $pattern ]] || continue
		found=0
		if [[ $format == *'${Package}'* ]]; then echo "$status $name $version"; else echo "$status $version"; fi
	done <"$FAKE_DPKG_DB"
	;;
-S)
	while read -r kind path owner; do
		[[ $kind == file && $path == "$2" ]] && { echo "$owner: $path"; found=0; }
	done <"$FAKE_DPKG_DB"
	;;
esac
[[ $found == 0 ]] || echo "dpkg-query: no packages found matching ${!#}" >&2
exit $found
`

// machine is what the script sees of a host.
type machine struct {
	osRelease string   // /etc/os-release
	cgroupV2  string   // "": cgroup v1 (<cgroup root>/memory); else cgroup v2, its cgroup.controllers
	fstype    string   // CGROUP_FSTYPE: stat -fc %T of the cgroup root (cgroup2fs, tmpfs)
	uid       string   // id -u
	dpkg      []string // FAKE_DPKG_DB lines
	programs  []string // executables in RUNTIME_PATH
	processes []string // comm of the processes in PROC_ROOT
	// own are executables of this project's _output/bin (OWN_OUTPUT), also
	// in RUNTIME_PATH, as after make kubectl.
	own []string
	ci  bool // CI=true
	// cgoTools is CGO_TOOLS, the programs runc's build needs ("": the
	// script's default, gcc and pkg-config, which this machine has).
	cgoTools string
	// systemd: "" not booted with systemd (no SD_BOOTED directory);
	// "socket": booted with it, its private socket there; "no socket":
	// booted with it, no private socket.
	systemd string
}

const debian12 = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n"

// runNodePrereqs runs node-prereqs.sh with DRY_RUN on m and returns its
// output (the temporary directory's name removed from paths), the state file's content ("" if absent) and whether apt-get ran (a
// fake one is first in PATH; it must never run).
func runNodePrereqs(t *testing.T, m machine) (out, state string, aptRan bool) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	aptMarker := filepath.Join(dir, "apt-get-ran")
	write("bin/apt-get", "#!/bin/sh\ntouch "+aptMarker+"\nexit 1\n", 0o755)
	dpkg := write("bin/dpkg-query", fakeDpkgQuery, 0o755)
	db := write("dpkg.db", strings.ReplaceAll(strings.Join(m.dpkg, "\n"), "RUNTIME", filepath.Join(dir, "runtime"))+"\n", 0o644)
	osRelease := write("os-release", m.osRelease, 0o644)
	cgroups := filepath.Join(dir, "cgroup")
	if m.cgroupV2 != "" {
		write("cgroup/cgroup.controllers", m.cgroupV2, 0o644)
	} else {
		write("cgroup/memory/cgroup.procs", "", 0o644)
	}
	write("runtime/.keep", "", 0o644)
	for _, p := range m.programs {
		write("runtime/"+p, "#!/bin/sh\n", 0o755)
	}
	write("output/bin/.keep", "", 0o644)
	for _, p := range m.own {
		write("output/bin/"+p, "#!/bin/sh\n", 0o755)
	}
	write("proc/self/comm", "bash\n", 0o644) // not a PID: never looked at
	for i, c := range m.processes {
		write(filepath.Join("proc", string(rune('1'+i))+"00", "comm"), c+"\n", 0o644)
	}
	statePath := write("state", "ready\n", 0o644) // a stale one: removed unless ready
	// systemd's directory, short: a socket's path has at most 107 bytes.
	sd, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sd) })
	if m.systemd != "" {
		if err := os.Mkdir(filepath.Join(sd, "system"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if m.systemd == "socket" {
		l, err := net.Listen("unix", filepath.Join(sd, "private"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	uid := m.uid
	if uid == "" {
		uid = "0"
	}

	cmd := exec.Command("bash", append([]string{"node-prereqs.sh"}, pins...)...)
	cmd.Env = []string{
		"PATH=" + filepath.Join(dir, "bin") + ":" + os.Getenv("PATH"),
		"DRY_RUN=1",
		"OS_RELEASE=" + osRelease,
		"CGROUP_ROOT=" + cgroups,
		"CGROUP_FSTYPE=" + m.fstype,
		"SD_BOOTED=" + filepath.Join(sd, "system"),
		"SYSTEMD_PRIVATE=" + filepath.Join(sd, "private"),
		"DPKG_QUERY=" + dpkg,
		"FAKE_DPKG_DB=" + db,
		"PROC_ROOT=" + filepath.Join(dir, "proc"),
		"RUNTIME_PATH=" + filepath.Join(dir, "output", "bin") + ":" + filepath.Join(dir, "runtime"),
		"OWN_OUTPUT=" + filepath.Join(dir, "output"),
		"NODE_PREREQS_STATE=" + statePath,
		"NODE_PREREQS_UID=" + uid,
		"NODE_PREREQS_KERNEL=Linux",
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if m.ci {
		cmd.Env = append(cmd.Env, "CI=true")
	}
	if m.cgoTools != "" {
		cmd.Env = append(cmd.Env, "CGO_TOOLS="+m.cgoTools)
	}
	if err := cmd.Run(); err != nil {
		if !m.ci {
			t.Fatalf("node-prereqs.sh: %v; output:\n%s", err, buf.String())
		}
		buf.WriteString(err.Error() + "\n")
	}
	b, err := os.ReadFile(statePath)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	_, aptErr := os.Stat(aptMarker)
	// The temporary directory's name varies.
	return strings.NewReplacer(dir, "", sd, "/run/systemd").Replace(buf.String()), string(b), aptErr == nil
}

func TestNodePrereqs(t *testing.T) {
	const kwok = "; the local cluster will run KWOK nodes only\n"
	installedPins := []string{
		"pkg libseccomp-dev installed 2.5.4-1+deb12u1",
		"pkg busybox-static installed 1:1.35.0-4+deb12u1+b1",
		"pkg mmdebstrap installed 1.3.5-7",
	}
	cases := []struct {
		name      string
		m         machine
		want      string
		wantReady bool
	}{
		{
			name: "Debian 12, cgroup v1, nothing installed: installs the pins without removing anything",
			m:    machine{osRelease: debian12},
			want: "real node packages: installing " + strings.Join(pins, " ") + "\n" +
				"dry run: apt-get update -qq\n" +
				"dry run: apt-get install -y -qq --no-install-recommends --no-remove " + strings.Join(pins, " ") + "\n",
		},
		{
			name: "Debian 12, only configuration files of containerd.io left: installs",
			m:    machine{osRelease: debian12, dpkg: []string{"pkg containerd.io config-files 1.7.25-1"}},
			want: "real node packages: installing " + strings.Join(pins, " ") + "\n" +
				"dry run: apt-get update -qq\n" +
				"dry run: apt-get install -y -qq --no-install-recommends --no-remove " + strings.Join(pins, " ") + "\n",
		},
		{
			name: "Debian 12, some pins installed: installs the rest only",
			m:    machine{osRelease: debian12, dpkg: installedPins[:2]},
			want: "real node packages: installing " + pins[2] + "\n" +
				"dry run: apt-get update -qq\n" +
				"dry run: apt-get install -y -qq --no-install-recommends --no-remove " + pins[2] + "\n",
		},
		{
			name: "Debian 12, all pins installed, a real node of ours running: up to date",
			m: machine{
				osRelease: debian12,
				dpkg:      installedPins,
				processes: []string{"containerd"},
			},
			want:      "real node packages: up to date\n",
			wantReady: true,
		},
		{
			name: "Debian 12, Debian's containerd of an earlier make node-prereqs left installed: not the host's",
			m: machine{
				osRelease: debian12,
				dpkg: append([]string{"file RUNTIME/containerd containerd", "pkg containerd installed 1.6.20~ds1-1+deb12u3",
					"pkg runc installed 1.1.5+ds1-1+deb12u1"}, installedPins...),
				programs: []string{"containerd", "runc"},
			},
			want:      "real node packages: up to date\n",
			wantReady: true,
		},
		{
			name: "a containerd of no package",
			m:    machine{osRelease: debian12, programs: []string{"containerd"}},
			want: "real node: the host has a container runtime of its own (/runtime/containerd)" + kwok,
		},
		{
			name:      "Debian 12, this project's kubelet and containerd on PATH (make kubectl): not the host's",
			m:         machine{osRelease: debian12, dpkg: installedPins, own: []string{"kubelet", "containerd"}},
			want:      "real node packages: up to date\n",
			wantReady: true,
		},
		{
			name: "Ubuntu 24.04 under CI=true: fails, not skipped",
			m:    machine{osRelease: "NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n", ci: true},
			want: "real node: the pinned packages are Debian 12's, this is ubuntu 24.04; CI=true needs the real node (CI's machines run it), so this fails\nexit status 1\n",
		},
		{
			name: "Ubuntu 24.04",
			m:    machine{osRelease: "NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n"},
			want: "real node: the pinned packages are Debian 12's, this is ubuntu 24.04" + kwok,
		},
		{
			name: "Debian 13",
			m:    machine{osRelease: "ID=debian\nVERSION_ID=\"13\"\nVERSION_CODENAME=trixie\n"},
			want: "real node: the pinned packages are Debian 12's, this is debian 13" + kwok,
		},
		{
			name:      "cgroup v2, all pins installed: up to date",
			m:         machine{osRelease: debian12, cgroupV2: "cpuset cpu io memory hugetlb pids rdma misc\n", fstype: "cgroup2fs", dpkg: installedPins},
			want:      "real node packages: up to date\n",
			wantReady: true,
		},
		{
			name: "cgroup v2, nothing installed: installs the pins",
			m:    machine{osRelease: debian12, cgroupV2: "cpu memory pids\n", fstype: "cgroup2fs"},
			want: "real node packages: installing " + strings.Join(pins, " ") + "\n" +
				"dry run: apt-get update -qq\n" +
				"dry run: apt-get install -y -qq --no-install-recommends --no-remove " + strings.Join(pins, " ") + "\n",
		},
		{
			name:      "cgroup v2 under systemd with its private socket, all pins installed: up to date",
			m:         machine{osRelease: debian12, cgroupV2: "cpuset cpu io memory hugetlb pids rdma misc\n", fstype: "cgroup2fs", dpkg: installedPins, systemd: "socket"},
			want:      "real node packages: up to date\n",
			wantReady: true,
		},
		{
			name: "systemd without its private socket",
			m:    machine{osRelease: debian12, cgroupV2: "cpuset cpu io memory hugetlb pids rdma misc\n", fstype: "cgroup2fs", dpkg: installedPins, systemd: "no socket"},
			want: "real node: this host runs systemd (/run/systemd/system), so the node uses the systemd cgroup driver, which needs systemd's private socket /run/systemd/private" + kwok,
		},
		{
			name: "cgroup v2 without the memory controller",
			m:    machine{osRelease: debian12, cgroupV2: "cpuset cpu io pids\n", fstype: "cgroup2fs", dpkg: installedPins},
			want: "real node: cgroup v2 at /cgroup lacks the memory controller (cgroup.controllers: cpuset cpu io pids)" + kwok,
		},
		{
			name: "neither the v1 memory hierarchy nor cgroup2",
			m:    machine{osRelease: debian12, cgroupV2: "cpu memory pids\n", fstype: "tmpfs", dpkg: installedPins},
			want: "real node: needs cgroup v1 (the memory hierarchy at /cgroup/memory) or v2 (cgroup2 at /cgroup, which is tmpfs here)" + kwok,
		},
		{
			name: "Docker's containerd.io installed",
			m:    machine{osRelease: debian12, dpkg: []string{"pkg containerd.io installed 1.7.25-1"}},
			want: "real node: the host has a container runtime of its own (package containerd.io 1.7.25-1)" + kwok,
		},
		{
			name: "moby-engine installed",
			m:    machine{osRelease: debian12, dpkg: []string{"pkg moby-engine installed 27.3.1"}},
			want: "real node: the host has a container runtime of its own (package moby-engine 27.3.1)" + kwok,
		},
		{
			name: "another libseccomp-dev version installed",
			m:    machine{osRelease: debian12, dpkg: []string{"pkg libseccomp-dev installed 2.5.4-1"}},
			want: "real node: libseccomp-dev 2.5.4-1 is installed, not the pinned 2.5.4-1+deb12u1; not replacing it" + kwok,
		},
		{
			name: "a kubelet of no package",
			m:    machine{osRelease: debian12, programs: []string{"kubelet"}},
			want: "real node: the host has a container runtime of its own (/runtime/kubelet)" + kwok,
		},
		{
			name: "a dockerd runs",
			m:    machine{osRelease: debian12, processes: []string{"sshd", "dockerd"}},
			want: "real node: a dockerd of the host runs (pid 200)" + kwok,
		},
		{
			name: "no C compiler for runc",
			m:    machine{osRelease: debian12, dpkg: installedPins, cgoTools: "gcc-missing pkg-config"},
			want: "real node: no gcc-missing for runc's cgo build (Debian's gcc, libc6-dev and pkg-config)" + kwok,
		},
		{
			name: "not root",
			m:    machine{osRelease: debian12, uid: "1000"},
			want: "real node: not root" + kwok,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, state, aptRan := runNodePrereqs(t, tc.m)
			if aptRan {
				t.Error("apt-get ran")
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if got := state == "ready\n"; got != tc.wantReady {
				t.Errorf("state file says ready: %v, want %v (content %q)", got, tc.wantReady, state)
			}
		})
	}
}
