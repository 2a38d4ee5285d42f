package webhooktest

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

var (
	editTaskNames = []string{"ps", "worker", "chief", "evaluator", "master", "scheduler", "server", "launcher", "a", "b", "",
		"Worker_1", "tf.v2", "w-1", "w_1", strings.Repeat("x", 70)}
	editReplicas = []int64{0, 1, 2, 3, 8, -1, -2147483648, 2147483647, 99999, 100000, 100001, 8000, 65536, 4000}
	editValues   = []string{"ps", "worker", "chief", "evaluator", "master", "scheduler", "server", "a", "", " ",
		"0", "1", "-1", "2", "65535", "65536", "1048577", "2147483648", "auto", "gpu", "cpu", "true", "false", "maybe",
		"5m", "-5s", "300", "1y", "intel", "openmpi", "mpich", "MPICH", "busybox:1.36.1", "x y", "c10d"}
	// editFlags adds the flags of svc and ssh, which Edit also exercises.
	editFlags = func() map[string][]string {
		m := map[string][]string{
			framework.SvcPlugin: {"publish-not-ready-addresses", "disable-network-policy"},
			framework.SSHPlugin: {"no-root", "ssh-key-file-path"},
		}
		for _, p := range Plugins {
			m[p] = Flags(p)
		}
		return m
	}()
	editPlugins = append(slices.Clone(Plugins), framework.SvcPlugin, framework.SSHPlugin, "env")
	// editBases are each framework's base Job: its tasks, by role flag.
	editBases = func() [][2]any {
		var out [][2]any
		for _, p := range Plugins {
			var tasks []string
			for _, r := range sampleOf(p).Roles {
				if r.Replicas > 0 {
					tasks = append(tasks, r.Flag)
				}
			}
			out = append(out, [2]any{p, tasks})
		}
		return out
	}()
)

// editTemplateLists are the lists and maps of a pod template Edit grows: where
// they are (a container's, the pod's, the template's metadata), their bound,
// and an entry, valid or one that Kubernetes's validation denies.
var editTemplateLists = []struct {
	where, name string
	max         int
	entry       func(i int, bad bool) any
}{
	{"container", "args", bounds.MaxArgs, func(i int, _ bool) any { return "--a" + strconv.Itoa(i) }},
	{"container", "command", bounds.MaxArgs, func(i int, _ bool) any { return "c" + strconv.Itoa(i) }},
	{"container", "env", bounds.MaxEnv, func(i int, bad bool) any {
		if bad {
			return map[string]any{"name": strconv.Itoa(i), "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "x"}}}
		}
		return map[string]any{"name": "E" + strconv.Itoa(i), "value": "v"}
	}},
	{"container", "envFrom", bounds.MaxEnvFrom, func(i int, bad bool) any {
		if bad {
			return map[string]any{"prefix": "1=", "configMapRef": map[string]any{"name": "Bad Name"}}
		}
		return map[string]any{"configMapRef": map[string]any{"name": "cm" + strconv.Itoa(i)}}
	}},
	{"container", "ports", bounds.MaxPorts, func(i int, bad bool) any {
		if bad {
			return map[string]any{"containerPort": 0, "protocol": "X", "name": "Bad_Name_" + strconv.Itoa(i)}
		}
		return map[string]any{"containerPort": 1 + i%65535}
	}},
	{"container", "volumeMounts", bounds.MaxVolumeMounts, func(i int, bad bool) any {
		if bad {
			return map[string]any{"name": "missing", "mountPath": "", "subPath": "../x"}
		}
		return map[string]any{"name": "v", "mountPath": "/m/" + strconv.Itoa(i)}
	}},
	{"spec", "volumes", bounds.MaxVolumes, func(i int, bad bool) any {
		if bad {
			return map[string]any{"name": "Bad Name", "hostPath": map[string]any{"path": "../x"}, "emptyDir": map[string]any{}}
		}
		return map[string]any{"name": "v" + strconv.Itoa(i), "emptyDir": map[string]any{}}
	}},
	{"spec", "containers", bounds.MaxContainers, func(i int, bad bool) any {
		if bad {
			return map[string]any{"name": "Bad Name", "imagePullPolicy": "X"}
		}
		return map[string]any{"name": "c" + strconv.Itoa(i), "image": "i"}
	}},
	{"spec", "initContainers", bounds.MaxContainers, func(i int, _ bool) any {
		return map[string]any{"name": "i" + strconv.Itoa(i), "image": "i"}
	}},
	{"spec", "tolerations", bounds.MaxListEntries, func(i int, bad bool) any {
		if bad {
			return map[string]any{"key": "bad key " + strconv.Itoa(i), "operator": "Bad"}
		}
		return map[string]any{"key": "k" + strconv.Itoa(i), "operator": "Exists"}
	}},
	{"metadata", "labels", bounds.MaxListEntries, nil},
}

// growTemplateList grows one list or map of task t's pod template (creating
// the template, its spec and a container where missing) to a count around
// its bound, or to one that takes a template over bounds.MaxTemplateEntries.
func growTemplateList(c Chooser, t map[string]any) {
	l := pick(c, editTemplateLists)
	n := pick(c, append(editCounts(l.max), bounds.MaxTemplateEntries+1))
	bad := c.IntN(2) == 0
	tmpl, _ := t["template"].(map[string]any)
	if tmpl == nil {
		tmpl = map[string]any{}
		t["template"] = tmpl
	}
	if l.where == "metadata" {
		labels := map[string]any{}
		for i := 0; i < n; i++ {
			k := "l" + strconv.Itoa(i)
			if bad {
				k = "bad key " + k
			}
			labels[k] = "v"
		}
		tmpl["metadata"] = map[string]any{"labels": labels}
		return
	}
	spec, _ := tmpl["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		tmpl["spec"] = spec
	}
	list := make([]any, n)
	for i := range list {
		list[i] = l.entry(i, bad)
	}
	if l.where == "spec" {
		spec[l.name] = list
		return
	}
	var container map[string]any
	containers, _ := spec["containers"].([]any)
	if len(containers) > 0 {
		container, _ = containers[0].(map[string]any)
	}
	if container == nil {
		container = map[string]any{"name": "main", "image": "train:latest"}
		spec["containers"] = append([]any{container}, containers...)
	}
	container[l.name] = list
}

// editCounts are sizes around a bound and far over it.
func editCounts(bound int) []int { return []int{1, bound - 1, bound, bound + 1, 3 * bound} }

// editArg is an argument for plugin: mostly --flag=value of a real flag, and
// the other spellings and mistakes users make.
func editArg(c Chooser, plugin string) string {
	flags := editFlags[plugin]
	if len(flags) == 0 {
		flags = []string{"bogus"}
	}
	flag, value := pick(c, flags), pick(c, editValues)
	switch c.IntN(8) {
	case 0:
		return "--" + flag
	case 1:
		return "--" + flag + " " + value
	case 2:
		return "-" + flag + "=" + value
	case 3:
		return flag
	case 4:
		return "--" + flag[:len(flag)/2+1] + "=" + value
	}
	return "--" + flag + "=" + value
}

func editTask(c Chooser, name string, replicas int64) map[string]any {
	container := map[string]any{"name": "main", "image": "train:latest"}
	if c.IntN(3) == 0 {
		n := strconv.Itoa(c.IntN(9))
		container["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": n}}
	}
	return map[string]any{
		"name": name, "replicas": replicas,
		"template": map[string]any{"spec": map[string]any{"containers": []any{container}}},
	}
}

// Edit decodes base as a JSON object, or makes a Job of one of the framework
// plugins when it is not one, and edits it as c chooses: replicas (negative
// and huge included), minAvailable, task names, null or missing templates,
// null or empty plugin lists, plugin arguments drawn from the plugins' real
// flags and plausible values, hostnames, dependsOn, tasks added, removed or
// made null, and each dimension bounds.Check caps (arguments and their
// length, dependsOn names, tasks, plugins, and the lists and maps of a task's
// pod template, with entries Kubernetes's validation accepts or not) around
// and far over its bound. The
// result may be valid or not (KindEdited); it is JSON-shaped
// but not necessarily a Job (spec.tasks may hold nulls).
func Edit(base []byte, c Chooser) Case {
	var doc map[string]any
	plugin := ""
	if json.Unmarshal(base, &doc) != nil || doc == nil {
		b := pick(c, editBases)
		plugin = b[0].(string)
		var tasks []any
		for _, name := range b[1].([]string) {
			tasks = append(tasks, editTask(c, name, pick(c, editReplicas)))
		}
		doc = map[string]any{
			"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
			"metadata": map[string]any{"name": "edited"},
			"spec":     map[string]any{"plugins": map[string]any{plugin: []any{}}, "tasks": tasks},
		}
	}
	spec, _ := doc["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		doc["spec"] = spec
	}
	tasks, _ := spec["tasks"].([]any)
	task := func() map[string]any {
		if len(tasks) == 0 {
			return nil
		}
		t, _ := tasks[c.IntN(len(tasks))].(map[string]any)
		return t
	}
	plugins, _ := spec["plugins"].(map[string]any)
	if plugins == nil {
		plugins = map[string]any{}
		spec["plugins"] = plugins
	}
	for edits := c.IntN(12); edits > 0; edits-- {
		switch c.IntN(20) {
		case 0:
			if t := task(); t != nil {
				t["replicas"] = pick(c, editReplicas)
			}
		case 1:
			if t := task(); t != nil {
				t["template"] = nil
			}
		case 2:
			if t := task(); t != nil {
				if tmpl, ok := t["template"].(map[string]any); ok {
					delete(tmpl, "spec")
				} else {
					delete(t, "template")
				}
			}
		case 3:
			if t := task(); t != nil {
				t["minAvailable"] = pick(c, editReplicas)
			}
		case 4:
			p := pick(c, editPlugins)
			args, _ := plugins[p].([]any)
			plugins[p] = append(args, editArg(c, p))
		case 5:
			p := pick(c, editPlugins)
			plugins[p] = []any{nil, []any{}}[c.IntN(2)]
		case 6:
			tasks = append(tasks, editTask(c, pick(c, editTaskNames), pick(c, editReplicas)))
		case 7:
			if t := task(); t != nil {
				t["name"] = pick(c, editTaskNames)
			}
		case 8:
			spec["minAvailable"] = pick(c, editReplicas)
		case 9:
			if t := task(); t != nil {
				if tmpl, ok := t["template"].(map[string]any); ok {
					if s, ok := tmpl["spec"].(map[string]any); ok {
						s[[]string{"hostname", "subdomain"}[c.IntN(2)]] = pick(c, editTaskNames)
					}
				}
			}
		case 10:
			if t := task(); t != nil {
				t["dependsOn"] = map[string]any{"name": []any{pick(c, editTaskNames)}}
			}
		case 11:
			if len(tasks) > 0 {
				tasks = tasks[:len(tasks)-1]
			}
		case 12:
			if t := task(); t != nil {
				t["policies"] = []any{map[string]any{"event": "TaskCompleted", "action": "CompleteJob"}}
			}
		case 13:
			if len(tasks) > 0 {
				tasks[c.IntN(len(tasks))] = nil
			}
		// The dimensions bounds.Check caps, around and far over each
		// bound: arguments, their length, dependsOn names, tasks, plugins.
		case 14:
			p := pick(c, editPlugins)
			args, _ := plugins[p].([]any)
			for n := pick(c, editCounts(bounds.MaxPluginArgs)); n > 0; n-- {
				args = append(args, editArg(c, p))
			}
			plugins[p] = args
		case 15:
			p := pick(c, editPlugins)
			args, _ := plugins[p].([]any)
			flag := pick(c, append([]string{"bogus"}, editFlags[p]...))
			plugins[p] = append(args, "--"+flag+"="+strings.Repeat("v", pick(c, editCounts(bounds.MaxPluginArgBytes))))
		case 16:
			if t := task(); t != nil {
				var names []any
				for n := pick(c, editCounts(bounds.MaxDependsOn)); n > 0; n-- {
					names = append(names, pick(c, editTaskNames))
				}
				t["dependsOn"] = map[string]any{"name": names}
			}
		case 17:
			for n := pick(c, editCounts(bounds.MaxTasks)); n > 0 && len(tasks) < 4*bounds.MaxTasks; n-- {
				tasks = append(tasks, editTask(c, "t"+strconv.Itoa(len(tasks)), pick(c, []int64{0, 1, 2})))
			}
		case 18:
			for n := pick(c, editCounts(bounds.MaxPlugins)); n > 0; n-- {
				plugins["p"+strconv.Itoa(c.IntN(1000))] = []any{}
			}
		case 19:
			// The pod template's lists and maps (bounds.MaxContainers to
			// MaxTemplateEntries), with entries valid or not.
			if t := task(); t != nil {
				growTemplateList(c, t)
			}
		}
	}
	spec["tasks"] = tasks
	return Case{Plugin: plugin, Kind: KindEdited, Job: doc}
}
