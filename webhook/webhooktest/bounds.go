package webhooktest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// APIServerMaxBody is the largest request body the API server accepts, hence
// the largest Job a review can carry (MaxRequestBodyBytes, 3 MiB).
const APIServerMaxBody = 3 << 20

// BoundsCase is a Job that is as large as the API server accepts in one
// dimension, as JSON, and a substring of its denial (every one is denied).
type BoundsCase struct {
	// Name says what the Job is; JSON is the Job; Want is a substring of
	// the denial of our validation and of Volcano's.
	Name string
	JSON []byte
	Want string
	// Within is set for the Jobs within the bounds (the most errors a Job
	// can make): Volcano's own validation answers them.
	Within bool
}

// RawJob is a Job in namespace ns as JSON: tasks (each {"name", "replicas"}
// plus extra members; a one-container template is added), and plugins. A
// plugin without arguments must be given an empty list, not nil: the API
// server drops null members of a custom resource (structural schema
// defaulting) before admission, so a plugin given as null never reaches it.
func RawJob(name, ns string, tasks []map[string]any, plugins map[string][]string) []byte {
	for _, t := range tasks {
		t["template"] = map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}
	}
	raw, _ := json.Marshal(map[string]any{
		"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"queue": "default", "tasks": tasks, "plugins": plugins},
	})
	return raw
}

// Task is a task of RawJob.
func Task(name string, replicas int) map[string]any {
	return map[string]any{"name": name, "replicas": replicas}
}

// fill repeats item until about budget bytes of JSON.
func fill(item string, budget int) []string {
	out := make([]string, budget/(len(item)+3))
	for i := range out {
		out[i] = item
	}
	return out
}

// BoundsCases are the Jobs a security review measured (each cost the manager
// hundreds of MB to GB, or seconds), grown to the API server's limit, and the
// largest Jobs within jobs.CheckBounds that make the most errors, in
// namespace ns. Together they are about 17 MB of JSON.
func BoundsCases(ns string) []BoundsCase {
	ptTasks := func() []map[string]any { return []map[string]any{Task("master", 1), Task("worker", 2)} }
	const body = APIServerMaxBody - 4096
	var cases []BoundsCase

	cases = append(cases, BoundsCase{"unknown arguments", RawJob("args", ns, ptTasks(),
		map[string][]string{"pytorch": fill("--x", body)}), "spec.plugins[pytorch]: Too many", false})
	cases = append(cases, BoundsCase{"one long argument", RawJob("long-arg", ns, ptTasks(),
		map[string][]string{"pytorch": {"--master=" + strings.Repeat("a", body)}}), "a plugin argument may have at most 4096", false})

	var many []map[string]any
	for i := 0; len(many)*100 < body; i++ {
		many = append(many, Task(fmt.Sprintf("t%d", i), 1))
	}
	cases = append(cases, BoundsCase{"tasks and a role naming a missing one", RawJob("tasks", ns, many,
		map[string][]string{"tensorflow": {"--ps=missing"}}), "spec.tasks: Too many", false})

	var deps []map[string]any
	for i := 0; i < 400; i++ {
		t := Task(fmt.Sprintf("t%d", i), 1)
		t["dependsOn"] = map[string]any{"name": fill(fmt.Sprintf("bogus-%d", i), 50*12)}
		deps = append(deps, t)
	}
	cases = append(cases, BoundsCase{"400 tasks of 50 missing dependsOn names", RawJob("deps", ns, deps,
		map[string][]string{"tensorflow": {}}), "spec.tasks: Too many", false})

	var names []map[string]any
	for i := 0; i < 3; i++ {
		t := Task([]string{"ps", "worker", "x"}[i], 1)
		t["dependsOn"] = map[string]any{"name": fill("no-such-task", body/3)}
		names = append(names, t)
	}
	cases = append(cases, BoundsCase{"dependsOn names by the thousand", RawJob("dep-names", ns, names,
		map[string][]string{"tensorflow": {}}), "dependsOn.name: Too many", false})

	// 20,000 plugins, not the 196,000 that 3 MiB hold: kube-apiserver itself
	// does not finish a create of the larger Job within its 34 s request
	// timeout, whatever the webhooks answer.
	plugins := map[string][]string{"tensorflow": {}}
	for i := 0; len(plugins) < 20000; i++ {
		plugins[fmt.Sprintf("p%d", i)] = []string{}
	}
	cases = append(cases, BoundsCase{"20,000 plugins", RawJob("plugins", ns,
		[]map[string]any{Task("ps", 1), Task("worker", 1)}, plugins), "spec.plugins: Too many", false})
	cases = append(cases, BoundsCase{"a long plugin name", RawJob("plugin-name", ns,
		[]map[string]any{Task("ps", 1), Task("worker", 1)},
		map[string][]string{"tensorflow": {}, strings.Repeat("p", body): {}}), "a plugin name may have at most 63", false})

	// Within the bounds: the most errors a Job can make.
	var full []map[string]any
	for i := 0; i < jobs.MaxTasks; i++ {
		t := Task(fmt.Sprintf("t%d", i), 1)
		missing := make([]string, jobs.MaxDependsOn)
		for j := range missing {
			missing[j] = fmt.Sprintf("missing-%d-%d", i, j)
		}
		t["dependsOn"] = map[string]any{"name": missing}
		full = append(full, t)
	}
	cases = append(cases, BoundsCase{"MaxTasks tasks of MaxDependsOn missing names", RawJob("deps-within", ns, full,
		map[string][]string{"tensorflow": {"--ps=t0", "--worker=t1"}}), "more problems not listed", true})

	longArgs := map[string][]string{}
	for _, p := range []string{"tensorflow", "pytorch", "mpi", "mxnet"} {
		args := make([]string, jobs.MaxPluginArgs)
		for i := range args {
			args[i] = fmt.Sprintf("--unknown-%d=%s", i, strings.Repeat("v", jobs.MaxPluginArgBytes-20))
		}
		longArgs[p] = args
	}
	cases = append(cases, BoundsCase{"MaxPluginArgs arguments of MaxPluginArgBytes", RawJob("args-within", ns,
		[]map[string]any{Task("ps", 1), Task("worker", 1), Task("master", 1), Task("scheduler", 1), Task("server", 1)}, longArgs),
		"more problems not listed", true})
	return cases
}
