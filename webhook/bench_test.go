package webhook

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// benchJobs are framework jobs with 2,048 GPU workers. The tensorflow Job's
// name is short: with the hosts' .<namespace>.svc.cluster.local, 2,053 hosts
// named after "bench-tensorflow" would make TF_CONFIG larger than a process
// accepts (MaxArgStrlen).
func benchJobs() []*batch.Job {
	return []*batch.Job{
		mkJob("bench-tf").SchedulerName("").
			Task(jobtest.MakeTask("chief", 1).GPU(1).Obj()).Task(jobtest.MakeTask("ps", 4).Obj()).
			Task(jobtest.MakeTask("worker", 2048).GPU(8).RestartPolicy("").Obj()).Plugin("tensorflow").Obj(),
		mkJob("bench-pytorch").SchedulerName("").
			Task(jobtest.MakeTask("master", 1).GPU(8).Obj()).Task(jobtest.MakeTask("worker", 2048).GPU(8).Obj()).
			Plugin("pytorch", "--min-nodes=1025").Obj(),
		mkJob("bench-mpi").SchedulerName("").
			Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2048).GPU(8).Obj()).
			Plugin("mpi", "--mpi-implementation=intel").Obj(),
		mkJob("bench-mxnet").SchedulerName("").
			Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("server", 16).Obj()).
			Task(jobtest.MakeTask("worker", 2048).GPU(8).Obj()).Plugin("mxnet").Obj(),
	}
}

// BenchmarkAdmission2048 runs both admissions as the API server calls them on
// a Job with 2,048 GPU workers: the mutation of the Job as written, then the
// validation of the Job as both mutations left it (decoding included).
func BenchmarkAdmission2048(b *testing.B) {
	t := &testing.T{}
	mutateSvc, validateSvc := MutateService(Options{}), ValidateService()
	for _, job := range benchJobs() {
		created := review(b, admissionv1.Create, job, nil)
		mutated := volcanoMutate(t, oursMutate(t, job))
		if t.Failed() {
			b.Fatal("mutation failed")
		}
		validated := review(b, admissionv1.Create, mutated, nil)
		if resp := validateSvc.Func(validated); !resp.Allowed {
			b.Fatalf("%s denied: %s", job.Name, resp.Result.Message)
		}
		b.Run(job.Name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if resp := mutateSvc.Func(created); !resp.Allowed || len(resp.Patch) == 0 {
					b.Fatal("mutation failed")
				}
				if resp := validateSvc.Func(validated); !resp.Allowed {
					b.Fatal("validation failed")
				}
			}
		})
	}
}

// Guard in the normal test run: the benchmark jobs are valid and admitted.
func TestBenchmarkJobsAreValid(t *testing.T) {
	for _, job := range benchJobs() {
		mutated := volcanoMutate(t, oursMutate(t, job))
		if errs := ValidateJob(mutated); len(errs) > 0 {
			t.Errorf("%s: %v", job.Name, errs)
		}
	}
}
