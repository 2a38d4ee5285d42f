package docs_test

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/plugins"
	fwsamples "github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/webhook"
)

// largestJobNames are the Job names the table of the largest Jobs is
// computed for: a short one, the 29 characters of the name in the large-jobs
// report (volcano-sh/volcano#5471's size), and a long one.
var largestJobNames = []string{"resnet50-dist", "llama-70b-sft-run-20261204-a1", "llama-70b-sft-lr-sweep-7-of-32-20261204-a1b2c3"}

// largestJobNamespace is the namespace of those Jobs: host names carry it.
const largestJobNamespace = "ml-training"

// largestJob returns the framework's Sample Job named name with workers
// pods in its Worker role (its other roles one pod each, with Lead's), in
// largestJobNamespace, mutated as our admission mutates it.
func largestJob(f string, name string, workers int32) *batch.Job {
	s := fwsamples.Of(f)
	j := jobtest.MakeJob(name).Namespace(largestJobNamespace)
	for _, r := range s.Roles {
		n := r.Replicas
		if r.Flag == s.Worker {
			n = workers
		} else if n == 0 {
			continue
		} else if n > 1 {
			n = 1
		}
		j.Task(jobtest.MakeTask(r.Flag, n).Obj())
	}
	job := j.Plugin(f).Obj()
	job.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: largestJobNamespace}
	mutated, _ := webhook.MutateJob(job, webhook.Options{})
	return mutated
}

// admitted reports whether our validation admits the Job (warnings allowed).
func admitted(job *batch.Job) bool {
	return len(webhook.ValidateJob(job)) == 0
}

// largestWorkers returns the most workers of f's Job named name that our
// admission admits, at most bounds.MaxReplicas, and the first error past it.
func largestWorkers(t *testing.T, f, name string) (int32, string) {
	t.Helper()
	if !admitted(largestJob(f, name, 1)) {
		t.Fatalf("%s: the Job of one worker named %s is denied: %v", f, name, webhook.ValidateJob(largestJob(f, name, 1)))
	}
	// The first count denied, in 2..MaxReplicas (MaxReplicas+1: none is).
	first := 2 + sort.Search(bounds.MaxReplicas-1, func(i int) bool { return !admitted(largestJob(f, name, int32(i+2))) })
	if first > bounds.MaxReplicas {
		return bounds.MaxReplicas, ""
	}
	errs := webhook.ValidateJob(largestJob(f, name, int32(first)))
	return int32(first - 1), errs[0].Detail
}

// What a denial's detail says stops the Job, as the table words it.
var (
	envTooLong     = regexp.MustCompile(`environment variable (\S+) of pod`)
	configMapOver  = regexp.MustCompile(`ConfigMap "[^"]*(-svc|-mpi-hostfile)" would be`)
	namedBound     = regexp.MustCompile(`\((Max[A-Za-z]+)\)`)
	hostfileOver   = regexp.MustCompile(`the hostfile \(\d+ bytes\)`)
	configMapNames = map[string]string{"-svc": "the svc plugin's ConfigMap of hosts over 1 MiB", "-mpi-hostfile": "the hostfile ConfigMap over 1 MiB"}
)

// boundOf names the bound a denial's detail states.
func boundOf(detail string) string {
	switch {
	case envTooLong.MatchString(detail):
		return "`" + envTooLong.FindStringSubmatch(detail)[1] + "` over 128 KiB (MAX_ARG_STRLEN)"
	case configMapOver.MatchString(detail):
		return configMapNames[configMapOver.FindStringSubmatch(detail)[1]]
	case hostfileOver.MatchString(detail):
		return "the hostfile ConfigMap (hostfile and wait targets) over 1 MiB"
	case namedBound.MatchString(detail):
		return namedBound.FindStringSubmatch(detail)[1]
	}
	if len(detail) > 80 {
		detail = detail[:80] + "..."
	}
	return detail
}

// largestJobsTable is the Markdown table of the largest Jobs.
func largestJobsTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| Framework |")
	for _, n := range largestJobNames {
		fmt.Fprintf(&b, " `%s` (%d) |", n, len(n))
	}
	b.WriteString(" What stops it |\n|---|")
	for range largestJobNames {
		b.WriteString("---:|")
	}
	b.WriteString("---|\n")
	names := plugins.Names()
	sort.Strings(names)
	for _, f := range names {
		fmt.Fprintf(&b, "| %s |", f)
		var stops []string
		for _, n := range largestJobNames {
			w, detail := largestWorkers(t, f, n)
			fmt.Fprintf(&b, " %d |", w)
			if s := boundOf(detail); detail != "" && !contains(stops, s) {
				stops = append(stops, s)
			}
		}
		if len(stops) == 0 {
			stops = []string{"MaxReplicas"}
		}
		fmt.Fprintf(&b, " %s |\n", strings.Join(stops, ", "))
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The table of the largest framework Jobs our admission admits, in
// webhook.md, is what the code admits: for each framework and Job name, the
// most pods of its worker role (by bisection over webhook.ValidateJob after
// our mutation). go test ./docs -update rewrites it.
func TestLargestJobsTable(t *testing.T) {
	const file = "webhook.md"
	const marker = "<!-- table: largest-jobs -->\n"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("%s has no %q", file, strings.TrimSpace(marker))
	}
	start := i + len(marker)
	end := strings.Index(doc[start:], "\n\n")
	if end < 0 {
		end = len(doc) - start
	}
	got, want := doc[start:start+end+1], largestJobsTable(t)
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(doc[:start]+want+doc[start+end+1:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's largest-jobs table differs from the code; go test ./docs -update -run TestLargestJobsTable rewrites it:\n got:\n%s\nwant:\n%s", file, got, want)
}
