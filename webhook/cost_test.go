package webhook

import (
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/webhooktest"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// maxAdmissionBytes bounds what one admission (mutation and validation
// together, decoding included) may allocate, whatever the Job's numbers.
const maxAdmissionBytes = 10 << 20

// costJobs are framework Jobs with n workers (and the other roles they need).
func costJobs(n int32) []*batch.Job {
	name := fmt.Sprintf("cost-%d", n)
	return []*batch.Job{
		mkJob(name + "-tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", n).GPU(8).RestartPolicy("").Obj()).Plugin("tensorflow").Obj(),
		mkJob(name+"-pt").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", n).GPU(8).Obj()).Plugin("pytorch", "--min-nodes=2").Obj(),
		mkJob(name+"-mpi").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", n).Obj()).Plugin("mpi", "--launcher-as-worker").Obj(),
		mkJob(name + "-mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("server", n).Obj()).Task(jobtest.MakeTask("worker", n).Obj()).Plugin("mxnet").Obj(),
		mkJob(name+"-svc-args").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", n).Obj()).Plugin("pytorch").Plugin("svc", "--disable-network-policy").Obj(),
	}
}

// admissionCost runs both admissions through their HTTP handlers, as the
// API server calls them (the validation sees the Job as the mutation
// patched it), and returns the bytes each allocated and the validation's answer.
func admissionCost(t testing.TB, job *batch.Job) (mutateBytes, validateBytes uint64, resp *admissionv1.AdmissionResponse) {
	t.Helper()
	mutateH, validateH := asServed(MutateService(Options{}).Handler), asServed(ValidateService().Handler)
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
					// The ceiling, or first the bound on pod template
					// bytes (bounds.MaxPodTemplateBytes) that so many pods
					// reach.
					if resp.Allowed || !strings.Contains(resp.Result.Message, fmt.Sprintf("the job asks for %d pods in all", total)) &&
						!strings.Contains(resp.Result.Message, fmt.Sprintf("the job's %d pods would carry", total)) {
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
		job := mkJob("cost-sum").Task(jobtest.MakeTask("ps", 1<<31-1).Obj()).Task(jobtest.MakeTask("worker", 1<<31-1).Obj()).
			Task(jobtest.MakeTask("chief", 1<<31-1).Obj()).Plugin("tensorflow").Obj()
		m, v, resp := admissionCost(t, job)
		if m+v > maxAdmissionBytes || resp.Allowed {
			t.Errorf("allocated %d bytes, response %+v", m+v, resp)
		}
		if want := "spec.tasks: Too long: plugin tensorflow: the job's 6442450941 pods would carry"; !strings.Contains(resp.Result.Message, want) {
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

// bounds.SvcSizes agrees with the map Volcano's svc.GenerateHosts builds, key by key.
func TestSvcSizesMatchGenerateHosts(t *testing.T) {
	tests := []*batch.Job{
		mkJob("svc").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 12).Obj()).Obj(),
		mkJob("svc").Task(jobtest.MakeTask("a-b", 3).Obj()).Task(jobtest.MakeTask("a_b", 2).Obj()).Obj(),
		mkJob("svc").Task(jobtest.MakeTask("named", 4).Hostname("fixed").Obj()).Task(jobtest.MakeTask("sub", 101).Subdomain("other").Obj()).Obj(),
		mkJob("svc").Task(jobtest.MakeTask("none", 0).Obj()).Task(jobtest.MakeTask("none-named", 0).Hostname("x").Obj()).Obj(),
	}
	for _, job := range tests {
		want := map[string]int{}
		for k, v := range svc.GenerateHosts(job) {
			want[k] = len(v)
		}
		if diff := cmp.Diff(want, bounds.SvcSizes(job)); diff != "" {
			keys := make([]string, 0, len(want))
			for k := range want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Errorf("tasks %v: sizes (-GenerateHosts +SvcSizes):\n%s", keys, diff)
		}
	}
}

// templateList is a list of a pod template a Job author can grow: its bound
// and how to add entry i (of about pad bytes more) to a task.
type templateList struct {
	name      string
	container bool // a container's list, else the pod's
	max       int
	add       func(t *batch.TaskSpec, i int, pad string)
}

func (l templateList) path(task int) string {
	p := fmt.Sprintf("spec.tasks[%d].template.spec.", task)
	if l.container {
		p += "containers[0]."
	}
	return p + l.name
}

var templateLists = []templateList{
	{"args", true, bounds.MaxArgs, func(t *batch.TaskSpec, i int, pad string) {
		c := &t.Template.Spec.Containers[0]
		c.Args = append(c.Args, fmt.Sprintf("--a%d=%s", i, pad))
	}},
	{"command", true, bounds.MaxArgs, func(t *batch.TaskSpec, i int, pad string) {
		c := &t.Template.Spec.Containers[0]
		c.Command = append(c.Command, fmt.Sprintf("c%d%s", i, pad))
	}},
	{"env", true, bounds.MaxEnv, func(t *batch.TaskSpec, i int, pad string) {
		c := &t.Template.Spec.Containers[0]
		c.Env = append(c.Env, v1.EnvVar{Name: fmt.Sprintf("E%d", i), Value: "v" + pad})
	}},
	{"envFrom", true, bounds.MaxEnvFrom, func(t *batch.TaskSpec, i int, pad string) {
		c := &t.Template.Spec.Containers[0]
		c.EnvFrom = append(c.EnvFrom, v1.EnvFromSource{Prefix: "P" + pad,
			ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: fmt.Sprintf("cm%d", i)}}})
	}},
	{"ports", true, bounds.MaxPorts, func(t *batch.TaskSpec, i int, _ string) {
		c := &t.Template.Spec.Containers[0]
		c.Ports = append(c.Ports, v1.ContainerPort{ContainerPort: int32(1000 + i%60000)})
	}},
	{"volumeMounts", true, bounds.MaxVolumeMounts, func(t *batch.TaskSpec, i int, pad string) {
		c := &t.Template.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: "v0", MountPath: fmt.Sprintf("/m/%d/%s", i, pad)})
	}},
	{"volumes", false, bounds.MaxVolumes, func(t *batch.TaskSpec, i int, pad string) {
		t.Template.Spec.Volumes = append(t.Template.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", i),
			VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/h/" + pad}}})
	}},
	// MakeTask's container is the first.
	{"containers", false, bounds.MaxContainers - 1, func(t *batch.TaskSpec, i int, pad string) {
		t.Template.Spec.Containers = append(t.Template.Spec.Containers, v1.Container{Name: fmt.Sprintf("c%d", i), Image: "i" + pad})
	}},
}

// growList returns job with n entries added to list l of the template of
// task, each about pad bytes long; n < 0: as many as fit in what the API
// server accepts (webhooktest.APIServerMaxBody, less 16 KiB for the review
// around it).
func growList(t testing.TB, job *batch.Job, task int, l templateList, n, pad int) *batch.Job {
	t.Helper()
	out := job.DeepCopy()
	p := strings.Repeat("x", pad)
	if n >= 0 {
		for i := 0; i < n; i++ {
			l.add(&out.Spec.Tasks[task], i, p)
		}
		return out
	}
	// The size of one entry, then as many as fit.
	const budget = webhooktest.APIServerMaxBody - 16<<10
	probe := out.DeepCopy()
	before := len(mustJSON(t, probe))
	for i := 0; i < 100; i++ {
		l.add(&probe.Spec.Tasks[task], 100000+i, p)
	}
	each := (len(mustJSON(t, probe))-before)/100 + 1
	for i := 0; i < (budget-before)/each; i++ {
		l.add(&out.Spec.Tasks[task], i, p)
	}
	return out
}

// The pod template's lists cost both admissions in proportion to the Job:
// every list of a framework Job's worker grown to its bound (the largest Job
// admitted), and for pytorch also with entries long enough to fill the API
// server's 3 MiB (args, env, volumes, containers: the others cost as these).
// TestAdmissionCostOverBounds grows them to 3 MiB of short entries
// (webhooktest.BoundsCases), which bounds.Check denies before the Job is
// decoded. With gomodules.xyz/jsonpatch/v2 v2.2.0 the mutation's patch filled
// an m×n table for the lists it compared: at the bound, 2,048 args took
// 40 MB and 2,048 env entries 270 MB, over this test's budget.
func TestAdmissionCostOfTemplateLists(t *testing.T) {
	const budget = webhooktest.APIServerMaxBody - 16<<10 // the review around the Job
	type size struct {
		name string
		long bool // entries long enough to fill 3 MiB
	}
	for _, base := range costJobs(2) {
		sizes := []size{{"at the bound", false}}
		if strings.HasSuffix(base.Name, "-pt") && !testing.Short() {
			sizes = append(sizes, size{"at the bound, 3 MiB", true})
		}
		for _, l := range templateLists {
			for _, sz := range sizes {
				if sz.long && l.name != "args" && l.name != "env" && l.name != "volumes" && l.name != "containers" {
					continue // as these (and ports have no string to lengthen)
				}
				t.Run(fmt.Sprintf("%s/%s/%s", base.Name, l.name, sz.name), func(t *testing.T) {
					job := growList(t, base, 1, l, l.max, 0)
					if sz.long {
						// Each x of the padding is one byte of JSON.
						job = growList(t, base, 1, l, l.max, (budget-len(mustJSON(t, job)))/l.max)
					}
					size := len(mustJSON(t, job))
					if size > webhooktest.APIServerMaxBody {
						t.Fatalf("the Job is %d bytes; the API server accepts at most %d", size, webhooktest.APIServerMaxBody)
					}
					m, v, resp := admissionCost(t, job)
					t.Logf("%d entries, a %d-byte Job: allocated %d + %d bytes", len(entries(job, l)), size, m, v)
					// Decoded, simulated, and the mutation encodes and diffs
					// it. The same 3 MiB env Job measured 56-76 MB for the
					// mutation across runs (TotalAlloc is process-wide and the
					// encoders' buffers grow by chance), so the bound is 32
					// bytes per byte of Job: linear growth passes with room,
					// the m×n table of jsonpatch v2.2.0 (270 MB for 2,048 short
					// env entries) does not.
					if budget := uint64(maxAdmissionBytes + 32*size); m > budget || v > budget {
						t.Errorf("mutation allocated %d bytes, validation %d; want at most %d each", m, v, budget)
					}
					if !resp.Allowed {
						t.Errorf("denied: %s", resp.Result.Message)
					}
				})
			}
		}
	}
}

// entries returns the entries of list l of the template of the Job's second
// task, as strings (only their number matters).
func entries(job *batch.Job, l templateList) []any {
	s := &job.Spec.Tasks[1].Template.Spec
	c := &s.Containers[0]
	var n int
	switch l.name {
	case "args":
		n = len(c.Args)
	case "command":
		n = len(c.Command)
	case "env":
		n = len(c.Env)
	case "envFrom":
		n = len(c.EnvFrom)
	case "ports":
		n = len(c.Ports)
	case "volumeMounts":
		n = len(c.VolumeMounts)
	case "volumes":
		n = len(s.Volumes)
	case "containers":
		n = len(s.Containers)
	}
	return make([]any, n)
}

// The mutation's patch costs in proportion to the Job whatever its lists,
// beyond the bounds too (MutatePatch does not diff a Job over them): the
// patch of a mutation's changes to a pytorch Job whose worker has 15,000
// args, 12,000 env entries (the reviewers' Jobs) or 3 MiB of args applies and
// gives the mutated Job. With gomodules.xyz/jsonpatch/v2 v2.2.0, 15,000 args
// took 1.8 GB, 14,000 times the Job's JSON.
func TestPatchCostOfLongLists(t *testing.T) {
	args, env := templateLists[0], templateLists[2]
	tests := []struct {
		list templateList
		n    int
	}{{args, 15000}, {env, 12000}, {args, -1}}
	for _, base := range costJobs(2)[1:2] {
		for _, tc := range tests {
			job := growList(t, base, 1, tc.list, tc.n, 0)
			t.Run(fmt.Sprintf("%s/%d %s", base.Name, len(entries(job, tc.list)), tc.list.name), func(t *testing.T) {
				mutated := job.DeepCopy()
				mutated.Spec.Plugins["svc"] = []string{}
				mutated.Spec.Tasks[1].Template.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				mutated.Spec.Tasks[1].Policies = []batch.LifecyclePolicy{{Event: podFailed, Action: terminateJob}}
				raw := mustJSON(t, job)
				var patch []byte
				var err error
				start := time.Now()
				n := allocated(func() { patch, err = jobPatch(raw, job, mutated) })
				t.Logf("a %d-byte Job: %d bytes allocated (%.0f times), %v; patch %s", len(raw), n, float64(n)/float64(len(raw)), time.Since(start), patch)
				if err != nil {
					t.Fatal(err)
				}
				// Measured: about 65 times (two encodings, two generic
				// decodings for the diff and two for anchorPatch, and a
				// path per list entry).
				if budget := uint64(maxAdmissionBytes + 100*len(raw)); n > budget {
					t.Errorf("allocated %d bytes; want at most %d", n, budget)
				}
				if diff := cmp.Diff(mutated, applyPatch(t, job, patch)); diff != "" {
					t.Errorf("the patched Job differs from the mutated one (-mutated +patched):\n%s", diff)
				}
			})
		}
	}
}
