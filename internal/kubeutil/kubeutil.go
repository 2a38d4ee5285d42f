// Package kubeutil holds the Kubernetes helpers that the e2e suite
// (test/e2e/framework), the local cluster (internal/localcluster), the
// training examples (internal/training) and the tools under hack/ share:
// the documents of a YAML manifest, a pod's containers and their variables,
// a Kubernetes and a Volcano clientset with a warning handler that drops the
// warning every Job create draws, and a watch of pods that misses none.
package kubeutil

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/yaml"

	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"
)

// YAMLDocuments returns the documents of a multi-document YAML stream as
// apimachinery's YAML reader splits it (on lines that start with "---", which
// only a comment may follow; an indented "---" in a block scalar is content),
// without the empty ones (nothing but whitespace and comments). Errors: a
// separator line followed by more than a comment, a document that is not YAML.
func YAMLDocuments(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return nil, err
		}
		if v != nil {
			docs = append(docs, doc)
		}
	}
}

// ContainerOf returns the container (or, if no container has that name, the
// init container) of pod named name, nil if there is none.
func ContainerOf(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// EnvOf returns the variables of pod's container (or init container) named
// container that have a literal value, by name; nil if the pod has no such
// container, an empty map if it has one without such variables. Variables
// taken from elsewhere (valueFrom: the svc plugin's VC_*_HOSTS from its
// ConfigMap, the downward API's POD_IP) are left out.
func EnvOf(pod *corev1.Pod, container string) map[string]string {
	c := ContainerOf(pod, container)
	if c == nil {
		return nil
	}
	out := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			out[e.Name] = e.Value
		}
	}
	return out
}

// Clients are a Kubernetes and a Volcano clientset made from one
// configuration.
type Clients struct {
	// Config is the configuration they were made from: a copy of the one
	// given to NewClients, with its warning handler.
	Config  *rest.Config
	Kube    *kubernetes.Clientset
	Volcano *vcclientset.Clientset
}

// NewClients returns clientsets made from a copy of cfg with warnings as
// its WarningHandler. cfg's ContentType applies to the Kubernetes clientset
// only (protobuf, say): the Volcano one's resources are custom resources,
// which the API server serves as JSON only.
func NewClients(cfg *rest.Config, warnings rest.WarningHandler) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = warnings
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	vcConfig := rest.CopyConfig(cfg)
	vcConfig.ContentType = ""
	volcano, err := vcclientset.NewForConfig(vcConfig)
	if err != nil {
		return nil, err
	}
	return &Clients{Config: cfg, Kube: kube, Volcano: volcano}, nil
}

// Warnings is a rest.WarningHandler that writes each of the API server's
// warnings to Out (os.Stderr when nil) as one line, Prefix before it, except
// the one that every Job, JobTemplate or CronJob created through the typed
// Volcano client draws: the Go types serialize a pod template's
// metadata.creationTimestamp as null, a field Volcano's CRD schemas do not
// list ("unknown field ...template.metadata.creationTimestamp").
type Warnings struct {
	Out    io.Writer
	Prefix string
}

// HandleWarningHeader writes the warning text, unless it is the one above.
func (w Warnings) HandleWarningHeader(_ int, _ string, text string) {
	if strings.HasPrefix(text, "unknown field ") && strings.HasSuffix(text, `metadata.creationTimestamp"`) {
		return
	}
	out := w.Out
	if out == nil {
		out = os.Stderr
	}
	fmt.Fprintf(out, "%s%s\n", w.Prefix, text)
}

// WatchPods lists the pods of pods that match selector (a label selector,
// "" for all) from the API server's watch cache and watches them from that
// list's resourceVersion on, through a watch that restarts where it broke
// off: every change after the list is seen, the creation of every pod not
// in it included, until ctx is done. It returns the watch, which the caller
// stops, and the number of pods listed.
func WatchPods(ctx context.Context, pods corev1client.PodInterface, selector string) (watch.Interface, int, error) {
	// From the watch cache (resourceVersion 0): a quorum read would fetch
	// every pod of the namespace from etcd, which for thousands of large
	// pods can outlast the request timeout on a loaded machine.
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
	if err != nil {
		return nil, 0, err
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return pods.Watch(ctx, o)
		},
	})
	if err != nil {
		return nil, 0, err
	}
	return w, len(list.Items), nil
}
