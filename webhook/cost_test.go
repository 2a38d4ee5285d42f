package webhook

import (
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	. "github.com/vcplugins/framework-plugins/pkg/testing"
)

// maxAdmissionBytes bounds what one admission (mutation and validation
// together, decoding included) may allocate, whatever the Job's numbers.
const maxAdmissionBytes = 10 << 20

// costJobs are framework Jobs with n workers (and the other roles they need).
func costJobs(n int32) []*batch.Job {
	name := fmt.Sprintf("cost-%d", n)
	return []*batch.Job{
		mkJob(name + "-tf").Task(MakeTask("ps", 1).Obj()).Task(MakeTask("worker", n).GPU(8).RestartPolicy("").Obj()).Plugin("tensorflow").Obj(),
		mkJob(name+"-pt").Task(MakeTask("master", 1).Obj()).Task(MakeTask("worker", n).GPU(8).Obj()).Plugin("pytorch", "--min-nodes=2").Obj(),
		mkJob(name+"-mpi").Task(MakeTask("master", 1).Obj()).Task(MakeTask("worker", n).Obj()).Plugin("mpi", "--launcher-as-worker").Obj(),
		mkJob(name + "-mx").Task(MakeTask("scheduler", 1).Obj()).Task(MakeTask("server", n).Obj()).Task(MakeTask("worker", n).Obj()).Plugin("mxnet").Obj(),
		mkJob(name+"-svc-args").Task(MakeTask("master", 1).Obj()).Task(MakeTask("worker", n).Obj()).Plugin("pytorch").Plugin("svc", "--disable-network-policy").Obj(),
	}
}

// admissionCost runs both admissions through their HTTP handlers, as the
// API server calls them (the validation sees the Job as the mutation
// patched it), and returns the bytes each allocated and the validation's answer.
func admissionCost(t testing.TB, job *batch.Job) (mutateBytes, validateBytes uint64, resp *admissionv1.AdmissionResponse) {
	t.Helper()
	mutateH, validateH := MutateService(Options{}).Handler, ValidateService().Handler
	created := review(t, admissionv1.Create, job, nil)
	var mutated *admissionv1.AdmissionResponse
	mutateBytes = allocated(func() { mutated = serveReview(t, mutateH, created) })
	if !mutated.Allowed {
		t.Fatalf("%s: mutation denied: %v", job.Name, mutated.Result)
	}
	validated := review(t, admissionv1.Create, applyPatch(t, job, mutated.Patch), nil)
	validateBytes = allocated(func() { resp = serveReview(t, validateH, validated) })
	return mutateBytes, validateBytes, resp
}

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Admission allocates a bounded amount whatever the replicas: sizes of host
// lists are computed, not built, and Jobs over MaxReplicas are denied before
// any per-replica work. It used to build every host list (10^6 workers took
// about 300 MB; 2^31-1 would get the manager killed).
func TestAdmissionCostBounded(t *testing.T) {
	for _, n := range []int32{2048, 20000, MaxReplicas - 2, MaxReplicas, 1_000_000, 1<<31 - 1} {
		for _, job := range costJobs(n) {
			t.Run(job.Name, func(t *testing.T) {
				m, v, resp := admissionCost(t, job)
				t.Logf("allocated %d + %d bytes", m, v)
				if m+v > maxAdmissionBytes {
					t.Errorf("admission allocated %d bytes (mutation %d, validation %d); want at most %d", m+v, m, v, maxAdmissionBytes)
				}
				if total := int64(jobsTotal(job)); total > MaxReplicas {
					if resp.Allowed || !strings.Contains(resp.Result.Message, fmt.Sprintf("the job asks for %d pods in all", total)) {
						t.Errorf("%d pods: response %+v; want the ceiling's denial", total, resp.Result)
					}
				}
				if !resp.Allowed && resp.Result.Code != http.StatusUnprocessableEntity {
					t.Errorf("denial with code %d", resp.Result.Code)
				}
			})
		}
	}
	t.Run("several tasks of 2^31-1 replicas", func(t *testing.T) {
		job := mkJob("cost-sum").Task(MakeTask("ps", 1<<31-1).Obj()).Task(MakeTask("worker", 1<<31-1).Obj()).
			Task(MakeTask("chief", 1<<31-1).Obj()).Plugin("tensorflow").Obj()
		m, v, resp := admissionCost(t, job)
		if m+v > maxAdmissionBytes || resp.Allowed {
			t.Errorf("allocated %d bytes, response %+v", m+v, resp)
		}
		if want := "spec.tasks: Invalid value: 6442450941: plugin tensorflow: the job asks for 6442450941 pods in all"; !strings.Contains(resp.Result.Message, want) {
			t.Errorf("denial %q; want it to contain %q", resp.Result.Message, want)
		}
	})
}

func jobsTotal(job *batch.Job) int64 {
	var n int64
	for _, t := range job.Spec.Tasks {
		n += int64(t.Replicas)
	}
	return n
}

// BenchmarkAdmissionHuge runs both admissions on Jobs from the largest
// admissible to 2^31-1 workers; the time per Job should stay in the
// milliseconds (the webhook's timeout is 10 s).
func BenchmarkAdmissionHuge(b *testing.B) {
	for _, n := range []int32{MaxReplicas - 2, 1<<31 - 1} {
		for _, job := range costJobs(n) {
			b.Run(job.Name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					admissionCost(b, job)
				}
			})
		}
	}
}

// svcSizes agrees with the map Volcano's svc.GenerateHosts builds, key by key.
func TestSvcSizesMatchGenerateHosts(t *testing.T) {
	tests := []*batch.Job{
		mkJob("svc").Task(MakeTask("ps", 1).Obj()).Task(MakeTask("worker", 12).Obj()).Obj(),
		mkJob("svc").Task(MakeTask("a-b", 3).Obj()).Task(MakeTask("a_b", 2).Obj()).Obj(),
		mkJob("svc").Task(MakeTask("named", 4).Hostname("fixed").Obj()).Task(MakeTask("sub", 101).Subdomain("other").Obj()).Obj(),
		mkJob("svc").Task(MakeTask("none", 0).Obj()).Task(MakeTask("none-named", 0).Hostname("x").Obj()).Obj(),
	}
	for _, job := range tests {
		want := map[string]int{}
		for k, v := range svc.GenerateHosts(job) {
			want[k] = len(v)
		}
		if diff := cmp.Diff(want, svcSizes(job)); diff != "" {
			keys := make([]string, 0, len(want))
			for k := range want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Errorf("tasks %v: sizes (-GenerateHosts +svcSizes):\n%s", keys, diff)
		}
	}
}
