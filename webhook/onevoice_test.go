package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	"volcano.sh/volcano/pkg/webhooks/router"

	"github.com/vcplugins/framework-plugins/plugins"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// answer renders an admission response for comparison: "allowed", "allowed
// with warnings: " and the warnings joined by " | ", or the denial's message.
func answer(resp *admissionv1.AdmissionResponse) string {
	if resp.Allowed {
		if len(resp.Warnings) > 0 {
			return "allowed with warnings: " + strings.Join(resp.Warnings, " | ")
		}
		return "allowed"
	}
	if resp.Result == nil {
		return "denied without a status"
	}
	return resp.Result.Message
}

// responseJSON is the response as the manager writes it.
func responseJSON(t testing.TB, resp *admissionv1.AdmissionResponse) string {
	t.Helper()
	return string(mustJSON(t, resp))
}

// bothMutations runs the two job mutations in the API server's order.
func bothMutations(t *testing.T, job *batch.Job) *batch.Job {
	t.Helper()
	return volcanoMutate(t, oursMutate(t, job))
}

// mpiJob has tasks launcher (1) and w (2), which Volcano's mpi parser finds
// only when --master and --worker are its first flags or follow --port.
func mpiJob(name string, args ...string) *jobtest.JobWrapper {
	return mkJob(name).Task(jobtest.MakeTask("launcher", 1).Obj()).Task(jobtest.MakeTask("w", 2).Obj()).Plugin("mpi", args...)
}

// Jobs whose framework plugin arguments stock Volcano judges with its in-tree
// mpi parser: the wrapped validation leaves them to ours and keeps Volcano's
// other checks.
func TestFrameworkArgumentsOneVoice(t *testing.T) {
	plugins.Register()
	stock := volcanoValidate(t)
	wrapped := WithoutFrameworkPlugins(stock)
	const (
		allowed   = "allowed"
		noMaster  = "The specified mpi master task was not found"
		noWorker  = "The specified mpi worker task was not found"
		badPolicy = `spec.policies: Invalid value: "Bogus": invalid policy event`
		noQueue   = "unable to find job queue"
		// Since Volcano v1.14 the CRD schema checks negative counts; the
		// webhook keeps the checks across fields, such as this one.
		taskMinOver = "'minAvailable' is greater than 'replicas' in task: w"
		// warned starts our answer to a Job Volcano admits whose framework
		// arguments ours rejects; its problems follow.
		warned = "allowed with warnings: " + ArgumentsWarning + " | "
	)
	tests := []struct {
		name string
		job  *batch.Job
		// stock is (a substring of) Volcano's answer without the wrapper,
		// wrapped the answer with it, ours our validation's.
		stock, wrapped, ours string
	}{{
		name:  "the brief's order: --port (which Volcano's parser knows) first",
		job:   mpiJob("mpi-port-first", "--port=2222", "--master=launcher", "--worker=w").Obj(),
		stock: allowed, wrapped: allowed, ours: allowed,
	}, {
		name:  "a flag Volcano's parser does not know before --master: false denial",
		job:   mpiJob("mpi-impl-first", "--mpi-implementation=openmpi", "--port=2222", "--master=launcher", "--worker=w").Obj(),
		stock: noMaster, wrapped: allowed, ours: allowed,
	}, {
		// Volcano's parser stops at the flag it does not know and denies for
		// a "master" task the Job lacks: not a Job it admits, so our argument
		// problem is a denial, not a warning.
		name:  "an argument problem where Volcano's parser misses the master",
		job:   mpiJob("mpi-impl-bad", "--mpi-implementation=mvapich", "--master=launcher", "--worker=w").Obj(),
		stock: noMaster, wrapped: allowed, ours: `spec.plugins[mpi][0]: Invalid value: "--mpi-implementation=mvapich": plugin mpi: --mpi-implementation=mvapich: must be one of openmpi, intel, mpich`,
	}, {
		name:  "--slots-per-worker first",
		job:   mpiJob("mpi-slots-first", "--slots-per-worker=2", "--master=launcher", "--worker=w").Obj(),
		stock: noMaster, wrapped: allowed, ours: allowed,
	}, {
		name: "--launcher-as-worker without a worker task: false denial",
		job: mkJob("mpi-law").Task(jobtest.MakeTask("master", 1).Obj()).
			Plugin("mpi", "--launcher-as-worker=true").Obj(),
		// Volcano v1.15 admits MPI Jobs without a worker task (single-node MPI).
		stock: allowed, wrapped: allowed, ours: allowed,
	}, {
		name:  "the issue's --master=boss: two voices before, ours alone after",
		job:   mpiJob("mpi-boss", "--master=boss", "--worker=w").Obj(),
		stock: noMaster, wrapped: allowed, ours: `--master names task "boss", which the job does not have (tasks: launcher, w)`,
	}, {
		// Not the master-only case below: the Job wrote --worker, naming a
		// task it lacks (it has "w"). Volcano v1.15 admits it and its plugin
		// gives the launcher an empty MPI_HOST; we admit it too, as Volcano
		// does, with the typo (which would otherwise run the whole job on the
		// launcher alone) as a warning, and our plugin injects nothing.
		name:  "a missing worker task",
		job:   mpiJob("mpi-no-worker", "--master=launcher", "--worker=workers").Obj(),
		stock: allowed, wrapped: allowed, ours: warned + `spec.plugins[mpi][1]: Invalid value: "--worker=workers": plugin mpi: --worker names task "workers"`,
	}, {
		// Master-only MPI (single-node, volcano-sh/volcano#4955): no worker
		// task and no --worker. Volcano v1.15 admits it; so do we, and the
		// launcher runs the ranks (plugins/mpi).
		name:  "master-only MPI: no worker task at all",
		job:   mkJob("mpi-solo").Task(jobtest.MakeTask("launcher", 1).Obj()).Plugin("mpi", "--master=launcher").Obj(),
		stock: allowed, wrapped: allowed, ours: allowed,
	}, {
		name:  "master-only MPI with the default names",
		job:   mkJob("mpi-solo-default").Task(jobtest.MakeTask("master", 1).Obj()).Plugin("mpi").Obj(),
		stock: allowed, wrapped: allowed, ours: allowed,
	}, {
		// Volcano v1.15's ssh plugin puts --ssh-port into the ssh config; mpi
		// without --port follows it.
		name:  "ssh --ssh-port alone",
		job:   mpiJob("mpi-ssh-port", "--master=launcher", "--worker=w").Plugin("ssh", "--ssh-port=2222").Obj(),
		stock: allowed, wrapped: allowed, ours: allowed,
	}, {
		name:  "ssh --ssh-port and a different mpi --port",
		job:   mpiJob("mpi-ssh-port-conflict", "--master=launcher", "--worker=w", "--port=2222").Plugin("ssh", "--ssh-port=2200").Obj(),
		stock: allowed, wrapped: allowed,
		ours: warned + `spec.plugins[mpi][2]: Invalid value: "--port=2222": plugin mpi: --port=2222 differs from the ssh plugin's --ssh-port=2200, ` +
			`which puts port 2200 into the pods' ssh config`,
	}, {
		name:  "Volcano's early mpi return hid its policy check",
		job:   mpiJob("mpi-boss-policy", "--master=boss").Policy("Bogus", "AbortJob").Obj(),
		stock: noMaster, wrapped: badPolicy, ours: `--master names task "boss"`,
	}, {
		name:  "and its queue check",
		job:   mpiJob("mpi-boss-queue", "--master=boss").Queue("no-such-queue").Obj(),
		stock: noMaster, wrapped: noQueue, ours: `--master names task "boss"`,
	}, {
		name: "and its task minAvailable check",
		job: mkJob("mpi-over").Task(jobtest.MakeTask("launcher", 1).Obj()).Task(jobtest.MakeTask("w", 2).MinAvailable(3).Obj()).
			Plugin("mpi", "--wait=false", "--master=launcher", "--worker=w").Obj(),
		stock: noMaster, wrapped: taskMinOver, ours: "must not be greater than the task's replicas",
	}, {
		name: "args Volcano reads right, with a fault of its own: the same answer",
		job: mkJob("mpi-over-ok").Task(jobtest.MakeTask("launcher", 1).Obj()).Task(jobtest.MakeTask("w", 2).MinAvailable(3).Obj()).
			Plugin("mpi", "--master=launcher", "--worker=w").Obj(),
		stock: taskMinOver, wrapped: taskMinOver, ours: "must not be greater than the task's replicas",
	}, {
		// Volcano's validation (v1.10.0 to v1.15.1) reads no arguments of these: if an
		// upgrade starts to, the stock answers here change. Ours admits them
		// as Volcano does, with warnings.
		name: "tensorflow roles missing and an unknown flag",
		job: mkJob("tf-bogus").Task(jobtest.MakeTask("trainer", 2).Obj()).
			Plugin("tensorflow", "--bogus=1", "--ps=params").Obj(),
		stock: allowed, wrapped: allowed, ours: warned + `spec.plugins[tensorflow][0]: Invalid value: "--bogus=1": plugin tensorflow: unknown flag --bogus for plugin tensorflow`,
	}, {
		name:  "pytorch roles missing",
		job:   mkJob("pt-bogus").Task(jobtest.MakeTask("trainer", 2).Obj()).Plugin("pytorch", "--master=boss", "--nproc-per-node=0").Obj(),
		stock: allowed, wrapped: allowed, ours: warned + `spec.plugins[pytorch][1]: Invalid value: "--nproc-per-node=0": plugin pytorch: --nproc-per-node=0: must be a positive integer`,
	}, {
		// Volcano has no in-tree mxnet plugin: ours alone judges it, and denies.
		name:  "mxnet roles missing",
		job:   mkJob("mx-bogus").Task(jobtest.MakeTask("trainer", 2).Obj()).Plugin("mxnet", "--scheduler=boss").Obj(),
		stock: allowed, wrapped: allowed, ours: `--scheduler names task "boss"`,
	}, {
		// One plugin Volcano lacks is enough: the tensorflow problem is a
		// denial too.
		name: "tensorflow and mxnet",
		job: mkJob("tf-mx").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Task(jobtest.MakeTask("scheduler", 1).Obj()).
			Plugin("tensorflow", "--bogus=1").Plugin("mxnet", "--worker=worker2").Obj(),
		stock: allowed, wrapped: allowed, ours: "unknown flag --bogus for plugin tensorflow",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := bothMutations(t, tc.job)
			ar := review(t, admissionv1.Create, job, nil)
			before := mustJSON(t, ar)
			got := struct{ Stock, Wrapped, Ours string }{
				answer(stock(ar)), answer(wrapped(ar)), answer(ValidateService().Func(ar)),
			}
			if !bytes.Equal(before, mustJSON(t, ar)) {
				t.Errorf("the wrapper modified the review it was given")
			}
			want := struct{ Stock, Wrapped, Ours string }{tc.stock, tc.wrapped, tc.ours}
			// Substrings: keep the whole answer where it contains the wanted
			// one, of the same kind: "allowed" is exact, a denial is not
			// matched by warnings that contain its text, nor the reverse.
			for _, p := range []struct{ got, want *string }{{&got.Stock, &want.Stock}, {&got.Wrapped, &want.Wrapped}, {&got.Ours, &want.Ours}} {
				if *p.want != allowed && strings.Contains(*p.got, *p.want) &&
					strings.HasPrefix(*p.got, allowed) == strings.HasPrefix(*p.want, allowed) {
					*p.want = *p.got
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			if strings.Contains(got.Wrapped, "specified mpi") {
				t.Errorf("Volcano's wrapped validation still judges mpi: %q", got.Wrapped)
			}
		})
	}
}

// nonPluginFaults break a Job in ways Volcano's job validation checks, with
// answers that do not depend on map order (its policy messages list the valid
// events and actions from a map, so two calls may differ: the table above
// covers policies).
var nonPluginFaults = []struct {
	name  string
	apply func(*batch.Job)
}{
	{"as is", func(*batch.Job) {}},
	{"task minAvailable over its replicas", func(j *batch.Job) {
		if len(j.Spec.Tasks) > 0 {
			j.Spec.Tasks[0].MinAvailable = ptr.To(j.Spec.Tasks[0].Replicas + 1)
		}
	}},
	{"duplicated task name", func(j *batch.Job) {
		if len(j.Spec.Tasks) > 0 {
			j.Spec.Tasks = append(j.Spec.Tasks, *j.Spec.Tasks[0].DeepCopy())
		}
	}},
	{"missing queue", func(j *batch.Job) { j.Spec.Queue = "no-such-queue" }},
	{"volume without a mount path", func(j *batch.Job) { j.Spec.Volumes = append(j.Spec.Volumes, batch.VolumeSpec{}) }},
	{"job minAvailable over the replicas", func(j *batch.Job) { j.Spec.MinAvailable = 1 << 20 }},
	{"container without an image", func(j *batch.Job) {
		if len(j.Spec.Tasks) > 0 && len(j.Spec.Tasks[0].Template.Spec.Containers) > 0 {
			j.Spec.Tasks[0].Template.Spec.Containers[0].Image = ""
		}
	}},
}

// Every Job of the e2e corpus, after both mutations: Volcano's wrapped
// validation allows it (the denial or warnings the API server returns are
// ours alone), and with a fault of Volcano's own added it answers exactly as
// Volcano without the wrapper, byte for byte. No corpus Job is one whose mpi
// arguments Volcano's parser misreads, so this shows the wrapper keeps every
// check that is not about the plugins' arguments.
func TestInvalidCorpusOneVoice(t *testing.T) {
	plugins.Register()
	stock := volcanoValidate(t)
	wrapped := WithoutFrameworkPlugins(stock)
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if err != nil || len(files) < 40 {
		t.Fatalf("%d files in %s: %v", len(files), corpusDir, err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		job := &batch.Job{}
		if err := yaml.UnmarshalStrict(raw, job); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		job.Namespace = "e2e"
		mutated := bothMutations(t, job)
		for _, fault := range nonPluginFaults {
			t.Run(filepath.Base(file)+"/"+fault.name, func(t *testing.T) {
				j := mutated.DeepCopy()
				fault.apply(j)
				ar := review(t, admissionv1.Create, j, nil)
				got := wrapped(ar)
				if fault.name == "as is" && !got.Allowed {
					t.Fatalf("Volcano's wrapped validation denies it: %s", answer(got))
				}
				if fault.name != "as is" && got.Allowed {
					t.Fatalf("Volcano's wrapped validation allows it; want its own denial")
				}
				if diff := cmp.Diff(responseJSON(t, stock(ar)), responseJSON(t, got)); diff != "" {
					t.Errorf("stock (-) and wrapped (+) Volcano validation differ:\n%s", diff)
				}
			})
		}
	}
}

// Reviews other than the CREATE of a framework Job get byte-identical
// answers from Volcano's validation with and without the wrapper: Jobs that
// use none of our plugins (as in TestNonFrameworkJobsKeepVolcanoMutation),
// every UPDATE, and objects Volcano cannot decode.
func TestNonFrameworkJobsKeepVolcanoValidation(t *testing.T) {
	plugins.Register()
	stock := volcanoValidate(t)
	wrapped := WithoutFrameworkPlugins(stock)

	hostNet := jobtest.MakeTask("net", 1).Obj()
	hostNet.Template.Spec.HostNetwork = true
	jobs := []*batch.Job{
		mkJob("bare").Task(jobtest.MakeTask("main", 1).Obj()).Obj(),
		mkJob("no-tasks").Obj(),
		mkJob("svc-env").Task(jobtest.MakeTask("a", 2).Obj()).Task(jobtest.MakeTask("b", 3).MinAvailable(1).Obj()).Plugin("svc").Plugin("env").Obj(),
		mkJob("ssh-only").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("ssh", "--no-root").Obj(),
		mkJob("unknown-plugin").Task(jobtest.MakeTask("main", 1).Obj()).Plugin("horovod", "--np=4").Obj(),
		// Volcano's spelling is case-sensitive, and so is the wrapper's.
		mkJob("mpi-upper").Task(jobtest.MakeTask("main", 1).Obj()).Plugin("MPI", "--master=boss").Obj(),
		mkJob("depends-cycle").Task(jobtest.MakeTask("a", 1).DependsOn("b").Obj()).Task(jobtest.MakeTask("b", 1).DependsOn("a").Obj()).Obj(),
		mkJob("host-network").Task(hostNet).Obj(),
		mkJob("min-available").MinAvailable(5).Task(jobtest.MakeTask("main", 4).Obj()).Obj(),
		mkJob("tf-names").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 2).GPU(1).Obj()).Plugin("svc").Obj(),
		mkJob("dup-names").Task(jobtest.MakeTask("a", 1).Obj()).Task(jobtest.MakeTask("a", 1).Obj()).Obj(),
		mkJob("Bad_Name").Task(jobtest.MakeTask("Main", 1).Obj()).Obj(),
	}
	type tcase struct {
		name string
		ar   admissionv1.AdmissionReview
	}
	var cases []tcase
	for _, job := range jobs {
		for _, fault := range nonPluginFaults {
			j := job.DeepCopy()
			fault.apply(j)
			cases = append(cases, tcase{job.Name + "/" + fault.name, review(t, admissionv1.Create, j, nil)})
		}
	}
	// UPDATEs of framework Jobs too: Volcano's update check reads no
	// arguments, and its spec comparison must see the plugins on both sides.
	mpiOld := mpiJob("mpi-update", "--slots-per-worker=2", "--master=launcher", "--worker=w").Obj()
	mpiScaled := mpiOld.DeepCopy()
	mpiScaled.Spec.Tasks[1].Replicas = 3
	mpiArgs := mpiOld.DeepCopy()
	mpiArgs.Spec.Plugins["mpi"] = []string{"--master=boss"}
	bare := jobs[0]
	bareScaled := bare.DeepCopy()
	bareScaled.Spec.Tasks[0].Replicas = 2
	cases = append(cases,
		tcase{"update/mpi scaled", review(t, admissionv1.Update, mpiScaled, mpiOld)},
		tcase{"update/mpi arguments changed", review(t, admissionv1.Update, mpiArgs, mpiOld)},
		tcase{"update/bare scaled", review(t, admissionv1.Update, bareScaled, bare)},
		tcase{"delete/mpi", review(t, admissionv1.Delete, mpiOld, nil)},
	)
	wrongResource := review(t, admissionv1.Create, mpiOld, nil)
	wrongResource.Request.Resource.Resource = "pods"
	garbage := review(t, admissionv1.Create, mpiOld, nil)
	garbage.Request.Object = runtime.RawExtension{Raw: []byte(`{"spec": {"plugins": {"mpi": [`)}
	yamlObject := review(t, admissionv1.Create, mpiOld, nil)
	yamlObject.Request.Object = runtime.RawExtension{Raw: []byte("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: y}\nspec:\n  queue: default\n  plugins: {svc: []}\n  tasks: [{name: main, replicas: 1}]\n")}
	cases = append(cases,
		tcase{"create/wrong resource", wrongResource},
		tcase{"create/object not JSON", garbage},
		tcase{"create/YAML object without our plugins", yamlObject},
	)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(responseJSON(t, stock(tc.ar)), responseJSON(t, wrapped(tc.ar))); diff != "" {
				t.Errorf("stock (-) and wrapped (+) Volcano validation differ:\n%s", diff)
			}
		})
	}
}

// The object Volcano's wrapped validation decodes differs from the one the API
// server sent in the framework plugins' members of spec.plugins only: numbers
// and the other plugins as written.
func TestStripFrameworksEditsOnlyPlugins(t *testing.T) {
	in := `{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j","namespace":"ns","annotations":{"a":"<&>"}},` +
		`"spec":{"minAvailable":3,"queue":"default","unknownField":1.50,` +
		`"plugins":{"mpi":["--master=boss"],"mxnet":null,"svc":["--publish-not-ready-addresses=true"],"ssh":[]},` +
		`"tasks":[{"name":"launcher","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"0.5"}}}]}}}]}}`
	ar := admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Resource: jobsResource, Object: runtime.RawExtension{Raw: []byte(in)},
	}}
	out := stripFrameworks(ar)
	if out == nil {
		t.Fatal("not stripped")
	}
	if string(ar.Request.Object.Raw) != in {
		t.Errorf("the original review changed")
	}
	var got, want map[string]any
	if err := json.Unmarshal(out.Request.Object.Raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	plugins := want["spec"].(map[string]any)["plugins"].(map[string]any)
	delete(plugins, "mpi")
	delete(plugins, "mxnet")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
	for _, s := range []string{`"minAvailable":3`, `"unknownField":1.50`, `"cpu":"0.5"`} {
		if !strings.Contains(string(out.Request.Object.Raw), s) {
			t.Errorf("%s not kept as written in %s", s, out.Request.Object.Raw)
		}
	}
}

// WrapVolcanoValidation changes what Volcano's registered /jobs/validate
// answers through its own HTTP handler (router.Serve), as the manager serves
// it: a Job Volcano's mpi parser falsely denies is allowed.
func TestWrapVolcanoValidation(t *testing.T) {
	plugins.Register()
	volcanoValidate(t) // gives the service a fake client with an open queue
	var svc *router.AdmissionService
	if err := router.ForEachAdmission(&options.Config{EnabledAdmission: VolcanoValidatePath}, func(s *router.AdmissionService) error {
		svc = s
		return nil
	}); err != nil || svc == nil {
		t.Fatalf("Volcano's %s is not registered: %v", VolcanoValidatePath, err)
	}
	stock := svc.Func
	t.Cleanup(func() { svc.Func = stock })

	job := bothMutations(t, mpiJob("mpi-wrapped", "--slots-per-worker=2", "--master=launcher", "--worker=w").Obj())
	serve := func() *admissionv1.AdmissionResponse {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, VolcanoValidatePath, bytes.NewReader(mustJSON(t, review(t, admissionv1.Create, job, nil))))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		svc.Handler(rec, req)
		out := admissionv1.AdmissionReview{}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
			t.Fatalf("answer %q: %v", rec.Body.String(), err)
		}
		if out.Response.UID != types.UID("review-"+job.Name) {
			t.Errorf("response UID %q", out.Response.UID)
		}
		return out.Response
	}
	if got := answer(serve()); got != "The specified mpi master task was not found" {
		t.Fatalf("before wrapping: %q; want Volcano's false denial (has the test lost its point?)", got)
	}
	if err := WrapVolcanoValidation(); err != nil {
		t.Fatal(err)
	}
	if got := answer(serve()); got != "allowed" {
		t.Errorf("after wrapping: %q; want allowed", got)
	}
}
