package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// exampleJob is a Job of example/ and its file.
type exampleJob struct {
	file string
	job  *batch.Job
}

// loadAllExamples loads every YAML file under example/, each of which must be
// exactly one Volcano Job (decoded strictly), with names unique across files.
func loadAllExamples() []exampleJob {
	GinkgoHelper()
	var out []exampleJob
	names := map[string]string{}
	for _, file := range framework.ExampleFiles() {
		data, err := os.ReadFile(framework.Path(file))
		Expect(err).NotTo(HaveOccurred())
		docs, err := kubeutil.YAMLDocuments(data)
		Expect(err).NotTo(HaveOccurred(), file)
		Expect(docs).To(HaveLen(1), "%s must hold exactly one document", file)
		job, err := framework.DecodeJob(docs[0], file)
		Expect(err).NotTo(HaveOccurred())
		Expect(job.Namespace).To(BeEmpty(), "%s: examples are namespace-less, so that they go where the user applies them", file)
		Expect(names).NotTo(HaveKey(job.Name), "%s: Job name %s is also the name of %s", file, job.Name, names[job.Name])
		names[job.Name] = file
		out = append(out, exampleJob{file: file, job: job})
	}
	return out
}

// gpuTasks returns the names of a Job's tasks whose pods request a GPU.
func gpuTasks(job *batch.Job) []string {
	var out []string
	for _, t := range job.Spec.Tasks {
		if framework.PodGPUs(&corev1.Pod{Spec: t.Template.Spec}) > 0 {
			out = append(out, t.Name)
		}
	}
	return out
}

// expectGPURequestsEqualLimits checks that every container of the Job that
// asks for a GPU requests and limits the same positive count.
func expectGPURequestsEqualLimits(source string, job *batch.Job) {
	GinkgoHelper()
	for _, t := range job.Spec.Tasks {
		for _, c := range append(append([]corev1.Container{}, t.Template.Spec.InitContainers...), t.Template.Spec.Containers...) {
			req, hasReq := c.Resources.Requests[framework.GPUResource]
			lim, hasLim := c.Resources.Limits[framework.GPUResource]
			if !hasReq && !hasLim {
				continue
			}
			Expect(hasReq && hasLim).To(BeTrue(), "%s: task %s container %s must set %s in requests and limits", source, t.Name, c.Name, framework.GPUResource)
			Expect(req.Cmp(lim)).To(BeZero(), "%s: task %s container %s: %s request %s, limit %s", source, t.Name, c.Name, framework.GPUResource, req.String(), lim.String())
			Expect(req.Value()).To(BeNumerically(">", 0), "%s: task %s container %s", source, t.Name, c.Name)
		}
	}
}

// requireGPUs skips the spec unless the cluster's schedulable nodes have n
// GPUs in all, and otherwise waits until none is held and registers the same
// wait after the spec, as the other GPU specs do.
func requireGPUs(ctx SpecContext, f *framework.Framework, n int64) {
	if n == 0 {
		return
	}
	var total int64
	for _, g := range f.ClusterGPUs(ctx) {
		total += g
	}
	if total < n {
		Skip(fmt.Sprintf("needs %d GPUs; the cluster's schedulable nodes have %d", n, total))
	}
	f.WaitGPUsFree(ctx)
	DeferCleanup(f.WaitGPUsFree, NodeTimeout(framework.GPUsFreeTimeout+10*time.Second))
}

var _ = Describe("The examples and the documentation", func() {
	f := framework.New("examples")

	It("has a minimal and a GPU Job per framework in example/, and every Job there completes on KWOK, the GPU ones gang-scheduled",
		func(ctx SpecContext) {
			examples := loadAllExamples()
			byFile := map[string]*batch.Job{}
			for _, e := range examples {
				byFile[filepath.ToSlash(e.file)] = e.job
			}

			By("checking that each framework directory has <fw>.yaml without GPUs and <fw>-gpu.yaml with them")
			dirs, err := os.ReadDir(framework.Path(framework.ExamplesDir))
			Expect(err).NotTo(HaveOccurred())
			var gpus int64
			frameworks := 0
			for _, d := range dirs {
				if !d.IsDir() {
					continue
				}
				frameworks++
				fw := d.Name()
				minimal := byFile[framework.ExamplesDir+"/"+fw+"/"+fw+".yaml"]
				gpu := byFile[framework.ExamplesDir+"/"+fw+"/"+fw+"-gpu.yaml"]
				Expect(minimal).NotTo(BeNil(), "example/%s/%s.yaml", fw, fw)
				Expect(gpu).NotTo(BeNil(), "example/%s/%s-gpu.yaml", fw, fw)
				Expect(framework.JobGPUs(minimal)).To(BeZero(), "example/%s/%s.yaml requests GPUs", fw, fw)
				Expect(framework.JobGPUs(gpu)).To(BeNumerically(">", 0), "example/%s/%s-gpu.yaml requests no GPU", fw, fw)
				Expect(gpu.Spec.Plugins).To(HaveKey(pluginOf(minimal)), "example/%s/%s-gpu.yaml uses another framework plugin than %s.yaml", fw, fw, fw)
			}
			Expect(frameworks).To(BeNumerically(">=", 5), "framework directories in example/")
			for _, e := range examples {
				expectGPURequestsEqualLimits(e.file, e.job)
				gpus += framework.JobGPUs(e.job)
			}
			GinkgoWriter.Printf("%d example Jobs, %d GPUs in all\n", len(examples), gpus)
			requireGPUs(ctx, f, gpus)

			jobs := make([]*batch.Job, len(examples))
			for i, e := range examples {
				jobs[i] = e.job
			}
			created := f.CreateJobs(ctx, jobs...)

			By("checking that the webhook made every GPU task all-or-nothing")
			for i, job := range created {
				for _, t := range job.Spec.Tasks {
					if framework.PodGPUs(&corev1.Pod{Spec: t.Template.Spec}) == 0 {
						continue
					}
					Expect(t.MinAvailable).NotTo(BeNil(), "%s: minAvailable of GPU task %s as admitted", examples[i].file, t.Name)
					Expect(*t.MinAvailable).To(Equal(t.Replicas), "%s: minAvailable of GPU task %s as admitted", examples[i].file, t.Name)
				}
			}

			for i, job := range created {
				By("waiting for " + examples[i].file + " (" + job.Name + ") to complete")
				f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
			}

			By("checking that the pods of the GPU tasks ran with their GPUs on a node")
			for i, job := range created {
				tasks := gpuTasks(job)
				if len(tasks) == 0 {
					continue
				}
				seen := map[string]int{}
				for _, pod := range f.PodsOf(job) {
					task := pod.Annotations[batch.TaskSpecKey]
					if !slices.Contains(tasks, task) {
						continue
					}
					Expect(pod.Spec.NodeName).NotTo(BeEmpty(), "%s: pod %s was never bound", examples[i].file, pod.Name)
					Expect(framework.PodGPUs(pod)).To(BeNumerically(">", 0), "%s: pod %s", examples[i].file, pod.Name)
					seen[task]++
				}
				for _, t := range job.Spec.Tasks {
					if slices.Contains(tasks, t.Name) {
						Expect(seen[t.Name]).To(BeNumerically(">=", int(t.Replicas)), "%s: pods of GPU task %s", examples[i].file, t.Name)
					}
				}
			}
		}, SpecTimeout(framework.SpecTimeout))

	It("completes every Volcano Job of the yaml blocks of README.md and docs/ on KWOK", func(ctx SpecContext) {
		docJobs := framework.DocJobs()
		Expect(docJobs).NotTo(BeEmpty(), "no Volcano Job in the yaml blocks of README.md and docs/")
		names := map[string]string{}
		var gpus int64
		var jobs []*batch.Job
		var denied []framework.SourcedJob
		var admitted []framework.SourcedJob
		for _, d := range docJobs {
			// A block showing a Job that must be denied marks it with the
			// annotation of test/e2e/testdata/invalid (none does today).
			if _, ok := d.Job.Annotations[annotationExpectDeny]; ok {
				denied = append(denied, d)
				continue
			}
			admitted = append(admitted, d)
			Expect(d.Job.Namespace).To(BeEmpty(), "%s: Job %s names a namespace; doc Jobs are applied in the spec's namespace", d.Source, d.Job.Name)
			Expect(names).NotTo(HaveKey(d.Job.Name), "%s: Job name %s is also used at %s", d.Source, d.Job.Name, names[d.Job.Name])
			names[d.Job.Name] = d.Source
			gpus += framework.JobGPUs(d.Job)
			jobs = append(jobs, d.Job)
		}
		Expect(admitted).NotTo(BeEmpty(), "no Volcano Job to complete in the documentation")
		sources := make([]string, 0, len(names))
		for n, s := range names {
			sources = append(sources, s+" "+n)
		}
		sort.Strings(sources)
		GinkgoWriter.Printf("%d Volcano Jobs in the documentation:\n  %s\n", len(docJobs), strings.Join(sources, "\n  "))
		requireGPUs(ctx, f, gpus)

		for _, d := range denied {
			want := d.Job.Annotations[annotationExpectDeny]
			_, err := f.TryCreateJob(ctx, d.Job)
			Expect(err).To(HaveOccurred(), "%s: Job %s admitted, want denied with %q", d.Source, d.Job.Name, want)
			Expect(err.Error()).To(ContainSubstring(want), "%s: Job %s", d.Source, d.Job.Name)
		}
		created := make([]*batch.Job, len(jobs))
		for i, job := range jobs {
			var err error
			created[i], err = f.TryCreateJob(ctx, job)
			Expect(err).NotTo(HaveOccurred(), "%s: creating Job %s", admitted[i].Source, job.Name)
		}
		for i, job := range created {
			By("waiting for " + admitted[i].Source + " (" + job.Name + ") to complete")
			f.WaitJobPhase(ctx, job, batch.Completed, framework.JobCompletedTimeout)
		}
	}, SpecTimeout(framework.SpecTimeout))
})

// pluginOf returns the framework plugin a Job uses (the first of
// plugins.Names), "" if none.
func pluginOf(job *batch.Job) string {
	for _, p := range plugins.Names() {
		if _, ok := job.Spec.Plugins[p]; ok {
			return p
		}
	}
	return ""
}
