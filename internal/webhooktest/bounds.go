package webhooktest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
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
	// can make): Volcano's own validation answers them, unless NoFramework.
	Within bool
	// NoFramework is set for the Jobs without a framework plugin: only
	// Volcano's admissions see them through the API server (ours allow
	// them unchanged), and Want is a substring of Volcano's wrapped
	// validation's denial, within the bounds too.
	NoFramework bool
}

// RawJob is a Job in namespace ns as JSON: tasks (each {"name", "replicas"}
// plus extra members; a one-container template is added to those without a
// "template"), and plugins. A
// plugin without arguments must be given an empty list, not nil: the API
// server drops null members of a custom resource (structural schema
// defaulting) before admission, so a plugin given as null never reaches it.
func RawJob(name, ns string, tasks []map[string]any, plugins map[string][]string) []byte {
	for _, t := range tasks {
		if _, ok := t["template"]; !ok {
			t["template"] = map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}
		}
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

// TemplateTask is a task of RawJob whose template's first container (with
// container set) or pod spec has list set to items (a JSON list, or a list
// to encode): a list of a pod template grown as far as a test needs.
func TemplateTask(name string, replicas int, container bool, list string, items any) map[string]any {
	c := map[string]any{"name": "c", "image": "i"}
	spec := map[string]any{"containers": []any{c}}
	if container {
		c[list] = items
	} else {
		spec[list] = items
	}
	t := Task(name, replicas)
	t["template"] = map[string]any{"spec": spec}
	return t
}

// List returns a JSON list of n items, each the JSON item makes from its
// index.
func List(n int, item func(i int) string) json.RawMessage {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	b.WriteByte(']')
	return json.RawMessage(b.String())
}

// toBudget returns job(list) for the longest list of items made by item
// (JSON, from their index) for which the Job has at most budget bytes.
func toBudget(budget int, item func(i int) string, job func(list json.RawMessage) []byte) []byte {
	room := budget - len(job(json.RawMessage("[]")))
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; ; i++ {
		next := item(i)
		if b.Len()+len(next)+2 > room {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(next)
	}
	b.WriteByte(']')
	return job(json.RawMessage(b.String()))
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
// largest Jobs within bounds.Check that make the most errors, in
// namespace ns. Together they are about 42 MB of JSON.
func BoundsCases(ns string) []BoundsCase {
	ptTasks := func() []map[string]any { return []map[string]any{Task("master", 1), Task("worker", 2)} }
	const body = APIServerMaxBody - 4096
	var cases []BoundsCase

	cases = append(cases, BoundsCase{"unknown arguments", RawJob("args", ns, ptTasks(),
		map[string][]string{"pytorch": fill("--x", body)}), "spec.plugins[pytorch]: Too many", false, false})
	cases = append(cases, BoundsCase{"one long argument", RawJob("long-arg", ns, ptTasks(),
		map[string][]string{"pytorch": {"--master=" + strings.Repeat("a", body)}}), "a plugin argument may have at most 4096", false, false})

	var many []map[string]any
	for i := 0; len(many)*100 < body; i++ {
		many = append(many, Task(fmt.Sprintf("t%d", i), 1))
	}
	cases = append(cases, BoundsCase{"tasks and a role naming a missing one", RawJob("tasks", ns, many,
		map[string][]string{"tensorflow": {"--ps=missing"}}), "spec.tasks: Too many", false, false})

	var deps []map[string]any
	for i := 0; i < 400; i++ {
		t := Task(fmt.Sprintf("t%d", i), 1)
		t["dependsOn"] = map[string]any{"name": fill(fmt.Sprintf("bogus-%d", i), 50*12)}
		deps = append(deps, t)
	}
	cases = append(cases, BoundsCase{"400 tasks of 50 missing dependsOn names", RawJob("deps", ns, deps,
		map[string][]string{"tensorflow": {}}), "spec.tasks: Too many", false, false})

	var names []map[string]any
	for i := 0; i < 3; i++ {
		t := Task([]string{"ps", "worker", "x"}[i], 1)
		t["dependsOn"] = map[string]any{"name": fill("no-such-task", body/3)}
		names = append(names, t)
	}
	cases = append(cases, BoundsCase{"dependsOn names by the thousand", RawJob("dep-names", ns, names,
		map[string][]string{"tensorflow": {}}), "dependsOn.name: Too many", false, false})

	// 20,000 plugins, not the 196,000 that 3 MiB hold: kube-apiserver itself
	// does not finish a create of the larger Job within its 34 s request
	// timeout, whatever the webhooks answer.
	plugins := map[string][]string{"tensorflow": {}}
	for i := 0; len(plugins) < 20000; i++ {
		plugins[fmt.Sprintf("p%d", i)] = []string{}
	}
	cases = append(cases, BoundsCase{"20,000 plugins", RawJob("plugins", ns,
		[]map[string]any{Task("ps", 1), Task("worker", 1)}, plugins), "spec.plugins: Too many", false, false})
	cases = append(cases, BoundsCase{"a long plugin name", RawJob("plugin-name", ns,
		[]map[string]any{Task("ps", 1), Task("worker", 1)},
		map[string][]string{"tensorflow": {}, strings.Repeat("p", body): {}}), "a plugin name may have at most 63", false, false})

	// The pod templates' lists (bounds.MaxContainers to MaxTemplateEntries).
	// Each entry costs Volcano's validation up to 8 errors, each appended
	// to one string (20,000 invalid env names: 7 s and 2.2 GB), and the
	// mutation's patch diffs the lists.
	for _, l := range []struct {
		plugin, list string
		container    bool
		item         func(i int) string
	}{
		{"pytorch", "args", true, func(i int) string { return fmt.Sprintf(`"a%d"`, i) }},
		{"tensorflow", "env", true, func(i int) string { return fmt.Sprintf(`{"name":"E%d","value":"v"}`, i) }},
		{"mpi", "volumes", false, func(i int) string { return fmt.Sprintf(`{"name":"v%d","emptyDir":{}}`, i) }},
		{"mxnet", "volumeMounts", true, func(i int) string { return fmt.Sprintf(`{"name":"v","mountPath":"/m/%d"}`, i) }},
		{"pytorch", "containers", false, func(i int) string { return fmt.Sprintf(`{"name":"c%d","image":"i"}`, i) }},
		{"tensorflow", "ports", true, func(i int) string { return fmt.Sprintf(`{"containerPort":%d}`, 1+i%65535) }},
		{"mpi", "command", true, func(i int) string { return fmt.Sprintf(`"c%d"`, i) }},
	} {
		path := "spec.tasks[1].template.spec."
		if l.container {
			path += "containers[0]."
		}
		raw := toBudget(body, l.item, func(list json.RawMessage) []byte {
			tasks := []map[string]any{Task("master", 1), TemplateTask("worker", 2, l.container, l.list, list)}
			switch l.plugin {
			case "tensorflow":
				tasks[0]["name"] = "ps"
			case "mxnet":
				tasks = append(tasks, Task("scheduler", 1), Task("server", 1))
			}
			return RawJob("list-"+strings.ToLower(l.list), ns, tasks, map[string][]string{l.plugin: {}})
		})
		cases = append(cases, BoundsCase{Name: fmt.Sprintf("%s, %s to 3 MiB", l.plugin, l.list), JSON: raw, Want: path + l.list + ": Too many"})
	}
	// Without a framework plugin, only Volcano's admissions see the Job.
	invalidEnv := List(20000, func(i int) string { return fmt.Sprintf(`{"name":"%d"}`, i) })
	cases = append(cases, BoundsCase{Name: "no framework plugin, 20,000 invalid env names",
		JSON: RawJob("env-names", ns, []map[string]any{TemplateTask("main", 1, true, "env", invalidEnv)}, map[string][]string{}),
		Want: "spec.tasks[0].template.spec.containers[0].env: Too many: 20000: must have at most 2048 items", NoFramework: true})
	cases = append(cases, BoundsCase{Name: "no framework plugin, tolerations to 3 MiB", JSON: toBudget(body,
		func(i int) string { return fmt.Sprintf(`{"key":"bad key %d","operator":"Bad"}`, i) },
		func(list json.RawMessage) []byte {
			return RawJob("tolerations", ns, []map[string]any{TemplateTask("main", 1, false, "tolerations", list)}, map[string][]string{})
		}), Want: "spec.tasks[0].template.spec.tolerations: Too many", NoFramework: true})
	// Replicas × template bytes (bounds.MaxPodTemplateBytes): 300 pods of a
	// 1 MiB template, for every Job.
	longArg := List(1, func(int) string { return `"` + strings.Repeat("x", 1<<20) + `"` })
	cases = append(cases, BoundsCase{Name: "no framework plugin, 300 pods of a 1 MiB template",
		JSON: RawJob("pod-bytes", ns, []map[string]any{TemplateTask("main", 300, true, "args", longArg)}, map[string][]string{}),
		Want: "spec.tasks: Too long: the job's 300 pods would carry", NoFramework: true})
	cases = append(cases, BoundsCase{Name: "pytorch, 300 pods of a 1 MiB template",
		JSON: RawJob("pod-bytes-pt", ns, []map[string]any{Task("master", 1), TemplateTask("worker", 299, true, "args", longArg)}, map[string][]string{"pytorch": {}}),
		Want: "the job's 300 pods would carry"})
	// Within the bounds, the most template errors: every template at
	// bounds.MaxTemplateEntries, every env entry making 8 errors.
	const badEnv = `{"name":"1 x","value":"v","valueFrom":{"fieldRef":{"fieldPath":"x"},"resourceFieldRef":{"resource":"x"},` +
		`"configMapKeyRef":{"key":"a b"},"secretKeyRef":{"name":"A","key":"a b"}}}`
	var errTasks []map[string]any
	for i := 0; i < bounds.MaxJobTemplateEntries/bounds.MaxTemplateEntries; i++ {
		containers := List(bounds.MaxTemplateEntries/bounds.MaxEnv, func(c int) string {
			return fmt.Sprintf(`{"name":"c%d","image":"i","env":%s}`, c, List(bounds.MaxEnv-1, func(int) string { return badEnv }))
		})
		errTasks = append(errTasks, TemplateTask(fmt.Sprintf("t%d", i), 1, false, "containers", containers))
	}
	cases = append(cases, BoundsCase{Name: "no framework plugin, the most template errors within the bounds",
		JSON:   RawJob("template-errors", ns, errTasks, map[string][]string{}),
		Want:   "the job's pod templates have more than 50 errors; the first 50: spec.tasks[0].template.spec.containers[0].env[0].name: Invalid value: \"1 x\"",
		Within: true, NoFramework: true})

	// Within the bounds: the most errors a Job can make.
	var full []map[string]any
	for i := 0; i < bounds.MaxTasks; i++ {
		t := Task(fmt.Sprintf("t%d", i), 1)
		missing := make([]string, bounds.MaxDependsOn)
		for j := range missing {
			missing[j] = fmt.Sprintf("missing-%d-%d", i, j)
		}
		t["dependsOn"] = map[string]any{"name": missing}
		full = append(full, t)
	}
	cases = append(cases, BoundsCase{"MaxTasks tasks of MaxDependsOn missing names", RawJob("deps-within", ns, full,
		map[string][]string{"tensorflow": {"--ps=t0", "--worker=t1"}}), "more problems not listed", true, false})

	longArgs := map[string][]string{}
	for _, p := range []string{"tensorflow", "pytorch", "mpi", "mxnet"} {
		args := make([]string, bounds.MaxPluginArgs)
		for i := range args {
			args[i] = fmt.Sprintf("--unknown-%d=%s", i, strings.Repeat("v", bounds.MaxPluginArgBytes-20))
		}
		longArgs[p] = args
	}
	cases = append(cases, BoundsCase{"MaxPluginArgs arguments of MaxPluginArgBytes", RawJob("args-within", ns,
		[]map[string]any{Task("ps", 1), Task("worker", 1), Task("master", 1), Task("scheduler", 1), Task("server", 1)}, longArgs),
		"more problems not listed", true, false})
	return cases
}
