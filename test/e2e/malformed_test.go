package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcplugins/framework-plugins/internal/webhooktest"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
)

const (
	// malformedJobs is how many webhooktest.Cases the spec sends: every
	// defect of every plugin 6 times (webhook's TestGeneratedJobs checks the
	// same Jobs in-process).
	malformedJobs = 6 * 4 * 16
	// editedJobs are Jobs edited at random (webhooktest.Edit), valid or not:
	// they must be admitted or cleanly denied.
	editedJobs = 64
	// malformedParallel bounds the requests in flight.
	malformedParallel = 8
	// malformedRequestTimeout is far above the webhooks' own 10 s: a request
	// that takes it is a failure, not a slow answer.
	malformedRequestTimeout = 30 * time.Second
)

var (
	webhookDenial = regexp.MustCompile(`admission webhook "([^"]+)" denied the request`)
	// What a clean denial names: the plugin (ours and Volcano's mpi check),
	// a field path (ours, Volcano's spec.task[i] and the API server's), or a
	// task by name (Volcano's "in task: <name>", "task name <name>").
	namesPluginRE = regexp.MustCompile(`\bplugin (` + strings.Join(plugins.Names(), "|") + `|svc|ssh): |\bmpi (master|worker) task\b`)
	namesFieldRE  = regexp.MustCompile(`\b(spec|metadata)\.[A-Za-z]+|'(minAvailable|replicas)'`)
)

// volcanoValidation is the webhook of Volcano's own job validation.
const volcanoValidation = "validatejob.volcano.sh"

// dryRunResult is the API server's answer to one Job.
type dryRunResult struct {
	err      error
	warnings []string
	elapsed  time.Duration
}

// taskNames returns the names of a generated Job's tasks.
func taskNames(job map[string]any) []string {
	spec, _ := job["spec"].(map[string]any)
	tasks, _ := spec["tasks"].([]any)
	var out []string
	for _, t := range tasks {
		if m, ok := t.(map[string]any); ok {
			if name, ok := m["name"].(string); ok && name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// whatItNames says what a denial names, "" for nothing: "plugin", "field" or
// "task".
func whatItNames(msg string, job map[string]any) string {
	switch {
	case namesPluginRE.MatchString(msg):
		return "plugin"
	case namesFieldRE.MatchString(msg):
		return "field"
	}
	for _, name := range taskNames(job) {
		q := regexp.QuoteMeta(name)
		// "task: worker", "task name worker", or the pod name
		// <job>-<task>-<index> Volcano quotes.
		if regexp.MustCompile(`\btask(:| name)? "?` + q + `\b|-` + q + `-[0-9]+\b`).MatchString(msg) {
			return "task"
		}
	}
	return ""
}

// cleanDenial checks that err is a denial a user can act on: an API status
// of 400, 403 or 422 (never a 500, an internal error of the webhook or the API
// server, or a timeout). It returns the problem, "" when there is none, and
// who denied (the webhook's name, or kube-apiserver).
func cleanDenial(err error) (problem, deniedBy string) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return fmt.Sprintf("not an API status: %T %v", err, err), ""
	}
	s := status.Status()
	switch s.Code {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusUnprocessableEntity:
	default:
		return fmt.Sprintf("HTTP %d %s: %s", s.Code, s.Reason, s.Message), ""
	}
	for _, bad := range []string{webhook.InternalErrorPrefix, "Internal error", "internal error", "context deadline exceeded", "failed calling webhook"} {
		if strings.Contains(s.Message, bad) {
			return fmt.Sprintf("HTTP %d with %q: %s", s.Code, bad, s.Message), ""
		}
	}
	deniedBy = "kube-apiserver"
	if m := webhookDenial.FindStringSubmatch(s.Message); m != nil {
		deniedBy = m[1]
	}
	return "", deniedBy
}

// counts renders a tally in key order.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

var _ = Describe("Malformed framework Jobs through the real kube-apiserver", func() {
	f := framework.New("malformed")

	It(fmt.Sprintf("denies %d generated malformed Jobs cleanly, each denial naming the plugin, task or field, and admits or cleanly denies %d edited ones",
		malformedJobs, editedJobs), func(ctx SpecContext) {
		cases := webhooktest.Cases(malformedJobs)
		for i := range editedJobs {
			e := webhooktest.Edit(nil, webhooktest.Seeded(uint64(1<<32+i)))
			e.Job["metadata"].(map[string]any)["name"] = fmt.Sprintf("e%d-edited", i)
			cases = append(cases, e)
		}

		// Server-side dry runs of creates, raw JSON (the typed Job cannot carry
		// a null template): both mutations and all validations run, nothing
		// is stored.
		rest := f.Volcano.BatchV1alpha1().RESTClient()
		results := make([]dryRunResult, len(cases))
		sem := make(chan struct{}, malformedParallel)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range cases {
			cases[i].Job["metadata"].(map[string]any)["namespace"] = f.Namespace
			body := cases[i].JSON()
			Expect(body).NotTo(BeNil(), "%s does not encode", cases[i])
			Expect(len(body)).To(BeNumerically("<", 1536<<10), "%s is too large for the API server", cases[i])
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer GinkgoRecover()
				defer wg.Done()
				defer func() { <-sem }()
				rctx, cancel := context.WithTimeout(ctx, malformedRequestTimeout)
				defer cancel()
				t := time.Now()
				w := &framework.WarningRecorder{}
				err := rest.Post().Namespace(f.Namespace).Resource("jobs").WarningHandler(w).
					Param("dryRun", metav1.DryRunAll).Body(body).Do(rctx).Error()
				results[i] = dryRunResult{err: err, warnings: w.Warnings(), elapsed: time.Since(t)}
			}(i)
		}
		wg.Wait()
		took := time.Since(start)

		var problems []string
		byPlugin, byKind, byDenier, byNames := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
		var volcanoUnnamed []string
		examples := map[string]string{} // a denial of every denier, for the summary
		var slowest time.Duration
		admitted, warned := 0, 0
		for i, c := range cases {
			r := results[i]
			slowest = max(slowest, r.elapsed)
			if r.err == nil {
				// The API server's own warnings (unknown fields) come first.
				warnedAsStock := c.Kind.Arguments() && hasStock(c.Plugin) && slices.Contains(r.warnings, webhook.ArgumentsWarning)
				// Host lists over a limit: written in another form, with
				// warnings that say so.
				warnedTooLarge := c.Kind == webhooktest.KindTooLarge && slices.ContainsFunc(r.warnings, func(w string) bool { return strings.HasPrefix(w, "plugin ") })
				if c.MustDeny() && !warnedAsStock && !warnedTooLarge {
					problems = append(problems, fmt.Sprintf("%s: admitted with warnings %q, want denied (or, for an argument defect of %v or host lists over a limit, admitted with warnings): %s",
						c, r.warnings, stockFrameworks(), c.JSON()))
				}
				if warnedAsStock {
					warned++
				} else {
					admitted++
				}
				continue
			}
			problem, deniedBy := cleanDenial(r.err)
			if problem != "" {
				problems = append(problems, fmt.Sprintf("%s: %s\n  job: %s", c, problem, c.JSON()))
				continue
			}
			if _, ok := examples[deniedBy]; !ok {
				examples[deniedBy] = fmt.Sprintf("%s: %v", c, r.err)
			}
			if !c.MustDeny() {
				byDenier["edited: "+deniedBy]++
				continue
			}
			names := whatItNames(r.err.Error(), c.Job)
			if names == "" {
				if deniedBy != volcanoValidation {
					problems = append(problems, fmt.Sprintf("%s: the denial names no plugin, task or field: %v\n  job: %s", c, r.err, c.JSON()))
					continue
				}
				// Volcano's own validation also denies the Job, and the API
				// server returns the first denial to arrive: Volcano's for
				// negative replicas ("job 'minAvailable' must be >= 0."),
				// cycles of dependsOn and bad task names name nothing.
				volcanoUnnamed = append(volcanoUnnamed, fmt.Sprintf("%s: %v", c, r.err))
				names = "nothing (Volcano's)"
			}
			byPlugin[c.Plugin]++
			byKind[string(c.Kind)]++
			byDenier[deniedBy]++
			byNames[names]++
		}
		GinkgoWriter.Printf("%d malformed and %d edited Jobs sent in %.1fs (%d in flight, slowest answer %v); %d edited admitted; %d admitted with argument warnings as Volcano admits them\n",
			malformedJobs, editedJobs, took.Seconds(), malformedParallel, slowest.Round(time.Millisecond), admitted, warned)
		GinkgoWriter.Printf("clean denials by plugin: %s\n", counts(byPlugin))
		GinkgoWriter.Printf("by defect: %s\n", counts(byKind))
		GinkgoWriter.Printf("by who denied: %s\n", counts(byDenier))
		GinkgoWriter.Printf("denial names the: %s\n", counts(byNames))
		for _, who := range slices.Sorted(maps.Keys(examples)) {
			GinkgoWriter.Printf("a denial by %s: %s\n", who, examples[who])
		}
		if len(volcanoUnnamed) > 0 {
			GinkgoWriter.Printf("denials by Volcano's own validation that name nothing (it won the race with ours):\n  %s\n",
				strings.Join(volcanoUnnamed, "\n  "))
		}
		Expect(problems).To(BeEmpty(), "%d of %d Jobs:\n%s", len(problems), len(cases), strings.Join(problems, "\n"))

		jobs, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs.Items).To(BeEmpty(), "Jobs stored by dry runs")
	}, SpecTimeout(2*time.Minute))
})

// hasStock reports whether Volcano has an in-tree plugin of the framework
// named name (framework.Framework.Stock): Volcano's admission accepts its
// arguments, so ours warns of their problems.
func hasStock(name string) bool {
	f := plugins.Lookup(name)
	return f != nil && f.Stock != nil
}

// stockFrameworks are the frameworks hasStock reports, by name.
func stockFrameworks() []string {
	var out []string
	for _, f := range plugins.ByName() {
		if f.Stock != nil {
			out = append(out, f.Name)
		}
	}
	return out
}
