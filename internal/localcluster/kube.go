package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
)

// kubeconfigContext names the cluster, user and context of the admin kubeconfig.
const kubeconfigContext = "localcluster"

// writeKubeconfig writes an admin kubeconfig for server to file, with the CA
// and client credentials embedded so it keeps working when copied elsewhere.
func writeKubeconfig(file, server string, p *pki) error {
	return writeClientKubeconfig(file, server, p.CACert, p.AdminCert, p.AdminKey)
}

// writeClientKubeconfig writes a kubeconfig for server that authenticates
// with the client certificate certFile/keyFile, all PEM files embedded.
func writeClientKubeconfig(file, server, caFile, certFile, keyFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[kubeconfigContext] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[kubeconfigContext] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[kubeconfigContext] = &clientcmdapi.Context{Cluster: kubeconfigContext, AuthInfo: kubeconfigContext, Namespace: "default"}
	cfg.CurrentContext = kubeconfigContext
	return clientcmd.WriteToFile(*cfg, file)
}

// restConfigFrom loads kubeconfig, raising the client-side rate limits: tests
// that create many objects should be limited by the cluster, not by client-go's
// default 5 QPS.
func restConfigFrom(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg, nil
}

// probeConfig is cfg with a short timeout, for readiness polls that must not
// hang on a half-started server.
func probeConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Timeout = 5 * time.Second
	return c
}

// apiserverReady reports whether GET /readyz answers "ok".
func apiserverReady(ctx context.Context, cfg *rest.Config) (bool, error) {
	kc, err := kubernetes.NewForConfig(probeConfig(cfg))
	if err != nil {
		return false, err
	}
	body, err := kc.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(body)) == "ok", nil
}

// httpOK reports whether GET url answers 200, skipping certificate checks:
// kube-controller-manager serves /healthz with a self-signed certificate.
func httpOK(ctx context.Context, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return true, nil
}

// volcanoModuleDir asks the go command for the volcano.sh/volcano module
// directory, running in the module root so the main module's pinned version
// is used. It returns an error if go fails or the module is not downloaded.
func volcanoModuleDir(ctx context.Context) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "volcano.sh/volcano")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m volcano.sh/volcano: %v: %s", err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("volcano.sh/volcano is not in the module cache; run `go mod download volcano.sh/volcano` in %s", root)
	}
	return dir, nil
}

// applyCRDs creates or updates every CustomResourceDefinition found in the
// YAML files of dirs, then waits until all are Established. It returns the
// names applied, or the first read, parse or API error.
func applyCRDs(ctx context.Context, cfg *rest.Config, dirs ...string) ([]string, error) {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	var names []string
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no CRD manifests in %s", dir)
		}
		sort.Strings(files)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			docs, err := kubeutil.YAMLDocuments(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			for _, doc := range docs {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := yaml.Unmarshal(doc, crd); err != nil {
					return nil, fmt.Errorf("%s: %w", file, err)
				}
				if crd.Kind != "CustomResourceDefinition" {
					continue
				}
				_, err := api.Create(ctx, crd, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					var old *apiextensionsv1.CustomResourceDefinition
					if old, err = api.Get(ctx, crd.Name, metav1.GetOptions{}); err == nil {
						crd.ResourceVersion = old.ResourceVersion
						_, err = api.Update(ctx, crd, metav1.UpdateOptions{})
					}
				}
				if err != nil {
					return nil, fmt.Errorf("applying CRD %s from %s: %w", crd.Name, file, err)
				}
				names = append(names, crd.Name)
			}
		}
	}
	return names, nil
}

// crdsEstablished reports whether every named CRD has condition Established.
func crdsEstablished(ctx context.Context, cfg *rest.Config, names []string) (bool, error) {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	for _, name := range names {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			return false, fmt.Errorf("CRD %s not established yet", name)
		}
	}
	return true, nil
}

// nodeName is the name of the i-th fake node.
func nodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// createNodes creates n fake nodes with the given resources as capacity and
// allocatable. The kwok.x-k8s.io/node annotation marks them as KWOK's (it
// manages all nodes here, but selectors in KWOK's stages and tools look for
// it); type=kwok lets tests select them. No taint keeps real pods away: every
// node of this cluster is fake, and Job specs should not need tolerations. It
// returns the node names or the first API error other than AlreadyExists.
func createNodes(ctx context.Context, kc kubernetes.Interface, n int, res corev1.ResourceList) ([]string, error) {
	var names []string
	for i := 0; i < n; i++ {
		name := nodeName(i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{
					"type":                   "kwok",
					"kubernetes.io/hostname": name,
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     "amd64",
				},
				Annotations: map[string]string{
					"kwok.x-k8s.io/node":           "fake",
					"node.alpha.kubernetes.io/ttl": "0",
				},
			},
			Status: corev1.NodeStatus{
				Capacity:    res.DeepCopy(),
				Allocatable: res.DeepCopy(),
				NodeInfo:    corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "amd64", KubeletVersion: "fake"},
			},
		}
		if _, err := kc.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating node %s: %w", name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// nodesReady reports whether every named node is Ready and free of the
// not-ready taint, which kube-controller-manager removes once it has seen the
// Ready condition: before that vc-scheduler's predicates reject the node.
func nodesReady(ctx context.Context, kc kubernetes.Interface, names []string) (bool, error) {
	for _, name := range names {
		node, err := kc.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready := false
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			return false, fmt.Errorf("node %s not Ready", name)
		}
		for _, t := range node.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
				return false, fmt.Errorf("node %s still has taint %s", name, t.Key)
			}
		}
	}
	return true, nil
}

// defaultServiceAccount reports whether the "default" ServiceAccount of the
// default namespace exists; pods cannot be created before it does.
func defaultServiceAccount(ctx context.Context, kc kubernetes.Interface) (bool, error) {
	_, err := kc.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	return true, nil
}

// defaultQueueOpen reports whether the "default" Queue exists and is Open.
// vc-scheduler creates it at start and Volcano's queue controller opens it;
// Jobs without a queue go there, and the job controller rejects them
// ("queue default not found") before it exists.
func defaultQueueOpen(ctx context.Context, vc vcclientset.Interface) (bool, error) {
	q, err := vc.SchedulingV1beta1().Queues().Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if q.Status.State != schedulingv1beta1.QueueStateOpen {
		return false, fmt.Errorf("queue default is %q", q.Status.State)
	}
	return true, nil
}
