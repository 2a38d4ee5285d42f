package framework

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// RequireRealNode skips the spec when the suite's cluster has no real node:
// only on a machine where RealNodeMode is auto and the node could not start
// (Up printed why); where the node can run, the suite fails in BeforeSuite
// instead of getting here without it.
func RequireRealNode() {
	tc := Cluster()
	if tc == nil || !tc.HasRealNode() {
		ginkgo.Skip("the local cluster has no real node on this machine (see the cluster's start-up output)")
	}
}

// OnRealNode makes every pod of job select the real node and tolerate its
// taint, and sets imagePullPolicy IfNotPresent on its containers (the node's
// images are loaded from tarballs; nothing can be pulled). It returns job.
func OnRealNode(job *batch.Job) *batch.Job {
	for i := range job.Spec.Tasks {
		spec := &job.Spec.Tasks[i].Template.Spec
		if spec.NodeSelector == nil {
			spec.NodeSelector = map[string]string{}
		}
		spec.NodeSelector[localcluster.RealNodeLabel] = "true"
		spec.Tolerations = append(spec.Tolerations, localcluster.RealNodeToleration())
		for j := range spec.Containers {
			spec.Containers[j].ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	return job
}

// PodLog is TryPodLog failing the spec on error.
func (f *Framework) PodLog(ctx context.Context, pod *corev1.Pod, container string) string {
	ginkgo.GinkgoHelper()
	log, err := f.TryPodLog(ctx, pod, container)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "log of container %s of pod %s", container, pod.Name)
	return log
}

// PodPhase returns the pod's current phase, failing the spec if it cannot be read.
func (f *Framework) PodPhase(ctx context.Context, pod *corev1.Pod) corev1.PodPhase {
	ginkgo.GinkgoHelper()
	p, err := f.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "pod %s", pod.Name)
	return p.Status.Phase
}

// TryPodLog returns the log of one container of pod, fetched through the
// apiserver from the kubelet (so it also proves the apiserver reaches the
// real node's kubelet), or the API error.
func (f *Framework) TryPodLog(ctx context.Context, pod *corev1.Pod, container string) (string, error) {
	data, err := f.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	return string(data), err
}

// WaitJobPhaseOrDump is WaitJobPhase for Jobs whose pods really run: when the
// wait fails it first writes every pod's phase, container states and the
// logs of its containers to the GinkgoWriter, which is what tells a stuck
// sandbox from a probe that failed.
func (f *Framework) WaitJobPhaseOrDump(ctx context.Context, job *batch.Job, phase batch.JobPhase, timeout time.Duration) {
	ginkgo.GinkgoHelper()
	defer func() {
		if r := recover(); r != nil {
			f.DumpPods(job)
			panic(r)
		}
	}()
	f.WaitJobPhase(ctx, job, phase, timeout)
}

// DumpPods writes the state and logs of the Job's pods to the GinkgoWriter.
func (f *Framework) DumpPods(job *batch.Job) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := ginkgo.GinkgoWriter
	for _, p := range f.PodsOf(job) {
		pod, err := f.Kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			w.Printf("pod %s: %v\n", p.Name, err)
			continue
		}
		w.Printf("pod %s on %q: %s\n", pod.Name, pod.Spec.NodeName, pod.Status.Phase)
		for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
			w.Printf("  container %s: %+v\n", cs.Name, cs.State)
			data, err := f.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: cs.Name}).DoRaw(ctx)
			if err != nil {
				w.Printf("  (no log: %v)\n", err)
				continue
			}
			w.Printf("%s\n", data)
		}
	}
	for _, e := range f.Events(ctx, "") {
		w.Printf("event %s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
}
