// Command local-cluster starts, stops and inspects the local Volcano cluster of
// package internal/localcluster (etcd, kube-apiserver, kube-controller-manager,
// vc-scheduler, this repository's vc-controller-manager, KWOK fake nodes,
// optionally vc-webhook-manager and the real node, all on 127.0.0.1). `make local-up`,
// `make local-down` and `make local-status` run it.
//
// Usage:
//
//	local-cluster up     [--dir D] [--bin-dir B] [--nodes N] [--webhook auto|on|off]
//	                     [--controller-manager FILE] [--real-node auto|on|off]
//	                     [--image-dir I] [--no-volcano] [--registry] [--timeout 3m]
//	local-cluster down   [--dir D]
//	local-cluster status [--dir D]
//	local-cluster netns-proxy --netns /run/netns/NAME --forward in:PORT|out:PORT ...
//	                          [--api-service ADDR=PORT --egress-socket S --pod-subnet CIDR]
//
// netns-proxy is the real node's loopback bridge, started by up: it relays
// 127.0.0.1:PORT between the host and the node's network namespace, and lets
// pods reach the API server at the kubernetes Service and the API server reach
// pods (internal/localcluster/incluster.go).
//
// Relative directories are taken relative to the module root; the defaults are
// _output/local and _output/bin.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "up":
		err = up(args)
	case "down":
		err = down(args)
	case "status":
		var running bool
		running, err = status(args)
		if err == nil && !running {
			os.Exit(3)
		}
	case "netns-proxy":
		err = netnsProxy(args)
	case "-h", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", cmd)
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local-cluster:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: local-cluster up|down|status [flags]
  up      start the cluster (no-op if it already runs); see 'local-cluster up -h'
  down    stop every process of the cluster and remove its directory
  status  show the components and whether the cluster is usable (exit 3 if not)
`)
}

func up(args []string) error {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	dir := fs.String("dir", "_output/local", "cluster root directory (kubeconfig, logs, state)")
	bin := fs.String("bin-dir", "_output/bin", "directory of the component binaries")
	nodes := fs.Int("nodes", 4, "number of fake KWOK nodes (32 CPU, 256Gi, 8 nvidia.com/gpu, 110 pods each)")
	webhook := fs.String("webhook", string(localcluster.WebhookAuto), "start vc-webhook-manager: auto (if built), on or off")
	cm := fs.String("controller-manager", localcluster.ControllerManager, "file in --bin-dir to run as the Volcano controller manager (e.g. vc-controller-manager-stock)")
	realNode := fs.String("real-node", string(localcluster.RealNodeAuto), "start the real node (kubelet, containerd, CoreDNS): auto (if this machine can), on or off")
	images := fs.String("image-dir", "_output/images", "directory of the image tarballs the real node loads (make node-images)")
	noVolcano := fs.Bool("no-volcano", false, "start no Volcano (CRDs, scheduler, managers): for installing it with Helm onto the real node")
	registry := fs.Bool("registry", false, "with the real node, start an image registry on 127.0.0.1 (--bin-dir's registry: make _output/bin/registry) that the node's containerd pulls from at the same address")
	timeout := fs.Duration("timeout", 3*time.Minute, "give up if the cluster is not ready within this time")
	_ = fs.Parse(args)

	// Ctrl-C cancels the start; Up then stops what it started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := localcluster.Up(ctx, localcluster.Config{
		RootDir:                 *dir,
		BinDir:                  *bin,
		Nodes:                   *nodes,
		Webhook:                 localcluster.WebhookMode(*webhook),
		ControllerManagerBinary: *cm,
		RealNode:                localcluster.RealNodeMode(*realNode),
		ImageDir:                *images,
		NoVolcano:               *noVolcano,
		Registry:                *registry,
		Timeout:                 *timeout,
		Out:                     os.Stdout,
	})
	if err != nil {
		return err
	}
	vcctl := filepath.Join(cl.BinDir, "vcctl")
	if addr := cl.RegistryAddress(); addr != "" {
		fmt.Printf("\nImage registry: %s (push there, e.g. make images-push IMAGE_REPO=%s/framework-plugins; the node pulls from the same address)\n", addr, addr)
	}
	fmt.Printf(`
Use it:
  export KUBECONFIG=%s
  %s job list             # Volcano CLI (make binaries builds it)
  kubectl get nodes       # make kubectl builds _output/bin/kubectl
Logs: %s/logs/<component>.log   State: %s/state.json
Stop: make local-down
`, cl.Kubeconfig, vcctl, cl.RootDir, cl.RootDir)
	return nil
}

// netnsProxy runs the real node's loopback forwards until SIGTERM.
func netnsProxy(args []string) error {
	fs := flag.NewFlagSet("netns-proxy", flag.ExitOnError)
	netns := fs.String("netns", "", "network namespace file, e.g. /run/netns/vcplugins-1a2b3c4d")
	var forwards []localcluster.Forward
	fs.Func("forward", "in:PORT (host 127.0.0.1:PORT into the namespace) or out:PORT (namespace to host); repeatable", func(s string) error {
		f, err := localcluster.ParseForward(s)
		forwards = append(forwards, f)
		return err
	})
	var in localcluster.InClusterProxy
	fs.Func("api-service", "ADDR=PORT: listen on ADDR in the namespace (the kubernetes Service's ClusterIP:443) and relay to the API server at host 127.0.0.1:PORT", func(s string) error {
		addr, port, ok := strings.Cut(s, "=")
		p, err := strconv.Atoi(port)
		if !ok || err != nil {
			return fmt.Errorf("want ADDR=PORT, got %q", s)
		}
		in.APIService, in.APIServerPort = addr, p
		return nil
	})
	fs.StringVar(&in.EgressSocket, "egress-socket", "", "Unix socket of the HTTP CONNECT proxy for the API server's cluster egress")
	fs.StringVar(&in.PodSubnet, "pod-subnet", "", "CIDR whose addresses the CONNECT proxy dials inside the namespace")
	_ = fs.Parse(args)
	if *netns == "" || len(forwards) == 0 {
		return fmt.Errorf("netns-proxy needs --netns and at least one --forward")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 2)
	go func() { errc <- localcluster.RunNetnsProxy(ctx, *netns, forwards) }()
	go func() { errc <- in.Run(ctx, *netns) }()
	// Either failing to open a listener ends the proxy; both return nil when ctx ends.
	if err := <-errc; err != nil {
		return err
	}
	return <-errc
}

func down(args []string) error {
	fs := flag.NewFlagSet("down", flag.ExitOnError)
	dir := fs.String("dir", "_output/local", "cluster root directory")
	_ = fs.Parse(args)
	start := time.Now()
	if err := localcluster.Down(*dir); err != nil {
		return err
	}
	fmt.Printf("local cluster stopped and removed (%.1fs)\n", time.Since(start).Seconds())
	return nil
}

// status prints the cluster's components and reports whether it is usable.
func status(args []string) (bool, error) {
	fs := flag.NewFlagSet("status", flag.ExitOnError)
	dir := fs.String("dir", "_output/local", "cluster root directory")
	_ = fs.Parse(args)
	st, err := localcluster.Status(*dir)
	if err != nil {
		return false, err
	}
	if st.State == nil {
		fmt.Printf("no local cluster in %s\n", st.Dir)
		return false, nil
	}
	for _, c := range st.Components {
		state := "running"
		if !c.Alive {
			state = "DEAD"
		}
		port := ""
		if p, ok := st.State.Ports[c.Name]; ok {
			port = fmt.Sprintf("127.0.0.1:%d", p)
		}
		fmt.Printf("  %-24s pid %-8d %-8s %s\n", c.Name, c.PID, state, port)
	}
	fmt.Printf("  nodes: %v\n", st.State.Nodes)
	if st.APIServerReady {
		fmt.Printf("apiserver %s ready; export KUBECONFIG=%s\n", st.State.Server, st.State.Kubeconfig)
	} else {
		fmt.Printf("apiserver %s not ready: %s\n", st.State.Server, st.APIServerError)
	}
	if !st.Running() {
		fmt.Println("cluster is NOT usable; run `make local-down local-up` to restart it")
		return false, nil
	}
	return true, nil
}
