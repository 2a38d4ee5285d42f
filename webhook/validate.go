package webhook

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/metrics"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// ValidateJob checks a Job that uses one of the framework plugins; it returns
// nil for other Jobs. The Job is not modified. It reports:
//
//   - first, and alone when there are any: negative replicas or minAvailable,
//     a task minAvailable above its replicas, a job minAvailable above the
//     total, task names that are not distinct DNS labels;
//   - every problem the plugins' own argument parsers find (the ParseArgs the
//     controller runs): unknown flags, malformed or out-of-range values, role
//     tasks that are missing or have no replicas, roles that must be single
//     with more than one replica, two roles on one task;
//   - a task that plays roles in two framework plugins;
//   - launch-order problems over the graph of the plugins' wait containers and
//     the tasks' dependsOn: a dependency on a task the Job does not have, and
//     cycles, named task by task;
//   - limits that would otherwise fail only when a pod starts: an environment
//     string or argument the plugins give a container (TF_CONFIG, MPI_HOST, ...)
//     or the svc plugin's host lists over MAX_ARG_STRLEN, the svc ConfigMap over
//     1 MiB (the mpi hostfile is ParseArgs' own check), and pod hostnames or
//     subdomains that are not DNS labels of at most 63 characters.
func ValidateJob(job *batch.Job) field.ErrorList {
	errs, _, _ := validateJob(job, false)
	return errs
}

// validateJob is ValidateJob, also returning the metrics reason of the
// errors (metrics.ReasonNone when there are none): the first check, in the
// order above, that found a problem. With admit, a Job that Volcano's own
// admission accepts (asStock) and whose only problems are its arguments and
// roles gets them back as warnings instead (reason none); a Job denied for
// anything else lists them in the denial as ValidateJob does.
func validateJob(job *batch.Job, admit bool) (field.ErrorList, string, field.ErrorList) {
	if !UsesFrameworks(job) {
		return nil, metrics.ReasonNone, nil
	}
	// The checks below count, index and simulate pods; they need sane numbers.
	if errs := validateShape(job); len(errs) > 0 {
		reason := metrics.ReasonShape
		if len(bounds.Check(job)) > 0 {
			reason = metrics.ReasonBounds
		}
		return namePlugin(errs, job), reason, nil
	}
	uses := analyze(job)
	var errs field.ErrorList
	for _, u := range uses {
		errs = append(errs, u.Errs...)
	}
	errs = append(errs, checkClaims(job, uses)...)
	arguments := len(errs)
	reason := metrics.ReasonNone
	if arguments > 0 {
		reason = metrics.ReasonArguments
	}
	order, unlisted := checkLaunchOrder(job, uses, MaxErrors-len(errs))
	if reason == metrics.ReasonNone && len(order)+unlisted > 0 {
		reason = metrics.ReasonLaunchOrder
	}
	errs = append(errs, order...)
	limits := checkLimits(job, uses)
	if reason == metrics.ReasonNone && len(limits) > 0 {
		reason = metrics.ReasonLimits
	}
	errs = append(errs, limits...)
	if admit && arguments > 0 && arguments == len(errs) && unlisted == 0 && asStock(job) {
		return nil, metrics.ReasonNone, namePlugin(errs, job)
	}
	return namePlugin(capErrors(errs, unlisted), job), reason, nil
}

// asStock reports whether Volcano's own admission accepts the arguments of
// every framework plugin the Job uses: each is one Volcano also has in-tree
// (Framework.Stock: tensorflow, pytorch and mpi, which plugins.Register
// replaces) and admits them (Stock.AdmitsJob: mpi's master task must exist
// as Volcano reads it). Volcano checks nothing else of these plugins'
// arguments, so a drop-in that denied such a Job would refuse what the
// stock manager accepts; the controller hands it to Volcano's in-tree
// plugin instead, as stock does, and records an InvalidPluginArguments
// event (framework.StockFallback).
func asStock(job *batch.Job) bool {
	for _, f := range frameworks() {
		argv, ok := job.Spec.Plugins[f.Name]
		if !ok {
			continue
		}
		if f.Stock == nil || !f.Stock.AdmitsJob(argv, job) {
			return false
		}
	}
	return true
}

// MaxErrors is the most problems ValidateJob lists; the rest are counted in a
// last error ("and N more problems"). Within the bounds of bounds.Check
// every check but dependsOn makes a few errors per task or argument at most;
// dependsOn could make one per name of every task (MaxTasks × MaxDependsOn).
const MaxErrors = 50

// capErrors returns at most MaxErrors of errs, followed, when some were left
// out (including unlisted ones that were only counted), by an error saying how
// many.
func capErrors(errs field.ErrorList, unlisted int) field.ErrorList {
	if len(errs) > MaxErrors {
		unlisted += len(errs) - MaxErrors
		errs = errs[:MaxErrors:MaxErrors]
	}
	if unlisted == 0 {
		return errs
	}
	return append(errs, &field.Error{Type: field.ErrorTypeTooMany, Field: "spec", BadValue: field.OmitValueType{},
		Detail: fmt.Sprintf("and %d more problems not listed; fix the ones above first", unlisted)})
}

// namePlugin starts every error's detail with "plugin <name>: ", as the
// plugins' own errors do: checks of the Job as a whole (numbers, names,
// dependsOn, hostnames) name the first framework plugin the Job uses, in
// name order (frameworks), which is why the Job is checked at all.
func namePlugin(errs field.ErrorList, job *batch.Job) field.ErrorList {
	plugin := ""
	if f := firstFramework(job); f != nil {
		plugin = f.Name
	}
	for _, e := range errs {
		if !strings.HasPrefix(e.Detail, "plugin ") {
			e.Detail = "plugin " + plugin + ": " + e.Detail
		}
	}
	return errs
}

// checkClaims reports tasks that play roles in two framework plugins: each
// plugin would configure the pods for its own framework and wait graph.
func checkClaims(job *batch.Job, uses []use) field.ErrorList {
	type claim struct{ plugin, role string }
	claims := map[string]claim{}
	reported := map[string]bool{}
	var errs field.ErrorList
	for _, u := range uses {
		for _, r := range u.Roles {
			first, ok := claims[r.Task]
			if !ok {
				claims[r.Task] = claim{u.name(), r.Name}
				continue
			}
			if first.plugin == u.name() || reported[r.Task] {
				continue
			}
			reported[r.Task] = true
			errs = append(errs, field.Invalid(taskPath(job, r.Task).Child("name"), r.Task, fmt.Sprintf(
				"plugin %s: task %q plays role %s of plugin %s and role %s of plugin %s; a task can play roles in one framework plugin only",
				first.plugin, r.Task, first.role, first.plugin, r.Name, u.name())))
		}
	}
	return errs
}

// checkLaunchOrder builds the launch-order graph of the Job (an edge from a
// task to a task its pods wait for: the framework plugins' wait containers and
// Volcano's dependsOn) and reports dependencies on tasks the Job does not have
// and the first cycle found. It makes at most room errors for missing
// dependencies and returns how many more it found (unlisted).
func checkLaunchOrder(job *batch.Job, uses []use, room int) (errs field.ErrorList, unlisted int) {
	tasks := ""
	g := newGraph(job)
	for _, u := range uses {
		for _, e := range u.waits() {
			g.add(e)
		}
	}
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		if t.DependsOn == nil {
			continue
		}
		for j, name := range t.DependsOn.Name {
			p := field.NewPath("spec", "tasks").Index(i).Child("dependsOn", "name").Index(j)
			if !g.has(name) {
				if len(errs) >= room {
					unlisted++
					continue
				}
				if tasks == "" {
					tasks = jobs.TaskNames(job)
				}
				errs = append(errs, field.Invalid(p, jobs.Abbrev(name), fmt.Sprintf(
					"task %q depends on task %q, which the job does not have (tasks: %s)", t.Name, jobs.Abbrev(name), tasks)))
				continue
			}
			g.add(edge{from: t.Name, to: name, how: "dependsOn", path: p})
		}
	}
	if cycle := g.cycle(); cycle != nil {
		errs = append(errs, cycleError(cycle))
	}
	return errs, unlisted
}

func cycleError(cycle []edge) *field.Error {
	names := make([]string, 0, len(cycle)+1)
	steps := make([]string, 0, len(cycle))
	for _, e := range cycle {
		names = append(names, e.from)
		steps = append(steps, fmt.Sprintf("%s waits for %s (%s)", e.from, e.to, e.how))
	}
	names = append(names, cycle[0].from)
	// The plugin whose wait closes the cycle; a cycle of dependsOn alone is
	// Volcano's to deny, and namePlugin names one for it.
	prefix := ""
	for _, e := range cycle {
		if plugin, ok := strings.CutSuffix(e.how, " --wait"); ok {
			prefix = "plugin " + plugin + ": "
			break
		}
	}
	return field.Invalid(cycle[0].path, strings.Join(names, " -> "), fmt.Sprintf(
		"%slaunch-order cycle: %s; the pods would wait for each other forever", prefix, strings.Join(steps, ", ")))
}

// graph is a launch-order graph over a Job's tasks, in spec order.
type graph struct {
	nodes []string
	out   map[string][]edge
}

func newGraph(job *batch.Job) *graph {
	g := &graph{out: map[string][]edge{}}
	for i := range job.Spec.Tasks {
		name := job.Spec.Tasks[i].Name
		if _, ok := g.out[name]; !ok {
			g.nodes = append(g.nodes, name)
			g.out[name] = nil
		}
	}
	return g
}

func (g *graph) has(task string) bool { _, ok := g.out[task]; return ok }

func (g *graph) add(e edge) { g.out[e.from] = append(g.out[e.from], e) }

// cycle returns the edges of a cycle, starting with the one that leaves the
// cycle's first task in a depth-first walk in spec order, or nil.
func (g *graph) cycle() []edge {
	const (
		unseen = iota
		active
		done
	)
	state := make(map[string]int, len(g.nodes))
	var path, found []edge
	var visit func(n string) bool
	visit = func(n string) bool {
		state[n] = active
		for _, e := range g.out[n] {
			switch state[e.to] {
			case active:
				start := len(path)
				for k := range path {
					if path[k].from == e.to {
						start = k
						break
					}
				}
				found = append(append(found, path[start:]...), e)
				return true
			case unseen:
				path = append(path, e)
				if visit(e.to) {
					return true
				}
				path = path[:len(path)-1]
			}
		}
		state[n] = done
		return false
	}
	for _, n := range g.nodes {
		if state[n] == unseen && visit(n) {
			return found
		}
	}
	return nil
}

// taskPath returns spec.tasks[i] of the task named name (spec.tasks when none).
func taskPath(job *batch.Job, name string) *field.Path {
	for i := range job.Spec.Tasks {
		if job.Spec.Tasks[i].Name == name {
			return field.NewPath("spec", "tasks").Index(i)
		}
	}
	return field.NewPath("spec", "tasks")
}
