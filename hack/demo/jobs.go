package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcclientset "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
)

// frameworks are the example directories (example/<name>/<name>.yaml), in
// the order the demo runs them. From package catalog, not plugins: plugins
// imports Volcano's plugin factory, whose dependencies log a klog error at
// init on a machine without ~/.kube/config (TestNoInitTimeLogs).
var frameworks = catalog.Names()

const (
	pollEvery = 250 * time.Millisecond
	// namespaceTimeout bounds deleting the namespace of an earlier run and
	// creating the new one.
	namespaceTimeout = 2 * time.Minute
)

// example is one example Job as loaded from its file.
type example struct {
	framework string
	file      string // relative to the module root
	job       *batch.Job
	// real is set for the examples that run on the real node: what they
	// need and how their result is judged.
	real *training.Example
	// stock is set for a Job made for Volcano's stock controller manager
	// (stockExample): its result is not judged, only whether it completed.
	stock bool
}

// loadRealExamples loads the examples that run for real (samples.Examples:
// each framework Sample's Training, in catalog order), placed on the real
// node; the contract checks wait checkTimeout for a peer (0: as written).
func loadRealExamples(root, namespace string, checkTimeout time.Duration) ([]*example, error) {
	var out []*example
	exs := samples.Examples()
	for i := range exs {
		ex := &exs[i]
		job, err := training.LoadJob(root, ex.File)
		if err != nil {
			return nil, err
		}
		job.Namespace = namespace
		out = append(out, &example{framework: ex.Framework, file: ex.File, job: ex.WithCheckTimeout(training.OnRealNode(job), checkTimeout), real: ex})
	}
	return out, nil
}

func loadExamples(root, namespace string) ([]*example, error) {
	var out []*example
	for _, fw := range frameworks {
		rel := filepath.Join("example", fw, fw+".yaml")
		job, err := training.LoadJob(root, rel)
		if err != nil {
			return nil, err
		}
		job.Namespace = namespace
		out = append(out, &example{framework: fw, file: rel, job: job})
	}
	return out, nil
}

type clients struct {
	kube      kubernetes.Interface
	volcano   vcclientset.Interface
	namespace string
	listPods  bool // the pod watch ended: poll lists pods
	// out receives the progress lines of follow (bound pods, job states,
	// failures).
	out io.Writer
	// timed follows the logs with the kubelet's timestamps, and the wait
	// containers' logs too (make startup).
	timed bool
}

// freshNamespace deletes the namespace if an earlier run left it, waits until
// it is gone, creates it and waits for its default ServiceAccount (pods are
// rejected until it exists).
func (c *clients) freshNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, namespaceTimeout)
	defer cancel()
	nsAPI := c.kube.CoreV1().Namespaces()
	t := time.Now()
	if _, err := nsAPI.Get(ctx, c.namespace, metav1.GetOptions{}); err == nil {
		fmt.Printf("  deleting namespace %s left by an earlier run ... ", c.namespace)
		if err := nsAPI.Delete(ctx, c.namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			fmt.Println("FAILED")
			return err
		}
		for {
			_, err := nsAPI.Get(ctx, c.namespace, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err := sleep(ctx, pollEvery); err != nil {
				fmt.Println("FAILED")
				return fmt.Errorf("namespace %s still terminating after %s (timeout %s)", c.namespace, seconds(time.Since(t)), namespaceTimeout)
			}
		}
		fmt.Printf("done (%s)\n", seconds(time.Since(t)))
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.namespace}}
	if _, err := nsAPI.Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", c.namespace, err)
	}
	for {
		_, err := c.kube.CoreV1().ServiceAccounts(c.namespace).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return fmt.Errorf("no ServiceAccount default in namespace %s after %s", c.namespace, seconds(time.Since(t)))
		}
	}
}

// run is one submitted job and what demo observed of it.
type run struct {
	*example
	want      int // pods the job's tasks ask for
	submitted time.Time

	job        *batch.Job
	pods       map[string]*corev1.Pod // last seen version of every pod
	gone       map[string]bool        // pods deleted (a completing job deletes its running pods)
	podGroup   string                 // message of the PodGroup while pods are unbound
	hostfileCM string
	// judgedCMs are the ConfigMaps the judge of a real run reads
	// (training.Example.PluginConfigMaps).
	judgedCMs []string
	// configMaps holds the data of the plugins' ConfigMaps the report and
	// the judge read (hostfileCM: the MPI hostfile and the launcher's wait
	// targets; judgedCMs), as last seen: a completed Job's plugins delete
	// them.
	configMaps map[string]map[string]string
	logs       *training.LogFollower // the program's log of every pod, for real runs
	verdict    string                // the judge's summary of a real run
	podLogs    map[string]string     // the followed logs by pod name, once collected
	out        io.Writer             // where progress lines go (clients.out)

	// For timed runs (clients.timed): when each pod was first seen bound
	// and Ready (client clock), how many pods were replaced by new ones of
	// the same name, the wait containers' logs, and the logs of both kinds
	// as lines with the kubelet's timestamps, once collected.
	boundAt, readyAt map[string]time.Time
	replaced         int
	waitLogs         *training.LogFollower
	lines, waitLines map[string][]training.LogLine
	// logErrs lists the followed logs whose timestamps could not be read.
	logErrs []string

	progress    progress  // which progress lines to print
	ended       time.Time // when a final phase was seen; done follows at the next poll
	done        bool
	ok          bool
	interrupted bool
	reason      string
	elapsed     time.Duration
}

// hostfile returns the MPI hostfile as last seen, and whether it was seen.
func (r *run) hostfile() (string, bool) {
	h, ok := r.configMaps[r.hostfileCM][mpi.HostfileKey]
	return h, ok
}

// submit submits the examples' Jobs, one after the other (their ConfigMaps
// are createConfigMaps').
func (c *clients) submit(ctx context.Context, examples []*example) ([]*run, error) {
	var runs []*run
	for _, ex := range examples {
		r, err := c.submitJob(ctx, ex)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// createConfigMaps creates the ConfigMaps the real examples mount their
// programs from, each once.
func (c *clients) createConfigMaps(ctx context.Context, root string, examples []*example) error {
	created := map[string]bool{}
	for _, ex := range examples {
		if ex.real != nil && !created[ex.real.ConfigMap] {
			cm, err := ex.real.ConfigMapOf(root, c.namespace)
			if err != nil {
				return err
			}
			if _, err := c.kube.CoreV1().ConfigMaps(c.namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
			}
			created[cm.Name] = true
			fmt.Fprintf(c.out, "  created ConfigMap %s from %s\n", cm.Name, strings.Join(ex.real.Programs, " "))
		}
	}
	return nil
}

// submitJob submits ex's Job and, for a real example, starts following its
// pods' logs.
func (c *clients) submitJob(ctx context.Context, ex *example) (*run, error) {
	r := &run{example: ex, pods: map[string]*corev1.Pod{}, gone: map[string]bool{}, progress: progress{name: ex.job.Name}, out: c.out}
	if c.timed {
		r.boundAt, r.readyAt = map[string]time.Time{}, map[string]time.Time{}
	}
	var tasks []string
	for _, t := range ex.job.Spec.Tasks {
		r.want += int(t.Replicas)
		tasks = append(tasks, fmt.Sprintf("%s×%d", t.Name, t.Replicas))
	}
	if _, ok := ex.job.Spec.Plugins[mpi.Name]; ok && !ex.stock {
		r.hostfileCM = mpi.ConfigMapName(ex.job)
	}
	if ex.real != nil && ex.real.PluginConfigMaps != nil && !ex.stock {
		r.judgedCMs = ex.real.PluginConfigMaps(ex.job)
	}
	r.submitted = time.Now()
	created, err := c.volcano.BatchV1alpha1().Jobs(c.namespace).Create(ctx, ex.job.DeepCopy(), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("submitting %s: %w", ex.file, err)
	}
	if !c.timed {
		// The demo's times are from the answer on.
		r.submitted = time.Now()
	}
	r.job = created
	if ex.real != nil {
		name := created.Name
		pods := func(ctx context.Context) []*corev1.Pod {
			pods, _ := c.jobPods(ctx, name) // retried at the next look
			return pods
		}
		if c.timed {
			r.logs = training.FollowLogs(ctx, c.kube, ex.real.Container, pods)
			r.waitLogs = training.FollowLogs(ctx, c.kube, wait.ContainerName, func(ctx context.Context) []*corev1.Pod {
				var waiting []*corev1.Pod
				for _, p := range pods(ctx) {
					if waitContainer(p) != nil {
						waiting = append(waiting, p)
					}
				}
				return waiting
			})
		} else {
			r.logs = training.FollowLogs(ctx, c.kube, ex.real.Container, pods)
		}
	}
	fmt.Fprintf(c.out, "  submitted %-10s %-13s from %-36s %s\n", ex.framework, ex.job.Name, ex.file, strings.Join(tasks, " "))
	return r, nil
}

// waitContainer returns pod's wait-for-dependencies init container, or nil.
func waitContainer(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == wait.ContainerName {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// jobPods lists the pods labelled with the job name name.
func (c *clients) jobPods(ctx context.Context, name string) ([]*corev1.Pod, error) {
	sel := labels.Set{batch.JobNameKey: name}.String()
	list, err := c.kube.CoreV1().Pods(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// watchPods starts watching the pods of the namespace, before any job is
// submitted, so that demo sees every state a pod goes through (a pod can be
// bound, run and be deleted by its completing job between two polls).
func (c *clients) watchPods(ctx context.Context) (watch.Interface, error) {
	w, _, err := kubeutil.WatchPods(ctx, c.kube.CoreV1().Pods(c.namespace), "")
	return w, err
}

// groupsOf splits examples into groups of n, in order (one group of all
// when n is not positive): make demo's --at-once.
func groupsOf(examples []*example, n int) [][]*example {
	if n <= 0 || n >= len(examples) {
		return [][]*example{examples}
	}
	var out [][]*example
	for len(examples) > n {
		out = append(out, examples[:n])
		examples = examples[n:]
	}
	return append(out, examples)
}

// follow follows the jobs until each has finished, failed or timed out, or
// ctx is cancelled. It prints a line when a pod is bound, when a job's phase
// or number of created, running or succeeded pods changes, and "still
// waiting" for a job whose state stays the same (type progress).
func (c *clients) follow(ctx context.Context, runs []*run, pods watch.Interface, timeout time.Duration) {
	defer pods.Stop()
	fmt.Fprintln(c.out)
	t0 := time.Now()
	byName := map[string]*run{}
	for _, r := range runs {
		byName[r.example.job.Name] = r
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	events := pods.ResultChan()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				// The watch cannot go on (its resource version expired):
				// poll lists the pods instead.
				events = nil
				c.listPods = true
				continue
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			if r := byName[p.Labels[batch.JobNameKey]]; r != nil && !r.done && ownedBy(p, r.job) {
				r.observe(p, ev.Type == watch.Deleted, t0)
			}
			continue
		case <-ctx.Done():
			for _, r := range runs {
				if !r.done {
					r.finish(false, fmt.Sprintf("interrupted in phase %s (%s)", phaseOf(r.job), r.counts()))
					r.interrupted = true
				}
			}
			fmt.Fprintf(c.out, "  %s interrupted\n", stamp(t0))
			return
		case <-tick.C:
		}
		pending := 0
		for _, r := range runs {
			if r.done {
				continue
			}
			c.poll(ctx, r, t0)
			if !r.done && r.ended.IsZero() && time.Since(r.submitted) > timeout {
				r.finish(false, fmt.Sprintf("timed out after %s: %s", timeout, r.stuckReason()))
				fmt.Fprintf(c.out, "  %s %-13s TIMED OUT   %s\n", stamp(t0), r.job.Name, r.reason)
			}
			if !r.done {
				pending++
			}
		}
		if pending == 0 {
			return
		}
	}
}

// observe records a pod event, printing the node when the pod is bound. A
// timed run also records when each pod was first seen bound and Ready, and
// counts pods replaced by a new one of the same name.
func (r *run) observe(p *corev1.Pod, deleted bool, t0 time.Time) {
	now := time.Now()
	old := r.pods[p.Name]
	if p.Spec.NodeName != "" && (old == nil || old.Spec.NodeName == "") {
		fmt.Fprintln(r.out, r.progress.bound(time.Since(t0), p.Name, p.Spec.NodeName))
	}
	if old != nil && old.UID != p.UID {
		r.replaced++
	}
	if r.boundAt != nil {
		if _, seen := r.boundAt[p.Name]; !seen && p.Spec.NodeName != "" {
			r.boundAt[p.Name] = now
		}
		if _, seen := r.readyAt[p.Name]; !seen && podReady(p) {
			r.readyAt[p.Name] = now
		}
	}
	r.pods[p.Name] = p.DeepCopy()
	if deleted {
		r.gone[p.Name] = true
	}
}

// poll refreshes r's job, hostfile and PodGroup message, printing what changed.
// A job seen in a final phase is done at the next poll, so pod events
// still on their way are counted.
func (c *clients) poll(ctx context.Context, r *run, t0 time.Time) {
	if !r.ended.IsZero() {
		r.done = true
		return
	}
	name := r.example.job.Name
	// Other errors are retried at the next poll; the timeout ends a job whose
	// reads keep failing.
	if job, err := c.volcano.BatchV1alpha1().Jobs(c.namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
		r.job = job
	} else if apierrors.IsNotFound(err) {
		r.finish(false, "the job was deleted")
		fmt.Fprintf(r.out, "  %s %-13s FAILED      %s\n", stamp(t0), name, r.reason)
		return
	}
	if c.listPods {
		if pods, err := c.jobPods(ctx, name); err == nil {
			seen := map[string]bool{}
			for _, p := range pods {
				if ownedBy(p, r.job) {
					seen[p.Name] = true
					r.observe(p, false, t0)
				}
			}
			for name := range r.pods {
				if !seen[name] {
					r.gone[name] = true
				}
			}
		}
	}
	for _, name := range append([]string{r.hostfileCM}, r.judgedCMs...) {
		if name == "" {
			continue
		}
		if cm, err := c.kube.CoreV1().ConfigMaps(c.namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			if r.configMaps == nil {
				r.configMaps = map[string]map[string]string{}
			}
			r.configMaps[cm.Name] = cm.Data
		}
	}
	if r.bound() < r.want {
		r.podGroup = c.podGroupMessage(ctx, r.job)
	}

	phase := phaseOf(r.job)
	if line := r.progress.update(time.Since(t0), r.state(), r.why()); line != "" {
		fmt.Fprintln(r.out, line)
	}
	if r.real != nil {
		for _, p := range sortedPods(r) {
			if training.FailedOnItsOwn(p) {
				r.end(false, "pod "+p.Name+" failed"+exitOf(p, r.real.Container))
				fmt.Fprintf(r.out, "  %s %-13s FAILED      %s\n", stamp(t0), name, r.reason)
				return
			}
		}
	}
	switch phase {
	case batch.Completed:
		r.end(true, "")
	case batch.Failed, batch.Aborted, batch.Terminated:
		r.end(false, r.failureReason())
		fmt.Fprintf(r.out, "  %s %-13s FAILED      %s\n", stamp(t0), name, r.reason)
	}
}

// end records the job's outcome; the next poll marks it done.
func (r *run) end(ok bool, reason string) {
	r.ended = time.Now()
	r.ok, r.reason = ok, reason
	r.elapsed = r.ended.Sub(r.submitted)
}

// podReady reports whether p's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (r *run) finish(ok bool, reason string) {
	r.done, r.ok, r.reason = true, ok, reason
	r.elapsed = time.Since(r.submitted)
}

func ownedBy(p *corev1.Pod, job *batch.Job) bool {
	for _, o := range p.OwnerReferences {
		if o.UID == job.UID {
			return true
		}
	}
	return false
}

func phaseOf(job *batch.Job) batch.JobPhase {
	if job.Status.State.Phase == "" {
		return batch.Pending
	}
	return job.Status.State.Phase
}

func (r *run) bound() int {
	n := 0
	for _, p := range r.pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

func (r *run) succeeded() int {
	n := 0
	for _, p := range r.pods {
		if p.Status.Phase == corev1.PodSucceeded {
			n++
		}
	}
	return n
}

// running counts the pods running as last seen, deleted ones excluded.
func (r *run) running() int {
	n := 0
	for name, p := range r.pods {
		if p.Status.Phase == corev1.PodRunning && !r.gone[name] {
			n++
		}
	}
	return n
}

func (r *run) state() jobState {
	return jobState{Phase: phaseOf(r.job), Want: r.want, Created: len(r.pods), Bound: r.bound(), Running: r.running(), Succeeded: r.succeeded()}
}

func (r *run) counts() string {
	return fmt.Sprintf("pods: %d/%d created, %d bound, %d succeeded", len(r.pods), r.want, r.bound(), r.succeeded())
}

// stuckReason says where a job that did not finish got stuck.
func (r *run) stuckReason() string {
	return fmt.Sprintf("phase %s, %s", phaseOf(r.job), r.counts()) + r.why()
}

// why says where a job that waits stands, as "; PodGroup: <message>; <pod
// problems>", or "".
func (r *run) why() string {
	s := ""
	if r.bound() < r.want && r.podGroup != "" {
		s += "; PodGroup: " + r.podGroup
	}
	if w := r.podProblems(); w != "" {
		s += "; " + w
	}
	return s
}

func (r *run) failureReason() string {
	st := r.job.Status.State
	s := string(phaseOf(r.job))
	if st.Reason != "" {
		s += ": " + st.Reason
	}
	if st.Message != "" {
		s += ": " + st.Message
	}
	if w := r.podProblems(); w != "" {
		s += "; " + w
	}
	return s
}

// podProblems lists failed pods and containers that wait with a reason.
func (r *run) podProblems() string {
	var out []string
	for _, p := range sortedPods(r) {
		if p.Status.Phase == corev1.PodFailed {
			msg := p.Name + " failed"
			if p.Status.Reason != "" {
				msg += " (" + p.Status.Reason + ")"
			}
			out = append(out, msg)
		}
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if w := cs.State.Waiting; w != nil && w.Reason != "" {
				out = append(out, fmt.Sprintf("%s/%s waiting: %s", p.Name, cs.Name, w.Reason))
			}
		}
	}
	return strings.Join(out, ", ")
}

// podGroupMessage returns the latest condition message of the job's PodGroup
// (why the scheduler has not bound the pods), or "".
func (c *clients) podGroupMessage(ctx context.Context, job *batch.Job) string {
	list, err := c.volcano.SchedulingV1beta1().PodGroups(c.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	for _, pg := range list.Items {
		if !events.ControlledBy(&pg, job) {
			continue
		}
		conds := pg.Status.Conditions
		sort.SliceStable(conds, func(i, j int) bool {
			return conds[i].LastTransitionTime.Before(&conds[j].LastTransitionTime)
		})
		if n := len(conds); n > 0 && conds[n-1].Message != "" {
			return string(pg.Status.Phase) + ", " + conds[n-1].Message
		}
		return string(pg.Status.Phase)
	}
	return ""
}

// exitOf describes how container of the failed pod p ended, as " (exit
// code N: message)", or "".
func exitOf(p *corev1.Pod, container string) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; cs.Name == container && t != nil {
			if t.Message != "" {
				return fmt.Sprintf(" (exit code %d: %s)", t.ExitCode, strings.TrimSpace(t.Message))
			}
			return fmt.Sprintf(" (exit code %d)", t.ExitCode)
		}
	}
	return ""
}

// judge collects the logs of a real run and judges them; a run whose Job
// completed but whose result is wrong fails.
func (r *run) judge() {
	if r.real == nil || r.logs == nil {
		return
	}
	stamped := r.logs.CollectStamped(30 * time.Second)
	r.lines = r.timedLogs(stamped)
	logs := map[string]string{}
	for pod, lines := range r.lines {
		logs[pod] = training.Untimestamped(lines)
	}
	if r.boundAt != nil {
		r.waitLines = r.timedLogs(r.waitLogs.CollectStamped(10 * time.Second))
	}
	r.podLogs = logs
	if !r.ok {
		// The last line a failed pod printed says why, e.g. a contract
		// check's MISMATCH; Open MPI frames its messages in lines of
		// dashes, which say nothing.
		for _, p := range sortedPods(r) {
			if last := lastWords(logs[p.Name]); training.FailedOnItsOwn(p) && last != "" {
				r.reason += "; its log ends: " + last
				break
			}
		}
		return
	}
	pods := sortedPods(r)
	for _, p := range pods {
		if p.Spec.NodeName != localcluster.RealNodeName {
			r.ok, r.reason = false, fmt.Sprintf("pod %s ran on %s, not on the real node", p.Name, p.Spec.NodeName)
			return
		}
	}
	if r.stock {
		// Volcano's plugins write no hostfile and inject less; what
		// make startup asks of a stock run is that it completed.
		r.verdict = "completed (stock: not judged)"
		return
	}
	run := training.Run{Pods: pods, Logs: logs, ConfigMaps: map[string]map[string]string{}}
	for _, name := range r.judgedCMs {
		if data, ok := r.configMaps[name]; ok {
			run.ConfigMaps[name] = data
		}
	}
	summary, err := r.real.Judge(run)
	if err != nil {
		r.ok, r.reason = false, "wrong result: "+err.Error()
		return
	}
	r.verdict = summary
}

// timedLogs parses logs followed with timestamps, recording in r.logErrs
// those it cannot read (their lines up to the error are kept).
func (r *run) timedLogs(logs map[string]string) map[string][]training.LogLine {
	out := map[string][]training.LogLine{}
	for pod, log := range logs {
		lines, err := training.ParseTimestamped(log)
		if err != nil {
			r.logErrs = append(r.logErrs, pod+": "+err.Error())
		}
		out[pod] = lines
	}
	return out
}

func (r *run) resultLine() string {
	if r.real != nil {
		status := "trained"
		if r.real.Contract {
			status = "checked"
		}
		switch {
		case r.interrupted:
			status = "STOPPED"
		case !r.ok:
			status = "FAILED"
		}
		line := fmt.Sprintf("%-10s  %-24s  %-7s  %6s  ", r.framework, r.example.job.Name, status, seconds(r.elapsed))
		if r.ok {
			return line + r.verdict
		}
		return line + r.reason
	}
	status := "Completed"
	switch {
	case r.interrupted:
		status = "STOPPED"
	case !r.ok:
		status = "FAILED"
	}
	pods := fmt.Sprintf("%d pods", len(r.pods))
	if len(r.pods) == 1 {
		pods = "1 pod"
	}
	line := fmt.Sprintf("%-10s  %-12s  %-9s  %-6s  %6s", r.framework, r.example.job.Name, status, pods, seconds(r.elapsed))
	if !r.ok {
		line += "  " + r.reason
	}
	return line
}

// stamp is the time since the jobs were submitted, as "[  2.5s]".
func stamp(t0 time.Time) string {
	return stampAt(time.Since(t0))
}

// stampAt is stamp for the time d since the submission.
func stampAt(d time.Duration) string {
	return fmt.Sprintf("[%6s]", seconds(d))
}

// sleep waits d or until ctx is done, returning ctx.Err() in the latter case.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lastWords returns the last line of log that is not empty or dashes only.
func lastWords(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.Trim(l, "-") != "" {
			return l
		}
	}
	return ""
}
