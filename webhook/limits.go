package webhook

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
)

// MaxArgStrlen is bounds.MaxArgStrlen: Linux's MAX_ARG_STRLEN, the most bytes
// of one argument or environment string.
const MaxArgStrlen = bounds.MaxArgStrlen

// simulationBudget bounds the host lists (TF_CONFIG, MPI_HOST) of the pods
// checkPluginPods builds: up to twice what a container accepts it builds them,
// so that every oversized variable is reported, measured exactly; beyond, it
// reports the computed sizes alone. Building is what costs: a plan holds each
// host a few times over.
const simulationBudget = 2 * MaxArgStrlen

// MaxHostnameLength is the longest pod hostname (and subdomain): a DNS label.
const MaxHostnameLength = validation.DNS1123LabelMaxLength

// checkLimits reports what would only fail when the job controller creates a
// pod or the kubelet starts a container.
func checkLimits(job *batch.Job, uses []use) field.ErrorList {
	errs := checkHostnames(job)
	if _, ok := job.Spec.Plugins[svcPlugin]; ok {
		errs = append(errs, checkSvc(job)...)
	}
	for _, u := range uses {
		if len(u.Errs) == 0 {
			errs = append(errs, checkPluginPods(job, u)...)
		}
	}
	return errs
}

// checkHostnames checks the hostname of the last pod of every task (the
// longest: <job>-<task>-<index>, as the svc plugin and the framework plugins
// name them) and the subdomain (the Job name) unless the template sets them;
// those the template sets are checked by Volcano's template validation.
func checkHostnames(job *batch.Job) field.ErrorList {
	var errs field.ErrorList
	defaultSubdomain := false
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		if t.Template.Spec.Subdomain == "" {
			defaultSubdomain = true
		}
		if t.Replicas < 1 || t.Template.Spec.Hostname != "" {
			continue
		}
		index := int(t.Replicas) - 1
		h := jobs.Hostname(job, t, index)
		p := field.NewPath("spec", "tasks").Index(i).Child("name")
		if len(h) > MaxHostnameLength {
			errs = append(errs, field.Invalid(p, h, fmt.Sprintf(
				"the hostname of pod %d of task %q would be %d characters; a pod hostname is a DNS label of at most %d, so the pod could not be created: shorten the job or task name",
				index, t.Name, len(h), MaxHostnameLength)))
		} else if msgs := validation.IsDNS1123Label(h); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p, h, fmt.Sprintf(
				"the hostname of pod %d of task %q is not a valid DNS label (%s), so the pod could not be created",
				index, t.Name, strings.Join(msgs, "; "))))
		}
	}
	if defaultSubdomain {
		if msgs := validation.IsDNS1123Label(job.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), job.Name, fmt.Sprintf(
				"the job name is its pods' subdomain and must be a DNS label (%s)", strings.Join(msgs, "; "))))
		}
	}
	return errs
}

// checkSvc checks what Volcano's svc plugin derives from the Job
// (svc.GenerateHosts): its ConfigMap, as the guarded svc writes it
// (bounds.SvcConfigMapBytes, or with the host files as ranges
// bounds.SvcRangesConfigMapBytes: computed, not built). A VC_<TASK>_HOSTS
// variable over MaxArgStrlen is no error: the pods get none and the
// ConfigMap has no such key; nor are host files over a ConfigMap: it holds
// their ranges (SvcHostsWarnings).
func checkSvc(job *batch.Job) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "plugins").Key(svcPlugin)
	if !bounds.SvcHostsAsRanges(job) {
		return nil
	}
	if total := bounds.SvcRangesConfigMapBytes(job); total > ownedcm.MaxConfigMapBytes {
		errs = append(errs, tooLong(p, fmt.Sprintf(
			"plugin svc: ConfigMap %q would be %d bytes with its host files as ranges, more than the %d bytes a ConfigMap holds, so it could not be created: use fewer tasks or shorter names",
			job.Name+"-svc", total, ownedcm.MaxConfigMapBytes)))
	}
	return errs
}

// SvcHostsWarnings returns the admission warnings of a Job with the svc
// plugin one of whose VC_<TASK>_HOSTS variables (every host of a task, in
// every pod: O(hosts) a pod) would be over MaxArgStrlen, one a variable, in
// key order, at most maxHostWarnings and a count: such a Job is admitted,
// and the svc plugin, through pkg/guard, gives its pods none of those
// variables (guard.DropOversizedHostVariables), as Volcano v1.16's
// --inject-hosts-env=false does; the <task>.host files of /etc/volcano and
// the framework's own variables stay. Volcano's svc would make containers
// that cannot start (E2BIG), and no framework of this project reads them.
func SvcHostsWarnings(job *batch.Job) []string {
	if _, ok := job.Spec.Plugins[svcPlugin]; !ok {
		return nil
	}
	var out []string
	for k, n := range bounds.SvcSizes(job) {
		if !strings.HasPrefix(k, "VC_") || !strings.HasSuffix(k, "_HOSTS") {
			continue
		}
		if bounds.SvcHostsEnvDropped(k, n) {
			file := fmt.Sprintf(svc.ConfigMapTaskHostFmt, strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(k, "VC_"), "_HOSTS")))
			out = append(out, fmt.Sprintf(
				"plugin svc: environment variable %s would be %d bytes (NAME=value and NUL), more than the %d bytes Linux allows one (MAX_ARG_STRLEN): the pods get no %s (nor a file of that name in /etc/volcano); the file /etc/volcano/%s and the framework's own variables list the hosts",
				k, bounds.EnvBytes(k, n), MaxArgStrlen, k, file))
		}
	}
	sort.Strings(out)
	if len(out) > maxHostWarnings {
		out = append(out[:maxHostWarnings], fmt.Sprintf("and %d more such variables", len(out)-maxHostWarnings))
	}
	if bounds.SvcHostsAsRanges(job) {
		out = append(out, fmt.Sprintf(
			"plugin svc: the host files of ConfigMap %s would be %d bytes, more than the %d bytes a ConfigMap holds: it holds them as ranges, and an init container %s, first in every pod, writes /etc/volcano/<task>.host from them (/etc/volcano then has no VC_* files; the variables stay)",
			job.Name+"-svc", bounds.SvcConfigMapBytes(job), ownedcm.MaxConfigMapBytes, bounds.SvcHostsContainerName))
	}
	return out
}

// droppedEnvWarnings returns the admission warnings of the optional host
// variables of the Job's framework plugins (framework.SizedEnv.Optional:
// MPI_HOST, WORKER_ADDRS) that would be over MaxArgStrlen: the plugin
// leaves them out of the pods, where no container could start with them.
func droppedEnvWarnings(job *batch.Job) []string {
	var out []string
	for _, u := range analyze(job) {
		if len(u.Errs) > 0 || u.Sizes == nil {
			continue
		}
		for _, e := range u.Sizes() {
			if e.Optional == "" || !framework.OverArgLimit(e.Name, e.ValueLen) {
				continue
			}
			out = append(out, fmt.Sprintf(
				"plugin %s: environment variable %s would be %d bytes (NAME=value and NUL), more than the %d bytes Linux allows one (MAX_ARG_STRLEN): the pods get no %s; %s",
				u.name(), e.Name, bounds.EnvBytes(e.Name, e.ValueLen), MaxArgStrlen, e.Name, e.Optional))
		}
	}
	return out
}

// maxHostWarnings is the most VC_<TASK>_HOSTS warnings listed, with the
// argument warnings under the API server's 4,096 runes.
const maxHostWarnings = 2

// checkPluginPods builds, with the plugin's own OnPodCreate, the last pod of
// every task the plugin gives a role (the one with the longest index, hence the
// longest per-pod values) and checks every environment string and argument of
// its containers against MaxArgStrlen: TF_CONFIG, MPI_HOST, WAIT_TARGETS, ...
// An oversized variable is reported once, for the pod where it is largest.
//
// The variables that list every host of a role (TF_CONFIG, MPI_HOST) are
// first measured without building them (Description.Sizes), as the process
// sees them (TF_CONFIG expanded): those sizes are always checked, and when
// one is over simulationBudget the pods are not built, so that the cost of
// admission does not grow with the replicas.
// Under it, everything the plan builds per replica is bounded by them.
func checkPluginPods(job *batch.Job, u use) field.ErrorList {
	// Not the controller's builder: its plans are cached by UID and
	// generation, and the Job being admitted may share both with a spec that
	// was denied (an UPDATE and its corrected retry).
	plugin := u.fw.NewUncached(pluginsinterface.PluginClientset{}, u.argv)
	p := field.NewPath("spec", "plugins").Key(u.name())

	type finding struct {
		size        int
		pod, task   string
		index       int
		isArg       bool
		container   string
		argPosition int
	}
	largest := map[string]*finding{}
	var order []string
	note := func(key string, f finding) {
		if cur, ok := largest[key]; ok {
			if f.size > cur.size {
				*cur = f
			}
			return
		}
		largest[key] = &f
		order = append(order, key)
	}
	// The host lists first, computed: when one is far too long, the plugin's
	// plan (built per replica) is not built at all.
	simulate := true
	var sizes []framework.SizedEnv
	if u.Sizes != nil {
		// An optional variable over the limit is left out of the pods: a
		// warning (droppedEnvWarnings), not a problem.
		sizes = slices.DeleteFunc(u.Sizes(), func(e framework.SizedEnv) bool {
			return e.Optional != "" && framework.OverArgLimit(e.Name, e.ValueLen)
		})
		for _, e := range sizes {
			simulate = simulate && e.ValueLen <= simulationBudget
		}
	}
	done := map[string]bool{}
	for _, r := range u.Roles {
		if !simulate {
			break
		}
		if done[r.Task] {
			continue
		}
		done[r.Task] = true
		t, _ := jobs.Task(job, r.Task)
		index := int(t.Replicas) - 1
		pod := jobs.NewPod(job, t, index)
		if err := plugin.OnPodCreate(pod, job); err != nil {
			continue
		}
		for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for ci := range cs {
				c := &cs[ci]
				for _, e := range c.Env {
					if n := envSize(e.Name, e.Value); e.ValueFrom == nil && n > MaxArgStrlen {
						note(e.Name, finding{size: n, pod: pod.Name, task: t.Name, index: index})
					}
				}
				for ai, a := range append(append([]string(nil), c.Command...), c.Args...) {
					if n := len(a) + 1; n > MaxArgStrlen {
						note(fmt.Sprintf("%s/%d", c.Name, ai), finding{size: n, pod: pod.Name, task: t.Name, index: index,
							isArg: true, container: c.Name, argPosition: ai})
					}
				}
			}
		}
	}
	// The computed sizes are noted whether or not the pods were built: a
	// value the kubelet expands (tensorflow's TF_CONFIG by reference) is
	// short in the pod spec, and only its computed size is what the process
	// gets.
	for _, e := range sizes {
		if n := len(e.Name) + 1 + e.ValueLen + 1; n > MaxArgStrlen {
			note(e.Name, finding{size: n, pod: jobs.PodName(job.Name, e.Task, e.Index), task: e.Task, index: e.Index})
		}
	}
	var errs field.ErrorList
	for _, key := range order {
		f := largest[key]
		if f.isArg {
			errs = append(errs, tooLong(p, fmt.Sprintf(
				"plugin %s: argument %d of container %q of pod %q (task %q, index %d) would be %d bytes; Linux limits one to %d bytes (MAX_ARG_STRLEN), so the container could not start",
				u.name(), f.argPosition, f.container, f.pod, f.task, f.index, f.size, MaxArgStrlen)))
			continue
		}
		errs = append(errs, tooLong(p, fmt.Sprintf(
			"plugin %s: environment variable %s of pod %q (task %q, index %d) would be %d bytes (NAME=value and NUL); Linux limits one to %d bytes (MAX_ARG_STRLEN), so the container could not start: use fewer replicas or shorter names",
			u.name(), key, f.pod, f.task, f.index, f.size, MaxArgStrlen)))
	}
	return errs
}

// envSize is the size of an environment string: NAME=value and its NUL.
func envSize(name, value string) int { return len(name) + 1 + len(value) + 1 }

func tooLong(p *field.Path, detail string) *field.Error {
	return &field.Error{Type: field.ErrorTypeTooLong, Field: p.String(), BadValue: "", Detail: detail}
}
