package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	vctesting "github.com/vcplugins/framework-plugins/pkg/testing"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// largeJobWorkers is the size at which pod creation used to stall (issue 13,
// defect 5): Volcano v1.10's pod admission read the API three times per pod,
// and at the webhook manager's default 50 QPS the creations outlasted the
// apiserver's 10 s webhook timeout, so the job controller's retries piled up.
// The local cluster now serves v1.15.1's default admissions, without the pod
// hooks; the spec still checks that a Job this size starts.
const largeJobWorkers = 300

var _ = Describe("A 300-worker Job", func() {
	f := framework.New("large")

	It("gets all its pods created, 5 times in a row", func(ctx SpecContext) {
		for run := 1; run <= 5; run++ {
			By(fmt.Sprintf("run %d: creating a TensorFlow Job of 1 ps and %d workers", run, largeJobWorkers))
			job := framework.KeepRunning(vctesting.MakeJob(fmt.Sprintf("large-%d", run)).Plugin("tensorflow").
				Task(vctesting.MakeTask("ps", 1).Container("tensorflow").Resource("cpu", "10m").Obj()).
				Task(vctesting.MakeTask("worker", largeJobWorkers).Container("tensorflow").Resource("cpu", "10m").Obj()).
				Obj())
			job = f.CreateJob(ctx, job)
			pods := f.WaitPodsCreated(ctx, job, 0)
			// A creation Volcano's pod admission refuses once (its PodGroup
			// cache behind on a loaded machine) is retried; what matters is
			// that every pod exists within PodsCreatedTimeout, not stalled.
			Expect(pods).To(HaveLen(largeJobWorkers + 1))
			f.DeleteJobAndPods(ctx, job)
		}
	}, SpecTimeout(framework.SpecTimeout))
})
