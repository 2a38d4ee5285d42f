package docs_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/webhook"
)

// The figures of TF_CONFIG the docs state (the sizes, where --tf-config=auto
// switches to a ConfigMap, where TF_CONFIG passes Linux's limit) are
// generated from the tensorflow plugin's own size functions
// (tensorflow.ClusterSize, TFConfigSize, Args.Mode) and our admission
// (webhook.ValidateJob, SvcHostsWarnings), which the plugin's tests check
// against the TF_CONFIG it writes. go test ./docs -update rewrites them.

// commas writes n with thousands separators, as the prose does.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// tfJob returns a Job named name in namespace ns with the given replicas of
// the tasks chief, ps, worker and evaluator (a task of 0 is left out), the
// tensorflow plugin with its defaults, mutated as our admission mutates it
// (which adds svc).
func tfJob(name, ns string, chief, ps, workers, evaluator int32) *batch.Job {
	j := jobtest.MakeJob(name).Namespace(ns)
	for _, r := range []struct {
		task string
		n    int32
	}{{"chief", chief}, {"ps", ps}, {"worker", workers}, {"evaluator", evaluator}} {
		if r.n > 0 {
			j.Task(jobtest.MakeTask(r.task, r.n).Obj())
		}
	}
	job, _ := webhook.MutateJob(j.Plugin(tensorflow.Name).Obj(), webhook.Options{})
	return job
}

// tfArgs parses job's tensorflow arguments as the plugin does.
func tfArgs(t *testing.T, job *batch.Job) *tensorflow.Args {
	t.Helper()
	a, errs := tensorflow.ParseArgs(job.Spec.Plugins[tensorflow.Name], job)
	if len(errs) > 0 {
		t.Fatalf("job %s: %v", job.Name, errs)
	}
	return a
}

// autoSwitchNames are the Job names of the table of where auto switches:
// the shortest useful, the guides' tf-dist, the page's resnet50-train and
// the 29 characters of a long generated name.
var autoSwitchNames = []string{"tf", "tf-dist", "resnet50-train", "recommendation-model-train-v2"}

// autoSwitchTable is, for each name, the first Job of 1 ps and some
// workers in namespace default that auto stores by reference.
func autoSwitchTable(t *testing.T) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Job name (characters) | Largest Job inline (cluster JSON) | First Job by reference (cluster JSON) |\n|---|---|---|\n")
	for _, name := range autoSwitchNames {
		var inline, ref string
		for w := int32(1); w < 1000; w++ {
			job := tfJob(name, "default", 0, 1, w, 0)
			a := tfArgs(t, job)
			cell := fmt.Sprintf("1 ps + %d workers = %d pods (%s bytes)", w, w+1, commas(tensorflow.ClusterSize(job, a)))
			if a.Mode(job) == tensorflow.Reference {
				ref = cell
				break
			}
			inline = cell
		}
		if ref == "" || inline == "" {
			t.Fatalf("%s: auto never switches between 1 and 1000 workers", name)
		}
		fmt.Fprintf(&b, "| `%s` (%d) | %s | %s |\n", name, len(name), inline, ref)
	}
	return b.String()
}

// exampleTFJob is the Job of tensorflow.md's first yaml block, in
// namespace default.
func exampleTFJob(t *testing.T) *batch.Job {
	t.Helper()
	raw, err := os.ReadFile("plugins/tensorflow.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(raw), "```yaml\n")
	if !ok {
		t.Fatal("plugins/tensorflow.md has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	var job batch.Job
	if err := yaml.UnmarshalStrict([]byte(block), &job); err != nil {
		t.Fatalf("plugins/tensorflow.md's example: %v", err)
	}
	job.Namespace = "default"
	mutated, _ := webhook.MutateJob(&job, webhook.Options{})
	return mutated
}

// tfSizesTable gives, for the page's example and two sizes of
// resnet50-train, the cluster JSON, what auto makes of it, the last
// worker's TF_CONFIG, and what inline would store in all the pods' specs.
func tfSizesTable(t *testing.T) string {
	rows := []struct {
		label string
		job   *batch.Job
	}{
		{"the example above: 1 chief, 1 ps, 2 workers, 1 evaluator", exampleTFJob(t)},
		{"`resnet50-train`: 1 ps, 20 workers", tfJob("resnet50-train", "default", 0, 1, 20, 0)},
		{"`resnet50-train`: 2 ps, 2,048 workers", tfJob("resnet50-train", "default", 0, 2, 2048, 0)},
	}
	var b strings.Builder
	b.WriteString("| Job (namespace `default`) | Cluster JSON | `auto` gives | Last worker's `TF_CONFIG` | `TF_CONFIG` in all pods' specs, inline |\n|---|---:|---|---:|---:|\n")
	for _, r := range rows {
		a := tfArgs(t, r.job)
		total := 0
		for _, task := range r.job.Spec.Tasks {
			for i := 0; i < int(task.Replicas); i++ {
				total += tensorflow.TFConfigSize(r.job, a, task.Name, i)
			}
		}
		worker, _ := findTask(r.job, "worker")
		fmt.Fprintf(&b, "| %s | %s bytes | `%s` | %s bytes | %s |\n", r.label,
			commas(tensorflow.ClusterSize(r.job, a)), a.Mode(r.job),
			commas(tensorflow.TFConfigSize(r.job, a, "worker", int(worker.Replicas)-1)), humanBytes(total))
	}
	return b.String()
}

func findTask(job *batch.Job, name string) (batch.TaskSpec, bool) {
	for _, task := range job.Spec.Tasks {
		if task.Name == name {
			return task, true
		}
	}
	return batch.TaskSpec{}, false
}

// humanBytes writes n in bytes, KiB or MiB, rounded.
func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return commas(n) + " bytes"
}

// tooLargeNames are the Job names of troubleshooting's table of the most
// workers before TF_CONFIG passes MAX_ARG_STRLEN.
var tooLargeNames = []string{"tf", "tf-train", "resnet50-imagenet", "recommendation-model-train-v2"}

// firstWorkers returns the fewest workers in [1, 20000] for which over
// holds, over being false at 1 and monotonic in the workers.
func firstWorkers(t *testing.T, name string, over func(int32) bool) int32 {
	t.Helper()
	lo, hi := int32(1), int32(20000) // over false at lo, true at hi
	if over(lo) || !over(hi) {
		t.Fatalf("%s: the bound does not fall between %d and %d workers", name, lo, hi)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if over(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// tfTooLargeTable is, for 1 chief, 2 ps and each name in namespace
// default, the fewest workers at which our admission denies the Job for
// TF_CONFIG's length, and at which it warns that the svc plugin's
// VC_WORKER_HOSTS is left out.
func tfTooLargeTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| Job name | Characters | Workers at which `TF_CONFIG` is too large | … and the `svc` plugin's `VC_WORKER_HOSTS` (then left out of the pods, with a warning) |\n|---|---|---|---|\n")
	for _, name := range tooLargeNames {
		tfOver := firstWorkers(t, name, func(w int32) bool {
			// Inline, so that a cluster over a ConfigMap's 1 MiB is no
			// argument error: TF_CONFIG's bytes are the same in every mode.
			job := tfJob(name, "default", 1, 2, w, 0)
			job.Spec.Plugins[tensorflow.Name] = []string{"--tf-config=inline"}
			n := tensorflow.TFConfigSize(job, tfArgs(t, job), "worker", int(w)-1)
			return bounds.EnvBytes(tensorflow.EnvTFConfig, n) > webhook.MaxArgStrlen
		})
		// Our admission denies the first of them for TF_CONFIG and not the
		// one before.
		for w, want := range map[int32]bool{tfOver - 1: false, tfOver: true} {
			denied := false
			for _, e := range webhook.ValidateJob(tfJob(name, "default", 1, 2, w, 0)) {
				denied = denied || strings.Contains(e.Detail, "environment variable "+tensorflow.EnvTFConfig+" ")
			}
			if denied != want {
				t.Errorf("%s with %d workers: denied for TF_CONFIG %v, want %v", name, w, denied, want)
			}
		}
		hostsOver := firstWorkers(t, name, func(w int32) bool {
			for _, warning := range webhook.SvcHostsWarnings(tfJob(name, "default", 1, 2, w, 0)) {
				if strings.Contains(warning, "VC_WORKER_HOSTS ") {
					return true
				}
			}
			return false
		})
		fmt.Fprintf(&b, "| `%s` | %d | %s | %s |\n", name, len(name), commas(int(tfOver)), commas(int(hostsOver)))
	}
	return b.String()
}

// TestTFConfigFigures keeps the TF_CONFIG figures of tensorflow.md and
// troubleshooting.md equal to what the plugin and our admission compute for
// the Jobs they describe.
func TestTFConfigFigures(t *testing.T) {
	raw, err := os.ReadFile("plugins/tensorflow.md")
	if err != nil {
		t.Fatal(err)
	}
	if limit := "at most " + commas(tensorflow.AutoInlineMaxBytes) + " bytes\n(`tensorflow.AutoInlineMaxBytes`)"; !strings.Contains(string(raw), limit) {
		t.Errorf("plugins/tensorflow.md does not state auto's limit as %q", limit)
	}
	checkGenerated(t, "plugins/tensorflow.md", "tf-config-auto", func() string { return autoSwitchTable(t) })
	checkGenerated(t, "plugins/tensorflow.md", "tf-config-sizes", func() string { return tfSizesTable(t) })
	checkGenerated(t, "troubleshooting.md", "tf-config-too-large", func() string { return tfTooLargeTable(t) })
}
