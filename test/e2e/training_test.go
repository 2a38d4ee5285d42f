package e2e

import (
	"context"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// requireTrainingImage fails the spec when the training image was not built:
// without it the pods would wait for an image nobody can pull.
func requireTrainingImage() {
	GinkgoHelper()
	_, err := os.Stat(framework.Path(training.ImageTar))
	Expect(err).NotTo(HaveOccurred(), "the training image %s is missing: run `make node-images-training` (about 10 minutes from a cold cache), then start the suite again", training.ImageTar)
}

// createProgramConfigMap creates the ConfigMap ex's Job mounts its program
// from, as `kubectl create configmap NAME --from-file=...` does.
func createProgramConfigMap(ctx context.Context, f *framework.Framework, ex training.Example) {
	GinkgoHelper()
	cm, err := ex.ConfigMapOf(framework.Path("."), f.Namespace)
	Expect(err).NotTo(HaveOccurred())
	_, err = f.Kube.CoreV1().ConfigMaps(f.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred(), "creating ConfigMap %s", cm.Name)
}

// runOnRealNode creates job (already put on the real node), follows the
// logs of container in its pods, waits up to timeout until it is Completed
// (waitCompleted), checks every pod ran on the real node, prints their logs
// and returns the created Job, its pods and logs, and the time from
// submission to completion.
func runOnRealNode(ctx context.Context, f *framework.Framework, job *batch.Job, container string, timeout time.Duration) (*batch.Job, training.Run, time.Duration) {
	GinkgoHelper()
	start := time.Now()
	created := f.CreateJob(ctx, job)
	followed := f.FollowLogs(ctx, created, container)
	waitCompleted(ctx, f, created, timeout)
	took := time.Since(start).Round(time.Second)
	pods := f.PodsOf(created)
	logs := podLogs(ctx, f, pods, container, followed.Collect(time.Minute))
	for _, pod := range pods {
		Expect(pod.Spec.NodeName).To(Equal(localcluster.RealNodeName), "node of pod %s", pod.Name)
		GinkgoWriter.Printf("--- %s/%s:\n%s", pod.Name, container, logs[pod.Name])
	}
	return created, training.Run{Pods: pods, Logs: logs}, took
}

// waitCompleted waits up to timeout until job is Completed and fails at once
// when one of its pods failed (restartPolicy Never: a failed rank never comes
// back), dumping the pods either way the wait fails.
func waitCompleted(ctx context.Context, f *framework.Framework, job *batch.Job, timeout time.Duration) {
	GinkgoHelper()
	defer func() {
		if r := recover(); r != nil {
			f.DumpPods(job)
			panic(r)
		}
	}()
	framework.Eventually(ctx, func(ctx context.Context) error {
		phase := f.JobPhase(ctx, job)
		if phase == batch.Completed {
			return nil
		}
		for _, p := range f.PodsOf(job) {
			if training.FailedOnItsOwn(p) {
				return StopTrying(fmt.Sprintf("pod %s failed", p.Name))
			}
		}
		return fmt.Errorf("Job %s is %s", job.Name, phase)
	}, timeout).Should(Succeed(), "Job %s to completion", job.Name)
}

// podLogs returns the program container's log of each pod: the longest of
// the log as the kubelet has it (for a pod that still exists), as the real
// node wrote it to disk (framework.NodePodLog: a kubelet restarted after the
// pod finished serves none) and as followed while it ran (the Job's
// completion deletes pods still running; a restart cuts the stream).
func podLogs(ctx context.Context, f *framework.Framework, pods []*corev1.Pod, container string, followed map[string]string) map[string]string {
	out := map[string]string{}
	for _, pod := range pods {
		log, err := f.TryPodLog(ctx, pod, container)
		onDisk, diskErr := f.NodePodLog(pod, container)
		if err != nil || len(log) < len(followed[pod.Name]) || len(log) < len(onDisk) {
			GinkgoWriter.Printf("pod %s: log from the kubelet %d bytes (%v), on the node's disk %d bytes (%v), as followed %d bytes; using the longest\n",
				pod.Name, len(log), err, len(onDisk), diskErr, len(followed[pod.Name]))
			if err != nil {
				log = ""
			}
			for _, other := range []string{onDisk, followed[pod.Name]} {
				if len(other) > len(log) {
					log = other
				}
			}
		}
		out[pod.Name] = log
	}
	return out
}

// pluginConfigMaps returns the data of ex's PluginConfigMaps of job as last
// seen in the spec's namespace (also if deleted since), by name; one never
// seen is missing, which the judge reports.
func pluginConfigMaps(f *framework.Framework, ex training.Example, job *batch.Job) map[string]map[string]string {
	out := map[string]map[string]string{}
	if ex.PluginConfigMaps == nil {
		return out
	}
	for _, name := range ex.PluginConfigMaps(job) {
		if cm := f.ConfigMapSeen(name); cm != nil {
			out[name] = cm.Data
		}
	}
	return out
}

var _ = Describe("Training on the real node", func() {
	f := framework.New("training")

	for _, ex := range samples.Examples() {
		It(fmt.Sprintf("runs the %s example to a good result: %s (%s)", ex.Framework, ex.What, ex.File), func(ctx SpecContext) {
			framework.RequireRealNode()
			requireTrainingImage()
			createProgramConfigMap(ctx, f, ex)
			job := framework.OnRealNode(framework.LoadJob(ex.File))

			created, run, took := runOnRealNode(ctx, f, job, ex.Container, framework.RealJobCompletedTimeout)
			run.ConfigMaps = pluginConfigMaps(f, ex, created)
			summary, err := ex.Judge(run)
			Expect(err).NotTo(HaveOccurred(), "Job %s (%s)", created.Name, ex.File)
			line := fmt.Sprintf("%s: done in %s from submission: %s", created.Name, took, summary)
			GinkgoWriter.Println(line)
			AddReportEntry(created.Name, line)
		}, SpecTimeout(framework.RealSpecTimeout))
	}
})
