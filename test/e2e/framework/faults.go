package framework

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// RestartComponent kills one process of the suite's local cluster with
// SIGKILL and starts it again (localcluster.Restart), and returns when it was
// killed. The caller waits for what it needs of the new process.
func RestartComponent(name string) time.Time {
	ginkgo.GinkgoHelper()
	tc := localCluster("restarted")
	at := time.Now()
	c, err := localcluster.Restart(tc.Dir, name)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "restarting %s", name)
	ginkgo.GinkgoWriter.Printf("%s killed (SIGKILL) and started again as pid %d\n", name, c.PID)
	return at
}

// localCluster is the suite's cluster; the spec is skipped where it is not
// a local one, whose processes cannot be what (restarted, stopped).
func localCluster(what string) *TestCluster {
	ginkgo.GinkgoHelper()
	tc := Cluster()
	if tc == nil || tc.Local == nil {
		ginkgo.Skip("the suite's cluster is not a local cluster: its processes cannot be " + what)
	}
	return tc
}

// PauseComponent stops component name of the suite's local cluster with
// SIGSTOP (localcluster.Pause): it answers nothing until the returned resume
// sends SIGCONT. resume is also registered with DeferCleanup, so the
// component continues when the spec fails; calling it again is harmless.
// The spec is skipped on a cluster that is not local.
func PauseComponent(name string) (resume func()) {
	ginkgo.GinkgoHelper()
	tc := localCluster("stopped")
	cont, err := localcluster.Pause(tc.Dir, name)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "stopping %s", name)
	ginkgo.GinkgoWriter.Printf("%s stopped (SIGSTOP)\n", name)
	resume = func() {
		if err := cont(); err != nil {
			ginkgo.GinkgoWriter.Printf("%v\n", err)
			return
		}
		ginkgo.GinkgoWriter.Printf("%s continued (SIGCONT)\n", name)
	}
	ginkgo.DeferCleanup(resume)
	return resume
}

// Recovery is what a RecoveryWatch saw of a Job after a fault, each as the
// time since the fault (0: not seen).
type Recovery struct {
	// Restarting: the Job's phase was Restarting.
	Restarting time.Duration
	// OldGone: no pod of the Job from before the fault existed any more
	// (only when the fault made the Job replace its pods).
	OldGone time.Duration
	// Recreated: every pod of the Job existed again, new ones included.
	Recreated time.Duration
	// Running: the main container of every pod had started.
	Running time.Duration
	// Completed: the Job was Completed.
	Completed time.Duration
	// RetryCount is the Job's status.retryCount when it completed.
	RetryCount int32
	// NewPods are the Job's pods created after the fault, by name.
	NewPods map[string]types.UID
}

// RecoveryWatch polls a Job and its pods from the moment of a fault until the
// Job completes, noting when each step of its recovery is first seen.
type RecoveryWatch struct {
	fault time.Time
	done  chan struct{}

	mu  sync.Mutex
	rec Recovery
}

// WatchRecovery starts watching job (as created) from fault, the time the
// fault was injected; before are the Job's pods as they were before it.
// Stop it with Wait.
func (f *Framework) WatchRecovery(ctx context.Context, job *batch.Job, fault time.Time, before []*corev1.Pod) *RecoveryWatch {
	w := &RecoveryWatch{fault: fault, done: make(chan struct{}), rec: Recovery{NewPods: map[string]types.UID{}}}
	old := map[types.UID]bool{}
	for _, p := range before {
		old[p.UID] = true
	}
	want := TotalReplicas(job)
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			since := time.Since(fault)
			j, err := f.GetJob(ctx, job.Name)
			pods, perr := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batch.JobNameKey + "=" + job.Name})
			if err == nil && perr == nil {
				w.mu.Lock()
				note := func(d *time.Duration, ok bool) {
					if ok && *d == 0 {
						*d = since
					}
				}
				note(&w.rec.Restarting, j.Status.State.Phase == batch.Restarting)
				oldLeft, started := 0, 0
				for i := range pods.Items {
					p := &pods.Items[i]
					if old[p.UID] {
						oldLeft++
						continue
					}
					if p.CreationTimestamp.After(fault.Add(-time.Second)) {
						w.rec.NewPods[p.Name] = p.UID
					}
					if mainStarted(p) {
						started++
					}
				}
				note(&w.rec.OldGone, oldLeft == 0 && len(w.rec.NewPods) > 0)
				note(&w.rec.Recreated, oldLeft == 0 && len(pods.Items) == want)
				note(&w.rec.Running, oldLeft == 0 && started == want)
				completed := j.Status.State.Phase == batch.Completed
				note(&w.rec.Completed, completed)
				w.rec.RetryCount = j.Status.RetryCount
				w.mu.Unlock()
				if completed {
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(Interval):
			}
		}
	}()
	return w
}

// mainStarted reports whether the pod's first container has started (is
// running or has run).
func mainStarted(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if len(p.Spec.Containers) > 0 && s.Name == p.Spec.Containers[0].Name {
			return s.State.Running != nil || s.State.Terminated != nil
		}
	}
	return false
}

// Wait waits up to timeout for the Job to complete and returns what was seen.
func (w *RecoveryWatch) Wait(timeout time.Duration) Recovery {
	ginkgo.GinkgoHelper()
	select {
	case <-w.done:
	case <-time.After(timeout):
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rec
}

// String is one line: each step seen, as seconds since the fault.
func (r Recovery) String() string {
	var parts []string
	for _, s := range []struct {
		name string
		d    time.Duration
	}{
		{"Restarting", r.Restarting}, {"old pods gone", r.OldGone}, {"every pod recreated", r.Recreated},
		{"every container started", r.Running}, {"Completed", r.Completed},
	} {
		if s.d > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1fs", s.name, s.d.Seconds()))
		}
	}
	return "fault → " + strings.Join(parts, " → ") + fmt.Sprintf(" (retryCount %d)", r.RetryCount)
}

// ExpectNothingLeft deletes job (background propagation, as kubectl does)
// and waits until nothing of it is left in the spec's namespace: no pod,
// ConfigMap, Secret, Service or PodGroup it controls or that carries its
// volcano.sh/job-name label.
func (f *Framework) ExpectNothingLeft(ctx context.Context, job *batch.Job) {
	ginkgo.GinkgoHelper()
	f.DeleteJob(ctx, job, metav1.DeletePropagationBackground)
	Eventually(ctx, func(ctx context.Context) ([]string, error) {
		return f.objectsOf(ctx, job)
	}, GarbageCollectedTimeout).Should(gomega.BeEmpty(), "what Job %s left after its deletion", job.Name)
}

// objectsOf lists "Kind/name" of the objects in the namespace that belong to
// job: controlled by its UID or labelled with its name.
func (f *Framework) objectsOf(ctx context.Context, job *batch.Job) ([]string, error) {
	var out []string
	ours := func(kind string, m metav1.Object) {
		if m.GetLabels()[batch.JobNameKey] == job.Name {
			out = append(out, kind+"/"+m.GetName())
			return
		}
		for _, r := range m.GetOwnerReferences() {
			if r.UID == job.UID {
				out = append(out, kind+"/"+m.GetName())
				return
			}
		}
	}
	core := f.Kube.CoreV1()
	pods, err := core.Pods(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		ours("Pod", &pods.Items[i])
	}
	cms, err := core.ConfigMaps(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range cms.Items {
		ours("ConfigMap", &cms.Items[i])
	}
	secrets, err := core.Secrets(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range secrets.Items {
		ours("Secret", &secrets.Items[i])
	}
	svcs, err := core.Services(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range svcs.Items {
		ours("Service", &svcs.Items[i])
	}
	pgs, err := f.Volcano.SchedulingV1beta1().PodGroups(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pgs.Items {
		ours("PodGroup", &pgs.Items[i])
	}
	sort.Strings(out)
	return out, nil
}

// KillContainer kills the main container of pod on the real node with
// SIGKILL through containerd (`ctr task kill`), as the kernel's OOM killer
// would: with restartPolicy Never the pod then fails. It returns when the
// signal was sent.
func (f *Framework) KillContainer(ctx context.Context, pod *corev1.Pod) time.Time {
	ginkgo.GinkgoHelper()
	tc := Cluster()
	gomega.Expect(tc.HasRealNode()).To(gomega.BeTrue(), "killing a container needs the real node")
	p, err := f.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	var id string
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == p.Spec.Containers[0].Name {
			id = strings.TrimPrefix(s.ContainerID, "containerd://")
		}
	}
	gomega.Expect(id).NotTo(gomega.BeEmpty(), "container ID of pod %s", pod.Name)
	at := time.Now()
	out, err := exec.CommandContext(ctx, tc.Local.RealNode.Ctr, "--address", tc.Local.RealNode.ContainerdSocket, "-n", "k8s.io",
		"task", "kill", "--signal", "SIGKILL", id).CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "ctr task kill %s: %s", id, out)
	return at
}
