// Package framework is the small e2e framework of this repository, in the style
// of kueue's and JobSet's: a suite-wide cluster (SetupCluster, TeardownCluster),
// a per-spec Framework with Kubernetes and Volcano clientsets and a fresh
// namespace, helpers to load, create and watch Volcano Jobs and their pods, and
// named timeouts (timeouts.go) for every wait.
package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"
)

// Framework gives each spec of a container its own namespace and clients. Make
// one with New in the body of a Describe; its fields are set in a BeforeEach.
type Framework struct {
	// BaseName prefixes the namespace name: e2e-<BaseName>-<random>.
	BaseName string
	// Namespace is the spec's namespace, created before and deleted after each spec.
	Namespace string
	// NamespaceLabels are set on the namespace (e.g. Pod Security labels).
	NamespaceLabels map[string]string

	RESTConfig *rest.Config
	Kube       kubernetes.Interface
	Volcano    vcclientset.Interface

	pods       *recorder[*corev1.Pod]
	configMaps *recorder[*corev1.ConfigMap]
}

// Option configures a Framework.
type Option func(*Framework)

// WithNamespaceLabels labels every namespace the Framework creates.
func WithNamespaceLabels(labels map[string]string) Option {
	return func(f *Framework) { f.NamespaceLabels = labels }
}

// New returns a Framework and registers, in the enclosing container, a
// BeforeEach that creates the spec's namespace, waits for its default
// ServiceAccount and starts recording its pods; DeferCleanup stops the
// recording and deletes the namespace (without waiting: the namespace
// controller removes its content, Jobs and pods included).
func New(baseName string, opts ...Option) *Framework {
	f := &Framework{BaseName: baseName}
	for _, o := range opts {
		o(f)
	}
	ginkgo.BeforeEach(func(ctx ginkgo.SpecContext) {
		tc := Cluster()
		gomega.Expect(tc).NotTo(gomega.BeNil(), "SetupCluster has not run")
		f.RESTConfig, f.Kube, f.Volcano = tc.RESTConfig, tc.Kube, tc.Volcano
		f.Namespace = f.CreateNamespace(ctx, f.BaseName, f.NamespaceLabels)
		f.recordObjects(f.Namespace)
	}, ginkgo.NodeTimeout(NamespaceReadyTimeout+30*time.Second))
	return f
}

// CreateNamespace creates a namespace e2e-<base>-<random> with labels, waits
// for its default ServiceAccount and registers its deletion with DeferCleanup.
// It returns the name.
func (f *Framework) CreateNamespace(ctx context.Context, base string, labels map[string]string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "e2e-" + strings.ToLower(base) + "-",
		Labels:       labels,
	}}
	created, err := f.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "creating a namespace")
	name := created.Name
	ginkgo.DeferCleanup(func(ctx context.Context) {
		err := f.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			gomega.Expect(err).NotTo(gomega.HaveOccurred(), "deleting namespace %s", name)
		}
	}, ginkgo.NodeTimeout(30*time.Second))
	ginkgo.GinkgoWriter.Printf("namespace %s\n", name)
	// The ServiceAccount admission refuses pods until the namespace's default
	// ServiceAccount exists; the job controller would record FailedCreate.
	Eventually(ctx, func(ctx context.Context) error {
		_, err := f.Kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	}, NamespaceReadyTimeout).Should(gomega.Succeed(), "default ServiceAccount of namespace %s", name)
	return name
}

// Eventually is gomega.Eventually with a named timeout and the suite's Interval.
// actual is a function as gomega.Eventually takes it (it may take ctx first).
func Eventually(ctx context.Context, actual interface{}, timeout time.Duration) gomega.AsyncAssertion {
	return gomega.Eventually(ctx, actual).WithTimeout(timeout).WithPolling(Interval)
}

// Consistently is gomega.Consistently for a named duration with the suite's Interval.
func Consistently(ctx context.Context, actual interface{}, duration time.Duration) gomega.AsyncAssertion {
	return gomega.Consistently(ctx, actual).WithTimeout(duration).WithPolling(Interval)
}

// Events returns the events of the spec's namespace with that reason ("" for all).
func (f *Framework) Events(ctx context.Context, reason string) []corev1.Event {
	list, err := f.Kube.CoreV1().Events(f.Namespace).List(ctx, metav1.ListOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	var out []corev1.Event
	for _, e := range list.Items {
		if reason == "" || e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// DescribeEvents renders events one per line, for failure messages.
func DescribeEvents(events []corev1.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "%s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}
