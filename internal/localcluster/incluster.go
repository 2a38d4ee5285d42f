package localcluster

// In-cluster control plane on the real node (docs/install.md, "The install
// test's cluster"): what Volcano's Helm chart needs when its scheduler,
// controller manager and admission run as pods there, with no kube-proxy and
// no network beyond the cluster.
//
//   - Pods reach the API server as in-cluster clients do, at the "kubernetes"
//     Service's ClusterIP (KUBERNETES_SERVICE_HOST=kubernetesServiceIP, port
//     443): pods get a route to the Service range via the bridge, the node's
//     network namespace holds that address on its loopback device, and the
//     netns proxy listens there and relays to the API server's 127.0.0.1 port.
//   - The API server reaches webhook Services at their endpoints, the pod
//     addresses (--enable-aggregator-routing), through its "cluster" egress
//     selector: an HTTP CONNECT proxy on a Unix socket in the cluster's run/
//     directory, served by the netns proxy, which dials pod addresses from
//     inside the node's namespace and loopback addresses (the kubelet, also
//     reached through this egress) from the host's. Nothing else is dialled.
//
// All of it lives in the node's network namespace, the cluster directory and
// processes of the cluster, so Down's removal of those undoes it.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// KubeScheduler is Kubernetes' scheduler, which a cluster without Volcano
// (Config.NoVolcano) runs: Volcano's chart's own pods, its scheduler's among
// them, ask for the default scheduler.
const KubeScheduler = "kube-scheduler"

// kubeSchedulerArgs are its flags: the admin kubeconfig, on 127.0.0.1:port.
func kubeSchedulerArgs(root, kubeconfig string, port int) []string {
	return []string{
		"--kubeconfig", kubeconfig,
		"--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig,
		"--leader-elect=false",
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(port),
		"--cert-dir", filepath.Join(root, "pki", KubeScheduler),
	}
}

const (
	// serviceCIDR is the API server's --service-cluster-ip-range.
	serviceCIDR = "10.0.0.0/24"
	// kubernetesServiceIP is the "kubernetes" Service's ClusterIP, the first
	// address of serviceCIDR; the API server's serving certificate names it.
	kubernetesServiceIP = "10.0.0.1"
	// kubernetesServicePort is that Service's port.
	kubernetesServicePort = 443
	// egressSocketName is the CONNECT proxy's socket, under <root>/run.
	egressSocketName = "egress.sock"
)

// egressSocket is the CONNECT proxy's Unix socket of the cluster at root.
func egressSocket(root string) string {
	return filepath.Join(root, "run", egressSocketName)
}

// inClusterAPIServerArgs writes the egress selector configuration under root
// and returns the API server flags that use it. Only for a cluster with the
// real node: without the proxy, calls to webhook Services and kubelets would
// fail.
func inClusterAPIServerArgs(root string) ([]string, error) {
	file := filepath.Join(root, "egress-selector.yaml")
	conf := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %q
`, egressSocket(root))
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return []string{
		"--egress-selector-config-file", file,
		// Webhook Services are dialled at an endpoint (a pod address) instead
		// of the ClusterIP, which only kube-proxy would make reachable.
		"--enable-aggregator-routing=true",
	}, nil
}

// podRoutes are the routes, besides the pod subnet's, that pods of the real
// node get: the Service range through the bridge's address.
func podRoutes() []map[string]string {
	return []map[string]string{{"dst": serviceCIDR, "gw": podGateway}}
}

// serviceAddrCommands are the `ip` commands that give the node's namespace
// the kubernetes Service's address, on its loopback device.
func serviceAddrCommands(netns string) [][]string {
	return [][]string{{"-n", netns, "addr", "add", kubernetesServiceIP + "/32", "dev", "lo"}}
}

// inClusterProxyArgs are the netns proxy's flags for the in-cluster parts.
func inClusterProxyArgs(root string, apiserverPort int) []string {
	return []string{
		"--api-service", net.JoinHostPort(kubernetesServiceIP, strconv.Itoa(kubernetesServicePort)) + "=" + strconv.Itoa(apiserverPort),
		"--egress-socket", egressSocket(root),
		"--pod-subnet", podSubnet,
	}
}

// InClusterProxy is the netns proxy's in-cluster part (see the top of this
// file). Zero fields turn the corresponding part off.
type InClusterProxy struct {
	// APIService is the address, in the namespace, where pods reach the API
	// server (the kubernetes Service's ClusterIP and port).
	APIService string
	// APIServerPort is the API server's port on the host's 127.0.0.1.
	APIServerPort int
	// EgressSocket is the Unix socket of the CONNECT proxy.
	EgressSocket string
	// PodSubnet is the CIDR whose addresses the CONNECT proxy dials inside the namespace.
	PodSubnet string
}

// Run serves until ctx ends. It returns an error if a listener cannot be
// opened or PodSubnet does not parse, nil when ctx ends.
func (p InClusterProxy) Run(ctx context.Context, nsPath string) error {
	if p.APIService != "" {
		var l net.Listener
		if err := inNetns(nsPath, func() (err error) {
			l, err = net.Listen("tcp", p.APIService)
			return err
		}); err != nil {
			return fmt.Errorf("API service %s: %w", p.APIService, err)
		}
		defer l.Close()
		host := "127.0.0.1:" + strconv.Itoa(p.APIServerPort)
		go acceptLoop(l, func() (net.Conn, error) { return net.Dial("tcp", host) })
	}
	if p.EgressSocket != "" {
		_, subnet, err := net.ParseCIDR(p.PodSubnet)
		if err != nil {
			return fmt.Errorf("pod subnet: %w", err)
		}
		_ = os.Remove(p.EgressSocket) // left by a killed proxy of this cluster
		// Bound under a umask of 077, so that the socket is the owner's
		// (root's) alone from the start, whatever the caller's umask: it
		// reaches every pod of the node (#38 L8). Umask is process-wide, and
		// this process binds nothing else at the same time.
		old := syscall.Umask(0o077)
		l, err := net.Listen("unix", p.EgressSocket)
		syscall.Umask(old)
		if err != nil {
			return fmt.Errorf("egress socket: %w", err)
		}
		srv := &http.Server{Handler: connectHandler{nsPath: nsPath, podSubnet: subnet}, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(l) }()
		defer srv.Close()
	}
	<-ctx.Done()
	return nil
}

// connectHandler serves HTTP CONNECT as the API server's egress selector
// sends it ("CONNECT host:port HTTP/1.1"): a pod address is dialled inside the
// node's namespace, a loopback address (the kubelet's forwarded port,
// "localhost:PORT") on the host; any other target is refused with 403, so
// nothing leaves 127.0.0.1 and the namespace.
type connectHandler struct {
	nsPath    string
	podSubnet *net.IPNet
}

func (h connectHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "only CONNECT", http.StatusMethodNotAllowed)
		return
	}
	out, status, err := h.dial(r.Context(), r.Host)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		out.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	in, buf, err := hj.Hijack()
	if err != nil {
		out.Close()
		return
	}
	if _, err := in.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		in.Close()
		out.Close()
		return
	}
	relay(bufferedConn{Conn: in, r: buf.Reader}, out)
}

// dial connects to target as ServeHTTP describes, returning the HTTP status
// for an error: 403 for a target outside the pod subnet and loopback, 502 for
// a failed dial.
func (h connectHandler) dial(ctx context.Context, target string) (net.Conn, int, error) {
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	ip := net.ParseIP(host)
	if ip == nil && host == "localhost" {
		ip = net.IPv4(127, 0, 0, 1)
	}
	addr := net.JoinHostPort(ip.String(), port)
	var d net.Dialer
	d.Timeout = 10 * time.Second
	switch {
	case ip == nil:
		return nil, http.StatusForbidden, fmt.Errorf("%s: only pod and loopback addresses", target)
	case h.podSubnet.Contains(ip):
		c, err := dialInNetns(ctx, h.nsPath, "tcp", addr)
		if err != nil {
			return nil, http.StatusBadGateway, err
		}
		return c, 0, nil
	case ip.IsLoopback():
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, http.StatusBadGateway, err
		}
		return c, 0, nil
	default:
		return nil, http.StatusForbidden, fmt.Errorf("%s: only pod and loopback addresses", target)
	}
}

// bufferedConn is a hijacked connection whose first bytes may already sit in
// the server's reader (a TLS ClientHello sent right after CONNECT).
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
