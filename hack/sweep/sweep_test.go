package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/audit"
	auditpolicy "k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	ktesting "k8s.io/client-go/testing"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcfake "volcano.sh/apis/pkg/client/clientset/versioned/fake"
	intreempi "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/mpi"
	intreepytorch "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/pytorch"
	intreetf "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/tensorflow"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/catalog/ninthtest"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/webhook"
)

// The pods of each framework's job, by task, as issue #28 asks for.
func TestShapes(t *testing.T) {
	want := map[string]map[string]int{
		"tensorflow": {"ps": 1, "worker": 2},
		"pytorch":    {"master": 1, "worker": 3},
		"mpi":        {"master": 1, "worker": 2},
		"mxnet":      {"scheduler": 1, "server": 1, "worker": 2},
		"xgboost":    {"master": 1, "worker": 2},
		"dask":       {"scheduler": 1, "worker": 2, "client": 1},
		"jax":        {"worker": 3},
		"paddle":     {"worker": 3},
	}
	got := map[string]map[string]int{}
	for _, fw := range catalog.Names() {
		tasks, ok := shape(fw)
		if !ok {
			t.Errorf("framework %s has no shape: its Sample has no role with Small pods", fw)
		}
		got[fw] = map[string]int{}
		for _, task := range tasks {
			got[fw][task.Name] = task.Replicas
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shapes (-want +got):\n%s", diff)
	}
	if tasks, ok := shape("no-such-framework"); ok {
		t.Errorf("shape(no-such-framework) = %v, want none", tasks)
	}
}

// inTree are Volcano's in-tree plugins, which stock runs, and a variable
// each sets on every pod of a sweep's job (mpi: on its launcher).
var inTree = map[string]struct {
	build jobtest.Builder
	env   string
}{
	"tensorflow": {intreetf.New, "TF_CONFIG"},
	"pytorch":    {intreepytorch.New, "MASTER_ADDR"},
	"mpi":        {intreempi.New, "MPI_HOST"},
}

// Every job of a sweep of every framework is one the project's admission
// lets through unchanged in what the plugins read (mutation, then
// validation), its plugin's arguments describe it without errors, and the
// plugin (and for the frameworks stock has, Volcano's in-tree one) runs its
// hooks on every pod of it; with inline, only the TensorFlow jobs change.
func TestSweepJobs(t *testing.T) {
	fws := catalog.Names()
	for _, impl := range []string{measure.ImplOurs, measure.ImplOursInline, measure.ImplOursNoWait, measure.ImplStockWait} {
		inline, nowait := impl == measure.ImplOursInline, impl == measure.ImplOursNoWait
		stockWait := impl == measure.ImplStockWait
		jobs, err := sweepJobs(fws, 2*len(fws)+1, impl)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for i, job := range jobs {
			names = append(names, job.Name)
			fw := fws[i%len(fws)]
			if got := jobFramework(job); got != fw {
				t.Errorf("job %s: framework %q, want %q", job.Name, got, fw)
			}
			f := catalog.Lookup(fw)
			args := job.Spec.Plugins[fw]
			if inline != slices.Contains(args, "--tf-config=inline") && fw == "tensorflow" || fw != "tensorflow" && slices.Contains(args, "--tf-config=inline") {
				t.Errorf("job %s, inline %v: arguments %q", job.Name, inline, args)
			}
			if nowait != slices.Contains(args, "--wait=false") {
				t.Errorf("job %s, %s: arguments %q", job.Name, impl, args)
			}
			if (stockWait && fw == "pytorch") != slices.Contains(args, "--wait-master-enabled") {
				t.Errorf("job %s, %s: arguments %q", job.Name, impl, args)
			}
			if errs := f.Describe(args, job).Errs; len(errs) > 0 {
				t.Errorf("job %s: %s refuses its arguments: %v", job.Name, fw, errs.ToAggregate())
			}
			mutated, _ := webhook.MutateJob(job, webhook.Options{})
			if errs := webhook.ValidateJob(mutated); len(errs) > 0 {
				t.Errorf("job %s: admission denies it: %v", job.Name, errs.ToAggregate())
			}
			if diff := cmp.Diff(job.Spec.Plugins, mutated.Spec.Plugins); diff != "" {
				t.Errorf("job %s: admission adds plugins, which stock's and ours' runs would not share (-job +mutated):\n%s", job.Name, diff)
			}
			for _, task := range job.Spec.Tasks {
				if !slices.Contains(samples.Of(fw).RoleFlags(), task.Name) {
					t.Errorf("job %s: task %s is not named as a role of %s (%v)", job.Name, task.Name, fw, samples.Of(fw).RoleFlags())
				}
			}
			if i < len(fws) {
				runHooks(t, job, fw, impl)
			}
		}
		if want := fmt.Sprintf("sweep-%s-%04d", fws[len(fws)-1], len(fws)-1); names[len(fws)-1] != want {
			t.Errorf("job %d named %s, want %s", len(fws)-1, names[len(fws)-1], want)
		}
	}
	if _, err := sweepJobs([]string{"caffe"}, 1, measure.ImplOurs); err == nil {
		t.Error("sweepJobs(caffe): no error")
	}
}

// runHooks runs the framework's plugin, and stock's when it has one, on
// every pod of job as Volcano's controller does; a hook's error fails the
// test, as does an in-tree plugin that sets nothing.
func runHooks(t *testing.T, job *batch.Job, fw string, impl string) {
	t.Helper()
	job = job.DeepCopy()
	job.UID = types.UID(fmt.Sprintf("uid-%s-%s", job.Name, impl))
	job.ResourceVersion = "1"
	for _, task := range job.Spec.Tasks {
		for i := range int(task.Replicas) {
			pod := jobtest.RunPod(t, catalog.Lookup(fw).New, fw, job, task.Name, i)
			if impl == measure.ImplOursNoWait && len(pod.Spec.InitContainers) > 0 {
				t.Errorf("job %s, %s: pod %s has init containers %v", job.Name, impl, pod.Name, pod.Spec.InitContainers)
			}
			stock, ok := inTree[fw]
			if !ok || impl != measure.ImplOurs && impl != measure.ImplStockWait {
				continue
			}
			pod = jobtest.RunPod(t, stock.build, fw, job, task.Name, i)
			if _, set := jobtest.Env(pod, 0)[stock.env]; !set && (fw != "mpi" || task.Name == "master") {
				t.Errorf("job %s: the in-tree %s plugin set no %s on %s", job.Name, fw, stock.env, pod.Name)
			}
			// stock-wait: stock's pytorch workers, and only they, wait for the master.
			var inits []string
			for _, c := range pod.Spec.InitContainers {
				inits = append(inits, c.Name)
			}
			var want []string
			if impl == measure.ImplStockWait && fw == "pytorch" && task.Name == "worker" {
				want = []string{"wait-for-master"}
			}
			if diff := cmp.Diff(want, inits); diff != "" {
				t.Errorf("job %s, %s: the in-tree plugin's init containers on %s (-want +got):\n%s", job.Name, impl, pod.Name, diff)
			}
		}
	}
}

func TestPlan(t *testing.T) {
	all := catalog.Names()
	all3 := []string{"stock", "ours", "ours-inline"}
	all4 := []string{"stock", "stock-wait", "ours", "ours-inline"}
	for _, c := range []struct {
		name              string
		frameworks, impls []string
		want              []mix
		err               bool
	}{
		// 10 clusters a round: stock-wait in pytorch's mix only.
		{"default", all, all4, []mix{
			{"tensorflow", []string{"tensorflow"}, all3},
			{"pytorch", []string{"pytorch"}, []string{"stock", "stock-wait", "ours"}},
			{"mpi", []string{"mpi"}, []string{"stock", "ours"}},
			{"all", all, []string{"ours", "ours-inline"}},
		}, false},
		{"without stock-wait", all, all3, []mix{
			{"tensorflow", []string{"tensorflow"}, all3},
			{"pytorch", []string{"pytorch"}, []string{"stock", "ours"}},
			{"mpi", []string{"mpi"}, []string{"stock", "ours"}},
			{"all", all, []string{"ours", "ours-inline"}},
		}, false},
		{"stock-wait without stock: pytorch's mix alone compares", all, []string{"ours", "stock-wait"}, []mix{
			{"pytorch", []string{"pytorch"}, []string{"ours", "stock-wait"}},
			{"all", all, []string{"ours"}},
		}, false},
		{"stock's frameworks with pytorch: stock-wait runs their mix too", []string{"pytorch", "mpi"}, []string{"stock-wait", "stock", "ours"}, []mix{
			{"pytorch", []string{"pytorch"}, []string{"stock-wait", "stock", "ours"}},
			{"mpi", []string{"mpi"}, []string{"stock", "ours"}},
			{"pytorch+mpi", []string{"pytorch", "mpi"}, []string{"stock-wait", "stock", "ours"}},
		}, false},
		{"stock-wait alone, no pytorch", []string{"tensorflow", "mpi"}, []string{"stock-wait"}, nil, true},
		{"ours only: the mix of all", all, []string{"ours"}, []mix{{"all", all, []string{"ours"}}}, false},
		{"stock's frameworks: stock runs their mix too", []string{"mpi", "tensorflow"}, []string{"ours", "stock"}, []mix{
			{"mpi", []string{"mpi"}, []string{"ours", "stock"}},
			{"tensorflow", []string{"tensorflow"}, []string{"ours", "stock"}},
			{"mpi+tensorflow", []string{"mpi", "tensorflow"}, []string{"ours", "stock"}},
		}, false},
		{"one framework of stock's: one mix", []string{"pytorch"}, all3, []mix{
			{"pytorch", []string{"pytorch"}, []string{"stock", "ours"}},
		}, false},
		{"one framework stock lacks", []string{"dask"}, all3, []mix{{"dask", []string{"dask"}, []string{"ours"}}}, false},
		{"stock alone and frameworks it lacks", []string{"dask", "jax"}, []string{"stock"}, nil, true},
		{"unknown framework", []string{"caffe"}, all3, nil, true},
		{"twice", []string{"mpi", "mpi"}, all3, nil, true},
		{"none", nil, all3, nil, true},
	} {
		got, err := plan(c.frameworks, c.impls)
		if (err != nil) != c.err {
			t.Errorf("%s: error %v, want one: %v", c.name, err, c.err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// The audit policy loads as kube-apiserver loads it, logs a controller
// manager's requests at the Metadata level once each, and leaves out leases
// and non-resource paths.
func TestAuditPolicy(t *testing.T) {
	p, err := auditpolicy.LoadPolicyFromBytes([]byte(auditPolicy))
	if err != nil {
		t.Fatal(err)
	}
	ev := auditpolicy.NewPolicyRuleEvaluator(p)
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	for _, c := range []struct {
		attrs authorizer.AttributesRecord
		want  audit.Level
	}{
		{authorizer.AttributesRecord{User: admin, Verb: "create", Resource: "pods", ResourceRequest: true}, audit.LevelMetadata},
		{authorizer.AttributesRecord{User: admin, Verb: "update", APIGroup: "batch.volcano.sh", Resource: "jobs", Subresource: "status", ResourceRequest: true}, audit.LevelMetadata},
		{authorizer.AttributesRecord{User: admin, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", ResourceRequest: true}, audit.LevelNone},
		{authorizer.AttributesRecord{User: admin, Verb: "get", Path: "/readyz"}, audit.LevelNone},
	} {
		got := ev.EvaluatePolicyRule(c.attrs)
		if got.Level != c.want {
			t.Errorf("%s %s/%s %s: level %s, want %s", c.attrs.Verb, c.attrs.Resource, c.attrs.Subresource, c.attrs.Path, got.Level, c.want)
		}
		// The evaluator unites the stages through a map: their order varies.
		omitted := slices.Sorted(slices.Values(got.OmitStages))
		if c.want != audit.LevelNone && !slices.Equal(omitted, []audit.Stage{audit.StageRequestReceived, audit.StageResponseStarted}) {
			t.Errorf("%s %s: omitted stages %v, want all but ResponseComplete (and Panic)", c.attrs.Verb, c.attrs.Resource, omitted)
		}
	}

	dir := filepath.Join(t.TempDir(), "audit")
	args, err := auditArgs(dir)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := os.ReadFile(filepath.Join(dir, "policy.yaml"))
	if err != nil || string(policy) != auditPolicy {
		t.Errorf("policy file: %q, %v", policy, err)
	}
	if i := slices.Index(args, "--audit-log-path"); i < 0 || args[i+1] != filepath.Join(dir, "audit.log") {
		t.Errorf("args %q: want --audit-log-path %s", args, filepath.Join(dir, "audit.log"))
	}
	for _, f := range []string{"audit.log", "audit-2024-06-01T10-00-00.000.log", "other.log"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logs, err := auditLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []string
	for _, l := range logs {
		bases = append(bases, filepath.Base(l))
	}
	if diff := cmp.Diff([]string{"audit-2024-06-01T10-00-00.000.log", "audit.log"}, bases); diff != "" {
		t.Errorf("audit logs (-want +got):\n%s", diff)
	}
}

// auditLine is an audit event as kube-apiserver 1.30 logs it (JSON,
// Metadata level), at 10:00:<second> UTC.
func auditLine(agent, verb, group, resource, sub string, second int) string {
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a%d","stage":"ResponseComplete",`+
		`"requestURI":"/x","verb":%q,"user":{"username":"admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],`+
		`"userAgent":"%s/v0.0.0 (linux/amd64) kubernetes/$Format","objectRef":{"resource":%q,"namespace":"default","name":"n","apiGroup":%q,"apiVersion":"v1","subresource":%q},`+
		`"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2024-06-01T10:00:%02d.000100Z","stageTimestamp":"2024-06-01T10:00:%02d.002000Z"}`,
		second, verb, agent, resource, group, sub, second, second)
}

func TestCountAudit(t *testing.T) {
	const ours, stock = "vc-controller-manager", "vc-controller-manager-stock"
	lines := []string{
		auditLine(ours, "create", "", "pods", "", 10),
		auditLine(ours, "create", "", "pods", "", 11),
		auditLine(ours, "update", "batch.volcano.sh", "jobs", "status", 12),
		auditLine(ours, "create", "", "events", "", 13),
		auditLine(ours, "get", "scheduling.volcano.sh", "podgroups", "", 14),
		auditLine(stock, "create", "", "pods", "", 15),
		auditLine("vc-scheduler", "create", "", "pods", "binding", 16),
		// Before and after the sweep.
		auditLine(ours, "create", "", "pods", "", 5),
		auditLine(ours, "create", "", "pods", "", 50),
		// A non-resource request: no objectRef.
		`{"kind":"Event","verb":"get","userAgent":"vc-controller-manager/v0.0.0","requestReceivedTimestamp":"2024-06-01T10:00:20.000000Z"}`,
		// Not JSON, but another client's: never decoded.
		`kwok: not an audit event`,
	}
	from := time.Date(2024, 6, 1, 10, 0, 10, 0, time.UTC)
	to := time.Date(2024, 6, 1, 10, 0, 30, 0, time.UTC)
	for _, c := range []struct {
		agent string
		want  map[string]int
	}{
		{ours, map[string]int{"create pods": 2, "update jobs.batch.volcano.sh/status": 1, "create events": 1, "get podgroups.scheduling.volcano.sh": 1}},
		{stock, map[string]int{"create pods": 1}},
		{"vc-scheduler", map[string]int{"create pods/binding": 1}},
	} {
		got := map[string]int{}
		if err := countAudit(strings.NewReader(strings.Join(lines, "\n")+"\n"), c.agent, from, to, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.agent, diff)
		}
	}
	bad := `{"userAgent":"vc-controller-manager/v0.0.0", "verb": 3}`
	if err := countAudit(strings.NewReader(bad), ours, from, to, map[string]int{}); err == nil {
		t.Error("a malformed event of the client: no error")
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	if err := countAuditFiles([]string{file, file}, stock, from, to, got); err != nil || got["create pods"] != 2 {
		t.Errorf("two files: %v, %v; want create pods 2", got, err)
	}
	if err := countAuditFiles([]string{filepath.Join(dir, "missing.log")}, stock, from, to, got); err == nil {
		t.Error("a missing file: no error")
	}

	for key, want := range map[string][2]bool{
		"create pods":                         {true, true},
		"create events":                       {true, false},
		"create events.events.k8s.io":         {true, false},
		"create pods/binding":                 {true, false},
		"patch pods/status":                   {true, false},
		"delete configmaps":                   {true, false},
		"deletecollection pods":               {true, false},
		"update jobs.batch.volcano.sh/status": {true, false},
		"get podgroups.scheduling.volcano.sh": {false, false},
		"watch pods":                          {false, false},
	} {
		if got := [2]bool{isWrite(key), isObjectCreate(key)}; got != want {
			t.Errorf("%q: write, object create = %v, want %v", key, got, want)
		}
	}
}

func TestAdmissionLatency(t *testing.T) {
	text := func(le1, le25, inf int) map[string]*dto.MetricFamily {
		t.Helper()
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(fmt.Sprintf(`# TYPE %[1]s histogram
%[1]s_bucket{path="/jobs/framework/mutate",result="allowed",le="0.001"} %[2]d
%[1]s_bucket{path="/jobs/framework/mutate",result="allowed",le="0.0025"} %[3]d
%[1]s_bucket{path="/jobs/framework/mutate",result="allowed",le="+Inf"} %[4]d
%[1]s_sum{path="/jobs/framework/mutate",result="allowed"} 0.5
%[1]s_count{path="/jobs/framework/mutate",result="allowed"} %[4]d
`, admissionHistogram, le1, le25, inf)))
		if err != nil {
			t.Fatal(err)
		}
		return fams
	}
	var res Measurement
	// 100 during the sweep: 50 within 1 ms, 50 in (1, 2.5] ms.
	if err := admissionLatency(text(3, 3, 3), text(53, 103, 103), &res); err != nil {
		t.Fatal(err)
	}
	if res.Admissions != 100 || res.AdmissionP50 != 0.001 || fmt.Sprintf("%.6f", res.AdmissionP99) != "0.002470" {
		t.Errorf("admissions %d, p50 %v, p99 %v; want 100, 0.001, 0.00247", res.Admissions, res.AdmissionP50, res.AdmissionP99)
	}
	if err := admissionLatency(map[string]*dto.MetricFamily{}, text(1, 1, 1), &res); err != nil || res.Admissions != 1 {
		t.Errorf("no histogram before: %v, %d admissions; want 1", err, res.Admissions)
	}
}

func TestSubmit(t *testing.T) {
	jobs, err := sweepJobs([]string{"tensorflow", "jax"}, 40, measure.ImplOurs)
	if err != nil {
		t.Fatal(err)
	}
	client := vcfake.NewSimpleClientset()
	var n atomic.Int64
	if err := submit(context.Background(), client.BatchV1alpha1().Jobs("default"), jobs, 7, &n); err != nil {
		t.Fatal(err)
	}
	list, err := client.BatchV1alpha1().Jobs("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 40 || n.Load() != 40 {
		t.Errorf("%d jobs created, %d counted; want 40 and 40", len(list.Items), n.Load())
	}

	// The first failure stops the sweep, and its error names the job.
	failing := vcfake.NewSimpleClientset()
	failing.PrependReactor("create", "jobs", func(a ktesting.Action) (bool, runtime.Object, error) {
		if a.(ktesting.CreateAction).GetObject().(*batch.Job).Name == jobs[3].Name {
			return true, nil, errors.New("admission webhook timed out")
		}
		return false, nil, nil
	})
	n.Store(0)
	err = submit(context.Background(), failing.BatchV1alpha1().Jobs("default"), jobs, 2, &n)
	if err == nil || !strings.Contains(err.Error(), jobs[3].Name) {
		t.Errorf("submit with a failing create: %v, want an error naming %s", err, jobs[3].Name)
	}
	if n.Load() >= 40 {
		t.Errorf("%d jobs created after a failure, want fewer than 40", n.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := submit(ctx, vcfake.NewSimpleClientset().BatchV1alpha1().Jobs("default"), jobs, 3, &n); !errors.Is(err, context.Canceled) {
		t.Errorf("submit with an ended context: %v, want context.Canceled", err)
	}
}

// measurement is a sweep's measurement for the report tests: jobs 100,
// times and CPU in seconds, writes per job (create pods) plus one update
// of the job status each, and the admission p99 in ms.
func measurement(mx, impl string, round int, bound, cpu, writes, p99ms float64) Measurement {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	return Measurement{
		Impl: impl, Round: round, Mix: mx, Frameworks: []string{mx}, Jobs: 100, Pods: 300,
		Submitted: s(bound / 4), Created: s(bound / 2), Bound: s(bound), BoundOf: map[string]time.Duration{mx: s(bound)},
		CPUToBound: s(cpu / 2), CPUTotal: s(cpu),
		Admissions: 200, AdmissionP50: 0.001, AdmissionP99: p99ms / 1000,
		Requests: map[string]int{"create pods": int(100 * (writes - 1)), "update jobs.batch.volcano.sh/status": 100, "get podgroups.scheduling.volcano.sh": 50},
	}
}

func TestReport(t *testing.T) {
	base := []Measurement{
		measurement("tensorflow", "stock", 1, 20, 10, 4, 5),
		measurement("tensorflow", "stock", 2, 22, 12, 4, 5),
		measurement("tensorflow", "ours", 1, 18, 8, 5, 6),
		measurement("tensorflow", "ours", 2, 20, 10, 5, 6),
		// Not a target: ours-inline slower and writing more than ours.
		measurement("tensorflow", "ours-inline", 1, 30, 30, 9, 6),
		measurement("all", "ours", 1, 40, 20, 6, 7),
	}
	base[2].Plugin = map[string]float64{"plan builds": 100, "plan cache hits": 500, "ConfigMap syncs": 100}
	base[3].Plugin = map[string]float64{"plan builds": 300, "plan cache hits": 300, "ConfigMap syncs": 300}
	base[5].Frameworks = []string{"tensorflow", "dask"}
	base[5].BoundOf = map[string]time.Duration{"tensorflow": 35 * time.Second, "dask": 40 * time.Second}
	var out strings.Builder
	if failed := report(&out, base, targetRatio); len(failed) != 0 {
		t.Errorf("failed targets: %v\n%s", failed, out.String())
	}
	words := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		// Medians: stock bound (20+22)/2 = 21, cpu total 11; 4 writes per job.
		"tensorflow stock 2 100 300 5.25 10.50 21.00 5.50 11.00 200 1.0 5.0",
		"Mix all: seconds until every pod of a framework's jobs was bound: impl tensorflow dask ours 35.00 40.00",
		"create pods 3.00 4.00 8.00",
		"update jobs.batch.volcano.sh/status 1.00 1.00 1.00",
		"get podgroups.scheduling.volcano.sh 0.50 0.50 0.50",
		"writes (create, update, patch, delete) 4.00 5.00 9.00 reads (get, list, watch) 0.50 0.50 0.50 objects created (no events) 3.00 4.00 8.00",
		// Per job, medians over ours' rounds; stock serves no metrics.
		"plugins ConfigMap syncs (ours' metrics) - 2.00",
		"plugins plan builds (ours' metrics) - 2.00",
		"plugins plan cache hits (ours' metrics) - 4.00",
		"tensorflow ours 0.905 0.905 0.905 0.818 0.818 5.00 4.00 yes",
		"tensorflow ours-inline 1.429 1.429 1.429 2.727 2.727 9.00 4.00 (not a target)",
		"admission p99, mix all, ours: 7.0 ms (target: at most 20 ms): holds",
	} {
		// Column widths are tabwriter's business; compare the words.
		if !strings.Contains(words, want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	for _, c := range []struct {
		name   string
		change func(ms []Measurement)
		failed []string
	}{
		{"bound above stock's", func(ms []Measurement) { ms[2].Bound, ms[3].Bound = 23*time.Second, 24*time.Second },
			[]string{"tensorflow bound ratio 1.119 > 1.00"}},
		{"cpu above stock's", func(ms []Measurement) { ms[3].CPUTotal = 15 * time.Second },
			[]string{"tensorflow cpu total ratio 1.045 > 1.00"}},
		{"2 writes more than stock's", func(ms []Measurement) {
			ms[2].Requests["patch pods"], ms[3].Requests["patch pods"] = 100, 101
		}, []string{"tensorflow API writes per job 6.00 > stock's 4.00 + 1"}},
		{"admission p99 of stock's runs", func(ms []Measurement) { ms[0].AdmissionP99, ms[1].AdmissionP99 = 0.019, 0.022 },
			[]string{"tensorflow stock admission p99 20.5 ms > 20 ms"}},
		{"no admissions seen", func(ms []Measurement) { ms[5].AdmissionP99 = math.NaN() },
			[]string{"all ours admission p99 NaN ms > 20 ms"}},
		{"audit events lost", func(ms []Measurement) { ms[5].AuditErrors = 3 },
			[]string{"all ours round 1: kube-apiserver failed to write 3 audit events, the API request counts are incomplete"}},
	} {
		ms := make([]Measurement, len(base))
		for i, m := range base {
			ms[i] = m
			ms[i].Requests = maps.Clone(m.Requests)
		}
		c.change(ms)
		out.Reset()
		if diff := cmp.Diff(c.failed, report(&out, ms, targetRatio)); diff != "" {
			t.Errorf("%s: failed targets (-want +got):\n%s", c.name, diff)
		}
	}

	// Without stock: medians and requests, no comparison, nothing fails.
	out.Reset()
	if failed := report(&out, base[5:], targetRatio); len(failed) != 0 {
		t.Errorf("ours only: failed %v", failed)
	}
}

func TestFits(t *testing.T) {
	mixes, err := plan(catalog.Names(), []string{"stock", "ours"})
	if err != nil {
		t.Fatal(err)
	}
	// 500 pytorch jobs are the largest: 2,000 pods, 19 nodes of 110.
	if err := fits(mixes, 500, 19); err != nil {
		t.Errorf("500 jobs on 19 nodes: %v", err)
	}
	if err := fits(mixes, 500, 18); err == nil || !strings.Contains(err.Error(), "mix pytorch: 500 jobs have 2000 pods") {
		t.Errorf("500 jobs on 18 nodes: %v, want mix pytorch's 2000 pods named", err)
	}
}

// auditTail counts one client's lines, reads only what was appended, waits
// for a line being written to complete, and reads rotated files too.
func TestAuditTail(t *testing.T) {
	const ours, stock = "vc-controller-manager", "vc-controller-manager-stock"
	dir := t.TempDir()
	appendTo := func(name, text string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	tail := newAuditTail(dir, ours)
	check := func(want int) {
		t.Helper()
		if n, err := tail.count(); n != want || err != nil {
			t.Errorf("count = %d, %v; want %d", n, err, want)
		}
	}
	check(0) // no log yet
	appendTo(auditLogName, auditLine(ours, "create", "", "pods", "", 10)+"\n"+auditLine(stock, "create", "", "pods", "", 10)+"\n")
	check(1)
	check(1) // nothing new: nothing counted twice
	// Half a line: counted once it is complete.
	line := auditLine(ours, "patch", "", "events", "", 11)
	appendTo(auditLogName, line[:20])
	check(1)
	appendTo(auditLogName, line[20:]+"\n")
	check(2)
	appendTo("audit-2024-06-01T10-00-30.000.log", auditLine(ours, "patch", "", "events", "", 12)+"\n")
	check(3)
}

// waitAuditQuiet returns once the client has sent nothing for the quiet
// period, however busy others are, and fails when the client never stops.
func TestWaitAuditQuiet(t *testing.T) {
	const ours = "vc-controller-manager"
	dir := t.TempDir()
	log := filepath.Join(dir, auditLogName)
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// ours sends for 300 ms, another client all along.
	start := time.Now()
	go func() {
		for ctx.Err() == nil {
			agent := "vc-scheduler"
			if time.Since(start) < 300*time.Millisecond {
				agent = ours
			}
			fmt.Fprintln(f, auditLine(agent, "patch", "", "events", "", 10))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if err := waitAuditQuiet(ctx, dir, ours, 200*time.Millisecond, 20*time.Millisecond, 10*time.Second); err != nil {
		t.Fatalf("waitAuditQuiet: %v", err)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("waitAuditQuiet returned %s after the start: before ours' last request (300 ms) and the quiet period (200 ms)", d)
	}
	if err := waitAuditQuiet(ctx, dir, "vc-scheduler", 200*time.Millisecond, 20*time.Millisecond, 500*time.Millisecond); err == nil {
		t.Errorf("waitAuditQuiet of a client that never stops: no error")
	}
}

// A ninth framework registered in the catalog alone (its Sample with it)
// is in the sweep: in the mix of all frameworks, with the jobs of its
// Sample's small Job, which admission accepts as they are.
func TestNinthFrameworkInTheSweep(t *testing.T) {
	ninthtest.Register(t)
	mixes, err := plan(catalog.Names(), []string{measure.ImplOurs})
	if err != nil {
		t.Fatal(err)
	}
	want := []mix{{Name: mixAll, Frameworks: catalog.Names(), Impls: []string{measure.ImplOurs}}}
	if diff := cmp.Diff(want, mixes); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if !slices.Contains(mixes[0].Frameworks, ninthtest.Name) {
		t.Errorf("the mix of all frameworks %v has no %s", mixes[0].Frameworks, ninthtest.Name)
	}
	jobs, err := sweepJobs([]string{ninthtest.Name}, 2, measure.ImplOurs)
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range jobs {
		got := map[string]int32{}
		for _, task := range job.Spec.Tasks {
			got[task.Name] = task.Replicas
		}
		if diff := cmp.Diff(map[string]int32{"lead": 1, "worker": 2}, got); diff != "" {
			t.Errorf("job %s's tasks (-want +got):\n%s", job.Name, diff)
		}
		mutated, _ := webhook.MutateJob(job, webhook.Options{})
		if errs := webhook.ValidateJob(mutated); len(errs) > 0 {
			t.Errorf("job %s: admission denies it: %v", job.Name, errs.ToAggregate())
		}
		if diff := cmp.Diff(job.Spec.Plugins, mutated.Spec.Plugins); diff != "" {
			t.Errorf("job %s: admission adds plugins (-job +mutated):\n%s", job.Name, diff)
		}
	}
}

// stock-wait appears in the medians and gets its own comparison, which is
// not a target: ours slower than stock-wait fails nothing while it is not
// slower than stock; without stock-wait measurements there is no such table.
func TestReportStockWait(t *testing.T) {
	ms := []Measurement{
		measurement("pytorch", "stock", 1, 20, 10, 4, 5),
		measurement("pytorch", "stock-wait", 1, 15, 6, 4, 5),
		measurement("pytorch", "ours", 1, 20, 9, 5, 6),
	}
	var out strings.Builder
	if failed := report(&out, ms, targetRatio); len(failed) != 0 {
		t.Errorf("failed targets: %v\n%s", failed, out.String())
	}
	words := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"pytorch stock-wait 1 100 300 3.75 7.50 15.00 3.00 6.00 200 1.0 5.0",
		"Against stock-wait (stock with the PyTorch jobs' --wait-master-enabled: its workers wait for the master's port, as ours' do by default); not targets: " +
			"mix impl submitted/stock-wait created/stock-wait bound/stock-wait cpu to bound/stock-wait cpu total/stock-wait writes/job stock-wait's holds " +
			"pytorch ours 1.333 1.333 1.333 1.500 1.500 5.00 4.00 (not a target)",
		"submitted/stock created/stock bound/stock cpu to bound/stock cpu total/stock writes/job stock's holds pytorch ours 1.000 1.000 1.000 0.900 0.900 5.00 4.00 yes",
		"admission p99, mix pytorch, stock-wait: 5.0 ms (target: at most 20 ms): holds",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	report(&out, []Measurement{ms[0], ms[2]}, targetRatio)
	if strings.Contains(out.String(), "stock-wait") {
		t.Errorf("report without stock-wait measurements names it:\n%s", out.String())
	}
}
