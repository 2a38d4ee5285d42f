package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/pod-security-admission/admission/api/load"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/vcplugins/framework-plugins/internal/kubeline"
)

// flagValue returns the last value of flag in args (pflag keeps the last),
// and whether it is there at all.
func flagValue(args []string, flag string) (string, bool) {
	val, found := "", false
	for i, a := range args {
		switch {
		case a == flag && i+1 < len(args):
			val, found = args[i+1], true
		case len(a) > len(flag) && a[:len(flag)+1] == flag+"=":
			val, found = a[len(flag)+1:], true
		}
	}
	return val, found
}

// TestAPIServerArgs checks the API server's flags that keep a local user out:
// etcd over TLS with the etcd client pair, the admission configuration that
// enforces Pod Security, and no privileged containers.
func TestAPIServerArgs(t *testing.T) {
	root := t.TempDir()
	p := pkiPaths(filepath.Join(root, "pki"))
	u := &upper{
		cfg:   Config{RootDir: root},
		state: State{RootDir: root, Ports: map[string]int{Etcd: 2379, KubeAPIServer: 6443}},
		pki:   p,
	}
	args := u.apiServerArgs()
	got := map[string]string{}
	for _, f := range []string{"--etcd-servers", "--etcd-cafile", "--etcd-certfile", "--etcd-keyfile", "--admission-control-config-file", "--allow-privileged"} {
		if v, ok := flagValue(args, f); ok {
			got[f] = v
		}
	}
	want := map[string]string{
		"--etcd-servers":                  "https://127.0.0.1:2379",
		"--etcd-cafile":                   p.EtcdCACert,
		"--etcd-certfile":                 p.EtcdClientCert,
		"--etcd-keyfile":                  p.EtcdClientKey,
		"--admission-control-config-file": filepath.Join(root, admissionConfigName),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kube-apiserver flags (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(u.state.EtcdEndpoint(), EtcdAccess{URL: "https://127.0.0.1:2379", CAFile: p.EtcdCACert, CertFile: p.EtcdClientCert, KeyFile: p.EtcdClientKey}); diff != "" {
		t.Errorf("EtcdEndpoint (-want +got):\n%s", diff)
	}
}

// TestEtcdPKI checks that only certificates of etcd's own CA open etcd: the
// cluster CA's (the admin's, the kubelet's, any CSR kube-controller-manager
// signs) do not chain to it.
func TestEtcdPKI(t *testing.T) {
	p, err := newPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pool := certPool(t, p.EtcdCACert)
	for _, tc := range []struct {
		cert  string
		usage x509.ExtKeyUsage
		host  string
		ok    bool
	}{
		{p.EtcdServerCert, x509.ExtKeyUsageServerAuth, "127.0.0.1", true},
		{p.EtcdServerCert, x509.ExtKeyUsageClientAuth, "", true}, // as its peer certificate
		{p.EtcdClientCert, x509.ExtKeyUsageClientAuth, "", true},
		{p.AdminCert, x509.ExtKeyUsageClientAuth, "", false},
		{p.KubeletCert, x509.ExtKeyUsageClientAuth, "", false},
	} {
		_, err := leafCert(t, tc.cert).Verify(x509.VerifyOptions{Roots: pool, DNSName: tc.host, KeyUsages: []x509.ExtKeyUsage{tc.usage}})
		if (err == nil) != tc.ok {
			t.Errorf("%s against etcd's CA: verified %v, want %v (%v)", filepath.Base(tc.cert), err == nil, tc.ok, err)
		}
	}
	for _, key := range []string{p.EtcdCAKey, p.EtcdServerKey, p.EtcdClientKey} {
		if info, err := os.Stat(key); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", key, info.Mode().Perm(), err)
		}
	}
}

func certPool(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatalf("%s holds no certificate", file)
	}
	return pool
}

func leafCert(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM block", file)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEtcdRequiresClientCertificate runs etcd as Up does (the binary of
// make binaries, or $LOCALCLUSTER_ETCD) and checks that neither plain HTTP
// nor TLS with a certificate of the cluster CA reaches it, on either of its
// ports, while EachStored with State.EtcdEndpoint does.
func TestEtcdRequiresClientCertificate(t *testing.T) {
	bin := os.Getenv("LOCALCLUSTER_ETCD")
	if bin == "" {
		if mod, err := ModuleRoot(); err == nil {
			bin = filepath.Join(mod, "_output", "bin", Etcd)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no etcd binary (make binaries, or set LOCALCLUSTER_ETCD): %v", err)
	}
	root := t.TempDir()
	for _, d := range []string{"logs", "pids", "etcd"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := newPKI(filepath.Join(root, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]int{}
	for _, name := range []string{Etcd, "etcd-peer"} {
		if ports[name], err = freePortExcept(ports); err != nil {
			t.Fatal(err)
		}
	}
	proc, err := startProcess(root, Etcd, bin, etcdArgs(root, ports[Etcd], ports["etcd-peer"], p), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = terminate([]ComponentState{proc.ComponentState}, time.Second) })
	st := State{RootDir: root, Ports: ports}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if ok, _ := etcdHealthy(ctx, st.EtcdEndpoint()); ok {
			break
		}
		if err := proc.exited(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("etcd not healthy: %v; log:\n%s", ctx.Err(), tail(proc.Log, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}

	if err := EachStored(ctx, st.EtcdEndpoint(), "pods", "default", func(string, []byte) error { return nil }); err != nil {
		t.Errorf("EachStored with the etcd client certificate: %v", err)
	}
	admin, err := tls.LoadX509KeyPair(p.AdminCert, p.AdminKey)
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certPool(t, p.EtcdCACert)}}}
	clusterCA := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certPool(t, p.EtcdCACert), Certificates: []tls.Certificate{admin}}}}
	for _, port := range []int{ports[Etcd], ports["etcd-peer"]} {
		for _, tc := range []struct {
			name   string
			client *http.Client
			url    string
		}{
			{"plain HTTP", plain, "http://127.0.0.1:" + strconv.Itoa(port) + "/version"},
			{"TLS without a client certificate", noCert, "https://127.0.0.1:" + strconv.Itoa(port) + "/version"},
			{"TLS with the admin certificate of the cluster CA", clusterCA, "https://127.0.0.1:" + strconv.Itoa(port) + "/version"},
		} {
			resp, err := tc.client.Get(tc.url)
			if err == nil {
				resp.Body.Close()
				t.Errorf("%s: GET %s answered %s, want no connection", tc.name, tc.url, resp.Status)
			}
		}
	}
}

// TestAdmissionConfig checks the admission configuration the API server
// loads: the PodSecurity plugin's own loader accepts it, every namespace
// without a label of its own enforces "baseline", which refuses what would
// reach the host from a pod of the real node and admits a plain training
// pod, and only volcano-system is exempt.
func TestAdmissionConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), admissionConfigName)
	if err := writeAdmissionConfig(file); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ac apiserverv1.AdmissionConfiguration
	if err := yaml.UnmarshalStrict(data, &ac); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var names []string
	for _, p := range ac.Plugins {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"PodSecurity"}, names); diff != "" {
		t.Fatalf("plugins configured (-want +got):\n%s", diff)
	}
	conf, err := load.LoadFromData(ac.Plugins[0].Configuration.Raw)
	if err != nil {
		t.Fatalf("PodSecurity configuration: %v", err)
	}
	if diff := cmp.Diff([]string{"volcano-system"}, conf.Exemptions.Namespaces); diff != "" {
		t.Errorf("exempt namespaces (-want +got):\n%s", diff)
	}
	if len(conf.Exemptions.Usernames)+len(conf.Exemptions.RuntimeClasses) > 0 {
		t.Errorf("exemptions of users %v, runtime classes %v; want none", conf.Exemptions.Usernames, conf.Exemptions.RuntimeClasses)
	}
	enforce, err := psapi.ParseLevel(conf.Defaults.Enforce)
	if err != nil {
		t.Fatal(err)
	}
	version, err := psapi.ParseVersion(conf.Defaults.EnforceVersion)
	if err != nil {
		t.Fatal(err)
	}
	if enforce != psapi.LevelBaseline || !version.Latest() {
		t.Errorf("enforced by default: %s:%s, want baseline:latest", enforce, version)
	}

	evaluator, err := kubeline.PodSecurityEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	pod := func(mutate func(*corev1.PodSpec)) *corev1.PodSpec {
		spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "busybox:1.36.1"}}}
		if mutate != nil {
			mutate(spec)
		}
		return spec
	}
	for _, tc := range []struct {
		name    string
		spec    *corev1.PodSpec
		allowed bool
	}{
		{"plain training pod", pod(nil), true},
		{"privileged container", pod(func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}), false},
		{"hostPath volume", pod(func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}), false},
		{"host network", pod(func(s *corev1.PodSpec) { s.HostNetwork = true }), false},
		{"host PID", pod(func(s *corev1.PodSpec) { s.HostPID = true }), false},
		{"SYS_ADMIN", pod(func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
		}), false},
	} {
		res := policy.AggregateCheckResults(evaluator.EvaluatePod(psapi.LevelVersion{Level: enforce, Version: version}, &metav1.ObjectMeta{Name: "p"}, tc.spec))
		if res.Allowed != tc.allowed {
			t.Errorf("%s: allowed %v, want %v (%s)", tc.name, res.Allowed, tc.allowed, res.ForbiddenDetail())
		}
	}
}
