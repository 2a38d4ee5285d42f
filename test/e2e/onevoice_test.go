package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
)

const (
	// oneVoiceTries is how often each Job is sent: validating webhooks run in
	// parallel and the API server returns the first denial to arrive, so two
	// webhooks that deny show up as different messages within a few tries.
	oneVoiceTries = 10
	// oneVoiceParallel bounds the dry runs in flight.
	oneVoiceParallel = 8
)

// customMPIJob is an mpi Job with tasks "launcher" (1) and "w" (workers)
// and the given mpi arguments; KWOK completes its pods.
func customMPIJob(name string, workers int32, args ...string) *batch.Job {
	task := func(name string, replicas int32) batch.TaskSpec {
		return batch.TaskSpec{Name: name, Replicas: replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "mpi", Image: "mpioperator/openmpi:0.5.0", Command: []string{"mpirun", "hostname"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
				}},
			}},
		}}}
	}
	if args == nil {
		args = []string{} // null would be pruned by the API server, and mpi with it
	}
	return &batch.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: batch.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batch.JobSpec{
			SchedulerName: "volcano",
			Queue:         "default",
			Plugins:       map[string][]string{"mpi": args},
			Tasks:         []batch.TaskSpec{task("launcher", 1), task("w", workers)},
		},
	}
}

// admitted starts dryRun's answer for a Job the admissions accept.
const admitted = "admitted"

var _ = Describe("One admission voice for framework Jobs", func() {
	f := framework.New("onevoice")

	// dryRun sends the Job with dryRun=All and returns the denial's message,
	// or "admitted" and the warnings, one per line.
	dryRun := func(ctx context.Context, job *batch.Job) string {
		_, warnings, err := f.DryRunJobWithWarnings(ctx, job)
		if err != nil {
			return err.Error()
		}
		return strings.Join(append([]string{admitted}, warnings...), "\n")
	}

	It("answers each Job of testdata/invalid, and mpi Jobs whose roles Volcano's in-tree parser also judges, with one message every time",
		func(ctx SpecContext) {
			files, err := filepath.Glob(framework.Path(filepath.Join(testdata, "invalid", "*.yaml")))
			Expect(err).NotTo(HaveOccurred())
			Expect(len(files)).To(BeNumerically(">=", 40), "the corpus of malformed Jobs")
			type denialCase struct {
				name   string
				job    *batch.Job
				want   string
				warned bool // admitted with want in a warning, as Volcano admits it
			}
			var cases []denialCase
			for _, file := range files {
				job := framework.LoadJob(file)
				if want, ok := job.Annotations[annotationExpectWarn]; ok {
					cases = append(cases, denialCase{filepath.Base(file), job, want, true})
					continue
				}
				cases = append(cases, denialCase{filepath.Base(file), job, job.Annotations[annotationExpectDeny], false})
			}
			// Volcano's validation denies a Job whose mpi master task, as its
			// in-tree parser reads --master, is missing ("The specified mpi
			// master task was not found"); ours answers for it, once.
			cases = append(cases,
				denialCase{"mpi --master=boss", customMPIJob("mpi-boss", 2, "--master=boss", "--worker=w"),
					`--master names task "boss", which the job does not have (tasks: launcher, w)`, false},
				denialCase{"mpi --worker=workers", customMPIJob("mpi-workers", 2, "--master=launcher", "--worker=workers"),
					`--worker names task "workers", which the job does not have (tasks: launcher, w)`, true},
				denialCase{"mpi default names", customMPIJob("mpi-defaults", 2),
					`--master names task "master", which the job does not have (tasks: launcher, w)`, false})

			answers := make([][]string, len(cases))
			for i := range answers {
				answers[i] = make([]string, oneVoiceTries)
			}
			sem := make(chan struct{}, oneVoiceParallel)
			var wg sync.WaitGroup
			for try := 0; try < oneVoiceTries; try++ {
				for i := range cases {
					wg.Add(1)
					sem <- struct{}{}
					go func(i, try int) {
						defer GinkgoRecover()
						defer wg.Done()
						defer func() { <-sem }()
						answers[i][try] = dryRun(ctx, cases[i].job)
					}(i, try)
				}
			}
			wg.Wait()

			prefix := fmt.Sprintf("admission webhook %q denied the request: ", webhook.ValidateWebhookName)
			var problems []string
			for i, c := range cases {
				distinct := map[string]int{}
				for _, a := range answers[i] {
					distinct[a]++
				}
				first := answers[i][0]
				switch {
				case len(distinct) > 1:
					var msgs []string
					for m, n := range distinct {
						msgs = append(msgs, fmt.Sprintf("%dx %q", n, m))
					}
					problems = append(problems, fmt.Sprintf("%s: %d different answers: %s", c.name, len(distinct), strings.Join(msgs, "; ")))
				case c.warned:
					if !strings.HasPrefix(first, admitted+"\n"+webhook.ArgumentsWarning) || !strings.Contains(first, c.want) {
						problems = append(problems, fmt.Sprintf("%s: answered %q, want admitted with warnings containing %q", c.name, first, c.want))
					}
				case strings.HasPrefix(first, admitted):
					problems = append(problems, fmt.Sprintf("%s: admitted, want denied with %q", c.name, c.want))
				case !strings.Contains(first, prefix) || !strings.Contains(first, c.want):
					problems = append(problems, fmt.Sprintf("%s: denied with %q, want our webhook's message containing %q", c.name, first, c.want))
				}
			}
			Expect(problems).To(BeEmpty(), "%d of %d Jobs, each sent %d times", len(problems), len(cases), oneVoiceTries)
			GinkgoWriter.Printf("%d Jobs answered %d times each, with one message each\n", len(cases), oneVoiceTries)
		}, SpecTimeout(framework.SpecTimeout))

	It("admits mpi Jobs with custom task names whatever the order of their flags, and they complete",
		func(ctx SpecContext) {
			jobs := f.CreateJobs(ctx,
				customMPIJob("mpi-port-first", 2, "--port=2222", "--master=launcher", "--worker=w"),
				// Volcano's in-tree parser stops at --slots-per-worker and
				// looked for tasks "master" and "worker".
				customMPIJob("mpi-worker-first", 2, "--worker=w", "--slots-per-worker=1", "--port=2222", "--master=launcher"))
			for _, job := range jobs {
				Expect(job.Spec.Plugins).To(HaveKey("ssh"), "plugins of Job %s as admitted", job.Name)
				Expect(job.Spec.Tasks[0].Policies).To(ContainElement(batch.LifecyclePolicy{Event: "TaskCompleted", Action: "CompleteJob"}),
					"policies of the launcher of %s: our mutation read --master=launcher", job.Name)
			}
			for _, job := range jobs {
				f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
				pods := f.PodsOf(job)
				Expect(pods).To(HaveLen(3), "pods of %s", job.Name)
				framework.SortPods(job, pods)
				Expect(framework.EnvOf(pods[0], "mpi")).To(HaveKeyWithValue("OMPI_MCA_plm_rsh_args", "-p 2222 -o ConnectionAttempts=10"),
					"environment of the launcher %s", pods[0].Name)
			}
		}, SpecTimeout(framework.SpecTimeout))
})
