package localcluster

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func TestForwardRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Forward
		wantErr bool
	}{
		{in: "in:10250", want: Forward{Port: 10250, IntoNetns: true}},
		{in: "out:6443", want: Forward{Port: 6443}},
		{in: "out:0", wantErr: true},
		{in: "out:65536", wantErr: true},
		{in: "sideways:80", wantErr: true},
		{in: "in", wantErr: true},
		{in: "in:x", wantErr: true},
	} {
		got, err := ParseForward(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseForward(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseForward(%q) (-want +got):\n%s", tc.in, diff)
		}
		if got.String() != tc.in {
			t.Errorf("String() = %q, want %q", got.String(), tc.in)
		}
	}
}

func TestParseMountinfo(t *testing.T) {
	data := []byte(`22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
41 22 0:40 / /work/a\040b/kubelet/pods/x/volumes/kubernetes.io~projected/t rw - tmpfs tmpfs rw
garbage line
`)
	want := []mountEntry{
		{point: "/", fstype: "ext4"},
		{point: "/sys/fs/cgroup/memory", fstype: "cgroup"},
		{point: "/work/a b/kubelet/pods/x/volumes/kubernetes.io~projected/t", fstype: "tmpfs"},
	}
	if diff := cmp.Diff(want, parseMountinfo(data), cmp.AllowUnexported(mountEntry{})); diff != "" {
		t.Errorf("parseMountinfo (-want +got):\n%s", diff)
	}
}

func TestHostChanges(t *testing.T) {
	before := HostSnapshot{
		Processes: []string{"/usr/bin/containerd"},
		Mounts:    []string{"/", "/proc"},
		Netns:     []string{"other"},
		Sysctls:   map[string]string{"kernel.panic": "0", "vm.overcommit_memory": "0"},
		Paths:     []string{"/run/netns"},
		Cgroups:   []string{"/sys/fs/cgroup/init.scope"},
	}
	after := HostSnapshot{
		Mounts:  []string{"/", "/proc", "/proc", "/work/x/rootfs"},
		Netns:   []string{"other", "cni-1234"},
		Links:   []string{"vcp0"},
		Sysctls: map[string]string{"kernel.panic": "10", "vm.overcommit_memory": "0"},
		Paths:   []string{"/run/netns", "/var/lib/cni"},
		Cgroups: []string{"/sys/fs/cgroup/cpu/vcplugins-1", "/sys/fs/cgroup/init.scope", "/sys/fs/cgroup/vcplugins-2"},
		// cgroup v2: the controllers the node enabled for the root's children.
		CgroupControllers: []string{"cpu", "memory"},
	}
	// A process that ended is not reported: other work on the machine.
	want := []string{
		"mount /proc left behind",
		"mount /work/x/rootfs left behind",
		"network namespace cni-1234 left behind",
		"network interface vcp0 left behind",
		"path /var/lib/cni left behind",
		"cgroup /sys/fs/cgroup/cpu/vcplugins-1 left behind",
		"cgroup /sys/fs/cgroup/vcplugins-2 left behind",
		"cgroup controller cpu left behind",
		"cgroup controller memory left behind",
		"sysctl kernel.panic: 0 -> 10",
	}
	if diff := cmp.Diff(want, HostChanges(before, after)); diff != "" {
		t.Errorf("HostChanges (-want +got):\n%s", diff)
	}
	if got := HostChanges(before, before); len(got) != 0 {
		t.Errorf("HostChanges of a snapshot with itself = %v, want none", got)
	}
}

// TestWriteRealNodeConfig checks the settings the real node depends on: the
// ones real-node.md found necessary on this machine kind, the ones that
// keep the node's state out of the host's fixed paths, and the cgroup driver
// of the kubelet and of containerd's runc, which must agree.
func TestWriteRealNodeConfig(t *testing.T) {
	for _, tc := range []struct {
		name, driver      string
		wantDriver        string
		wantSystemdCgroup string
	}{
		{name: "cgroupfs (no systemd)", driver: cgroupDriverCgroupfs, wantDriver: "cgroupfs", wantSystemdCgroup: "SystemdCgroup = false"},
		{name: "systemd (a host booted with it)", driver: cgroupDriverSystemd, wantDriver: "systemd", wantSystemdCgroup: "SystemdCgroup = true"},
		{name: "none recorded (a state of before): cgroupfs", driver: "", wantDriver: "cgroupfs", wantSystemdCgroup: "SystemdCgroup = false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testWriteRealNodeConfig(t, tc.driver, tc.wantDriver, tc.wantSystemdCgroup)
		})
	}
}

func testWriteRealNodeConfig(t *testing.T, driver, wantDriver, wantSystemdCgroup string) {
	dir := t.TempDir()
	p, err := newPKI(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	rn := &RealNodeState{Netns: "vcplugins-test", CgroupRoot: "/vcplugins-test", CgroupDriver: driver, ContainerdSocket: filepath.Join(dir, "node", "containerd.sock"), KubeletPort: 12345, DNS: podGateway}
	bin := filepath.Join(dir, "bin")
	files, err := writeRealNodeConfig(filepath.Join(dir, "node"), bin, p, "https://127.0.0.1:6443", rn)
	if err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(files.kubelet)
	if err != nil {
		t.Fatal(err)
	}
	var kc kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(data, &kc); err != nil {
		t.Fatalf("kubelet configuration: %v\n%s", err, data)
	}
	type essentials struct {
		Address, CgroupDriver, CgroupRoot, Endpoint, Domain string
		Port                                                int32
		DNS                                                 []string
		Resolv                                              string
		GCHigh                                              int32
		Taint                                               string
	}
	got := essentials{kc.Address, kc.CgroupDriver, kc.CgroupRoot, kc.ContainerRuntimeEndpoint, kc.ClusterDomain,
		kc.Port, kc.ClusterDNS, *kc.ResolverConfig, *kc.ImageGCHighThresholdPercent, kc.RegisterWithTaints[0].ToString()}
	// The cgroup root stays in cgroupfs form with either driver: the
	// kubelet makes the slice name of it itself.
	want := essentials{"127.0.0.1", wantDriver, "/vcplugins-test", "unix://" + rn.ContainerdSocket, "cluster.local",
		12345, []string{podGateway}, "", 100, RealNodeTaint + "=true:NoSchedule"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubelet configuration (-want +got):\n%s", diff)
	}
	for _, dir := range []string{kc.VolumePluginDir, kc.PodLogsDir} {
		if !strings.HasPrefix(dir, filepath.Join(filepath.Dir(files.kubelet))) {
			t.Errorf("kubelet directory %s is outside the node's root", dir)
		}
	}

	conf, err := os.ReadFile(files.containerd)
	if err != nil {
		t.Fatal(err)
	}
	// The runtime is ours, by path: the shim, runc and the CNI plugins of
	// bin/node, whatever PATH holds.
	for _, want := range []string{
		"version = 4\n",
		"restrict_oom_score_adj = true",
		wantSystemdCgroup,
		`snapshotter = "overlayfs"`,
		`sandbox = "` + pauseImage + `"`,
		`address = "` + rn.ContainerdSocket + `"`,
		`runtime_path = "` + filepath.Join(bin, "node", "containerd-shim-runc-v2") + `"`,
		`BinaryName = "` + filepath.Join(bin, "node", "runc") + `"`,
		`bin_dirs = ["` + filepath.Join(bin, "node", "cni") + `"]`,
	} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("containerd configuration lacks %s", want)
		}
	}
	cni, err := os.ReadFile(filepath.Join(dir, "node", "cni", "net.d", "10-vcplugins.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	// The one route besides the subnet: the Service range, where pods reach
	// the API server at the kubernetes Service (incluster.go).
	for _, want := range []string{`"ipMasq": false`, `"subnet": "` + podSubnet + `"`, `"bridge": "` + podBridge + `"`,
		`"dst": "` + serviceCIDR + `"`, `"gw": "` + podGateway + `"`} {
		if !strings.Contains(string(cni), want) {
			t.Errorf("CNI configuration lacks %s:\n%s", want, cni)
		}
	}
	if strings.Contains(string(cni), "isDefaultGateway") {
		t.Errorf("CNI configuration gives pods a default route:\n%s", cni)
	}
}

// TestContainerdConfig checks that every path containerd's configuration
// names, a directory, socket or program, is one the node chose: a fixed
// default of containerd's (/run/containerd, /var/lib/containerd, /opt, the
// host's drop-ins, CDI specs, NRI's socket) would put the node's state on
// the host or take the host's in.
func TestContainerdConfig(t *testing.T) {
	// With either cgroup driver of runc (SystemdCgroup), nothing else changes.
	for _, systemd := range []bool{false, true} {
		t.Run(fmt.Sprintf("SystemdCgroup=%t", systemd), func(t *testing.T) {
			s := containerdSettings{
				Root: "/c/root", State: "/c/state", Temp: "/c/tmp", Opt: "/c/opt", Socket: "/c/containerd.sock", ShimSocketDir: "/s/vcplugins-test",
				SandboxImage: "localhost/pause:local", Shim: "/b/node/containerd-shim-runc-v2", Runc: "/b/node/runc",
				RuncRoot: "/c/runc", CNIBinDir: "/b/node/cni", CNIConfDir: "/c/net.d", SystemdCgroup: systemd,
			}
			conf := containerdConfig(s)
			// key = value lines, by section.
			got := map[string]string{}
			section := ""
			var settings []string
			for _, line := range strings.Split(conf, "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "#") {
					settings = append(settings, line)
				}
				switch {
				case line == "" || strings.HasPrefix(line, "#"):
				case strings.HasPrefix(line, "["):
					section = strings.Trim(line, "[]")
				default:
					k, v, ok := strings.Cut(line, " = ")
					if !ok {
						t.Fatalf("line %q is neither a section nor key = value", line)
					}
					if _, dup := got[section+" "+k]; dup {
						t.Errorf("%s set twice in [%s]", k, section)
					}
					got[section+" "+k] = v
				}
			}
			const (
				runtime = `plugins."io.containerd.cri.v1.runtime"`
				runc    = runtime + `.containerd.runtimes.runc`
			)
			for _, tc := range []struct{ key, want string }{
				{" version", "4"},
				{" root", `"/c/root"`},
				{" state", `"/c/state"`},
				{" temp", `"/c/tmp"`},
				{" imports", "[]"},
				{`plugins."io.containerd.server.v1.grpc" address`, `"/c/containerd.sock"`},
				{`plugins."io.containerd.server.v1.ttrpc" address`, `"/c/containerd.sock.ttrpc"`},
				{`plugins."io.containerd.internal.v1.opt" path`, `"/c/opt"`},
				{`plugins."io.containerd.shim.v1.manager" socket_dir`, `"/s/vcplugins-test"`},
				{`plugins."io.containerd.nri.v1.nri" disable`, "true"},
				{`plugins."io.containerd.cri.v1.images".pinned_images sandbox`, `"localhost/pause:local"`},
				{runtime + " cdi_spec_dirs", "[]"},
				{runtime + " restrict_oom_score_adj", "true"},
				{runc + " runtime_path", `"/b/node/containerd-shim-runc-v2"`},
				{runc + ".options BinaryName", `"/b/node/runc"`},
				{runc + ".options Root", `"/c/runc"`},
				// runc's cgroup driver, the kubelet's (writeRealNodeConfig).
				{runc + ".options SystemdCgroup", strconv.FormatBool(systemd)},
				{runtime + ".cni bin_dirs", `["/b/node/cni"]`},
				{runtime + ".cni conf_dir", `"/c/net.d"`},
				{`plugins."io.containerd.grpc.v1.cri" stream_server_address`, `"127.0.0.1"`},
			} {
				if got[tc.key] != tc.want {
					t.Errorf("[%s] = %q, want %q", tc.key, got[tc.key], tc.want)
				}
			}
			for _, fixed := range []string{"/run/containerd", "/var/lib/containerd", "/opt/", "/etc/", "/var/run/", "/usr/"} {
				if strings.Contains(strings.Join(settings, "\n"), fixed) {
					t.Errorf("configuration names %s:\n%s", fixed, conf)
				}
			}

		})
	}
}

// TestNetnsProxy runs the proxy between the host and a network namespace
// made for the test, in both directions, with an echo server on the far
// side. It needs root and iproute2, as the real node does.
func TestNetnsProxy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	name := fmt.Sprintf("vcptest-%d", os.Getpid())
	if _, err := os.Stat("/run/netns"); err != nil {
		// ip netns add makes /run/netns and mounts it onto itself: leave the
		// host as found.
		t.Cleanup(func() {
			if err := removeHostPath("/run/netns"); err != nil {
				t.Error(err)
			}
		})
	}
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	ns := "/run/netns/" + name
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v: %s", err, out)
	}

	echo := func(l net.Listener) {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "echo %s", line)
			}()
		}
	}
	// The server inside the namespace (the kubelet's side) and on the host
	// (the apiserver's side), each on a port of its own.
	var inside net.Listener
	if err := inNetns(ns, func() (err error) {
		inside, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer inside.Close()
	go echo(inside)
	insidePort := inside.Addr().(*net.TCPAddr).Port
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go echo(host)
	hostPort := host.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- RunNetnsProxy(ctx, ns, []Forward{{Port: insidePort, IntoNetns: true}, {Port: hostPort}})
	}()

	roundTrip := func(dial func() (net.Conn, error)) (string, error) {
		var last error
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			c, err := dial()
			if err != nil {
				last = err
				continue
			}
			defer c.Close()
			fmt.Fprintf(c, "hello\n")
			reply, err := bufio.NewReader(c).ReadString('\n')
			return reply, err
		}
		return "", last
	}
	// Host → namespace: the apiserver reaching the kubelet.
	got, err := roundTrip(func() (net.Conn, error) { return net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(insidePort)) })
	if err != nil || got != "echo hello\n" {
		t.Errorf("host to namespace: %q, %v", got, err)
	}
	// Namespace → host: the kubelet and CoreDNS reaching the apiserver.
	got, err = roundTrip(func() (net.Conn, error) {
		return dialInNetns(ctx, ns, "tcp", "127.0.0.1:"+strconv.Itoa(hostPort))
	})
	if err != nil || got != "echo hello\n" {
		t.Errorf("namespace to host: %q, %v", got, err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("RunNetnsProxy: %v", err)
	}
}
