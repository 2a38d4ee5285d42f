package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
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
			job := framework.KeepRunning(jobtest.MakeJob(fmt.Sprintf("large-%d", run)).Plugin("tensorflow").
				Task(jobtest.MakeTask("ps", 1).Container("tensorflow").Resource("cpu", "10m").Obj()).
				Task(jobtest.MakeTask("worker", largeJobWorkers).Container("tensorflow").Resource("cpu", "10m").Obj()).
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

// Large jobs: svc's VC_<TASK>_HOSTS lists every host of a task in every pod;
// over MAX_ARG_STRLEN (a 2,048-worker Job with a 29-character name) no
// container could start with it. Through the API server and the controller:
// the long-named Job is admitted with a warning and its pods carry no
// VC_WORKER_HOSTS (nor does svc's ConfigMap), while the short-named one gets
// it, as on stock. The Jobs
// ask for one pod at least (minAvailable 1), so that their PodGroups are
// enqueued and every pod is created, though the KWOK nodes run 440.
var _ = Describe("A 2,048-worker pytorch Job", func() {
	f := framework.New("hostsenv")

	for _, tc := range []struct {
		name string
		over bool
	}{
		{"llama-70b-sft-run-20261204-a1", true},
		{"resnet50-dist", false},
	} {
		It(fmt.Sprintf("named %s (%d characters): VC_WORKER_HOSTS in its pods %v", tc.name, len(tc.name), !tc.over), func(ctx SpecContext) {
			job := framework.KeepRunning(jobtest.MakeJob(tc.name).Plugin("pytorch").MinAvailable(1).
				Task(jobtest.MakeTask("master", 1).Container("pytorch").Resource("cpu", "10m").Obj()).
				Task(jobtest.MakeTask("worker", 2048).Container("pytorch").Resource("cpu", "10m").Obj()).
				Obj())
			created, warnings, err := f.CreateJobWithWarnings(ctx, job)
			Expect(err).NotTo(HaveOccurred(), "creating Job %s", job.Name)
			DeferCleanup(f.DeleteJobAndPods, created)
			warned := containsSubstring(warnings, "environment variable VC_WORKER_HOSTS would be")
			Expect(warned).To(Equal(tc.over), "warnings %q", warnings)

			pods := f.WaitPodsCreated(ctx, created, 0)
			Expect(pods).To(HaveLen(2049))
			with := 0 // pods with the variable in any container
			for _, p := range pods {
				has := false
				for _, c := range p.Spec.Containers {
					for _, e := range c.Env {
						has = has || e.Name == "VC_WORKER_HOSTS"
					}
				}
				if has {
					with++
				}
			}
			want := 2049
			if tc.over {
				want = 0
			}
			Expect(with).To(Equal(want), "pods of %s with VC_WORKER_HOSTS", job.Name)

			// svc's ConfigMap: the worker.host file always, the variable's
			// key only where the pods get it.
			cm, err := f.Kube.CoreV1().ConfigMaps(created.Namespace).Get(ctx, created.Name+"-svc", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(cm.Data).To(HaveKey("worker.host"))
			_, hasKey := cm.Data["VC_WORKER_HOSTS"]
			Expect(hasKey).To(Equal(!tc.over), "ConfigMap %s has key VC_WORKER_HOSTS", cm.Name)
		}, SpecTimeout(framework.SpecTimeout))
	}
})
