package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/training"
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

// OnRealNode is training.OnRealNode: job's pods run on the real node.
func OnRealNode(job *batch.Job) *batch.Job { return training.OnRealNode(job) }

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

// NodePodLog returns the log of the last run of one container of pod as the
// real node's container runtime wrote it to disk (the kubelet's podLogsDir,
// <ns>_<pod>_<uid>/<container>/<restart count>.log, in the CRI logging format:
// "<RFC 3339 time> <stream> <P|F> <text>", P for a line cut into parts), as
// text: what the kubelet serves, read without the kubelet. A restarted
// kubelet serves no log of a pod that had finished before it started, and a
// log stream it cut loses what was printed until the stream is opened again;
// the file has it all until the pod is deleted. The error says when the
// suite's cluster has no real node or the file is not there.
func (f *Framework) NodePodLog(pod *corev1.Pod, container string) (string, error) {
	tc := Cluster()
	if tc == nil || tc.Dir == "" || !tc.HasRealNode() {
		return "", fmt.Errorf("no real node in the suite's cluster")
	}
	dir := filepath.Join(tc.Dir, "node", "pod-logs", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID), container)
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no log file of container %s of pod %s in %s", container, pod.Name, dir)
	}
	last, lastRun := "", -1
	for _, file := range files {
		if n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(file), ".log")); err == nil && n > lastRun {
			last, lastRun = file, n
		}
	}
	data, err := os.ReadFile(last)
	if err != nil {
		return "", err
	}
	return CRILogText(data), nil
}

// CRILogText turns container log lines in the CRI logging format into the
// text the container printed: "<time> <stream> F <text>" is text and a line
// end, "<time> <stream> P <text>" a part of a line continued by the next.
// Lines that do not parse are kept as they are.
func CRILogText(data []byte) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		fields := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
		if len(fields) < 3 || (fields[2] != "P" && fields[2] != "F") {
			b.WriteString(line)
			continue
		}
		if len(fields) == 4 {
			b.WriteString(fields[3])
		}
		if fields[2] == "F" {
			b.WriteString("\n")
		}
	}
	return b.String()
}
