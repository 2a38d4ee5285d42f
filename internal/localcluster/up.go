package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"
)

// upper carries the progress of one Up.
type upper struct {
	cfg     Config
	started time.Time
	state   State
	procs   []*process
	pki     *pki
	rest    *rest.Config
	kube    kubernetes.Interface
	volcano vcclientset.Interface
	// bins are the components' executables (binaries).
	bins map[string]string
	// realNodeErr says why the real node is not started (errSkipped when
	// Config.RealNode is off), nil when it is; decided before the API server
	// starts, whose flags depend on it.
	realNodeErr error
	// inClusterArgs are the API server's flags for an in-cluster control
	// plane (incluster.go), set in run when the real node is to start.
	inClusterArgs []string
}

// run performs the steps of Up in order, each a method below. The control
// plane's steps wait for their process's own readiness before the next
// starts, so a failure is attributed to the component that caused it; the Volcano components and KWOK
// start together and are awaited through what they produce (an open default
// Queue, Ready nodes). Any component exiting fails the wait in progress.
func (u *upper) run(ctx context.Context) (*Cluster, error) {
	cfg := u.cfg
	u.started = time.Now()
	root := cfg.RootDir
	for _, d := range []string{"logs", "pids", "run", "etcd"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	u.state = State{
		RootDir:    root,
		BinDir:     cfg.BinDir,
		Kubeconfig: filepath.Join(root, "kubeconfig"),
		Ports:      map[string]int{},
		StartedAt:  u.started,
	}

	bins, err := u.binaries()
	if err != nil {
		return nil, err
	}
	u.bins = bins
	u.realNodeErr = errSkipped
	if cfg.RealNode != RealNodeOff {
		u.realNodeErr = realNodePreflight(cfg)
	}
	if u.realNodeErr == nil {
		if u.inClusterArgs, err = inClusterAPIServerArgs(root); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(cfg.Out, "starting local cluster in %s (%d nodes, webhook manager: %v)\n", root, cfg.Nodes, u.state.Webhook)

	for _, name := range []string{Etcd, "etcd-peer", KubeAPIServer, KubeControllerManager, WebhookManager, WebhookManagerHealthz, ControllerManagerHealthz} {
		port, err := freePortExcept(u.state.Ports)
		if err != nil {
			return nil, err
		}
		u.state.Ports[name] = port
	}
	u.state.Server = fmt.Sprintf("https://127.0.0.1:%d", u.state.Ports[KubeAPIServer])

	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"certificates", u.makeCertificates},
		{Etcd, u.startEtcd},
		{KubeAPIServer, u.startAPIServer},
		{"volcano CRDs", u.applyVolcanoCRDs},
		{KubeControllerManager, u.startKubeControllerManager},
		{KubeScheduler, u.startKubeScheduler},
		{WebhookManager, u.startWebhookManager},
		{Scheduler, u.startScheduler},
		{ControllerManager, u.startControllerManager},
		{Kwok, u.startKwok},
		{"nodes", u.addNodes},
		{"real node", u.startRealNode},
		{"webhook manager ready", u.awaitWebhookManager},
		{"nodes ready", u.awaitNodes},
		{"real node ready", u.awaitRealNode},
		{"default service account", u.awaitServiceAccount},
		{"default queue", u.awaitDefaultQueue},
	}
	for _, s := range steps {
		t := time.Now()
		err := s.fn(ctx)
		if errors.Is(err, errSkipped) {
			fmt.Fprintf(cfg.Out, "  %-26s skipped\n", s.name)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(cfg.Out, "  %-26s %5.1fs\n", s.name, time.Since(t).Seconds())
	}

	// A component that crashed after its last use in a wait would otherwise
	// go unnoticed until the first test fails mysteriously.
	for _, p := range u.procs {
		if err := p.exited(); err != nil {
			return nil, err
		}
	}
	u.state.ReadyAt = time.Now()
	if err := writeState(&u.state); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "local cluster ready in %.1fs\n", u.state.ReadyAt.Sub(u.started).Seconds())
	return &Cluster{State: u.state, RESTConfig: u.rest}, nil
}

// makeCertificates writes the cluster's PKI and kubeconfig and makes the API clients.
func (u *upper) makeCertificates(context.Context) (err error) {
	root := u.cfg.RootDir
	u.pki, err = newPKI(filepath.Join(root, "pki"))
	if err == nil {
		err = writeKubeconfig(u.state.Kubeconfig, u.state.Server, u.pki)
	}
	if err == nil {
		u.rest, err = restConfigFrom(u.state.Kubeconfig)
	}
	if err == nil {
		u.kube, err = kubernetes.NewForConfig(u.rest)
	}
	if err == nil {
		u.volcano, err = vcclientset.NewForConfig(u.rest)
	}
	return err
}

// startEtcd starts etcd and waits for its /health.
func (u *upper) startEtcd(ctx context.Context) error {
	if err := u.start(u.bins[Etcd], Etcd, nil, etcdArgs(u.cfg.RootDir, u.state.Ports[Etcd], u.state.Ports["etcd-peer"], u.pki)...); err != nil {
		return err
	}
	return u.waitFor(ctx, "etcd /health", Etcd, func(ctx context.Context) (bool, error) {
		return etcdHealthy(ctx, u.state.EtcdEndpoint())
	})
}

// podSecurityExemptNamespaces are the namespaces the default Pod Security
// level does not apply to: Volcano's chart (the install test's) runs its
// scheduler there with a hostPath volume (/tmp/klog-socks).
var podSecurityExemptNamespaces = []string{"volcano-system"}

// writeAdmissionConfig writes kube-apiserver's admission configuration to
// file: Pod Security "baseline" (latest) enforced on every namespace that does
// not set a level of its own by label, except podSecurityExemptNamespaces.
// Baseline refuses privileged containers, host namespaces, ports and paths:
// what would make a pod on the real node root on the host.
func writeAdmissionConfig(file string) error {
	conf := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      enforce-version: latest
    exemptions:
      usernames: []
      runtimeClasses: []
      namespaces: [%s]
`, strings.Join(podSecurityExemptNamespaces, ", "))
	return os.WriteFile(file, []byte(conf), 0o644)
}

// apiServerArgs are kube-apiserver's flags, but for the in-cluster ones
// (inClusterAPIServerArgs).
func (u *upper) apiServerArgs() []string {
	root := u.cfg.RootDir
	ports := u.state.Ports
	p := u.pki
	return append(apiServerEtcdArgs(u.state.EtcdEndpoint()),
		"--bind-address", "127.0.0.1",
		// Without it the apiserver advertises the first non-loopback address.
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(ports[KubeAPIServer]),
		"--cert-dir", filepath.Join(root, "pki", "apiserver"),
		"--tls-cert-file", p.ServingCert, "--tls-private-key-file", p.ServKey,
		"--client-ca-file", p.CACert,
		"--service-account-key-file", p.SAPub,
		"--service-account-signing-key-file", p.SAKey,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--authorization-mode", "Node,RBAC",
		// The default admission plugins of 1.30 to 1.35 include PodSecurity,
		// ServiceAccount, Priority and the webhook plugins; listing the
		// extra one keeps the defaults.
		"--enable-admission-plugins", "NodeRestriction",
		"--admission-control-config-file", filepath.Join(root, admissionConfigName),
		// No --allow-privileged: nothing of the cluster runs privileged
		// (CoreDNS and the node's parts are host processes, not pods).
		// Endpoints may not hold loopback addresses, so the reconciler
		// of the "kubernetes" Service would only log errors.
		"--endpoint-reconciler-type", "none",
		// The real node's kubelet is reached as "localhost" (its
		// Hostname address), where the netns proxy forwards its port.
		"--kubelet-preferred-address-types", "Hostname",
		"--kubelet-client-certificate", p.AdminCert, "--kubelet-client-key", p.AdminKey,
		"--kubelet-certificate-authority", p.CACert,
	)
}

// admissionConfigName is the file, under the root, of writeAdmissionConfig.
const admissionConfigName = "admission.yaml"

// startAPIServer starts kube-apiserver and waits for its /readyz.
func (u *upper) startAPIServer(ctx context.Context) error {
	if err := writeAdmissionConfig(filepath.Join(u.cfg.RootDir, admissionConfigName)); err != nil {
		return err
	}
	if err := u.start(u.bins[KubeAPIServer], KubeAPIServer, nil, append(u.apiServerArgs(), u.inClusterArgs...)...); err != nil {
		return err
	}
	return u.waitFor(ctx, "kube-apiserver /readyz", KubeAPIServer, func(ctx context.Context) (bool, error) {
		return apiserverReady(ctx, u.rest)
	})
}

// applyVolcanoCRDs applies Volcano's CRDs and waits until they are established.
func (u *upper) applyVolcanoCRDs(ctx context.Context) error {
	cfg := u.cfg
	if cfg.NoVolcano {
		return errSkipped
	}
	dir := cfg.VolcanoDir
	if dir == "" {
		var err error
		if dir, err = volcanoModuleDir(ctx); err != nil {
			return err
		}
	}
	// Before kube-controller-manager: its garbage collector only learns
	// about Volcano Jobs at its next discovery resync (30 s) otherwise.
	// The Volcano controller manager waits for the jobflow informers
	// too, so both sets are needed.
	names, err := applyCRDs(ctx, u.rest,
		filepath.Join(dir, "config", "crd", "volcano", "bases"),
		filepath.Join(dir, "config", "crd", "jobflow", "bases"))
	if err != nil {
		return err
	}
	return u.waitFor(ctx, "CRDs established", "", func(ctx context.Context) (bool, error) {
		return crdsEstablished(ctx, u.rest, names)
	})
}

// startKubeControllerManager starts kube-controller-manager and waits for its /healthz.
func (u *upper) startKubeControllerManager(ctx context.Context) error {
	root := u.cfg.RootDir
	ports := u.state.Ports
	bins := u.bins
	p := u.pki
	if err := u.start(bins[KubeControllerManager], KubeControllerManager, nil,
		"--kubeconfig", u.state.Kubeconfig,
		"--leader-elect=false",
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(ports[KubeControllerManager]),
		"--cert-dir", filepath.Join(root, "pki", "kube-controller-manager"),
		// Needed for the default ServiceAccount's tokens, the not-ready
		// taint removal (node lifecycle), endpoints of the svc plugin's
		// Services and garbage collection of Job-owned objects.
		"--controllers", "*,-nodeipam",
		"--service-account-private-key-file", p.SAKey,
		"--root-ca-file", p.CACert,
		"--cluster-signing-cert-file", p.CACert, "--cluster-signing-key-file", p.CAKey,
		"--kube-api-qps", "100", "--kube-api-burst", "200",
		// Its default, /usr/libexec/kubernetes/kubelet-plugins/volume/exec,
		// is created on the host at start when missing.
		"--flex-volume-plugin-dir", filepath.Join(root, "kube-controller-manager", "volume-plugins"),
	); err != nil {
		return err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", ports[KubeControllerManager])
	return u.waitFor(ctx, "kube-controller-manager /healthz", KubeControllerManager, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, url)
	})
}

// startKubeScheduler starts kube-scheduler in place of Volcano's (Config.NoVolcano):
// Volcano's chart's own pods use the default scheduler; or beside it
// (Config.KubeScheduler).
func (u *upper) startKubeScheduler(context.Context) error {
	if !u.cfg.NoVolcano && !u.cfg.KubeScheduler {
		return errSkipped
	}
	port, err := freePortExcept(u.state.Ports)
	if err != nil {
		return err
	}
	u.state.Ports[KubeScheduler] = port
	return u.start(u.bins[KubeScheduler], KubeScheduler, nil, kubeSchedulerArgs(u.cfg.RootDir, u.state.Kubeconfig, port)...)
}

// AdmissionConf returns the webhook manager's admission configuration
// file (--admission-conf) of the cluster in rootDir.
func AdmissionConf(rootDir string) string { return filepath.Join(rootDir, "admission.conf") }

// admissionConf is what AdmissionConf holds when the cluster starts:
// Volcano's defaults (no resource groups) and this project's strict mode
// off.
const admissionConf = "# Volcano's admission configuration (--admission-conf): no resource groups.\nstrictPluginArguments: false\n"

// startWebhookManager registers the webhook configurations and starts the webhook manager (its readiness is awaitWebhookManager's).
func (u *upper) startWebhookManager(ctx context.Context) error {
	cfg := u.cfg
	ports := u.state.Ports
	bins := u.bins
	if !u.state.Webhook {
		return errSkipped
	}
	p := u.pki
	ca, err := os.ReadFile(p.CACert)
	if err != nil {
		return err
	}
	// Registered before the manager starts: it waits for them, and
	// every later object (the default Queue first) must go through them.
	if err := registerWebhooks(ctx, u.kube, cfg.Webhooks, ports[WebhookManager], ca); err != nil {
		return err
	}
	args := []string{
		"--kubeconfig", u.state.Kubeconfig,
		"--listen-address", "127.0.0.1",
		"--port", strconv.Itoa(ports[WebhookManager]),
		"--ca-cert-file", p.CACert,
		"--tls-cert-file", p.WebhookCert,
		"--tls-private-key-file", p.WebhookK,
		"--webhook-url", fmt.Sprintf("https://127.0.0.1:%d", ports[WebhookManager]),
		"--enabled-admission", enabledAdmission(cfg.Webhooks),
		// For Config.Webhooks with the pod hooks (hack/conformance):
		// Volcano v1.10's pod admission read the API three times per pod
		// created, and at the default 50 QPS a 300-pod Job's creations
		// outlasted the apiserver's 10 s webhook timeout and stalled.
		"--kube-api-qps", "500", "--kube-api-burst", "1000",
		// As Volcano's chart does; the e2e suite scrapes its /metrics.
		"--enable-healthz", "--healthz-address", fmt.Sprintf("127.0.0.1:%d", ports[WebhookManagerHealthz]),
		// As Volcano's chart does (its admission ConfigMap); the e2e suite
		// turns strict mode on in it.
		"--admission-conf", AdmissionConf(cfg.RootDir),
	}
	if err := os.WriteFile(AdmissionConf(cfg.RootDir), []byte(admissionConf), 0o644); err != nil {
		return err
	}
	if cfg.WebhookManagerBinary == WebhookManager { // Volcano's has no framework admission
		// This project's two come from its Helm chart, pointed at the
		// manager by the chart's webhook.url and webhook.caBundle.
		if err := registerChartWebhooks(ctx, u.kube, cfg.BinDir, ports[WebhookManager], ca); err != nil {
			return err
		}
		args = append(args, "--create-framework-webhook-configurations=false",
			// The domain CoreDNS serves and the kubelet names (the default, given
			// so that the three agree by construction).
			"--cluster-domain", ClusterDomain)
	}
	// Readiness is awaited after the other components have started:
	// Volcano's manager polls for its configurations one at a time,
	// each poll starting with a one-second sleep, which would
	// otherwise delay every later step by ~10s. Meanwhile vc-scheduler
	// retries creating its default Queue every second.
	return u.start(bins[WebhookManager], WebhookManager, nil, args...)
}

// startScheduler writes the scheduler configuration and starts vc-scheduler.
func (u *upper) startScheduler(context.Context) error {
	cfg := u.cfg
	if cfg.NoVolcano {
		return errSkipped
	}
	root := u.cfg.RootDir
	bins := u.bins
	conf := filepath.Join(root, "scheduler.conf")
	if err := os.WriteFile(conf, []byte(cfg.SchedulerConf), 0o644); err != nil {
		return err
	}
	return u.start(bins[Scheduler], Scheduler, volcanoEnv(root),
		"--kubeconfig", u.state.Kubeconfig,
		"--leader-elect=false",
		"--scheduler-conf", conf,
		"--cache-dump-dir", filepath.Join(root, "run"),
	)
}

// startControllerManager starts the controller manager under test.
func (u *upper) startControllerManager(context.Context) error {
	if u.cfg.NoVolcano {
		return errSkipped
	}
	root := u.cfg.RootDir
	bins := u.bins
	args := []string{
		"--kubeconfig", u.state.Kubeconfig,
		"--leader-elect=false",
		// The defaults (50/100) throttle the job controller when a
		// test submits many Jobs; the apiserver here is not shared.
		"--kube-api-qps", "500", "--kube-api-burst", "1000",
		// As Volcano's chart does; the e2e suite scrapes its /metrics.
		"--enable-healthz", "--healthz-address", fmt.Sprintf("127.0.0.1:%d", u.state.Ports[ControllerManagerHealthz]),
	}
	if u.cfg.ControllerManagerBinary == ControllerManager { // Volcano's has no such flag
		args = append(args, "--wait-image", WaitImage, "--cluster-domain", ClusterDomain)
	}
	return u.start(bins[ControllerManager], ControllerManager, volcanoEnv(root), args...)
}

// startKwok writes the KWOK configuration and starts KWOK.
func (u *upper) startKwok(context.Context) error {
	cfg := u.cfg
	root := u.cfg.RootDir
	bins := u.bins
	args := []string{
		"--kubeconfig", u.state.Kubeconfig,
		// Only the fake nodes: the real node's kubelet reports its own status.
		"--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake",
		"--cidr", "10.244.0.1/16",
	}
	if cfg.KwokConfig != KwokBuiltin {
		file := filepath.Join(root, "kwok", "kwok.yaml")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(cfg.KwokConfig), 0o644); err != nil {
			return err
		}
		args = append(args, "--config", file)
	}
	// KWOK_WORKDIR keeps KWOK from reading ~/.kwok/kwok.yaml, which
	// would make the cluster depend on the user's home directory.
	return u.start(bins[Kwok], Kwok, []string{"KWOK_WORKDIR=" + filepath.Join(root, "kwok")}, args...)
}

// addNodes creates the fake nodes.
func (u *upper) addNodes(ctx context.Context) (err error) {
	cfg := u.cfg
	u.state.Nodes, err = createNodes(ctx, u.kube, cfg.Nodes, cfg.NodeResources)
	if err != nil {
		return err
	}
	return writeState(&u.state)
}

// startRealNode starts the real node when configured and possible.
func (u *upper) startRealNode(ctx context.Context) error {
	cfg := u.cfg
	if errors.Is(u.realNodeErr, errSkipped) {
		return errSkipped
	}
	if err := u.realNodeErr; err != nil {
		if cfg.RealNode == RealNodeOn {
			return err
		}
		fmt.Fprintf(cfg.Out, "  real node: not started (%v); KWOK nodes only\n", err)
		return errSkipped
	}
	return u.realNode(ctx)
}

// awaitWebhookManager waits until the webhook manager serves TLS.
func (u *upper) awaitWebhookManager(ctx context.Context) error {
	ports := u.state.Ports
	if !u.state.Webhook {
		return errSkipped
	}
	return u.waitFor(ctx, "webhook manager serving TLS", WebhookManager, func(ctx context.Context) (bool, error) {
		return tlsServing(ctx, ports[WebhookManager], u.pki.CACert)
	})
}

// awaitNodes waits until the fake nodes are Ready.
func (u *upper) awaitNodes(ctx context.Context) error {
	return u.waitFor(ctx, "nodes Ready", Kwok, func(ctx context.Context) (bool, error) {
		return nodesReady(ctx, u.kube, u.state.Nodes)
	})
}

// awaitRealNode waits until the real node is Ready with cluster DNS.
func (u *upper) awaitRealNode(ctx context.Context) error {
	if u.state.RealNode == nil {
		return errSkipped
	}
	return u.waitFor(ctx, "real node Ready with cluster DNS", Kubelet, func(ctx context.Context) (bool, error) {
		return realNodeReady(ctx, u.kube, u.state.RealNode)
	})
}

// awaitServiceAccount waits for the default ServiceAccount of the default namespace.
func (u *upper) awaitServiceAccount(ctx context.Context) error {
	return u.waitFor(ctx, "ServiceAccount default/default", KubeControllerManager, func(ctx context.Context) (bool, error) {
		return defaultServiceAccount(ctx, u.kube)
	})
}

// awaitDefaultQueue waits until vc-scheduler's default Queue is Open.
func (u *upper) awaitDefaultQueue(ctx context.Context) error {
	if u.cfg.NoVolcano {
		return errSkipped
	}
	return u.waitFor(ctx, "Queue default Open", Scheduler, func(ctx context.Context) (bool, error) {
		return defaultQueueOpen(ctx, u.volcano)
	})
}

// errSkipped marks a step that did not apply.
var errSkipped = errors.New("skipped")

// volcanoEnv is the environment of Volcano's components: vc-scheduler serves
// its log-level socket in DEBUG_SOCKET_DIR (default /tmp/klog-socks, shared
// by every cluster on the machine).
func volcanoEnv(root string) []string {
	return []string{"DEBUG_SOCKET_DIR=" + filepath.Join(root, "run")}
}

// binaries returns the executable of each component and decides whether the
// webhook manager runs. It returns an error naming every missing binary and
// how to build it.
func (u *upper) binaries() (map[string]string, error) {
	cfg := u.cfg
	bins := map[string]string{}
	var missing []string
	names := []string{Etcd, KubeAPIServer, KubeControllerManager, Kwok}
	if cfg.NoVolcano || cfg.KubeScheduler {
		names = append(names, KubeScheduler)
	}
	if !cfg.NoVolcano {
		names = append(names, Scheduler, ControllerManager, WebhookManager)
	}
	for _, name := range names {
		file := name
		switch name {
		case ControllerManager:
			file = cfg.ControllerManagerBinary
		case WebhookManager:
			file = cfg.WebhookManagerBinary
		}
		path := filepath.Join(cfg.BinDir, file)
		bins[name] = path
		info, err := os.Stat(path)
		exists := err == nil && !info.IsDir() && info.Mode()&0o111 != 0
		if name == WebhookManager {
			u.state.Webhook = cfg.Webhook == WebhookOn || (cfg.Webhook == WebhookAuto && exists)
			if !u.state.Webhook {
				continue
			}
		}
		if !exists {
			missing = append(missing, path)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing binaries %v; build them with `make binaries`", missing)
	}
	return bins, nil
}

// start starts a component with its default args followed by cfg.ExtraArgs,
// records it and rewrites state.json.
func (u *upper) start(binary, name string, env []string, args ...string) error {
	args = append(args, u.cfg.ExtraArgs[name]...)
	// Besides --kubeconfig, some code reads $KUBECONFIG (or ~/.kube/config)
	// directly, e.g. the hamivgpu device support in Volcano's scheduler,
	// controller and webhook managers. An inherited KUBECONFIG would point it
	// at another cluster.
	env = append([]string{"KUBECONFIG=" + u.state.Kubeconfig}, env...)
	p, err := startProcess(u.cfg.RootDir, name, binary, args, env)
	if p != nil {
		u.procs = append(u.procs, p)
		u.state.Components = append(u.state.Components, p.ComponentState)
	}
	if err != nil {
		return err
	}
	return writeState(&u.state)
}

// waitFor polls check until it reports true. It fails as soon as any started
// component exits (quoting that component's log), or when ctx ends by timeout
// or cancellation (quoting the last error of check and the log of component,
// if not empty).
func (u *upper) waitFor(ctx context.Context, what, component string, check func(context.Context) (bool, error)) error {
	var last error
	for {
		for _, p := range u.procs {
			if err := p.exited(); err != nil {
				return fmt.Errorf("while waiting for %s: %w", what, err)
			}
		}
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("gave up waiting for %s %.0fs after the start (%v; last error: %v)", what, time.Since(u.started).Seconds(), ctx.Err(), last)
			for _, p := range u.procs {
				if p.Name == component {
					msg += fmt.Sprintf("; last lines of %s:\n%s", p.Log, tail(p.Log, logTailLines))
				}
			}
			return errors.New(msg)
		case <-time.After(pollInterval):
		}
	}
}
