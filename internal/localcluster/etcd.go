package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// etcdPrefix is the key prefix kube-apiserver stores objects under (its
// --etcd-prefix default, which Up keeps): /registry/<resource>/<namespace>/<name>
// for namespaced objects of the core and most built-in groups.
const etcdPrefix = "/registry/"

// storedPage is how many keys StoredSizes reads per etcd range request:
// 500 inline TensorFlow pods of a 2,048-worker Job are ~50 MB.
const storedPage = 500

// EtcdAccess is how a client reaches the cluster's etcd: its URL and the
// PEM files of etcd's CA and of the client pair etcd requires.
type EtcdAccess struct {
	URL                       string // https://127.0.0.1:<port>
	CAFile, CertFile, KeyFile string
}

// EtcdEndpoint returns how to reach the cluster's etcd: TLS on 127.0.0.1 with
// a client certificate of etcd's own CA (see etcdArgs). The key is readable
// by the user that started the cluster only.
func (s State) EtcdEndpoint() EtcdAccess {
	p := pkiPaths(filepath.Join(s.RootDir, "pki"))
	return EtcdAccess{URL: etcdURL(s.Ports[Etcd]), CAFile: p.EtcdCACert, CertFile: p.EtcdClientCert, KeyFile: p.EtcdClientKey}
}

// etcdURL is the URL etcd serves clients (or, with the peer port, peers) at.
func etcdURL(port int) string {
	return fmt.Sprintf("https://127.0.0.1:%d", port)
}

// etcdArgs are etcd's flags for the cluster at root: TLS on both of its
// ports, and a certificate of etcd's own CA required of every client and
// peer. Without them any local user could read and write every object, and
// through a pod on the real node become root.
func etcdArgs(root string, clientPort, peerPort int, p *pki) []string {
	client, peer := etcdURL(clientPort), etcdURL(peerPort)
	return []string{
		"--name", "default",
		"--data-dir", filepath.Join(root, "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--client-cert-auth", "--trusted-ca-file", p.EtcdCACert,
		"--cert-file", p.EtcdServerCert, "--key-file", p.EtcdServerKey,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default=" + peer,
		"--peer-client-cert-auth", "--peer-trusted-ca-file", p.EtcdCACert,
		"--peer-cert-file", p.EtcdServerCert, "--peer-key-file", p.EtcdServerKey,
		// Durability is worthless for a throw-away test cluster, and
		// fsync dominates etcd's latency on shared CI disks.
		"--unsafe-no-fsync",
		"--quota-backend-bytes", strconv.Itoa(8 << 30),
	}
}

// apiServerEtcdArgs are kube-apiserver's flags for reaching etcd at a.
func apiServerEtcdArgs(a EtcdAccess) []string {
	return []string{"--etcd-servers", a.URL, "--etcd-cafile", a.CAFile, "--etcd-certfile", a.CertFile, "--etcd-keyfile", a.KeyFile}
}

// tlsConfig loads a's files into a client TLS configuration. It returns an
// error if a file cannot be read or parsed.
func (a EtcdAccess) tlsConfig() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("etcd client certificate: %w", err)
	}
	ca, err := os.ReadFile(a.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no certificate", a.CAFile)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// etcdHealthy reports whether etcd at a answers GET /health with 200.
func etcdHealthy(ctx context.Context, a EtcdAccess) (bool, error) {
	tc, err := a.tlsConfig()
	if err != nil {
		return false, err
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL+"/health", nil)
	if err != nil {
		return false, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s/health: %s", a.URL, resp.Status)
	}
	return true, nil
}

// StoredSizes returns, by object name, the size in bytes of the value etcd
// holds for every object of resource (the API's plural, e.g. "pods",
// "configmaps") in namespace, as EachStored reads them.
func StoredSizes(ctx context.Context, endpoint EtcdAccess, resource, namespace string) (map[string]int, error) {
	sizes := map[string]int{}
	err := EachStored(ctx, endpoint, resource, namespace, func(name string, value []byte) error {
		sizes[name] = len(value)
		return nil
	})
	return sizes, err
}

// EachStored calls each with the name and the stored value of every object
// of resource (the API's plural, e.g. "pods") in namespace, in name order:
// exactly the bytes kube-apiserver wrote to etcd, protobuf behind the 4-byte
// "k8s\x00" header for built-in types (JSON for custom resources),
// managedFields and status included, unencrypted (the local cluster
// configures no encryption at rest). It reads etcd directly at endpoint
// (State.EtcdEndpoint) in pages of storedPage keys, and value is only valid
// during the call. It returns an error if etcd cannot be reached, a read
// fails or each returns one.
func EachStored(ctx context.Context, endpoint EtcdAccess, resource, namespace string, each func(name string, value []byte) error) error {
	tc, err := endpoint.tlsConfig()
	if err != nil {
		return err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint.URL},
		TLS:         tc,
		DialTimeout: 10 * time.Second,
		// Its retries and reconnects would go to stderr otherwise.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("etcd client for %s: %w", endpoint.URL, err)
	}
	defer cli.Close()
	prefix := etcdPrefix + resource + "/" + namespace + "/"
	end := clientv3.GetPrefixRangeEnd(prefix)
	for from := prefix; ; {
		resp, err := cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(storedPage))
		if err != nil {
			return fmt.Errorf("etcd range %s: %w", prefix, err)
		}
		for _, kv := range resp.Kvs {
			if err := each(strings.TrimPrefix(string(kv.Key), prefix), kv.Value); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		// The next page starts just after the last key read.
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// DecodeStoredPod decodes a pod as EachStored returns it.
func DecodeStoredPod(value []byte) (*corev1.Pod, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(value, nil, nil)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("stored object is a %T, not a pod", obj)
	}
	return pod, nil
}

// PartBytes returns the bytes of pod's protobuf encoding (what etcd stores
// of it, less the header) that the part drop removes from a copy of it takes:
// the size of the encoding less that of the copy. Parts measured this way
// overlap where one holds another, and managedFields keep the removed
// part's entries (EnvBytes removes those too).
func PartBytes(pod *corev1.Pod, drop func(*corev1.Pod)) int {
	p := pod.DeepCopy()
	drop(p)
	return pod.Size() - p.Size()
}

// EnvBytes returns the bytes of pod's protobuf encoding (what etcd stores
// of it, less the header) that its environment variables named names take
// in all its containers and init containers, their entries in managedFields
// included: the size of the encoding less that of the pod without them. It
// returns an error if a managedFields entry is not valid JSON.
func EnvBytes(pod *corev1.Pod, names ...string) (int, error) {
	p := pod.DeepCopy()
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			cs[i].Env = slices.DeleteFunc(cs[i].Env, func(e corev1.EnvVar) bool { return slices.Contains(names, e.Name) })
		}
	}
	// Both sides re-encoded the same way, so that only the removed keys
	// make the difference, whatever the API server's own JSON spacing.
	withBytes, withoutBytes := 0, 0
	for i := range p.ManagedFields {
		f := p.ManagedFields[i].FieldsV1
		if f == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(f.Raw, &fields); err != nil {
			return 0, fmt.Errorf("managedFields of %s: %w", p.Name, err)
		}
		with, _ := json.Marshal(fields)
		for _, kind := range []string{"f:containers", "f:initContainers"} {
			cs, _ := mapAt(fields, "f:spec", kind)
			for _, c := range cs {
				container, _ := c.(map[string]any)
				env, _ := container["f:env"].(map[string]any)
				for _, n := range names {
					delete(env, `k:{"name":"`+n+`"}`)
				}
			}
		}
		without, _ := json.Marshal(fields)
		withBytes, withoutBytes = withBytes+len(with), withoutBytes+len(without)
	}
	return pod.Size() - p.Size() + withBytes - withoutBytes, nil
}

// mapAt follows keys through nested JSON objects.
func mapAt(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}
