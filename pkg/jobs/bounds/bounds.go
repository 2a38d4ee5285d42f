package bounds

import (
	"fmt"
	"sort"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// Bounds on the dimensions of a Job spec that admission and the plugins walk
// through. The API server accepts any Job of up to 3 MiB, and in 3 MiB a Job
// can carry 100,000 tasks, dependsOn names or plugin arguments; every check
// that loops over them, or quotes them in an error, would then cost in
// proportion (or, for pairs of them, in their product). Check denies a
// Job over a bound before anything else reads it.
//
// The bounds sit far above any training Job: Volcano's own examples and
// Kubeflow's job kinds have at most 5 roles, a plugin of this project has at
// most 15 flags, and its longest value (an image, a duration, a task name) is
// under 300 bytes.
const (
	// MaxTasks is the most tasks (spec.tasks) a Job may have.
	MaxTasks = 64
	// MaxDependsOn is the most names a task's dependsOn may list.
	MaxDependsOn = MaxTasks
	// MaxPlugins is the most entries spec.plugins may have (Volcano v1.15.1
	// and v1.14.1 have 8 plugins of their own, this project 5 more).
	MaxPlugins = 32
	// MaxPluginNameBytes is the longest plugin name (spec.plugins' keys).
	MaxPluginNameBytes = 63
	// MaxPluginArgs is the most arguments one plugin may be given.
	MaxPluginArgs = 64
	// MaxPluginArgBytes is the longest plugin argument, in bytes.
	MaxPluginArgBytes = 4096
	// MaxPodTemplateBytes is the most bytes a Job's pods may count
	// together: the sum over its tasks of replicas × (the JSON bytes of the
	// task's template (TemplateShape.Bytes) + PodOverheadBytes). Volcano's
	// job controller builds every missing pod of a Job in memory before it
	// creates any, each a copy of its task's template, at 1.5 to 6 times
	// the template's JSON (measured: 2,048 env entries 1.4, 1,024 emptyDir
	// volumes and their mounts 5.6) plus about 2.6 KB, which
	// PodOverheadBytes counts at a sixth; so the pods one sync of a Job
	// holds stay under 6 × 256 MiB = 1.5 GiB. 256 MiB is 10,000 pods of a
	// 26 KB template, 100,000 (MaxReplicas) of a 2.1 KB one, or 300 of the
	// largest template the list bounds allow in 3 MiB.
	MaxPodTemplateBytes = 256 << 20
	// PodOverheadBytes is what each pod counts in MaxPodTemplateBytes
	// besides its template's JSON, in bytes: a sixth of 3 KiB, above what a
	// pod built as Volcano's createJobPod holds besides its template
	// (measured: about 2.6 KB for a one-container template, security
	// review r4, H3), so that millions of pods of a tiny template are not
	// within the bound. The goroutine Volcano starts per pod is bounded by
	// MaxReplicas instead.
	PodOverheadBytes = 512
)

// Check reports every dimension of the Job's spec that is over its bound
// (MaxTasks, MaxDependsOn, MaxPlugins, MaxPluginNameBytes, MaxPluginArgs,
// MaxPluginArgBytes, the entries of the tasks' pod templates: MaxContainers
// to MaxJobTemplateEntries, MaxReplicas and MaxPodTemplateBytes), each error
// naming the bound:
// ShapeOf(job).Check().
func Check(job *batch.Job) field.ErrorList { return ShapeOf(job).Check() }

// Shape is what the bounds look at in a Job: its dimensions, without the
// contents. ShapeOf reads it from a decoded Job, ReadShape from the JSON the
// API server sends, before the Job is decoded (decoding a Job whose every
// task carries a pod template allocates about 60 times its JSON).
type Shape struct {
	// Tasks is the number of tasks.
	Tasks int
	// DependsOn is the number of dependsOn names of each of the first
	// MaxTasks tasks.
	DependsOn []int
	// Plugins is the number of entries of spec.plugins.
	Plugins int
	// Args describes each plugin, in name order, when there are at most
	// MaxPlugins.
	Args []PluginShape
	// Templates describes the pod template of each of the first MaxTasks
	// tasks.
	Templates []TemplateShape
	// Replicas is the replicas of each of the first MaxTasks tasks; a
	// negative number counts as 0.
	Replicas []int64
}

// PluginShape is one entry of spec.plugins.
type PluginShape struct {
	Name string
	// Args is the number of arguments; Long the number over
	// MaxPluginArgBytes, the first of which is at FirstLong and has
	// FirstLongBytes bytes.
	Args, Long, FirstLong, FirstLongBytes int
}

// ShapeOf returns the Shape of a decoded Job.
func ShapeOf(job *batch.Job) Shape {
	s := Shape{Tasks: len(job.Spec.Tasks), Plugins: len(job.Spec.Plugins)}
	for i := 0; i < len(job.Spec.Tasks) && i < MaxTasks; i++ {
		n := 0
		if d := job.Spec.Tasks[i].DependsOn; d != nil {
			n = len(d.Name)
		}
		s.DependsOn = append(s.DependsOn, n)
		s.Templates = append(s.Templates, templateShapeOf(&job.Spec.Tasks[i].Template))
		s.Replicas = append(s.Replicas, max(int64(job.Spec.Tasks[i].Replicas), 0))
	}
	if s.Plugins > MaxPlugins {
		return s
	}
	s.Args = pluginShapes(job.Spec.Plugins, func(a string) int { return len(a) })
	return s
}

// pluginShapes returns the PluginShape of every plugin, in name order, given
// the length in bytes of each argument (size).
func pluginShapes[A any](plugins map[string][]A, size func(A) int) []PluginShape {
	var out []PluginShape
	for name, args := range plugins {
		p := PluginShape{Name: name, Args: len(args), FirstLong: -1}
		for i, a := range args {
			n := size(a)
			if n <= MaxPluginArgBytes {
				continue
			}
			p.Long++
			if p.FirstLong < 0 {
				p.FirstLong, p.FirstLongBytes = i, n
			}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Check returns the field errors of the dimensions over their bounds. Its
// cost is bounded: at most three errors per task (dependsOn, a template list,
// the template's entries), one per plugin, one for the templates' entries
// together, one each for the replicas and the pod bytes, and
// no value quoted
// longer than QuoteMax bytes (Abbrev); no argument is quoted. A Job with too
// many tasks or plugins gets that error alone for its tasks or plugins,
// respectively. Of a template, the first list over its bound is named, and
// the number of others.
//
// The errors are field errors of type TooMany and TooLong, so the API server
// shows them as "spec.tasks: Too many: 300: must have at most 64 items" or
// "spec.tasks[0].template.spec.containers[0].env: Too many: 20000: must have
// at most 4096 items".
func (s Shape) Check() field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if s.Tasks > MaxTasks {
		errs = append(errs, field.TooMany(spec.Child("tasks"), s.Tasks, MaxTasks))
	} else {
		for i, n := range s.DependsOn {
			if n > MaxDependsOn {
				errs = append(errs, field.TooMany(spec.Child("tasks").Index(i).Child("dependsOn", "name"), n, MaxDependsOn))
			}
		}
		errs = append(errs, checkTemplates(spec.Child("tasks"), s.Templates)...)
		pods, b := s.podTemplateBytes()
		if pods > MaxReplicas {
			errs = append(errs, replicasError(pods))
		}
		if b > MaxPodTemplateBytes {
			errs = append(errs, &field.Error{Type: field.ErrorTypeTooLong, Field: spec.Child("tasks").String(), BadValue: field.OmitValueType{},
				Detail: fmt.Sprintf("the job's %d pods would carry %d bytes of pod templates (each task's replicas times its template's JSON bytes plus %d); a job may carry at most %d (MaxPodTemplateBytes), as Volcano's controller builds all of a job's pods in memory at once: use fewer replicas or a smaller template", pods, b, PodOverheadBytes, MaxPodTemplateBytes)})
		}
	}
	plugins := spec.Child("plugins")
	if s.Plugins > MaxPlugins {
		return append(errs, field.TooMany(plugins, s.Plugins, MaxPlugins))
	}
	for _, p := range s.Args {
		if len(p.Name) > MaxPluginNameBytes {
			errs = append(errs, &field.Error{Type: field.ErrorTypeTooLong, Field: plugins.String(), BadValue: field.OmitValueType{},
				Detail: fmt.Sprintf("plugin name %q is %d bytes; a plugin name may have at most %d", jobs.Abbrev(p.Name), len(p.Name), MaxPluginNameBytes)})
			continue
		}
		path := plugins.Key(p.Name)
		if p.Args > MaxPluginArgs {
			errs = append(errs, field.TooMany(path, p.Args, MaxPluginArgs))
			continue
		}
		if p.Long > 0 {
			more := ""
			if p.Long > 1 {
				more = fmt.Sprintf(" (and %d more arguments over it)", p.Long-1)
			}
			errs = append(errs, &field.Error{Type: field.ErrorTypeTooLong, Field: path.Index(p.FirstLong).String(), BadValue: field.OmitValueType{},
				Detail: fmt.Sprintf("the argument is %d bytes; a plugin argument may have at most %d%s", p.FirstLongBytes, MaxPluginArgBytes, more)})
		}
	}
	return errs
}

// MaxReplicas is the most pods (the sum of its tasks' replicas) a Job may ask
// for; Shape.Check reports larger ones, and the framework validation denies
// them before any other check. It is below the 150,000 pods Kubernetes
// supports in a whole cluster, and far above what the plugins' own limits
// allow with host lists: the svc plugin's ConfigMap of hosts reaches 1 MiB at
// about 50,000 pods, the ssh plugin's config (MaxSSHConfigBytes) at 4,000
// to 14,000 (MaxSSHReplicas), TF_CONFIG and MPI_HOST reach MaxArgStrlen at a
// few thousand role pods. Volcano's controller starts one goroutine per
// missing pod, each holding about 11 KB while it waits for the client's rate
// limit (measured: 8.4 KB of stack and 2.6 KB of heap each, for 20,000 at
// vc-controller-manager's 50 QPS; measure_goroutine_test.go), so 1.1 GB at
// this bound besides the pods (MaxPodTemplateBytes: 1.5 GiB), within the
// controller's 4 GiB limit. It keeps every sum of replicas within int32 and
// the admission's work independent of the numbers.
const MaxReplicas = 100000

// CheckReplicas returns the error of a Job whose tasks ask for more than
// MaxReplicas pods in all (negative replicas count as none), as Shape.Check
// words it.
func CheckReplicas(job *batch.Job) field.ErrorList {
	var total int64
	for i := range job.Spec.Tasks {
		total += max(int64(job.Spec.Tasks[i].Replicas), 0)
	}
	if total <= MaxReplicas {
		return nil
	}
	return field.ErrorList{replicasError(total)}
}

func replicasError(total int64) *field.Error {
	return field.Invalid(field.NewPath("spec", "tasks"), total, fmt.Sprintf(
		"the job asks for %d pods in all (the sum of its tasks' replicas); a job may have at most %d (MaxReplicas), as Volcano's controller builds all of a job's pods and starts a goroutine for each at once", total, MaxReplicas))
}

// podTemplateBytes returns the pods (the sum of replicas) and the sum over
// the tasks of replicas × (template bytes + PodOverheadBytes) (at most
// 64 × 2^31 × 3 MiB: within int64).
func (s Shape) podTemplateBytes() (pods, bytes int64) {
	for i, t := range s.Templates {
		if i < len(s.Replicas) {
			pods += s.Replicas[i]
			bytes += s.Replicas[i] * (int64(t.Bytes) + PodOverheadBytes)
		}
	}
	return pods, bytes
}

// checkTemplates returns the errors of the tasks' templates (spec.tasks in
// order): for each, one when a list or map is over its bound, naming the
// first, and one when its entries are over MaxTemplateEntries; and, when no
// template is over MaxTemplateEntries, one when the entries of all are over
// MaxJobTemplateEntries.
func checkTemplates(tasks *field.Path, templates []TemplateShape) field.ErrorList {
	var errs field.ErrorList
	total, overTemplate := 0, false
	for i, t := range templates {
		total += t.Entries
		overTemplate = overTemplate || t.Entries > MaxTemplateEntries
		p := tasks.Index(i).Child("template")
		if t.OverLists > 0 {
			more := ""
			if t.OverLists > 1 {
				more = fmt.Sprintf(" (and %d more lists of the template over their bounds)", t.OverLists-1)
			}
			errs = append(errs, &field.Error{Type: field.ErrorTypeTooMany, Field: p.String() + "." + t.Over.Path,
				BadValue: t.Over.Entries, Detail: fmt.Sprintf("must have at most %d items%s", t.Over.Max, more)})
		}
		if t.Entries > MaxTemplateEntries {
			errs = append(errs, &field.Error{Type: field.ErrorTypeTooMany, Field: p.String(), BadValue: t.Entries,
				Detail: fmt.Sprintf("the pod template's lists and maps have %d entries in all; a template may have at most %d", t.Entries, MaxTemplateEntries)})
		}
	}
	// A template over its own bound says enough.
	if total > MaxJobTemplateEntries && !overTemplate {
		errs = append(errs, &field.Error{Type: field.ErrorTypeTooMany, Field: tasks.String(), BadValue: total,
			Detail: fmt.Sprintf("the tasks' pod templates have %d list and map entries in all; a job may have at most %d", total, MaxJobTemplateEntries)})
	}
	return errs
}
