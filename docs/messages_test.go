// Package docs_test checks the documentation's message samples against the
// code that produces them, so that a changed message cannot leave a stale
// sample behind.
//
// A sample is marked in the Markdown with an HTML comment, which renders as
// nothing:
//
//   - <!-- message: KEY --> before an inline code span: the span is exactly
//     the message of sample KEY;
//   - <!-- message: KEY --> before a fenced block: one line of the block ends
//     with the message (the line may start with a prompt, kubectl's framing
//     or an event's columns);
//   - <!-- messages: KEY1 KEY2 ... --> before a fenced block: the block's
//     non-empty lines, trimmed, are exactly the messages, in that order.
//
// Every KEY is an entry of samples, which says how the message is produced:
// the admission webhook's denial of a Job (webhook.AdmitJob after our
// mutation, as the API server calls them), a plugin's argument errors
// (Framework.Describe: ParseArgs, what both the webhook and the controller
// report), or the Warning event the controller's plugin records
// (OnJobAdd with a fake clientset). go test ./docs -update rewrites inline
// spans and "messages" blocks from the code; single "message" blocks are
// fixed by hand.
package docs_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/webhook"
)

var update = flag.Bool("update", false, "rewrite the docs' inline and \"messages\" samples from the code")

// The Markdown files whose samples are checked, relative to this directory.
var docFiles = []string{"*.md", "plugins/*.md", "dev/*.md", "../README.md"}

// sample produces one message from the code.
type sample func(t *testing.T) string

var (
	mkJob  = jobtest.MakeJob
	mkTask = func(name string, replicas int32) batch.TaskSpec { return jobtest.MakeTask(name, replicas).Obj() }
)

// admit returns the validating admission's answer to the CREATE of job.
func admit(t *testing.T, job *batch.Job) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	resp := webhook.AdmitJob(admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
		UID:       types.UID("docs-" + job.Name),
		Kind:      metav1.GroupVersionKind{Group: "batch.volcano.sh", Version: "v1alpha1", Kind: "Job"},
		Resource:  metav1.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"},
		Name:      job.Name,
		Namespace: job.Namespace,
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	}})
	return resp
}

// denied returns the message the validating admission denies job with, after
// our mutation, as the API server runs them on a CREATE. pick, when not
// empty, selects the one field error of a multi-error denial that contains
// it.
func denied(job *batch.Job, pick ...string) sample {
	return func(t *testing.T) string {
		t.Helper()
		if len(bounds.Check(job)) == 0 {
			job, _ = webhook.MutateJob(job, webhook.Options{})
		}
		resp := admit(t, job)
		var msg string
		switch {
		case !resp.Allowed && resp.Result != nil:
			msg = resp.Result.Message
		case len(resp.Warnings) > 1 && resp.Warnings[0] == webhook.ArgumentsWarning:
			// A Job Volcano admits: the same problems, one per warning.
			msg = webhook.ValidateJob(job).ToAggregate().Error()
			for _, w := range resp.Warnings[1:] {
				if !strings.Contains(msg, w) && !slices.Contains(webhook.SvcHostsWarnings(job), w) {
					t.Fatalf("warning %q of job %s is not one of its problems %q", w, job.Name, msg)
				}
			}
		default:
			t.Fatalf("job %s is admitted without problems; the sample needs a denial or warnings", job.Name)
		}
		if len(pick) == 0 {
			return msg
		}
		errs := webhook.ValidateJob(job)
		for _, e := range errs {
			if strings.Contains(e.Error(), pick[0]) {
				if !strings.Contains(msg, e.Error()) {
					t.Fatalf("error %q is not part of the denial %q", e.Error(), msg)
				}
				return e.Error()
			}
		}
		t.Fatalf("no error of %q contains %q", msg, pick[0])
		return ""
	}
}

// warned returns the last admission warning of job, a Job Volcano admits
// whose arguments ours reject, as kubectl prints it ("Warning: <text>"),
// after checking that the first is webhook.ArgumentsWarning.
func warned(job *batch.Job) sample {
	return func(t *testing.T) string {
		t.Helper()
		job, _ = webhook.MutateJob(job, webhook.Options{})
		resp := admit(t, job)
		if !resp.Allowed || len(resp.Warnings) < 2 || resp.Warnings[0] != webhook.ArgumentsWarning {
			t.Fatalf("job %s: allowed %v, warnings %q; the sample needs an admission with argument warnings", job.Name, resp.Allowed, resp.Warnings)
		}
		return "Warning: " + resp.Warnings[len(resp.Warnings)-1]
	}
}

// svcWarned returns the admission warning of job, admitted, about a svc
// VC_<TASK>_HOSTS variable its pods do not get (webhook.SvcHostsWarnings), as
// kubectl prints it.
func svcWarned(job *batch.Job) sample {
	return func(t *testing.T) string {
		t.Helper()
		job, _ = webhook.MutateJob(job, webhook.Options{})
		resp := admit(t, job)
		if !resp.Allowed || len(resp.Warnings) == 0 {
			t.Fatalf("job %s: allowed %v, warnings %q; the sample needs an admission with a warning", job.Name, resp.Allowed, resp.Warnings)
		}
		return "Warning: " + resp.Warnings[len(resp.Warnings)-1]
	}
}

// parsed returns the argument errors of plugin name on job, as its parser
// reports them to both the webhook and the controller.
func parsed(name string, job *batch.Job) sample {
	return func(t *testing.T) string {
		t.Helper()
		f := plugins.Lookup(name)
		if f == nil {
			t.Fatalf("no framework %s", name)
		}
		errs := f.Describe(job.Spec.Plugins[name], job).Errs
		if len(errs) == 0 {
			t.Fatalf("plugin %s accepts job %s; the sample needs an error", name, job.Name)
		}
		return errs.ToAggregate().Error()
	}
}

// event returns the message of the one Warning event that plugin name's
// OnJobAdd records on job in namespace default, with objs in the cluster.
func event(name string, job *batch.Job, objs ...runtime.Object) sample {
	return func(t *testing.T) string {
		t.Helper()
		job = job.DeepCopy()
		job.Namespace, job.UID = "default", types.UID("uid-"+job.Name)
		job.Status.ControlledResources = map[string]string{} // as Volcano's controller makes it
		kube := fake.NewSimpleClientset(objs...)
		// The plugin as the controller's factory builds it (plugins.Register).
		plugins.Register()
		build, _ := vcplugins.GetPluginBuilder(name)
		p := build(pluginsinterface.PluginClientset{KubeClients: kube}, job.Spec.Plugins[name])
		_ = p.OnJobAdd(job) // mpi returns the conflict too; the event is the sample
		evs, err := kube.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs.Items) != 1 {
			t.Fatalf("%d events on job %s, want 1", len(evs.Items), job.Name)
		}
		return evs.Items[0].Message
	}
}

// corpus reads a Job of the e2e suite's invalid corpus.
func corpus(t *testing.T, file string) *batch.Job {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "test", "e2e", "testdata", "invalid", file))
	if err != nil {
		t.Fatal(err)
	}
	job := &batch.Job{}
	if err := yaml.UnmarshalStrict(raw, job); err != nil {
		t.Fatal(err)
	}
	return job
}

func deniedCorpus(file string, pick ...string) sample {
	return func(t *testing.T) string { return denied(corpus(t, file), pick...)(t) }
}

// example reads a Job of example/ and applies the edits, as sed would.
func example(t *testing.T, file string, edits ...string) *batch.Job {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "example", file))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("%s has no %q", file, edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	job := &batch.Job{}
	if err := yaml.UnmarshalStrict([]byte(s), job); err != nil {
		t.Fatal(err)
	}
	return job
}

// Jobs several samples share.
var (
	tfPSWorker = func(args ...string) *batch.Job {
		return mkJob("tf").Task(mkTask("ps", 1)).Task(mkTask("worker", 2)).Plugin("tensorflow", args...).Obj()
	}
	ptJob = func(args ...string) *batch.Job {
		return mkJob("pt").Task(mkTask("master", 1)).Task(mkTask("worker", 3)).Plugin("pytorch", args...).Obj()
	}
	mpiJob = func(args ...string) *batch.Job {
		return mkJob("mpi").Task(mkTask("master", 1)).Task(mkTask("worker", 2)).Plugin("mpi", args...).Obj()
	}
	mxJob = func(args ...string) *batch.Job {
		return mkJob("mx").Task(mkTask("scheduler", 1)).Task(mkTask("server", 2)).Task(mkTask("worker", 2)).Plugin("mxnet", args...).Obj()
	}
	jxJob = func(args ...string) *batch.Job {
		return mkJob("jx").Task(mkTask("worker", 3)).Plugin("jax", args...).Obj()
	}
	manyPlugins = func(n int) *batch.Job {
		w := mkJob("plugins").Task(mkTask("worker", 1)).Plugin("tensorflow")
		for i := 0; i < n-1; i++ {
			w.Plugin(fmt.Sprintf("p%02d", i))
		}
		return w.Obj()
	}
)

func tasks(w *jobtest.JobWrapper, ts ...batch.TaskSpec) *jobtest.JobWrapper {
	for _, t := range ts {
		w.Task(t)
	}
	return w
}

func withDependsOn(t batch.TaskSpec, names ...string) batch.TaskSpec {
	t.DependsOn = &batch.DependsOn{Name: names}
	return t
}

func withMinAvailable(t batch.TaskSpec, n int32) batch.TaskSpec { t.MinAvailable = &n; return t }

var samples = map[string]sample{
	// getting-started.md, install.md: the sed of the example; webhook.md.
	"example-mx-port-zero": func(t *testing.T) string {
		return denied(example(t, "mxnet/mxnet.yaml", "name: mxnet-dist", "name: mx-bad", `"--port=9091"`, `"--port=0"`))(t)
	},
	"mx-port-zero":        denied(mxJob("--port=0")),
	"warned-tf-port-zero": warned(tfPSWorker("--ps=ps", "--worker=worker", "--port=0")),

	// troubleshooting.md
	"event-tf-typo":  event("tensorflow", mkJob("tf-typo").Task(mkTask("ps", 1)).Task(mkTask("worker", 2)).Plugin("tensorflow", "--prot=2222").Obj()),
	"warned-tf-typo": warned(mkJob("tf-typo").Task(mkTask("ps", 1)).Task(mkTask("worker", 2)).Plugin("tensorflow", "--prot=2222").Obj()),
	"denied-mx-typo": denied(mkJob("mx-typo").Task(mkTask("scheduler", 1)).Task(mkTask("server", 2)).Task(mkTask("worker", 2)).Plugin("mxnet", "--prot=9091").Obj()),
	"event-mpi-conflict": event("mpi", mkJob("mpi-doc").Task(mkTask("master", 1)).Task(mkTask("worker", 2)).Plugin("mpi").Obj(),
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mpi-doc-mpi-hostfile", Namespace: "default"}}),
	"hostname-too-long": denied(mkJob("imagenet-resnet152-mixed-precision-lr-sweep-07").
		Task(mkTask("worker", 4)).Task(mkTask("parameterserver", 12)).Plugin("tensorflow", "--ps=parameterserver").Obj()),
	"tf-config-too-large": denied(mkJob("resnet50-imagenet").
		Task(mkTask("chief", 1)).Task(mkTask("ps", 2)).Task(mkTask("worker", 4000)).Plugin("tensorflow").Obj()),

	// webhook.md: numbers and names.
	"negative-replicas":     denied(tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 1), mkTask("worker", -1)).Obj()),
	"task-min-available":    denied(tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 1), withMinAvailable(mkTask("worker", 2), 3)).Obj()),
	"job-min-available":     denied(mkJob("tf").Task(mkTask("ps", 1)).Task(mkTask("worker", 2)).Plugin("tensorflow").MinAvailable(4).Obj()),
	"duplicate-task":        denied(tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 1), mkTask("ps", 2)).Obj()),
	"task-name-not-a-label": denied(tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 1), mkTask("Worker_1", 2)).Obj()),
	"too-many-pods":         denied(tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 2), mkTask("worker", 100_000)).Obj()),
	// Within MaxReplicas: 50,000 pods of a template of about 6 KB.
	"pod-template-bytes": denied(tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 1),
		jobtest.MakeTask("worker", 50_000).Env("BIG", strings.Repeat("x", 6000)).Obj()).Obj()),

	// webhook.md: bounds.
	"bounds-tasks": denied(func() *batch.Job {
		w := mkJob("wide").Plugin("tensorflow")
		for i := 0; i < bounds.MaxTasks+1; i++ {
			w.Task(mkTask(fmt.Sprintf("t%d", i), 1))
		}
		return w.Obj()
	}()),
	"bounds-depends-on": denied(func() *batch.Job {
		names := make([]string, bounds.MaxDependsOn+1)
		for i := range names {
			names[i] = "ps"
		}
		return tasks(mkJob("deps").Plugin("tensorflow"), mkTask("ps", 1), withDependsOn(mkTask("worker", 2), names...)).Obj()
	}()),
	"bounds-plugins":     denied(manyPlugins(bounds.MaxPlugins + 1)),
	"bounds-plugin-name": denied(mkJob("tf").Task(mkTask("worker", 1)).Plugin("tensorflow").Plugin(strings.Repeat("x", bounds.MaxPluginNameBytes+1)).Obj()),
	"bounds-args":        denied(tfPSWorker(repeat("--wait=true", bounds.MaxPluginArgs+1)...)),
	"bounds-arg-bytes":   denied(tfPSWorker("--wait-image=" + strings.Repeat("x", bounds.MaxPluginArgBytes))),
	"bounds-template-list": denied(func() *batch.Job {
		worker := mkTask("worker", 2)
		for i := 0; i <= bounds.MaxEnv; i++ {
			worker.Template.Spec.Containers[0].Env = append(worker.Template.Spec.Containers[0].Env, v1.EnvVar{Name: fmt.Sprintf("E%d", i)})
		}
		return tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 1), worker).Obj()
	}()),
	"bounds-template-entries": denied(func() *batch.Job {
		worker := mkTask("worker", 2)
		c := &worker.Template.Spec.Containers[0]
		c.Args, c.Command = make([]string, bounds.MaxArgs), make([]string, bounds.MaxTemplateEntries-bounds.MaxArgs)
		return tasks(mkJob("tf").Plugin("tensorflow"), mkTask("ps", 1), worker).Obj()
	}()),
	"bounds-job-template-entries": denied(func() *batch.Job {
		w := mkJob("tf").Plugin("tensorflow").Task(mkTask("ps", 1))
		for i := 0; i < 5; i++ {
			t := mkTask(fmt.Sprintf("worker%d", i), 1)
			c := &t.Template.Spec.Containers[0]
			c.Args, c.Command = make([]string, bounds.MaxArgs), make([]string, bounds.MaxTemplateEntries-1-bounds.MaxArgs)
			w.Task(t)
		}
		return w.Obj()
	}()),
	"abbreviated": denied(tfPSWorker("--port=" + strings.Repeat("x", 300))),
	"capped": denied(func() *batch.Job {
		w := mkJob("deps").Plugin("tensorflow").Task(mkTask("worker", 1))
		for i := 0; i < 3; i++ {
			names := make([]string, 20)
			for j := range names {
				names[j] = fmt.Sprintf("missing-%d-%d", i, j)
			}
			w.Task(withDependsOn(mkTask(fmt.Sprintf("t%d", i), 1), names...))
		}
		return w.Obj()
	}(), "more problems not listed"),

	// webhook.md: plugin arguments.
	"tf-bogus":           denied(tfPSWorker("--bogus=1")),
	"tf-word":            denied(tfPSWorker("worker")),
	"tf-no-value":        denied(tfPSWorker("--port")),
	"tf-prot":            denied(tfPSWorker("--prot=2222")),
	"tf-flag-space":      denied(tfPSWorker("--ps ps")),
	"tf-port-70000":      denied(tfPSWorker("--port=70000")),
	"tf-port-http":       denied(tfPSWorker("--port=http")),
	"tf-wait-maybe":      denied(tfPSWorker("--wait=maybe")),
	"tf-timeout-soon":    denied(tfPSWorker("--wait-timeout=soon")),
	"tf-worker-empty":    denied(tfPSWorker("--worker=")),
	"tf-ps-params":       denied(tfPSWorker("--ps=params")),
	"tf-evaluator-zero":  denied(mkJob("tf").Task(mkTask("ps", 1)).Task(mkTask("worker", 2)).Task(mkTask("evaluator", 0)).Plugin("tensorflow", "--evaluator=evaluator").Obj()),
	"tf-chief-worker":    denied(tfPSWorker("--chief=worker")),
	"tf-two-chiefs":      denied(mkJob("tf").Task(mkTask("chief", 2)).Task(mkTask("worker", 2)).Plugin("tensorflow").Obj()),
	"tf-no-role":         denied(mkJob("tf").Task(mkTask("trainer", 2)).Plugin("tensorflow").Obj()),
	"pt-two-masters":     denied(mkJob("pt").Task(mkTask("master", 2)).Task(mkTask("worker", 2)).Plugin("pytorch").Obj()),
	"pt-nproc":           denied(ptJob("--nproc-per-node=0")),
	"pt-min-above-max":   denied(ptJob("--min-nodes=4", "--max-nodes=2")),
	"pt-min-nodes":       denied(mkJob("pt").Task(mkTask("master", 1)).Task(mkTask("worker", 2)).Plugin("pytorch", "--min-nodes=5").Obj()),
	"pt-max-nodes":       denied(mkJob("pt").Task(mkTask("master", 1)).Task(mkTask("worker", 2)).Plugin("pytorch", "--max-nodes=2").Obj()),
	"mpi-impl-denied":    denied(mpiJob("--mpi-implementation=mvapich")),
	"mx-no-scheduler":    denied(mkJob("mx").Task(mkTask("server", 2)).Task(mkTask("worker", 2)).Plugin("mxnet").Obj()),
	"mx-two-schedulers":  denied(mkJob("mx").Task(mkTask("scheduler", 2)).Task(mkTask("server", 2)).Task(mkTask("worker", 2)).Plugin("mxnet").Obj()),
	"two-frameworks":     denied(mkJob("tf").Task(mkTask("ps", 1)).Task(mkTask("worker", 2)).Plugin("tensorflow").Plugin("pytorch").Obj(), "plays role"),
	"depends-on-missing": denied(tasks(mkJob("tf").Plugin("tensorflow"), withDependsOn(mkTask("worker", 2), "ps")).Obj()),
	"cycle-depends-on":   denied(tasks(mkJob("tf").Plugin("tensorflow"), withDependsOn(mkTask("ps", 1), "worker"), mkTask("worker", 2)).Obj()),
	"cycle-two-plugins":  deniedCorpus("cycle-two-frameworks.yaml", "cycle"),
	"limit-tf-config":    deniedCorpus("tf-config-too-large.yaml"),
	"limit-svc-hosts": svcWarned(mkJob("llama-70b-sft-run-20261204-a1").
		Task(mkTask("master", 1)).Task(mkTask("worker", 2048)).Plugin("pytorch").Obj()),
	"limit-svc-configmap": deniedCorpus("svc-configmap-too-large.yaml"),
	"limit-hostname":      deniedCorpus("pytorch-hostname-too-long.yaml"),
	"dotted-hostname":     deniedCorpus("tf-dotted-job-name.yaml", "hostname"),
	"dotted-subdomain":    deniedCorpus("tf-dotted-job-name.yaml", "subdomain"),
}

// The plugin pages' tables: each plugin's parser on small Jobs.
var pluginSamples = map[string]sample{
	"tensorflow-unknown-flag":      parsed("tensorflow", tfPSWorker("--prot=2222")),
	"tensorflow-not-a-flag":        parsed("tensorflow", tfPSWorker("ps")),
	"tensorflow-no-value":          parsed("tensorflow", tfPSWorker("--port")),
	"tensorflow-flag-space":        parsed("tensorflow", tfPSWorker("--ps ps")),
	"tensorflow-port-nan":          parsed("tensorflow", tfPSWorker("--port=http")),
	"tensorflow-port-range":        parsed("tensorflow", tfPSWorker("--ps=ps", "--port=65536")),
	"tensorflow-empty-role":        parsed("tensorflow", tfPSWorker("--ps=")),
	"tensorflow-bad-bool":          parsed("tensorflow", tfPSWorker("--wait=maybe")),
	"tensorflow-bad-timeout":       parsed("tensorflow", tfPSWorker("--wait-timeout=soon")),
	"tensorflow-missing-task":      parsed("tensorflow", tfPSWorker("--ps=pserver")),
	"tensorflow-zero-replicas":     parsed("tensorflow", mkJob("tf").Task(mkTask("chief", 0)).Task(mkTask("worker", 2)).Plugin("tensorflow", "--chief=chief").Obj()),
	"tensorflow-two-chiefs":        parsed("tensorflow", mkJob("tf").Task(mkTask("chief", 2)).Task(mkTask("worker", 2)).Plugin("tensorflow").Obj()),
	"tensorflow-two-roles":         parsed("tensorflow", tfPSWorker("--chief=worker")),
	"tensorflow-tf-config":         parsed("tensorflow", tfPSWorker("--tf-config=file")),
	"tensorflow-cluster-too-large": parsed("tensorflow", mkJob("big").Task(mkTask("ps", 1)).Task(mkTask("worker", 50000)).Plugin("tensorflow").Obj()),
	"tensorflow-no-role-task":      parsed("tensorflow", mkJob("tf").Task(mkTask("trainer", 2)).Plugin("tensorflow").Obj()),

	"pytorch-unknown-flag":    parsed("pytorch", ptJob("--nproc_per_node=2")),
	"pytorch-nproc":           parsed("pytorch", ptJob("--nproc-per-node=0")),
	"pytorch-port-range":      parsed("pytorch", ptJob("--port=99999")),
	"pytorch-two-masters":     parsed("pytorch", mkJob("pt").Task(mkTask("master", 2)).Task(mkTask("worker", 3)).Plugin("pytorch").Obj()),
	"pytorch-missing-task":    parsed("pytorch", ptJob("--worker=trainer")),
	"pytorch-no-role-task":    parsed("pytorch", mkJob("pt").Task(mkTask("trainer", 2)).Plugin("pytorch").Obj()),
	"pytorch-two-roles":       parsed("pytorch", ptJob("--master=worker")),
	"pytorch-min-above-max":   parsed("pytorch", ptJob("--min-nodes=5", "--max-nodes=2")),
	"pytorch-below-min-nodes": parsed("pytorch", ptJob("--min-nodes=5", "--max-nodes=8")),
	"pytorch-above-max-nodes": parsed("pytorch", ptJob("--max-nodes=2")),

	"mpi-unknown-flag":      parsed("mpi", mpiJob("--slots=4")),
	"mpi-not-a-flag":        parsed("mpi", mpiJob("master")),
	"mpi-implementation":    parsed("mpi", mpiJob("--mpi-implementation=mvapich")),
	"mpi-slots-range":       parsed("mpi", mpiJob("--master=master", "--slots-per-worker=1025")),
	"mpi-slots-nan":         parsed("mpi", mpiJob("--slots-per-worker=all")),
	"mpi-port-range":        parsed("mpi", mpiJob("--port=0")),
	"mpi-cluster-domain":    parsed("mpi", mpiJob("--cluster-domain=Cluster_Local")),
	"mpi-bad-bool":          parsed("mpi", mpiJob("--launcher-as-worker=yes")),
	"mpi-empty-task":        parsed("mpi", mpiJob("--master=")),
	"mpi-no-value":          parsed("mpi", mpiJob("--worker")),
	"mpi-no-master":         parsed("mpi", mkJob("mpi").Task(mkTask("worker", 2)).Plugin("mpi").Obj()),
	"mpi-named-master":      parsed("mpi", mpiJob("--master=launcher")),
	"mpi-master-zero":       parsed("mpi", mkJob("mpi").Task(mkTask("master", 0)).Task(mkTask("worker", 2)).Plugin("mpi").Obj()),
	"mpi-two-masters":       parsed("mpi", mkJob("mpi").Task(mkTask("master", 2)).Task(mkTask("worker", 2)).Plugin("mpi").Obj()),
	"mpi-named-worker-typo": parsed("mpi", mkJob("mpi").Task(mkTask("master", 1)).Plugin("mpi", "--worker=workers").Obj()),
	"mpi-worker-zero":       parsed("mpi", mkJob("mpi").Task(mkTask("master", 1)).Task(mkTask("worker", 0)).Plugin("mpi", "--worker=worker").Obj()),
	"mpi-ssh-port":          parsed("mpi", mkJob("mpi").Task(mkTask("master", 1)).Task(mkTask("worker", 2)).Plugin("ssh", "--ssh-port=2200").Plugin("mpi", "--port=2222").Obj()),
	"mpi-named-worker":      parsed("mpi", mkJob("mpi").Task(mkTask("master", 1)).Plugin("mpi", "--launcher-as-worker=true", "--worker=ranks").Obj()),
	"mpi-two-roles":         parsed("mpi", mpiJob("--worker=master")),

	"mxnet-unknown-flag":    parsed("mxnet", mxJob("--prot=9091")),
	"mxnet-tensorflow-flag": parsed("mxnet", mxJob("--ps=server")),
	"mxnet-not-a-flag":      parsed("mxnet", mxJob("scheduler")),
	"mxnet-no-value":        parsed("mxnet", mxJob("--port")),
	"mxnet-port-nan":        parsed("mxnet", mxJob("--port=http")),
	"mxnet-port-range":      parsed("mxnet", mxJob("--scheduler=scheduler", "--port=65536")),
	"mxnet-empty-task":      parsed("mxnet", mxJob("--scheduler=")),
	"mxnet-bad-bool":        parsed("mxnet", mxJob("--wait=maybe")),
	"mxnet-no-scheduler":    parsed("mxnet", mkJob("mx").Task(mkTask("server", 2)).Task(mkTask("worker", 2)).Plugin("mxnet").Obj()),
	"mxnet-named-scheduler": parsed("mxnet", mxJob("--scheduler=sched")),
	"mxnet-scheduler-zero":  parsed("mxnet", mkJob("mx").Task(mkTask("scheduler", 0)).Task(mkTask("server", 2)).Task(mkTask("worker", 2)).Plugin("mxnet").Obj()),
	"mxnet-two-schedulers":  parsed("mxnet", mkJob("mx").Task(mkTask("scheduler", 2)).Task(mkTask("server", 2)).Task(mkTask("worker", 2)).Plugin("mxnet").Obj()),
	"mxnet-no-worker":       parsed("mxnet", mkJob("mx").Task(mkTask("scheduler", 1)).Task(mkTask("server", 2)).Plugin("mxnet").Obj()),
	"mxnet-worker-zero":     parsed("mxnet", mkJob("mx").Task(mkTask("scheduler", 1)).Task(mkTask("server", 2)).Task(mkTask("trainer", 0)).Plugin("mxnet", "--worker=trainer").Obj()),
	"mxnet-missing-server":  parsed("mxnet", mkJob("mx").Task(mkTask("scheduler", 1)).Task(mkTask("worker", 2)).Plugin("mxnet", "--server=ps").Obj()),
	"mxnet-two-roles":       parsed("mxnet", mxJob("--worker=server")),
	"mxnet-several":         parsed("mxnet", mkJob("mx").Task(mkTask("scheduler", 2)).Plugin("mxnet", "--port=0", "--server=ps").Obj()),

	"jax-unknown-flag": parsed("jax", jxJob("--prot=6666")),
	"jax-pytorch-flag": parsed("jax", jxJob("--master=worker")),
	"jax-not-a-flag":   parsed("jax", jxJob("worker")),
	"jax-no-value":     parsed("jax", jxJob("--port")),
	"jax-port-nan":     parsed("jax", jxJob("--port=coordinator")),
	"jax-port-range":   parsed("jax", jxJob("--worker=worker", "--port=65536")),
	"jax-empty-task":   parsed("jax", jxJob("--worker=")),
	"jax-bad-bool":     parsed("jax", jxJob("--wait=maybe")),
	"jax-no-worker":    parsed("jax", mkJob("jx").Task(mkTask("main", 3)).Plugin("jax").Obj()),
	"jax-named-worker": parsed("jax", jxJob("--worker=trainer")),
	"jax-worker-zero":  parsed("jax", mkJob("jx").Task(mkTask("worker", 0)).Plugin("jax").Obj()),
	"jax-several":      parsed("jax", mkJob("jx").Task(mkTask("main", 3)).Plugin("jax", "--port=0", "--wait-timeout=-1s").Obj()),
}

func init() {
	for k, s := range pluginSamples {
		if _, dup := samples[k]; dup {
			panic("two samples named " + k)
		}
		samples[k] = s
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// marker finds a sample marker and what follows it up to the end of the file.
var marker = regexp.MustCompile(`<!-- (messages?): ([a-z0-9 -]+?) -->`)

// found is one marked sample in a file.
type found struct {
	file   string
	line   int
	multi  bool
	keys   []string
	inline bool
	// text is the inline span, or the fenced block's lines; start and end
	// are its byte offsets in the file (for -update).
	text       []string
	start, end int
	indent     string
}

func scan(t *testing.T, file string, src string) []found {
	var out []found
	for _, m := range marker.FindAllStringSubmatchIndex(src, -1) {
		f := found{file: file, line: 1 + strings.Count(src[:m[0]], "\n"), multi: src[m[2]:m[3]] == "messages",
			keys: strings.Fields(src[m[4]:m[5]])}
		rest := m[1]
		for rest < len(src) && (src[rest] == ' ' || src[rest] == '\n') {
			rest++
		}
		switch {
		case strings.HasPrefix(src[rest:], "```"):
			lineStart := strings.LastIndex(src[:rest], "\n") + 1
			f.indent = src[lineStart:rest]
			open := strings.IndexByte(src[rest:], '\n')
			if open < 0 {
				t.Fatalf("%s:%d: unclosed fence", file, f.line)
			}
			f.start = rest + open + 1
			f.end = -1
			for at := f.start; at < len(src); {
				next := strings.IndexByte(src[at:], '\n')
				if next < 0 {
					next = len(src) - at
				}
				if strings.TrimSpace(src[at:at+next]) == "```" {
					f.end = at
					break
				}
				at += next + 1
			}
			if f.end < 0 {
				t.Fatalf("%s:%d: unclosed fence", file, f.line)
			}
			if f.end > f.start {
				f.text = strings.Split(strings.TrimSuffix(src[f.start:f.end], "\n"), "\n")
			}
		case strings.HasPrefix(src[rest:], "`"):
			end := strings.IndexByte(src[rest+1:], '`')
			if end < 0 || f.multi || len(f.keys) != 1 {
				t.Fatalf("%s:%d: an inline sample is one `span` after <!-- message: KEY -->", file, f.line)
			}
			f.inline, f.start, f.end = true, rest+1, rest+1+end
			f.text = []string{src[f.start:f.end]}
		default:
			t.Fatalf("%s:%d: the marker is followed by neither a fenced block nor a `span`", file, f.line)
		}
		out = append(out, f)
	}
	return out
}

func TestMessageSamples(t *testing.T) {
	var files []string
	for _, g := range docFiles {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	produced := map[string]string{}
	message := func(t *testing.T, key string) (string, bool) {
		if msg, ok := produced[key]; ok {
			return msg, true
		}
		s, ok := samples[key]
		if !ok {
			return "", false
		}
		produced[key] = s(t)
		return produced[key], true
	}
	used := map[string]bool{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := string(raw)
		var edits []found
		for _, f := range scan(t, file, src) {
			var want []string
			for _, k := range f.keys {
				used[k] = true
				msg, ok := message(t, k)
				if !ok {
					t.Errorf("%s:%d: no sample %q in docs/messages_test.go", f.file, f.line, k)
					continue
				}
				want = append(want, msg)
			}
			if len(want) != len(f.keys) {
				continue
			}
			switch {
			case f.inline:
				if f.text[0] != want[0] {
					t.Errorf("%s:%d: sample %s is stale:\n doc: %s\ncode: %s", f.file, f.line, f.keys[0], f.text[0], want[0])
					f.text = want
					edits = append(edits, f)
				}
			case f.multi:
				var got []string
				for _, l := range f.text {
					if l = strings.TrimSpace(l); l != "" {
						got = append(got, l)
					}
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s:%d: samples %v are stale:\n doc:\n%s\ncode:\n%s", f.file, f.line, f.keys, strings.Join(got, "\n"), strings.Join(want, "\n"))
					f.text = want
					edits = append(edits, f)
				}
			default:
				ok := false
				for _, l := range f.text {
					ok = ok || strings.HasSuffix(strings.TrimRight(l, " "), want[0])
				}
				if !ok {
					t.Errorf("%s:%d: no line of the block ends with sample %s:\n%s", f.file, f.line, f.keys[0], want[0])
				}
			}
		}
		if *update && len(edits) > 0 {
			rewrite(t, file, src, edits)
		}
	}
	var unused []string
	for k := range samples {
		if !used[k] {
			unused = append(unused, k)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("samples no doc marks: %v", unused)
	}
}

// rewrite replaces the edited samples' text in file.
func rewrite(t *testing.T, file, src string, edits []found) {
	var b strings.Builder
	at := 0
	for _, e := range edits {
		b.WriteString(src[at:e.start])
		if e.inline {
			b.WriteString(e.text[0])
		} else {
			for _, l := range e.text {
				b.WriteString(e.indent + l + "\n")
			}
		}
		at = e.end
	}
	b.WriteString(src[at:])
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %d samples in %s", len(edits), file)
}
