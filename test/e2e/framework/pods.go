package framework

import (
	"context"
	"sort"
	"strconv"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// GPUResource is the GPU resource of the local cluster's KWOK nodes.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// recorder keeps the last seen state of every object of one kind in a
// namespace since the spec began, deleted ones included. On KWOK a Job's pods
// finish at once, and Volcano deletes the pods that have not finished when a
// task's CompleteJob policy fires, and the svc plugin deletes its ConfigMap when
// the Job completes: a plain List after the fact can miss what a spec asserts.
// A pod's containers, env and volumes never change after creation, and the
// plugins' ConfigMaps hold the same data for a Job's whole life, so the last
// state seen is as good as the first.
type recorder[T metav1.Object] struct {
	mu      sync.Mutex
	objs    map[string]T
	deleted map[string]bool
}

func (r *recorder[T]) record(obj interface{}, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(T)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objs[o.GetName()] = o
	r.deleted[o.GetName()] = deleted
}

// get returns the object last seen with that name and whether it was deleted.
func (r *recorder[T]) get(name string) (obj T, found, deleted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	obj, found = r.objs[name]
	return obj, found, r.deleted[name]
}

// all returns every object seen, unordered.
func (r *recorder[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]T, 0, len(r.objs))
	for _, o := range r.objs {
		out = append(out, o)
	}
	return out
}

// newRecorder records what inf sees once the informer runs.
func newRecorder[T metav1.Object](inf cache.SharedIndexInformer) *recorder[T] {
	r := &recorder[T]{objs: map[string]T{}, deleted: map[string]bool{}}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { r.record(obj, false) },
		UpdateFunc: func(_, obj interface{}) { r.record(obj, false) },
		DeleteFunc: func(obj interface{}) { r.record(obj, true) },
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return r
}

// recordObjects records the pods and ConfigMaps of ns until the spec ends
// (DeferCleanup). The factory is started and shut down once: Shutdown waits
// for every informer it started, so a second stop channel still open would
// hang it. Informers hand out shared objects: readers copy them.
func (f *Framework) recordObjects(ns string) {
	factory := informers.NewSharedInformerFactoryWithOptions(f.Kube, 0, informers.WithNamespace(ns))
	podInf := factory.Core().V1().Pods().Informer()
	cmInf := factory.Core().V1().ConfigMaps().Informer()
	f.pods = newRecorder[*corev1.Pod](podInf)
	f.configMaps = newRecorder[*corev1.ConfigMap](cmInf)
	stop := make(chan struct{})
	factory.Start(stop)
	ginkgo.DeferCleanup(func() { close(stop); factory.Shutdown() })
	gomega.Expect(cache.WaitForCacheSync(stop, podInf.HasSynced, cmInf.HasSynced)).To(gomega.BeTrue(), "informers of %s", ns)
}

// ConfigMapSeen returns the ConfigMap of that name as last seen in the spec's
// namespace since the spec began (also if deleted since), or nil.
func (f *Framework) ConfigMapSeen(name string) *corev1.ConfigMap {
	cm, found, _ := f.configMaps.get(name)
	if !found {
		return nil
	}
	return cm.DeepCopy()
}

// PodsOf returns every pod of the Job seen in the spec's namespace since the
// spec began, as last seen (deleted ones included), sorted by the task's place
// in job.Spec.Tasks and then by task index.
func (f *Framework) PodsOf(job *batch.Job) []*corev1.Pod {
	var pods []*corev1.Pod
	for _, p := range f.pods.all() {
		if p.Annotations[batch.JobNameKey] == job.Name || p.Labels[batch.JobNameKey] == job.Name {
			pods = append(pods, p.DeepCopy())
		}
	}
	SortPods(job, pods)
	return pods
}

// LivePodsOf is PodsOf without the deleted pods.
func (f *Framework) LivePodsOf(job *batch.Job) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range f.PodsOf(job) {
		if _, _, gone := f.pods.get(p.Name); !gone {
			out = append(out, p)
		}
	}
	return out
}

// SortPods sorts a Job's pods by the task's place in job.Spec.Tasks, then by
// task index (annotation volcano.sh/task-index).
func SortPods(job *batch.Job, pods []*corev1.Pod) {
	order := map[string]int{}
	for i, t := range job.Spec.Tasks {
		order[t.Name] = i
	}
	key := func(p *corev1.Pod) (int, int) {
		task, ok := order[p.Annotations[batch.TaskSpecKey]]
		if !ok {
			task = len(order)
		}
		index, err := strconv.Atoi(p.Annotations[batch.TaskIndex])
		if err != nil {
			index = -1
		}
		return task, index
	}
	sort.SliceStable(pods, func(i, j int) bool {
		ti, ii := key(pods[i])
		tj, ij := key(pods[j])
		if ti != tj {
			return ti < tj
		}
		if ii != ij {
			return ii < ij
		}
		return pods[i].Name < pods[j].Name
	})
}

// PodNames returns the names of pods, in order.
func PodNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// TotalReplicas is the number of pods a Job asks for.
func TotalReplicas(job *batch.Job) int {
	n := 0
	for _, t := range job.Spec.Tasks {
		n += int(t.Replicas)
	}
	return n
}

// WaitPodsCreated waits until the job controller has created n pods of the Job
// (n <= 0: all its replicas) and returns them as PodsOf does.
func (f *Framework) WaitPodsCreated(ctx context.Context, job *batch.Job, n int) []*corev1.Pod {
	if n <= 0 {
		n = TotalReplicas(job)
	}
	Eventually(ctx, func() []string { return PodNames(f.PodsOf(job)) }, PodsCreatedTimeout).
		Should(gomega.HaveLen(n), func() string {
			return "pods of Job " + job.Name + "; FailedCreate events:\n" + DescribeEvents(f.Events(context.Background(), "FailedCreate"))
		})
	return f.PodsOf(job)
}

// WaitPodsBound waits until n live pods of the Job (n <= 0: all its replicas)
// are bound to a node and returns the live pods.
func (f *Framework) WaitPodsBound(ctx context.Context, job *batch.Job, n int) []*corev1.Pod {
	if n <= 0 {
		n = TotalReplicas(job)
	}
	Eventually(ctx, func() int { return len(Bound(f.LivePodsOf(job))) }, PodsBoundTimeout).
		Should(gomega.Equal(n), "bound pods of Job %s", job.Name)
	return f.LivePodsOf(job)
}

// Bound returns the pods that are bound to a node.
func Bound(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			out = append(out, p)
		}
	}
	return out
}

// EnvOf is kubeutil.EnvOf (the variables of a container or init container
// with a literal value, by name), failing the spec if the pod has no such
// container.
func EnvOf(pod *corev1.Pod, container string) map[string]string {
	env := kubeutil.EnvOf(pod, container)
	gomega.Expect(env).NotTo(gomega.BeNil(), "pod %s has no container %q", pod.Name, container)
	return env
}

// WaitTargets returns what the wait container of pod (wait.ContainerName)
// waits for, its WAIT_TARGETS variable or the file it names, which it reads
// from the ConfigMap it mounts (wait.PodTargets; as last seen if the ConfigMap
// was deleted since: the mpi plugin deletes its own when the Job completes).
// It fails the spec if the pod has no wait container or the ConfigMap cannot
// be read.
func (f *Framework) WaitTargets(ctx context.Context, pod *corev1.Pod) []string {
	ginkgo.GinkgoHelper()
	c := kubeutil.ContainerOf(pod, wait.ContainerName)
	gomega.Expect(c).NotTo(gomega.BeNil(), "pod %s has no container %q", pod.Name, wait.ContainerName)
	targets, err := wait.PodTargets(pod, c, func(name string) (map[string]string, error) {
		cm, err := f.Kube.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && f.ConfigMapSeen(name) != nil {
			return f.ConfigMapSeen(name).Data, nil
		}
		if err != nil {
			return nil, err
		}
		return cm.Data, nil
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "wait targets of pod %s", pod.Name)
	return targets
}

// InitContainerNames returns the names of a pod's init containers, in order.
func InitContainerNames(pod *corev1.Pod) []string {
	out := []string{}
	for _, c := range pod.Spec.InitContainers {
		out = append(out, c.Name)
	}
	return out
}

// PodGPUs returns the GPUs a pod requests, as the scheduler counts them: the
// larger of the sum over its containers and the largest init container.
func PodGPUs(pod *corev1.Pod) int64 {
	get := func(c corev1.Container) int64 {
		if q, ok := c.Resources.Requests[GPUResource]; ok {
			return q.Value()
		}
		if q, ok := c.Resources.Limits[GPUResource]; ok {
			return q.Value()
		}
		return 0
	}
	var sum, initMax int64
	for _, c := range pod.Spec.Containers {
		sum += get(c)
	}
	for _, c := range pod.Spec.InitContainers {
		if n := get(c); n > initMax {
			initMax = n
		}
	}
	if initMax > sum {
		return initMax
	}
	return sum
}

// GPUsInUse returns the GPUs held by bound, unfinished pods in the whole cluster.
func (f *Framework) GPUsInUse(ctx context.Context) (int64, error) {
	list, err := f.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!="})
	if err != nil {
		return 0, err
	}
	var n int64
	for i := range list.Items {
		p := &list.Items[i]
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		n += PodGPUs(p)
	}
	return n, nil
}

// WaitGPUsFree waits until no bound, unfinished pod of the cluster holds a
// GPU: specs that size jobs to the cluster's GPUs run on an idle cluster, and
// leave it idle (namespace deletion alone is asynchronous).
func (f *Framework) WaitGPUsFree(ctx context.Context) {
	Eventually(ctx, f.GPUsInUse, GPUsFreeTimeout).Should(gomega.BeZero(), "GPUs held by running pods")
}

// ClusterGPUs returns the allocatable GPUs of every schedulable node, by node name.
func (f *Framework) ClusterGPUs(ctx context.Context) map[string]int64 {
	nodes, err := f.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	out := map[string]int64{}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			continue
		}
		q := n.Status.Allocatable[GPUResource]
		if q.Cmp(resource.Quantity{}) > 0 {
			out[n.Name] = q.Value()
		}
	}
	return out
}

// RequireGPUNodes skips the spec unless the cluster has exactly nodes
// schedulable nodes with perNode GPUs each, the shape the GPU specs are sized
// for (the local cluster's default: 4 nodes of 8).
func (f *Framework) RequireGPUNodes(ctx context.Context, nodes int, perNode int64) {
	gpus := f.ClusterGPUs(ctx)
	ok := len(gpus) == nodes
	for _, n := range gpus {
		ok = ok && n == perNode
	}
	if !ok {
		ginkgo.Skip("needs " + strconv.Itoa(nodes) + " nodes with " + strconv.FormatInt(perNode, 10) + " GPUs each; the cluster has " + describeGPUs(gpus))
	}
}

func describeGPUs(gpus map[string]int64) string {
	names := make([]string, 0, len(gpus))
	for n := range gpus {
		names = append(names, n)
	}
	sort.Strings(names)
	s := ""
	for _, n := range names {
		s += n + "=" + strconv.FormatInt(gpus[n], 10) + " "
	}
	if s == "" {
		return "none"
	}
	return s
}
