package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	busv1alpha1 "volcano.sh/apis/pkg/apis/bus/v1alpha1"
	scheduling "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// faultEpochPause is slept after each epoch (EPOCH_PAUSE of the training
// programs) and faultEpochs is the PyTorch program's number of epochs (EPOCHS;
// the MPI program has 40), so that a fault lands in the middle of the run:
// the MPI program runs for about 10 s, the PyTorch one about 8 s.
const (
	faultEpochPause = "0.25"
	faultEpochs     = "16"
)

// The node-loss fault: the kubelet stopped for longer than kube-controller-
// manager's node-monitor grace period (50 s by default), the Job's pods
// tolerating the node's unreachable and not-ready taints for
// nodeLossToleration only (Kubernetes adds 300 s where a pod says nothing).
// The first run is slowed (EPOCH_PAUSE after each of faultEpochs epochs) to
// last about 130 s: longer than the node is away plus the kill when it
// returns (about 65 s after the stop), with a margin. The pause comes from
// the ConfigMap nodeLossPauseConfigMap, read when a container starts, and is
// set back to faultEpochPause before the stop, so that the restarted run
// trains as fast as the other faults' (a round takes about 95 s).
const (
	nodeLossToleration     = 5 * time.Second
	nodeLossEpochPause     = "8"
	nodeLossPauseConfigMap = "epoch-pause"
	// nodeLossTimeout bounds each step of the loss: the grace period, then
	// the toleration and the taint eviction controller's work.
	nodeLossTimeout = 2 * time.Minute
)

// setEnvFrom has variable name of every container of job that has it read
// key of ConfigMap configMap when the container starts.
func setEnvFrom(job *batch.Job, name, configMap, key string) {
	for i := range job.Spec.Tasks {
		for j := range job.Spec.Tasks[i].Template.Spec.Containers {
			c := &job.Spec.Tasks[i].Template.Spec.Containers[j]
			for k := range c.Env {
				if c.Env[k].Name == name {
					c.Env[k] = corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Key: key,
					}}}
				}
			}
		}
	}
}

// tolerateNodeLoss has every pod of job tolerate a node that is unreachable
// or not ready for d only, then be evicted by the taint eviction controller.
func tolerateNodeLoss(job *batch.Job, d time.Duration) {
	seconds := int64(d / time.Second)
	for i := range job.Spec.Tasks {
		spec := &job.Spec.Tasks[i].Template.Spec
		for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds,
			})
		}
	}
}

// faultExitBound bounds, after a fault, how long the old pods may take to be
// gone: well under the 30 s grace period, which a program that ignores the
// kubelet's SIGTERM (python3 as PID 1 without a handler) would use up.
const faultExitBound = 20 * time.Second

// envFaultRounds is how many times in a row each fault spec runs (`make chaos
// ROUNDS=N`); once when unset. A spec fails at its first failed round.
const envFaultRounds = "E2E_FAULT_ROUNDS"

// faultRounds decorates the fault specs with envFaultRounds.
func faultRounds() MustPassRepeatedly {
	n, err := strconv.Atoi(os.Getenv(envFaultRounds))
	if err != nil || n < 1 {
		return MustPassRepeatedly(1)
	}
	return MustPassRepeatedly(n)
}

// podFault is one way a pod of a training Job is lost.
type podFault struct {
	// what the fault is, for the spec's name.
	what string
	// file is the example (samples.Examples) whose Job is run.
	file string
	// progressPod and progress: the fault comes once the log of that pod
	// (the Job's name, "-", progressPod) matches progress.
	progressPod string
	progress    *regexp.Regexp
	// victim is the pod lost (after the Job's name and "-").
	victim string
	// kill kills its main container (the pod fails) instead of deleting
	// the pod.
	kill bool
}

// ddpProgress is rank 0's second epoch of the DDP example.
var ddpProgress = regexp.MustCompile(`(?m)^epoch 2 loss`)

var podFaults = []podFault{{
	what: "a PyTorch DDP Job's worker pod deleted", file: "example/pytorch/pytorch-digits-ddp.yaml",
	progressPod: "master-0", progress: ddpProgress, victim: "worker-1",
}, {
	what: "a PyTorch DDP Job's worker container killed", file: "example/pytorch/pytorch-digits-ddp.yaml",
	progressPod: "master-0", progress: ddpProgress, victim: "worker-0", kill: true,
}, {
	what: "an Open MPI Job's worker pod deleted", file: "example/mpi/mpi-digits-openmpi.yaml",
	progressPod: "launcher-0", progress: regexp.MustCompile(`(?m)^epoch 10 loss`), victim: "worker-0",
}, {
	what: "an Open MPI Job's worker container killed", file: "example/mpi/mpi-digits-openmpi.yaml",
	progressPod: "launcher-0", progress: regexp.MustCompile(`(?m)^epoch 10 loss`), victim: "worker-1", kill: true,
}}

// exampleOf returns the training example of file.
func exampleOf(file string) training.Example {
	GinkgoHelper()
	for _, ex := range samples.Examples() {
		if ex.File == file {
			return ex
		}
	}
	Fail("no training example " + file)
	return training.Example{}
}

// restartOnPodLoss is the Job-level policy a user sets to retry training
// when a pod is lost: an evicted or deleted pod (PodEvicted) or a failed one
// (PodFailed) restarts the whole Job, up to maxRetry (Volcano's default 3).
var restartOnPodLoss = batch.LifecyclePolicy{
	Events: []busv1alpha1.Event{busv1alpha1.PodEvictedEvent, busv1alpha1.PodFailedEvent},
	Action: busv1alpha1.RestartJobAction,
}

// slowed sets EPOCH_PAUSE and EPOCHS in every container of job; Open MPI's
// mpirun passes EPOCH_PAUSE on to the ranks it starts only when told (-x).
func slowed(job *batch.Job) *batch.Job {
	for i := range job.Spec.Tasks {
		for j := range job.Spec.Tasks[i].Template.Spec.Containers {
			c := &job.Spec.Tasks[i].Template.Spec.Containers[j]
			c.Env = append(c.Env, corev1.EnvVar{Name: "EPOCH_PAUSE", Value: faultEpochPause},
				corev1.EnvVar{Name: "EPOCHS", Value: faultEpochs})
			if len(c.Command) > 0 && c.Command[0] == "mpirun" {
				c.Command = append([]string{"mpirun", "-x", "EPOCH_PAUSE"}, c.Command[1:]...)
			}
		}
	}
	return job
}

// jobPods lists the pods of job as they are now, by name.
func jobPods(ctx context.Context, f *framework.Framework, job *batch.Job) map[string]*corev1.Pod {
	GinkgoHelper()
	list, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batch.JobNameKey + "=" + job.Name})
	Expect(err).NotTo(HaveOccurred())
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// deletePod deletes pod as `kubectl delete pod` does (its grace period) and
// returns when the delete was sent.
func deletePod(ctx context.Context, f *framework.Framework, pod *corev1.Pod) time.Time {
	GinkgoHelper()
	By("deleting pod " + pod.Name)
	at := time.Now()
	Expect(f.Kube.CoreV1().Pods(f.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})).To(Succeed())
	return at
}

// waitLog waits until the log of pod's first container matches re.
func waitLog(ctx context.Context, f *framework.Framework, job *batch.Job, pod string, re *regexp.Regexp) {
	GinkgoHelper()
	framework.Eventually(ctx, func(ctx context.Context) (string, error) {
		p, err := f.Kube.CoreV1().Pods(f.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if training.FailedOnItsOwn(p) {
			return "", StopTrying("pod " + pod + " failed")
		}
		return f.TryPodLog(ctx, p, p.Spec.Containers[0].Name)
	}, framework.RealJobCompletedTimeout).Should(MatchRegexp(re.String()), "progress of Job %s", job.Name)
}

// joinedCount is how many times a rank's first line
// (training.DigitsJoinedLine: both digits programs print it once init has
// connected every rank) appears in log.
func joinedCount(log string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if training.DigitsJoinedLine.MatchString(line) {
			n++
		}
	}
	return n
}

// lastJoined returns when the last of the named pods printed its joined
// line, from the kubelet's timestamps in their followed logs.
func (r *slowRun) lastJoined(names ...string) time.Time {
	GinkgoHelper()
	var last time.Time
	for _, name := range names {
		lines, err := training.ParseTimestamped(r.stamped[name])
		Expect(err).NotTo(HaveOccurred(), "log of pod %s", name)
		for _, l := range lines {
			if training.DigitsJoinedLine.MatchString(l.Text) && l.At.After(last) {
				last = l.At
			}
		}
	}
	Expect(last.IsZero()).To(BeFalse(), "no rank of %v printed that it joined", names)
	return last
}

// startedAt returns when the main container of pod started.
func startedAt(pod *corev1.Pod) time.Time {
	return training.StartedAt(pod, pod.Spec.Containers[0].Name)
}

var _ = Describe("Faults during training on the real node", Label("faults"), faultRounds(), func() {
	f := framework.New("faults")

	for _, fault := range podFaults {
		It(fault.what+" mid-run: the Job restarts (PodEvicted, PodFailed → RestartJob), its new pods get the same contract and wait again, training completes and nothing is left", func(ctx SpecContext) {
			run := startSlowed(ctx, f, fault.file, func(j *batch.Job) {
				j.Spec.Policies = append(j.Spec.Policies, restartOnPodLoss)
			}, fault.progressPod, fault.progress)
			created := run.job
			before := jobPods(ctx, f, created)
			victim := before[created.Name+"-"+fault.victim]
			Expect(victim).NotTo(BeNil(), "pod %s-%s", created.Name, fault.victim)
			var at time.Time
			if fault.kill {
				By("killing the main container of pod " + victim.Name)
				at = f.KillContainer(ctx, victim)
			} else {
				at = deletePod(ctx, f, victim)
			}
			rec := f.WatchRecovery(ctx, created, at, slices.Collect(maps.Values(before))).Wait(framework.RealJobCompletedTimeout)
			joined, summary := run.expectRestarted(ctx, rec, before, at)
			Expect(rec.OldGone).To(BeNumerically("<", faultExitBound), "the old pods exited on SIGTERM or on losing their peers (%s)", rec)
			report(fmt.Sprintf("%s: %s; every rank joined again %.1fs after the fault; %s", fault.what, rec, joined.Seconds(), summary))

			By("deleting the Job: nothing of it is left")
			f.ExpectNothingLeft(ctx, created)
		}, SpecTimeout(framework.RealSpecTimeout))
	}
})

// expectRestarted checks a Job that one fault at at made restart, as
// WatchRecovery saw it (rec): it completed with status.retryCount 1, every pod
// of before was replaced by one of the same name with the same variables, and
// each pod with a wait container started only after the pods it waits for.
// It returns the time from the fault until every rank had joined training
// again, and the judged run's summary.
func (r *slowRun) expectRestarted(ctx context.Context, rec framework.Recovery, before map[string]*corev1.Pod, at time.Time) (joined time.Duration, summary string) {
	GinkgoHelper()
	Expect(rec.Completed).NotTo(BeZero(), "Job %s completed after the fault (%s)", r.job.Name, rec)
	Expect(rec.RetryCount).To(BeEquivalentTo(1), "status.retryCount of Job %s", r.job.Name)

	By("checking the new pods: every one replaced, the same variables, waits held back")
	summary = r.judge(ctx)
	after := r.pods()
	Expect(after).To(HaveLen(len(before)))
	var names []string
	for name, p := range after {
		Expect(before).To(HaveKey(name))
		Expect(p.UID).NotTo(Equal(before[name].UID), "pod %s was replaced", name)
		Expect(rec.NewPods).To(HaveKeyWithValue(name, p.UID))
		main := p.Spec.Containers[0].Name
		Expect(framework.EnvOf(p, main)).To(Equal(framework.EnvOf(before[name], main)), "the variables of pod %s after the restart", name)
		if kubeutil.ContainerOf(p, wait.ContainerName) != nil {
			// Only once every dependency answered again did this
			// pod's program start.
			for _, t := range r.f.WaitTargets(ctx, p) {
				dep := after[strings.SplitN(t, ".", 2)[0]]
				Expect(dep).NotTo(BeNil(), "pod of wait target %s", t)
				Expect(startedAt(p)).NotTo(BeTemporally("<", startedAt(dep)), "pod %s started before %s, which it waits for", name, dep.Name)
			}
		}
		names = append(names, name)
	}
	return r.lastJoined(names...).Sub(at), summary
}

// slowRun is a training Job started by startSlowed.
type slowRun struct {
	f   *framework.Framework
	ex  training.Example
	job *batch.Job
	// follower follows every pod's program from its start; a Job's
	// completion deletes pods still running, and a restarted Job's pods
	// come back under the same names.
	follower *training.LogFollower
	// stamped are the followed logs with timestamps, set by judge.
	stamped map[string]string
	// everyIncarnation has judge read, for each pod name, the logs of every
	// pod of that name, oldest first, as one (elastic training, where no
	// Job restart separates the runs): the round that trained may have
	// ended just as the fault hit, its rank then printed by the pod the
	// fault deleted, while the replacement came too late to print anything.
	everyIncarnation bool
}

// startSlowed creates the Job of example file, slowed (slowed) and changed
// by edit, on the real node, follows its pods' logs, and returns once the
// log of its pod progressPod (after the Job's name and "-") matches progress.
func startSlowed(ctx context.Context, f *framework.Framework, file string, edit func(*batch.Job), progressPod string, progress *regexp.Regexp) *slowRun {
	GinkgoHelper()
	framework.RequireRealNode()
	requireTrainingImage()
	ex := exampleOf(file)
	createProgramConfigMap(ctx, f, ex)
	job := slowed(framework.OnRealNode(framework.LoadJob(ex.File)))
	if edit != nil {
		edit(job)
	}
	created := f.CreateJob(ctx, job)
	r := &slowRun{f: f, ex: ex, job: created, follower: f.FollowLogs(ctx, created, ex.Container)}
	By("waiting for training to be past its first steps")
	waitLog(ctx, f, created, created.Name+"-"+progressPod, progress)
	return r
}

// pods returns the Job's pods by name, each the last one of its name and as
// last seen (also if deleted since).
func (r *slowRun) pods() map[string]*corev1.Pod {
	out := map[string]*corev1.Pod{}
	for _, p := range r.f.PodsOf(r.job) {
		out[p.Name] = p
	}
	return out
}

// judge stops following the logs once the Job has completed and judges the
// last run of its pods.
func (r *slowRun) judge(ctx context.Context) string {
	GinkgoHelper()
	r.stamped = r.follower.CollectStamped(time.Minute)
	followed := map[string]string{}
	for name, log := range r.stamped {
		followed[name] = training.Unstamped(log)
	}
	if r.everyIncarnation {
		for name, logs := range r.follower.Incarnations() {
			followed[name] = training.Unstamped(strings.Join(logs, ""))
		}
	}
	pods := r.f.PodsOf(r.job)
	run := training.Run{Pods: pods, Logs: podLogs(ctx, r.f, pods, r.ex.Container, followed), ConfigMaps: pluginConfigMaps(r.f, r.ex, r.job)}
	summary, err := r.ex.Judge(run)
	Expect(err).NotTo(HaveOccurred(), "the training run of Job %s", r.job.Name)
	return summary
}

// expectSamePods checks that the Job's pods are those of before: none was
// replaced.
func (r *slowRun) expectSamePods(before map[string]*corev1.Pod) {
	GinkgoHelper()
	after := r.pods()
	Expect(after).To(HaveLen(len(before)), "pods of Job %s", r.job.Name)
	for name, p := range after {
		Expect(before).To(HaveKey(name))
		Expect(p.UID).To(Equal(before[name].UID), "pod %s was not replaced", name)
	}
}

// report prints a fault's outcome and adds it to the suite's report.
func report(line string) {
	GinkgoWriter.Println(line)
	AddReportEntry("recovery", line)
}

// elasticProgress is rank 0's second epoch under torchrun's --tee.
var elasticProgress = regexp.MustCompile(`(?m)^(\[default0\]:)?epoch 2 loss`)

var _ = Describe("Faults during elastic PyTorch training on the real node", Label("faults"), faultRounds(), func() {
	f := framework.New("faults-elastic")
	const file = "example/pytorch/pytorch-digits-elastic.yaml"

	It("a lost worker (--min-nodes=2 --max-nodes=3, no Job policy): torchrun re-rendezvouses without a Job restart, the replacement pod joins a later round, training completes and nothing is left", func(ctx SpecContext) {
		run := startSlowed(ctx, f, file, nil, "master-0", elasticProgress)
		run.everyIncarnation = true
		job := run.job
		before := jobPods(ctx, f, job)
		victim := before[job.Name+"-worker-1"]
		Expect(victim).NotTo(BeNil())
		at := deletePod(ctx, f, victim)
		rec := f.WatchRecovery(ctx, job, at, []*corev1.Pod{victim}).Wait(framework.RealJobCompletedTimeout)
		Expect(rec.Completed).NotTo(BeZero(), "Job %s completed after the fault (%s)", job.Name, rec)
		Expect(rec.RetryCount).To(BeZero(), "Job %s restarted (status.retryCount)", job.Name)
		Expect(rec.Restarting).To(BeZero(), "Job %s went through Restarting", job.Name)

		// Volcano re-creates a deleted pod of a running Job.
		Expect(rec.NewPods).To(HaveKey(victim.Name), "a replacement for pod %s", victim.Name)
		Expect(rec.NewPods[victim.Name]).NotTo(Equal(victim.UID))
		summary := run.judge(ctx)
		for name, p := range run.pods() {
			if name != victim.Name {
				Expect(p.UID).To(Equal(before[name].UID), "pod %s kept", name)
			}
		}
		master := training.Unstamped(run.stamped[job.Name+"-master-0"])
		Expect(joinedCount(master)).To(BeNumerically(">=", 2), "the master's agent started its worker again in a later round")
		// The replacement joins the round that trains when it arrives before
		// that round closes; else it waits for a next one, and the Job's
		// completion deletes it.
		outcome := "came after the round that trained and was deleted with the Job's completion"
		if joinedCount(training.Unstamped(run.stamped[victim.Name])) > 0 {
			outcome = fmt.Sprintf("joined a later round %.1fs after the fault", run.lastJoined(victim.Name).Sub(at).Seconds())
		}
		report(fmt.Sprintf("an elastic PyTorch Job's worker pod deleted: %s; the replacement %s; %s", rec, outcome, summary))

		By("deleting the Job: nothing of it is left")
		f.ExpectNothingLeft(ctx, job)
	}, SpecTimeout(framework.RealSpecTimeout))

	It("a lost master, the rendezvous host: the other agents fail, and with PodEvicted, PodFailed → RestartJob on the Job (as docs/plugins/pytorch.md advises) it restarts and completes", func(ctx SpecContext) {
		run := startSlowed(ctx, f, file, func(j *batch.Job) {
			j.Spec.Policies = append(j.Spec.Policies, restartOnPodLoss)
		}, "master-0", elasticProgress)
		job := run.job
		before := jobPods(ctx, f, job)
		victim := before[job.Name+"-master-0"]
		at := deletePod(ctx, f, victim)
		rec := f.WatchRecovery(ctx, job, at, slices.Collect(maps.Values(before))).Wait(framework.RealJobCompletedTimeout)
		Expect(rec.Completed).NotTo(BeZero(), "Job %s completed after the fault (%s)", job.Name, rec)
		Expect(rec.RetryCount).To(BeEquivalentTo(1), "status.retryCount of Job %s", job.Name)
		summary := run.judge(ctx)
		var names []string
		for name := range run.pods() {
			names = append(names, name)
		}
		joined := run.lastJoined(names...).Sub(at)
		report(fmt.Sprintf("an elastic PyTorch Job's master pod deleted: %s; every rank joined again %.1fs after the fault; %s", rec, joined.Seconds(), summary))

		By("deleting the Job: nothing of it is left")
		f.ExpectNothingLeft(ctx, job)
	}, SpecTimeout(framework.RealSpecTimeout))
})

// componentBackTimeout bounds waiting for a restarted component to serve.
const componentBackTimeout = 2 * time.Minute

// webhookBackWithin is how soon after being killed the webhook manager must
// admit Jobs again (issue 27): its start is certificates, a few informers and
// the listener.
const webhookBackWithin = 10 * time.Second

// waitBack waits until component, killed and started again at `at`, serves
// again, and returns how long that took from `at`: kube-apiserver's /readyz,
// vc-controller-manager's /healthz, vc-webhook-manager mutating a dry-run Job,
// containerd answering `ctr version`, the kubelet renewing its node Lease
// after `at`.
func waitBack(ctx context.Context, f *framework.Framework, component string, at time.Time) time.Duration {
	GinkgoHelper()
	cl := framework.Cluster().Local
	var check func(ctx context.Context) error
	switch component {
	case localcluster.KubeAPIServer, localcluster.Etcd:
		// The API server's /readyz includes its etcd check.
		check = func(ctx context.Context) error {
			_, err := f.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			return err
		}
	case localcluster.ControllerManager:
		url := fmt.Sprintf("http://127.0.0.1:%d/healthz", cl.Ports[localcluster.ControllerManagerHealthz])
		check = func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s", url, resp.Status)
			}
			return nil
		}
	case localcluster.WebhookManager:
		check = func(ctx context.Context) error {
			probe := burstJob("back")
			probe.Namespace = f.Namespace
			j, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				return err
			}
			if !mutated(j) {
				return fmt.Errorf("Job %s admitted without the svc plugin", j.Name)
			}
			return nil
		}
	case localcluster.Containerd:
		check = func(ctx context.Context) error {
			out, err := exec.CommandContext(ctx, cl.RealNode.Ctr, "--address", cl.RealNode.ContainerdSocket, "version").CombinedOutput()
			if err != nil {
				return fmt.Errorf("ctr version: %v: %s", err, out)
			}
			return nil
		}
	case localcluster.Kubelet:
		// The node's Ready condition is only rewritten when it changes; the
		// node Lease is renewed by the kubelet at its start and every 10 s.
		check = func(ctx context.Context) error {
			lease, err := f.Kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, localcluster.RealNodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.Time.After(at) {
				return fmt.Errorf("the kubelet of node %s has not renewed its Lease since %s", localcluster.RealNodeName, at.Format(time.RFC3339Nano))
			}
			return nil
		}
	default:
		Fail("no readiness check for " + component)
	}
	framework.Eventually(ctx, check, componentBackTimeout).Should(Succeed(), "%s back", component)
	return time.Since(at)
}

// burstJob is a small tensorflow Job for KWOK nodes that asks for nothing
// but the plugin: admitted, the webhook has added the svc plugin.
func burstJob(name string) *batch.Job {
	return framework.KeepRunning(jobtest.MakeJob(name).Plugin("tensorflow").
		Task(jobtest.MakeTask("ps", 1).Container("tensorflow").Resource("cpu", "10m").Obj()).
		Task(jobtest.MakeTask("worker", 2).Container("tensorflow").Resource("cpu", "10m").Obj()).
		Obj())
}

// newJobSteps are when a Job created after a kube-apiserver restart passed
// each step of its start; zero for a step not reached.
type newJobSteps struct {
	created, inqueue, podsCreated, bound time.Time
}

// followNewJob polls a Job's PodGroup and pods with direct reads (the suite's
// own informers back off after an API server restart as the controllers' do)
// every 250 ms until all its pods are bound, up to
// framework.AfterAPIServerRestartTimeout, and returns when each step was
// first seen. It fails the spec with the steps reached when time runs out.
func followNewJob(ctx context.Context, f *framework.Framework, job *batch.Job) newJobSteps {
	GinkgoHelper()
	steps := newJobSteps{created: job.CreationTimestamp.Time}
	if steps.created.IsZero() {
		steps.created = time.Now()
	}
	want := framework.TotalReplicas(job)
	var last string
	Eventually(ctx, func() bool {
		if steps.inqueue.IsZero() {
			if pg, err := f.PodGroupOf(ctx, job); err == nil && pg.Status.Phase != "" && pg.Status.Phase != scheduling.PodGroupPending {
				steps.inqueue = time.Now()
			} else if err == nil {
				last = fmt.Sprintf("PodGroup %s: phase %q, conditions %+v", pg.Name, pg.Status.Phase, pg.Status.Conditions)
			} else {
				last = fmt.Sprintf("PodGroup: %v", err)
			}
		}
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batch.JobNameKey + "=" + job.Name})
		if err != nil {
			last = fmt.Sprintf("listing pods: %v", err)
			return false
		}
		bound := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if len(pods.Items) >= want && steps.podsCreated.IsZero() {
			steps.podsCreated = time.Now()
		}
		if bound >= want {
			steps.bound = time.Now()
			return true
		}
		if !steps.inqueue.IsZero() {
			last = fmt.Sprintf("%d of %d pods created, %d bound", len(pods.Items), want, bound)
		}
		return false
	}).WithTimeout(framework.AfterAPIServerRestartTimeout).WithPolling(250*time.Millisecond).Should(BeTrue(), func() string {
		state := ""
		if j, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Get(context.Background(), job.Name, metav1.GetOptions{}); err == nil {
			state = fmt.Sprintf("; Job state %+v", j.Status.State)
		}
		return fmt.Sprintf("Job %s created after the restart: %s%s; PodGroup Inqueue %s, pods created %s after its creation",
			job.Name, last, state, since(steps.created, steps.inqueue), since(steps.created, steps.podsCreated))
	})
	return steps
}

// since formats t-from in seconds, or "never" for a zero t.
func since(from, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.1fs", t.Sub(from).Seconds())
}

// mutated reports whether our webhook mutated an admitted burstJob: the
// svc plugin it adds, and the worker's TaskCompleted → CompleteJob.
func mutated(job *batch.Job) bool {
	if _, ok := job.Spec.Plugins["svc"]; !ok {
		return false
	}
	for _, t := range job.Spec.Tasks {
		if t.Name == "worker" {
			for _, p := range t.Policies {
				if p.Event == busv1alpha1.TaskCompletedEvent && p.Action == busv1alpha1.CompleteJobAction {
					return true
				}
			}
		}
	}
	return false
}

var _ = Describe("Our managers killed (SIGKILL) and started again", Label("faults"), faultRounds(), func() {
	f := framework.New("faults-managers")

	It("vc-controller-manager, mid-run on the real node: no pod replaced, no Job restart, training completes and nothing is left", func(ctx SpecContext) {
		run := startSlowed(ctx, f, "example/pytorch/pytorch-digits-ddp.yaml", nil, "master-0", ddpProgress)
		job := run.job
		before := jobPods(ctx, f, job)
		at := framework.RestartComponent(localcluster.ControllerManager)
		back := waitBack(ctx, f, localcluster.ControllerManager, at)
		f.WaitJobPhaseOrDump(ctx, job, batch.Completed, framework.RealJobCompletedTimeout)
		summary := run.judge(ctx)
		run.expectSamePods(before)
		j, err := f.GetJob(ctx, job.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(j.Status.RetryCount).To(BeZero(), "status.retryCount of Job %s", job.Name)
		report(fmt.Sprintf("vc-controller-manager killed mid-run: healthy again after %.1fs; %s", back.Seconds(), summary))
		f.ExpectNothingLeft(ctx, job)
	}, SpecTimeout(framework.RealSpecTimeout))

	It("vc-controller-manager, while a 300-worker Job's pods are being created: every pod exactly once, one cluster ConfigMap, the Job runs", func(ctx SpecContext) {
		job := framework.KeepRunning(jobtest.MakeJob("large-restart").Plugin("tensorflow").
			Task(jobtest.MakeTask("ps", 1).Container("tensorflow").Resource("cpu", "10m").Obj()).
			Task(jobtest.MakeTask("worker", largeJobWorkers).Container("tensorflow").Resource("cpu", "10m").Obj()).
			Obj())
		job = f.CreateJob(ctx, job)
		framework.Eventually(ctx, func() int { return len(f.PodsOf(job)) }, framework.PodsCreatedTimeout).
			Should(BeNumerically(">=", 30), "pods of Job %s being created", job.Name)
		created := len(f.PodsOf(job))
		at := framework.RestartComponent(localcluster.ControllerManager)
		back := waitBack(ctx, f, localcluster.ControllerManager, at)
		pods := f.WaitPodsCreated(ctx, job, 0)
		Expect(pods).To(HaveLen(largeJobWorkers+1), "pods of Job %s", job.Name)
		uids := map[types.UID]bool{}
		// The default --tf-config=auto stores a cluster this large by
		// reference.
		for _, p := range pods {
			uids[p.UID] = true
			Expect(framework.EnvOf(p, "tensorflow")[tensorflow.EnvTFConfig]).To(ContainSubstring(tfReference), "TF_CONFIG of pod %s", p.Name)
		}
		Expect(uids).To(HaveLen(largeJobWorkers+1), "one pod per task index, none created twice")
		cms, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, cm := range cms.Items {
			if strings.HasPrefix(cm.Name, job.Name+"-") {
				names = append(names, cm.Name)
			}
		}
		Expect(names).To(ContainElement(tensorflow.ConfigMapName(job)), "the cluster ConfigMap")
		j, err := f.GetJob(ctx, job.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(j.Status.RetryCount).To(BeZero())
		report(fmt.Sprintf("vc-controller-manager killed after %d of %d pods were created: healthy again after %.1fs, all %d pods exist once; ConfigMaps %v",
			created, largeJobWorkers+1, back.Seconds(), len(pods), names))
		f.ExpectNothingLeft(ctx, job)
	}, SpecTimeout(framework.SpecTimeout))

	It("vc-controller-manager, twice while 500 Jobs are created: every Job gets each of its pods once and completes, none stays Pending", func(ctx SpecContext) {
		const jobs, workers = 500, 8
		// KWOK's default stage completes the pods at once, so that 1,000
		// pods fit the four KWOK nodes' 440 pod slots in turn.
		next := make(chan int)
		errs := make(chan error, jobs)
		// A create the API server could not finish (a webhook call or etcd
		// that did not answer in time: 500 InternalError, 504, 429, 503) says
		// nothing of the controller restarted here, and a user's client would
		// send it again; so does the spec, up to three times, and it reports
		// each such error. Any other error fails the spec.
		var mu sync.Mutex
		var retried []string
		create := func(j *batch.Job) error {
			try := 0
			err := retry.OnError(utilwait.Backoff{Steps: 3}, func(err error) bool {
				if !apierrors.IsInternalError(err) && !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) &&
					!apierrors.IsTooManyRequests(err) && !apierrors.IsServiceUnavailable(err) {
					return false
				}
				mu.Lock()
				retried = append(retried, fmt.Sprintf("Job %s, try %d at %s: %v", j.Name, try, time.Now().Format(time.StampMilli), err))
				mu.Unlock()
				GinkgoWriter.Printf("creating Job %s, try %d: %v\n", j.Name, try, err)
				return true
			}, func() error {
				try++
				_, err := f.TryCreateJob(ctx, j)
				if try > 1 && apierrors.IsAlreadyExists(err) {
					return nil // an earlier try was stored after all
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("Job %s at %s: %w", j.Name, time.Now().Format(time.StampMilli), err)
			}
			return nil
		}
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := range next {
					j := jobtest.MakeJob(fmt.Sprintf("many-%03d", i)).Plugin("tensorflow").
						Task(jobtest.MakeTask("ps", 1).Container("tensorflow").Resource("cpu", "10m").Obj()).
						Task(jobtest.MakeTask("worker", 1).Container("tensorflow").Resource("cpu", "10m").Obj()).
						Obj()
					errs <- create(j)
				}
			}()
		}
		var restarts []time.Duration
		var restartedAt []string
		started := time.Now()
		for i := 0; i < jobs; i++ {
			if i == jobs/3 || i == 2*jobs/3 {
				at := framework.RestartComponent(localcluster.ControllerManager)
				restartedAt = append(restartedAt, at.Format(time.StampMilli))
				restarts = append(restarts, waitBack(ctx, f, localcluster.ControllerManager, at))
			}
			next <- i
		}
		close(next)
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred(), "creating a Job (restarts at %v; creates sent again: %q)", restartedAt, retried)
		}
		created := time.Since(started)

		var states map[string]batch.JobPhase
		Eventually(ctx, func() int {
			list, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			states = map[string]batch.JobPhase{}
			done := 0
			for _, j := range list.Items {
				states[j.Name] = j.Status.State.Phase
				if j.Status.State.Phase == batch.Completed {
					done++
				}
			}
			return done
		}).WithTimeout(7*time.Minute).WithPolling(2*time.Second).Should(Equal(jobs), func() string {
			byPhase := map[batch.JobPhase][]string{}
			for name, phase := range states {
				if phase != batch.Completed && len(byPhase[phase]) < 5 {
					byPhase[phase] = append(byPhase[phase], name)
				}
			}
			return fmt.Sprintf("Jobs not Completed, by phase (up to 5 each): %v", byPhase)
		})
		allDone := time.Since(started)

		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		perJob := map[string][]string{}
		for _, p := range pods.Items {
			name := p.Labels[batch.JobNameKey]
			perJob[name] = append(perJob[name], p.Name)
			Expect(framework.EnvOf(&p, "tensorflow")[tensorflow.EnvTFConfig]).To(ContainSubstring(name+"-worker-0."+name), "TF_CONFIG of pod %s", p.Name)
		}
		Expect(perJob).To(HaveLen(jobs), "Jobs with pods")
		for name, ps := range perJob {
			slices.Sort(ps)
			Expect(ps).To(Equal([]string{name + "-ps-0", name + "-worker-0"}), "pods of Job %s", name)
		}
		list, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, j := range list.Items {
			Expect(j.Status.RetryCount).To(BeZero(), "status.retryCount of Job %s", j.Name)
		}
		report(fmt.Sprintf("vc-controller-manager killed twice while %d Jobs were created (%.0fs; healthy again after %.1fs and %.1fs; %d creates sent again after an error of the API server: %q): every Job Completed %.0fs after the first create, each with its 2 pods once, TF_CONFIG naming its own hosts, no retry",
			jobs, created.Seconds(), restarts[0].Seconds(), restarts[1].Seconds(), len(retried), retried, allDone.Seconds()))
	}, SpecTimeout(10*time.Minute))

	It("vc-webhook-manager, during a burst of Job creates: every Job is admitted fully mutated or refused, never unmutated, and it admits again within 10 s", func(ctx SpecContext) {
		const burst, workers = 40, 4
		type result struct {
			job  *batch.Job
			err  error
			sent time.Time
		}
		results := make(chan result, burst)
		next := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := range next {
					sent := time.Now()
					j, err := f.TryCreateJob(ctx, burstJob(fmt.Sprintf("burst-%d", i)))
					results <- result{j, err, sent}
				}
			}()
		}
		// One create every 25 ms: the burst outlasts the manager's restart,
		// so that it shows both the refusals and the admissions after it.
		var at time.Time
		for i := 0; i < burst; i++ {
			if i == burst/4 {
				at = framework.RestartComponent(localcluster.WebhookManager)
			}
			next <- i
			time.Sleep(25 * time.Millisecond)
		}
		close(next)
		wg.Wait()
		close(results)
		admitted, refused := 0, 0
		var lastRefused time.Time
		var admittedAfter []time.Time
		for r := range results {
			if r.err != nil {
				refused++
				if r.sent.After(lastRefused) {
					lastRefused = r.sent
				}
				continue
			}
			admitted++
			Expect(mutated(r.job)).To(BeTrue(), "Job %s admitted without our mutation", r.job.Name)
			if r.sent.After(at) {
				admittedAfter = append(admittedAfter, r.sent)
			}
		}
		waitBack(ctx, f, localcluster.WebhookManager, at)
		// Back: every create sent after the last refused one was admitted
		// (kube-apiserver retries a webhook call refused at connect, so a
		// create sent while the manager starts may still be admitted).
		var down time.Duration
		if refused > 0 {
			down = lastRefused.Sub(at)
		}
		Expect(down).To(BeNumerically("<", webhookBackWithin), "vc-webhook-manager refusing creates after being killed")
		Expect(admittedAfter).NotTo(BeEmpty(), "no create sent after the kill was admitted within the burst")
		Expect(admitted).To(BeNumerically(">", 0))
		report(fmt.Sprintf("vc-webhook-manager killed during %d Job creates (one every 25 ms): %d admitted fully mutated, %d refused (fail closed), none unmutated; the last refused create was sent %.2fs after the kill, every later one admitted",
			burst, admitted, refused, down.Seconds()))
	}, SpecTimeout(framework.SpecTimeout))
})

var _ = Describe("The real node's runtime and the API server restarted", Label("faults"), faultRounds(), func() {
	f := framework.New("faults-node")

	It("containerd and the kubelet, with training pods running: the pods keep running, training completes, and a new Job starts there afterwards", func(ctx SpecContext) {
		run := startSlowed(ctx, f, "example/pytorch/pytorch-digits-ddp.yaml", func(j *batch.Job) {
			j.Spec.Policies = append(j.Spec.Policies, restartOnPodLoss)
		}, "master-0", ddpProgress)
		job, ex := run.job, run.ex
		before := jobPods(ctx, f, job)
		at := framework.RestartComponent(localcluster.Containerd)
		containerd := waitBack(ctx, f, localcluster.Containerd, at)
		at2 := framework.RestartComponent(localcluster.Kubelet)
		kubelet := waitBack(ctx, f, localcluster.Kubelet, at2)
		f.WaitJobPhaseOrDump(ctx, job, batch.Completed, framework.RealJobCompletedTimeout)
		summary := run.judge(ctx)
		run.expectSamePods(before)

		By("running the same Job again: new sandboxes and wait containers start on the restarted node")
		again := framework.OnRealNode(framework.LoadJob(ex.File))
		again.Name = "after-restart"
		started := time.Now()
		again = f.CreateJob(ctx, again)
		waitCompleted(ctx, f, again, framework.RealJobCompletedTimeout)
		report(fmt.Sprintf("containerd restarted (back in %.1fs), then the kubelet (node Lease renewed %.1fs after its kill) with a DDP Job running: no pod replaced; %s; a new Job completed %.0fs after its creation",
			containerd.Seconds(), kubelet.Seconds(), summary, time.Since(started).Seconds()))
		f.ExpectNothingLeft(ctx, job)
		f.ExpectNothingLeft(ctx, again)
	}, SpecTimeout(framework.RealSpecTimeout))

	It("the node lost mid-run (its kubelet stopped past the node-monitor grace period): the node goes NotReady, its pods are evicted, and once it is back the Job restarts (PodEvicted, PodFailed → RestartJob), its new pods get the same contract and wait again, training completes", func(ctx SpecContext) {
		pause := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: nodeLossPauseConfigMap, Namespace: f.Namespace},
			Data:       map[string]string{"EPOCH_PAUSE": nodeLossEpochPause},
		}
		pause, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Create(ctx, pause, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred(), "creating ConfigMap %s", nodeLossPauseConfigMap)
		run := startSlowed(ctx, f, "example/pytorch/pytorch-digits-ddp.yaml", func(j *batch.Job) {
			j.Spec.Policies = append(j.Spec.Policies, restartOnPodLoss)
			// The first run must outlast the node's absence and the kill
			// when it returns, or the pods would report Succeeded and the
			// Job would complete without a restart.
			setEnvFrom(j, "EPOCH_PAUSE", nodeLossPauseConfigMap, "EPOCH_PAUSE")
			tolerateNodeLoss(j, nodeLossToleration)
		}, "master-0", ddpProgress)
		job := run.job
		// The running containers keep the pause they started with; the
		// restarted ones read this.
		pause.Data["EPOCH_PAUSE"] = faultEpochPause
		_, err = f.Kube.CoreV1().ConfigMaps(f.Namespace).Update(ctx, pause, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred(), "updating ConfigMap %s", nodeLossPauseConfigMap)
		before := jobPods(ctx, f, job)
		var node string
		for _, p := range before {
			node = p.Spec.NodeName
		}

		By("stopping the kubelet (SIGSTOP): its containers run on, the node answers nothing")
		at := time.Now()
		resume := framework.PauseComponent(localcluster.Kubelet)
		watch := f.WatchRecovery(ctx, job, at, slices.Collect(maps.Values(before)))
		var notReady, evicted time.Duration
		Eventually(func(g Gomega) {
			n, err := f.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					g.Expect(c.Status).NotTo(Equal(corev1.ConditionTrue), "node %s Ready", node)
				}
			}
		}).WithContext(ctx).WithTimeout(nodeLossTimeout).WithPolling(time.Second).Should(Succeed())
		notReady = time.Since(at)
		By("waiting for the taint-based eviction of the Job's pods (tolerationSeconds " + nodeLossToleration.String() + ")")
		Eventually(func(g Gomega) {
			for name, p := range before {
				got, err := f.Kube.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got.UID).To(Equal(p.UID), "pod %s", name)
				g.Expect(got.DeletionTimestamp).NotTo(BeNil(), "pod %s marked for deletion", name)
			}
		}).WithContext(ctx).WithTimeout(nodeLossTimeout).WithPolling(time.Second).Should(Succeed())
		evicted = time.Since(at)

		By("continuing the kubelet (SIGCONT): the node returns, the evicted pods go, the Job restarts")
		resume()
		back := time.Since(at)
		rec := watch.Wait(framework.RealJobCompletedTimeout)
		joined, summary := run.expectRestarted(ctx, rec, before, at)
		report(fmt.Sprintf("node lost (kubelet stopped) with a DDP Job running: NotReady %.1fs after the stop, pods marked for eviction at %.1fs, kubelet continued at %.1fs; %s; every rank joined again %.1fs after the stop; %s",
			notReady.Seconds(), evicted.Seconds(), back.Seconds(), rec, joined.Seconds(), summary))
		f.ExpectNothingLeft(ctx, job)
	}, SpecTimeout(framework.RealSpecTimeout))

	It("kube-apiserver, mid-run: informers resync, training completes without a restart, a new Job gets its pods", func(ctx SpecContext) {
		run := startSlowed(ctx, f, "example/pytorch/pytorch-digits-ddp.yaml", nil, "master-0", ddpProgress)
		job := run.job
		before := jobPods(ctx, f, job)
		at := framework.RestartComponent(localcluster.KubeAPIServer)
		back := waitBack(ctx, f, localcluster.KubeAPIServer, at)
		f.WaitJobPhaseOrDump(ctx, job, batch.Completed, framework.RealJobCompletedTimeout)
		summary := run.judge(ctx)
		run.expectSamePods(before)

		By("creating a Job on the KWOK nodes: the controllers act on it")
		ready := at.Add(back)
		small := f.CreateJob(ctx, burstJob("after-apiserver"))
		steps := followNewJob(ctx, f, small)
		report(fmt.Sprintf("kube-apiserver killed mid-run: ready again in %.1fs; no pod replaced; %s; a new Job created %.1fs after the server was ready: PodGroup Inqueue %s, pods created %s, all bound %s after readiness (client-go's relist backoff, docs/troubleshooting.md)",
			back.Seconds(), summary, steps.created.Sub(ready).Seconds(), since(ready, steps.inqueue), since(ready, steps.podsCreated), since(ready, steps.bound)))
		f.ExpectNothingLeft(ctx, job)
		f.ExpectNothingLeft(ctx, small)
	}, SpecTimeout(framework.RealSpecTimeout))
})

var _ = Describe("Volcano's scheduler and etcd killed (SIGKILL) and started again", Label("faults"), faultRounds(), func() {
	f := framework.New("faults-volcano")

	It("vc-scheduler, while a 300-worker gang is being bound: every pod bound once, none replaced, the Job completes", func(ctx SpecContext) {
		job := jobtest.MakeJob("gang-bind").Plugin("tensorflow").
			Task(jobtest.MakeTask("ps", 1).Container("tensorflow").Resource("cpu", "10m").Obj()).
			Task(jobtest.MakeTask("worker", largeJobWorkers).Container("tensorflow").Resource("cpu", "10m").Obj()).
			Obj()
		job = f.CreateJob(ctx, job)
		want := framework.TotalReplicas(job)
		// Direct reads every 20 ms: the gang is bound within seconds, and
		// the kill must land inside that.
		list := func(ctx context.Context) []corev1.Pod {
			pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batch.JobNameKey + "=" + job.Name})
			Expect(err).NotTo(HaveOccurred())
			return pods.Items
		}
		countBound := func(pods []corev1.Pod) int {
			n := 0
			for _, p := range pods {
				if p.Spec.NodeName != "" {
					n++
				}
			}
			return n
		}
		var boundAtKill int
		Eventually(ctx, func() int {
			boundAtKill = countBound(list(ctx))
			return boundAtKill
		}).WithTimeout(framework.PodsCreatedTimeout+framework.PodsBoundTimeout).WithPolling(20*time.Millisecond).
			Should(BeNumerically(">", 0), "the first pod of Job %s bound", job.Name)
		at := framework.RestartComponent(localcluster.Scheduler)
		var pods []corev1.Pod
		Eventually(ctx, func() int {
			pods = list(ctx)
			return countBound(pods)
		}).WithTimeout(framework.PodsBoundTimeout).WithPolling(250*time.Millisecond).
			Should(Equal(want), "pods of Job %s bound after vc-scheduler's restart", job.Name)
		allBound := time.Since(at)
		f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)

		uids, names := map[types.UID]bool{}, map[string]bool{}
		for _, p := range pods {
			uids[p.UID], names[p.Name] = true, true
		}
		Expect(uids).To(HaveLen(want), "one pod per task index, none created twice")
		Expect(names).To(HaveLen(want))
		evs, err := f.Kube.CoreV1().Events(f.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=Scheduled"})
		Expect(err).NotTo(HaveOccurred())
		scheduled := map[string]int{}
		for _, ev := range evs.Items {
			// vc-scheduler also records Scheduled on the PodGroup.
			if ev.InvolvedObject.Kind == "Pod" {
				scheduled[ev.InvolvedObject.Name] += max(1, int(ev.Count))
			}
		}
		for name, n := range scheduled {
			Expect(n).To(Equal(1), "Scheduled events of pod %s", name)
		}
		j, err := f.GetJob(ctx, job.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(j.Status.RetryCount).To(BeZero(), "status.retryCount of Job %s", job.Name)
		report(fmt.Sprintf("vc-scheduler killed with %d of %d pods of a gang bound: all bound %.1fs after the kill, no pod with two Scheduled events (%d pods have one; the killed scheduler's unsent events are lost), no pod replaced, the Job completed",
			boundAtKill, want, allBound.Seconds(), len(scheduled)))
		f.ExpectNothingLeft(ctx, job)
	}, SpecTimeout(framework.SpecTimeout))

	It("etcd, mid-run on the real node: the API server serves again, training completes without a restart, a new Job gets its pods", func(ctx SpecContext) {
		run := startSlowed(ctx, f, "example/pytorch/pytorch-digits-ddp.yaml", nil, "master-0", ddpProgress)
		job := run.job
		before := jobPods(ctx, f, job)
		at := framework.RestartComponent(localcluster.Etcd)
		back := waitBack(ctx, f, localcluster.Etcd, at)
		f.WaitJobPhaseOrDump(ctx, job, batch.Completed, framework.RealJobCompletedTimeout)
		summary := run.judge(ctx)
		run.expectSamePods(before)
		j, err := f.GetJob(ctx, job.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(j.Status.RetryCount).To(BeZero(), "status.retryCount of Job %s", job.Name)

		By("creating a Job on the KWOK nodes: the controllers act on it")
		ready := at.Add(back)
		small := f.CreateJob(ctx, burstJob("after-etcd"))
		steps := followNewJob(ctx, f, small)
		report(fmt.Sprintf("etcd killed mid-run: the API server ready again %.1fs after the kill; no pod replaced, no Job restart; %s; a new Job created %.1fs after: PodGroup Inqueue %s, pods created %s, all bound %s after readiness",
			back.Seconds(), summary, steps.created.Sub(ready).Seconds(), since(ready, steps.inqueue), since(ready, steps.podsCreated), since(ready, steps.bound)))
		f.ExpectNothingLeft(ctx, job)
		f.ExpectNothingLeft(ctx, small)
	}, SpecTimeout(framework.RealSpecTimeout))
})
