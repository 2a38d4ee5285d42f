package e2e

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// listedPhase returns the phase `vcctl job list` shows for the Job named name
// (its columns: Name Creation Phase JobType Replicas ...), "" if not listed.
func listedPhase(out, name string) string {
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 3 && fields[0] == name {
			return fields[2]
		}
	}
	return ""
}

var _ = Describe("vcctl (volcano.sh/volcano cmd/cli of the line) against the cluster", func() {
	f := framework.New("vcctl")

	It("submits every example with `vcctl job run -f`, which completes, and lists and views each", func(ctx SpecContext) {
		examples := loadAllExamples()
		var gpus int64
		for _, e := range examples {
			gpus += framework.JobGPUs(e.job)
		}
		requireGPUs(ctx, f, gpus)

		for _, e := range examples {
			// vcctl creates the Job in --namespace (default "default"), not in
			// the file's metadata.namespace.
			out, err := f.Vcctl(ctx, "job", "run", "-f", framework.Path(e.file), "-n", f.Namespace)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(ContainSubstring("run job "+e.job.Name+" successfully"), "vcctl job run -f %s", e.file)
		}
		for _, e := range examples {
			By("waiting for " + e.job.Name + " (" + e.file + ", submitted by vcctl) to complete")
			admitted, err := f.GetJob(ctx, e.job.Name)
			Expect(err).NotTo(HaveOccurred(), "Job %s submitted by vcctl", e.job.Name)
			// Through the same admission as any other client.
			Expect(admitted.Spec.Plugins).To(HaveKey("svc"), "plugins of Job %s as admitted", e.job.Name)
			f.WaitJobPhase(ctx, e.job, batch.Completed, framework.JobCompletedTimeout)
		}

		By("vcctl job list -n " + f.Namespace)
		out, err := f.Vcctl(ctx, "job", "list", "-n", f.Namespace)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("%s", out)
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(HaveExactElements("Name", "Creation", "Phase", "JobType",
			"Replicas", "Min", "Pending", "Running", "Succeeded", "Failed", "Unknown", "RetryCount"), "header of vcctl job list")
		for _, e := range examples {
			Expect(listedPhase(out, e.job.Name)).To(Equal(string(batch.Completed)), "phase of %s in vcctl job list", e.job.Name)
		}
		Expect(strings.Count(strings.TrimSpace(out), "\n")).To(Equal(len(examples)), "vcctl job list shows one line per Job after its header")

		for _, e := range examples {
			By("vcctl job view -N " + e.job.Name)
			out, err := f.Vcctl(ctx, "job", "view", "-N", e.job.Name, "-n", f.Namespace)
			Expect(err).NotTo(HaveOccurred())
			for _, want := range []string{
				"Name:       \t" + e.job.Name + "\n",
				"Namespace:  \t" + f.Namespace + "\n",
				"Phase:\t" + string(batch.Completed) + "\n",
			} {
				Expect(out).To(ContainSubstring(want), "vcctl job view -N %s", e.job.Name)
			}
			for _, t := range e.job.Spec.Tasks {
				Expect(out).To(ContainSubstring("Name:\t"+t.Name+"\n"), "task %s in vcctl job view -N %s", t.Name, e.job.Name)
			}
		}

		By("vcctl job view of a Job that does not exist fails")
		_, err = f.Vcctl(ctx, "job", "view", "-N", "no-such-job", "-n", f.Namespace)
		Expect(err).To(MatchError(ContainSubstring(`"no-such-job" not found`)))
	}, SpecTimeout(framework.SpecTimeout))
})
