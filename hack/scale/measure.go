package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/stats"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// Named timeouts and periods of a measurement.
const (
	// jobTimeout bounds create-to-all-bound of one job.
	jobTimeout = 10 * time.Minute
	// progressEvery is how often progress is printed while a job starts.
	progressEvery = 5 * time.Second
)

// Measurement is what one job cost one controller manager. Durations are
// wall-clock from the Job's create call returning; CPU is user plus system
// time of the vc-controller-manager process.
type Measurement struct {
	Impl      string `json:"impl"` // of measure.Impls: "stock", "stock-wait", "ours", "ours-inline"
	Round     int    `json:"round"`
	Framework string `json:"framework"`
	Pods      int    `json:"pods"`
	// Created is when the last of the job's pods was seen created.
	Created time.Duration `json:"created"`
	// Bound is when every pod of the job was seen bound to a node.
	Bound time.Duration `json:"bound"`
	// CPUToBound is the controller's CPU time from the create call to Bound.
	CPUToBound time.Duration `json:"cpuToBound"`
	// CPUTotal is the controller's CPU time from the create call until it was
	// idle again (less than measure.QuietCPU in measure.QuietWindow) after
	// Bound: everything the job cost it, its status updates while the pods
	// start included.
	CPUTotal time.Duration `json:"cpuTotal"`
	// PeakRSS is the controller's peak resident memory (VmHWM) over its
	// lifetime so far, read after this job, in bytes: for the second job of a
	// cluster it includes the first.
	PeakRSS int64 `json:"peakRSSBytes"`
	// StoredPodBytes is the sum of the sizes of the job's pods as etcd
	// stores them (protobuf, localcluster.EachStored), read once the
	// controller is idle after the job; StoredPodMedian and StoredPodMax
	// are the median and largest pod, in bytes.
	StoredPodBytes  int64 `json:"storedPodBytes"`
	StoredPodMedian int   `json:"storedPodMedianBytes"`
	StoredPodMax    int   `json:"storedPodMaxBytes"`
	// TFConfigBytes is, for the TensorFlow job, what TF_CONFIG costs in
	// etcd: the bytes of the variables TF_CONFIG and TF_CONFIG_CLUSTER in
	// all its pods, their managedFields entries included
	// (localcluster.EnvBytes), plus the whole stored cluster ConfigMap
	// (tensorflow.ConfigMapName) when there is one. TFConfigPodMax is the
	// largest pod's share.
	TFConfigBytes  int64 `json:"tfConfigBytes,omitempty"`
	TFConfigPodMax int   `json:"tfConfigPodMaxBytes,omitempty"`
	// SchedulerWrotePods is the number of the job's pods whose status
	// vc-scheduler wrote before binding them: a PodScheduled=False
	// condition, which it sets on the pending pods of a gang it could not
	// place in a session. They have a managedFields entry of its manager on
	// the status subresource; binding adds none.
	SchedulerWrotePods int `json:"schedulerWrotePods"`
	// Unschedulable is the reason and message of the first PodScheduled=False
	// condition seen on one of the job's pods while it started (the watch
	// sees it before binding replaces it), empty when there was none. How
	// many pods had one is SchedulerWrotePods.
	Unschedulable string `json:"unschedulable,omitempty"`
	// PeakRSSOf is the peak RSS (VmHWM, bytes) of kube-apiserver, vc-scheduler
	// and vc-controller-manager after the job, by component name.
	PeakRSSOf map[string]int64 `json:"peakRSSOf"`
	// APIServerRSSGrowth is kube-apiserver's RSS (VmRSS) when all the job's
	// pods are bound minus its RSS on the idle cluster before the job, bytes.
	APIServerRSSGrowth int64 `json:"apiserverRSSGrowthBytes"`
	// APIServerHeapGrowth is kube-apiserver's live heap after a forced
	// collection (localcluster.APIServerLiveHeap) once the controller is
	// idle after the job, minus the same on the idle cluster before it, in
	// bytes: what the job's objects keep alive, without the garbage that
	// APIServerRSSGrowth also counts.
	APIServerHeapGrowth int64 `json:"apiserverLiveHeapGrowthBytes"`
	// PodParts is, by the names of podParts, the median over the job's pods
	// of the bytes each part takes in the pod as etcd stores it
	// (localcluster.PartBytes).
	PodParts map[string]int `json:"podPartsMedianBytes,omitempty"`
}

// podParts are the parts of a stored pod whose bytes Measurement.PodParts
// holds, in the order reports show them. They overlap: managedFields record
// the fields of all others, and the wait container holds its script.
var podParts = []struct {
	name string
	drop func(*corev1.Pod)
}{
	{"managedFields", func(p *corev1.Pod) { p.ManagedFields = nil }},
	{"status", func(p *corev1.Pod) { p.Status = corev1.PodStatus{} }},
	{"labels, annotations, owner", func(p *corev1.Pod) { p.Labels, p.Annotations, p.OwnerReferences = nil, nil, nil }},
	{"wait container", func(p *corev1.Pod) {
		p.Spec.InitContainers = slices.DeleteFunc(p.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == wait.ContainerName })
	}},
	{"its script", func(p *corev1.Pod) {
		for i := range p.Spec.InitContainers {
			if p.Spec.InitContainers[i].Name == wait.ContainerName {
				p.Spec.InitContainers[i].Command = nil
			}
		}
	}},
	{"VC_* variables", func(p *corev1.Pod) {
		for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range cs {
				cs[i].Env = slices.DeleteFunc(cs[i].Env, func(e corev1.EnvVar) bool { return strings.HasPrefix(e.Name, "VC_") })
			}
		}
	}},
}

// measurer runs jobs on one cluster and measures its controller manager.
type measurer struct {
	cl *measure.Cluster
	// profile, when set, is the path prefix of the controller manager's CPU
	// profile pieces of the job (Cluster.StartCPUProfile); it then runs
	// with measure.ProfileArgs.
	profile string
}

// run submits job, waits until all its pods are created and bound, then until
// the controller is idle, and returns the measurement (Impl and Round unset).
// It returns an error if the job cannot be created, jobTimeout passes first or
// ctx ends.
func (m *measurer) run(ctx context.Context, job *batch.Job) (Measurement, error) {
	want := 0
	for _, t := range job.Spec.Tasks {
		want += int(t.Replicas)
	}
	res := Measurement{Pods: want}

	pid, apiserver := m.cl.PIDs[localcluster.ControllerManager], m.cl.PIDs[localcluster.KubeAPIServer]
	// Before the idle wait, which then also waits out the collection.
	heap0, err := localcluster.APIServerLiveHeap(ctx, m.cl.Kube)
	if err != nil {
		return res, err
	}
	if _, err := measure.WaitIdle(ctx, m.cl.AllPIDs(), measure.ClusterQuietCPU); err != nil {
		return res, err
	}
	// Started just before the create, so every pod's creation is seen and
	// the list's resourceVersion is still in the API server's history.
	w, existing, err := kubeutil.WatchPods(ctx, m.cl.Kube.CoreV1().Pods(job.Namespace), batch.JobNameKey+"="+job.Name)
	if err != nil {
		return res, err
	}
	defer w.Stop()
	if existing > 0 {
		return res, fmt.Errorf("job %s/%s already has %d pods", job.Namespace, job.Name, existing)
	}

	apiRSS0, err := measure.ProcStatusBytes(apiserver, "VmRSS:")
	if err != nil {
		return res, err
	}
	cpu0, err := measure.ProcessCPU(pid)
	if err != nil {
		return res, err
	}
	stopProfile, err := m.cl.StartCPUProfile(ctx, m.profile)
	if err != nil {
		return res, err
	}
	defer stopProfile() // when run fails; a second call is harmless
	if _, err := m.cl.Volcano.BatchV1alpha1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("creating job %s: %w", job.Name, err)
	}
	t0 := time.Now()

	pods := measure.NewPodTally()
	deadline := time.NewTimer(jobTimeout)
	defer deadline.Stop()
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	for pods.Bound() < want || pods.Created() < want {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return res, errors.New("pod watch ended")
			}
			p, created, _ := pods.Observe(ev)
			if p == nil {
				continue
			}
			if created && pods.Created() == want {
				res.Created = time.Since(t0)
			}
			if res.Unschedulable == "" {
				if reason, msg, ok := unschedulable(p); ok {
					res.Unschedulable = reason + ": " + msg
				}
			}
		case <-progress.C:
			fmt.Printf("    %5.1fs  %d/%d pods created, %d bound\n", time.Since(t0).Seconds(), pods.Created(), want, pods.Bound())
		case <-deadline.C:
			return res, fmt.Errorf("after %s only %d of %d pods created and %d bound", jobTimeout, pods.Created(), want, pods.Bound())
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	res.Bound = time.Since(t0)
	cpu1, err := measure.ProcessCPU(pid)
	if err != nil {
		return res, err
	}
	res.CPUToBound = cpu1 - cpu0
	apiRSS1, err := measure.ProcStatusBytes(apiserver, "VmRSS:")
	if err != nil {
		return res, err
	}
	res.APIServerRSSGrowth = apiRSS1 - apiRSS0
	fmt.Printf("    %5.1fs  all %d pods created (%.1fs) and bound; waiting for the controller to go idle\n", res.Bound.Seconds(), want, res.Created.Seconds())

	cpu2, err := measure.WaitIdle(ctx, []int{pid}, measure.QuietCPU)
	if err != nil {
		return res, err
	}
	res.CPUTotal = cpu2 - cpu0
	if err := stopProfile(); err != nil {
		return res, fmt.Errorf("the controller manager's CPU profile: %w", err)
	}
	res.PeakRSS, err = measure.PeakRSS(pid)
	if err != nil {
		return res, err
	}
	// Stored sizes once the controller is idle: the pods' status and
	// managedFields no longer change (the KWOK nodes run them at once).
	if err := m.measureStored(ctx, job, &res); err != nil {
		return res, fmt.Errorf("reading the job's pods from etcd: %w", err)
	}
	heap1, err := localcluster.APIServerLiveHeap(ctx, m.cl.Kube)
	if err != nil {
		return res, err
	}
	res.APIServerHeapGrowth = heap1 - heap0
	res.PeakRSSOf = map[string]int64{}
	for _, name := range tracked {
		if res.PeakRSSOf[name], err = measure.PeakRSS(m.cl.PIDs[name]); err != nil {
			return res, err
		}
	}
	return res, nil
}

// unschedulable returns the reason and message of pod's PodScheduled=False
// condition; ok is false when it has none.
func unschedulable(pod *corev1.Pod) (reason, message string, ok bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Reason, c.Message, true
		}
	}
	return "", "", false
}

// wroteStatus reports whether manager (a client's user agent product, as
// kube-apiserver records it) has written pod's status subresource.
func wroteStatus(pod *corev1.Pod, manager string) bool {
	for _, f := range pod.ManagedFields {
		if f.Manager == manager && f.Subresource == "status" {
			return true
		}
	}
	return false
}

// measureStored reads the job's pods (named <job>-<task>-<index>) straight
// from etcd and sets the Stored* fields of res and SchedulerWrotePods, and
// for a TensorFlow job the TFConfig* ones. It returns an error if etcd cannot be read, a pod
// cannot be decoded, or it finds fewer pods than res.Pods.
func (m *measurer) measureStored(ctx context.Context, job *batch.Job, res *Measurement) error {
	_, tf := job.Spec.Plugins[tensorflow.Name]
	etcd := m.cl.EtcdEndpoint()
	var sizes []float64
	parts := make([][]float64, len(podParts))
	err := localcluster.EachStored(ctx, etcd, "pods", job.Namespace, func(name string, value []byte) error {
		if !strings.HasPrefix(name, job.Name+"-") {
			return nil
		}
		sizes = append(sizes, float64(len(value)))
		res.StoredPodBytes += int64(len(value))
		res.StoredPodMax = max(res.StoredPodMax, len(value))
		pod, err := localcluster.DecodeStoredPod(value)
		if err != nil {
			return fmt.Errorf("pod %s: %w", name, err)
		}
		if wroteStatus(pod, localcluster.Scheduler) {
			res.SchedulerWrotePods++
		}
		for i, part := range podParts {
			parts[i] = append(parts[i], float64(localcluster.PartBytes(pod, part.drop)))
		}
		if !tf {
			return nil
		}
		n, err := localcluster.EnvBytes(pod, tensorflow.EnvTFConfig, tensorflow.EnvCluster)
		if err != nil {
			return err
		}
		res.TFConfigBytes += int64(n)
		res.TFConfigPodMax = max(res.TFConfigPodMax, n)
		return nil
	})
	if err != nil {
		return err
	}
	if len(sizes) < res.Pods {
		return fmt.Errorf("etcd holds %d pods of job %s, want %d", len(sizes), job.Name, res.Pods)
	}
	res.StoredPodMedian = int(stats.Median(sizes, 0))
	res.PodParts = map[string]int{}
	for i, part := range podParts {
		res.PodParts[part.name] = int(stats.Median(parts[i], 0))
	}
	if tf {
		cms, err := localcluster.StoredSizes(ctx, etcd, "configmaps", job.Namespace)
		if err != nil {
			return err
		}
		res.TFConfigBytes += int64(cms[tensorflow.ConfigMapName(job)])
	}
	return nil
}
