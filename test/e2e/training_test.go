package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/test/localcluster"
)

// trainingImageTar is the training image (python3-torch 1.13, python3-sklearn)
// the real node loads at cluster start, built by `make node-images-training`.
const trainingImageTar = "_output/images/training.tar"

// The training program and its ConfigMap, as the example Jobs mount it.
const (
	trainingProgram   = "example/pytorch/train_digits.py"
	trainingConfigMap = "pytorch-digits"
	// trainingContainer is the main container of every pod of the examples.
	trainingContainer = "pytorch"
)

// trainingJob is one example Job of train_digits.py and the world sizes it
// may train with.
type trainingJob struct {
	name, file         string
	minWorld, maxWorld int
	// elastic: torchrun's elastic agent assigns the ranks, so a pod's rank is
	// not its injected RANK.
	elastic bool
}

var trainingJobs = []trainingJob{
	{name: "DDP with env://, master and 2 workers", file: "example/pytorch/pytorch-digits-ddp.yaml", minWorld: 3, maxWorld: 3},
	{name: "torchrun from the PET_* variables only, worker-only", file: "example/pytorch/pytorch-digits-torchrun.yaml", minWorld: 3, maxWorld: 3},
	{name: "elastic torchrun with c10d, --min-nodes=2 --max-nodes=3", file: "example/pytorch/pytorch-digits-elastic.yaml", minWorld: 2, maxWorld: 3, elastic: true},
}

// linePrefix is what torchrun's --tee puts before each line of its workers'
// output ("[default0]:"); the examples' torchrun needs it (see their YAML).
const linePrefix = `(?m)^(?:\[[a-z]+[0-9]+\]:)?`

// The lines train_digits.py prints.
var (
	epochLine    = regexp.MustCompile(linePrefix + `epoch (\d+) loss ([0-9.]+)$`)
	accuracyLine = regexp.MustCompile(linePrefix + `test accuracy ([0-9.]+)$`)
	verdictLine  = regexp.MustCompile(linePrefix + `rank (\d+): parameters (agree|DIFFER.*) across (\d+) ranks \(checksum (\S+)\)$`)
)

// requireTrainingImage fails the spec when the training image was not built:
// without it the pods would wait for an image nobody can pull.
func requireTrainingImage() {
	GinkgoHelper()
	_, err := os.Stat(framework.Path(trainingImageTar))
	Expect(err).NotTo(HaveOccurred(), "the training image %s is missing: run `make node-images-training` (about 10 minutes from a cold cache), then start the suite again", trainingImageTar)
}

// createProgramConfigMap creates the ConfigMap name holding the program file
// (a path under the repository) under its base name, as the example Jobs
// mount it: what `kubectl create configmap <name> --from-file=<program>` does.
func createProgramConfigMap(ctx context.Context, f *framework.Framework, name, program string) {
	GinkgoHelper()
	data, err := os.ReadFile(framework.Path(program))
	Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.Namespace},
		Data:       map[string]string{filepath.Base(program): string(data)},
	}
	_, err = f.Kube.CoreV1().ConfigMaps(f.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred(), "creating ConfigMap %s", name)
}

// waitTrained waits until job is Completed and fails at once when one of its
// pods failed on its own (restartPolicy Never: a failed rank never comes
// back), dumping the pods either way the wait fails. A pod that failed while
// being deleted was stopped by the Job's completion (an MPI job's workers run
// sshd until then) and is no failure.
func waitTrained(ctx context.Context, f *framework.Framework, job *batch.Job) {
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
			if p.Status.Phase == corev1.PodFailed && p.DeletionTimestamp == nil {
				return StopTrying(fmt.Sprintf("pod %s failed", p.Name))
			}
		}
		return fmt.Errorf("Job %s is %s", job.Name, phase)
	}, framework.RealJobCompletedTimeout).Should(Succeed(), "Job %s training to completion", job.Name)
}

// podLogs returns the log of container in each pod: as the kubelet has it,
// for a pod that still exists, else as followed while it ran (the Job's
// completion deletes pods still running).
func podLogs(ctx context.Context, f *framework.Framework, pods []*corev1.Pod, container string, followed map[string]string) map[string]string {
	out := map[string]string{}
	for _, pod := range pods {
		log, err := f.TryPodLog(ctx, pod, container)
		if err != nil || len(log) < len(followed[pod.Name]) {
			GinkgoWriter.Printf("pod %s: log as followed (%d bytes; from the kubelet: %d bytes, %v)\n", pod.Name, len(followed[pod.Name]), len(log), err)
			log = followed[pod.Name]
		}
		out[pod.Name] = log
	}
	return out
}

// rankLog is what one rank printed.
type rankLog struct {
	pod          string
	rank, world  int
	verdict      string
	injectedRank string
}

// expectTrained checks the logs of a training Job's pods (by pod name): every
// rank of one world size within the job's range joined and ended with the
// same parameters as every other, rank 0's loss fell and its test accuracy is
// good, and without elasticity each pod's rank is the RANK it was injected.
// It returns one line summing the run up.
func expectTrained(tj trainingJob, pods []*corev1.Pod, logs map[string]string) string {
	GinkgoHelper()
	var ranks []rankLog
	var rank0 string
	for _, pod := range pods {
		Expect(pod.Spec.NodeName).To(Equal(localcluster.RealNodeName), "node of pod %s", pod.Name)
		log := logs[pod.Name]
		GinkgoWriter.Printf("--- %s/%s:\n%s", pod.Name, trainingContainer, log)
		// An elastic agent may restart its worker and so print more than once:
		// the last round is the one that trained.
		verdicts := verdictLine.FindAllStringSubmatch(log, -1)
		if len(verdicts) == 0 && tj.elastic {
			// A pod that came too late for the round that trained sits it
			// out; the ranks of that round are checked below.
			continue
		}
		Expect(verdicts).NotTo(BeEmpty(), "pod %s never finished training: no final parameter check in its log", pod.Name)
		v := verdicts[len(verdicts)-1]
		r := rankLog{pod: pod.Name, verdict: v[2], injectedRank: framework.EnvOf(pod, trainingContainer)["RANK"]}
		r.rank, _ = strconv.Atoi(v[1])
		r.world, _ = strconv.Atoi(v[3])
		Expect(log).To(MatchRegexp(linePrefix+`rank %d of %d joined on `, r.rank, r.world), "pod %s: rank %d joining", pod.Name, r.rank)
		ranks = append(ranks, r)
		if r.rank == 0 {
			rank0 = log
		}
	}

	Expect(ranks).NotTo(BeEmpty(), "no pod finished training")
	world := ranks[0].world
	Expect(world).To(BeNumerically(">=", tj.minWorld), "world size")
	Expect(world).To(BeNumerically("<=", tj.maxWorld), "world size")
	seen := map[int]string{}
	for _, r := range ranks {
		Expect(r.world).To(Equal(world), "pod %s trained in a world of %d, pod %s in one of %d", r.pod, r.world, ranks[0].pod, world)
		Expect(r.verdict).To(Equal("agree"), "pod %s (rank %d): final parameters", r.pod, r.rank)
		Expect(seen).NotTo(HaveKey(r.rank), "rank %d claimed by pods %s and %s", r.rank, seen[r.rank], r.pod)
		seen[r.rank] = r.pod
		if !tj.elastic {
			Expect(strconv.Itoa(r.rank)).To(Equal(r.injectedRank), "pod %s: rank it trained as, against the RANK injected", r.pod)
		}
	}
	for rank := 0; rank < world; rank++ {
		Expect(seen).To(HaveKey(rank), "rank %d of %d never joined (ranks seen: %v)", rank, world, seen)
	}
	if !tj.elastic {
		Expect(ranks).To(HaveLen(world), "pods that trained")
	}

	learned := expectLearned(rank0)

	var members []string
	for rank := 0; rank < world; rank++ {
		members = append(members, fmt.Sprintf("%d=%s", rank, seen[rank]))
	}
	sort.Strings(members)
	return fmt.Sprintf("%d ranks (%s), %s, parameters agree", world, strings.Join(members, " "), learned)
}

// expectLearned checks what rank 0 printed: at least two epochs, the loss of
// the last under half the first's, and a test accuracy of at least 0.9 on
// the digits. It returns "loss <first> → <last> over <n> epochs, test
// accuracy <a>".
func expectLearned(rank0 string) string {
	GinkgoHelper()
	epochs := epochLine.FindAllStringSubmatch(rank0, -1)
	Expect(len(epochs)).To(BeNumerically(">=", 2), "epochs printed by rank 0")
	first, _ := strconv.ParseFloat(epochs[0][2], 64)
	last, _ := strconv.ParseFloat(epochs[len(epochs)-1][2], 64)
	Expect(last).To(BeNumerically("<", first/2), "loss of the last epoch printed against the first (rank 0)")
	acc := accuracyLine.FindStringSubmatch(rank0)
	Expect(acc).NotTo(BeNil(), "test accuracy printed by rank 0")
	accuracy, _ := strconv.ParseFloat(acc[1], 64)
	Expect(accuracy).To(BeNumerically(">=", 0.9), "test accuracy on the digits")
	return fmt.Sprintf("loss %s → %s over %d epochs, test accuracy %s", epochs[0][2], epochs[len(epochs)-1][2], len(epochs), acc[1])
}

// trainingRun is one example Job trained on the real node.
type trainingRun struct {
	job *batch.Job
	// took is the time from submission to the Job's completion.
	took time.Duration
	// pods are the Job's pods as last seen; logs their container's logs by pod name.
	pods []*corev1.Pod
	logs map[string]string
}

// runTraining creates the ConfigMap configMap of program, submits the example
// Job of file onto the real node, waits until it trained (waitTrained) and
// collects the logs of container in its pods.
func runTraining(ctx context.Context, f *framework.Framework, file, configMap, program, container string) trainingRun {
	GinkgoHelper()
	framework.RequireRealNode()
	requireTrainingImage()
	createProgramConfigMap(ctx, f, configMap, program)
	job := framework.OnRealNode(framework.LoadJob(file))
	start := time.Now()
	created := f.CreateJob(ctx, job)
	logs := f.FollowLogs(ctx, created, container)
	waitTrained(ctx, f, created)
	r := trainingRun{job: created, took: time.Since(start).Round(time.Second), pods: f.PodsOf(created)}
	r.logs = podLogs(ctx, f, r.pods, container, logs.Collect(time.Minute))
	return r
}

// report writes the line that sums up a run to the spec's output and report.
func (r trainingRun) report(summary string) {
	line := fmt.Sprintf("%s: trained in %s from submission: %s", r.job.Name, r.took, summary)
	GinkgoWriter.Println(line)
	AddReportEntry(r.job.Name, line)
}

var _ = Describe("PyTorch training on the real node", func() {
	f := framework.New("training")

	for _, tj := range trainingJobs {
		It("trains the digits MLP to agreement: "+tj.name+" ("+tj.file+")", func(ctx SpecContext) {
			r := runTraining(ctx, f, tj.file, trainingConfigMap, trainingProgram, trainingContainer)
			r.report(expectTrained(tj, r.pods, r.logs))
		}, SpecTimeout(framework.RealSpecTimeout))
	}
})
