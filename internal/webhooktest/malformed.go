// Package webhooktest generates Volcano Jobs for tests of the framework job
// admission: malformed Jobs of the framework plugins, each carrying one
// defect the validation must deny, and Jobs edited at random whose validity is
// unknown. The same generator serves the fuzz test (webhook/fuzz_test.go, which
// draws its choices from the fuzzer's bytes) and the e2e suite
// (test/e2e/malformed_test.go, which draws them from fixed seeds and sends the
// Jobs through a real API server). BoundsCases (bounds.go) are Jobs as large
// as the API server accepts in one dimension, for the tests of the bounds
// (webhook/bounds_test.go and cost_test.go, test/e2e/bounds_test.go).
//
// Tests only: it lives under internal/ so that neither manager links it.
//
// Jobs are JSON-shaped maps rather than batch.Job values, so that they can hold
// what the typed Job cannot: a null template, a task without template.spec, a
// null plugin list, fields the Job type does not know.
package webhooktest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

// MaxReplicas is webhook.MaxReplicas, the most pods a framework Job may ask
// for; this package cannot import webhook (its own tests import this one), and
// a test there checks that the two agree.
const MaxReplicas = 100000

// maxConfigMapBytes is ownedcm.MaxConfigMapBytes: the most data a ConfigMap
// holds.
const maxConfigMapBytes = 1 << 20

// Plugins are the framework plugins (plugins.Names), in the order Cases
// cycles through them. Each describes itself to the generator with its
// sample.Sample (its roles, flags, valid arguments, bad values, required
// roles and wait); plugins.TestSamples checks the Samples against the
// plugins' parsers.
var Plugins = plugins.Names()

// sampleOf returns plugin's Sample (samples.Of).
func sampleOf(plugin string) *sample.Sample { return samples.Of(plugin) }

// Kind is the defect a generated Job carries.
type Kind string

// The defects. Each makes the framework validation (webhook.ValidateJob, after
// both job mutations) deny the Job, whatever else the generator put in it.
const (
	// A task with negative replicas (down to -2^31).
	KindNegativeReplicas Kind = "negative-replicas"
	// More than MaxReplicas pods in all, up to 2^31-1 on one task.
	KindHugeReplicas Kind = "huge-replicas"
	// A task minAvailable above its replicas or negative, or a job
	// minAvailable above the total or negative.
	KindMinAvailable Kind = "min-available"
	// A task name that is not a DNS label (upper case, dots, underscores, 64
	// characters, ...).
	KindTaskName Kind = "task-name"
	// Two tasks with the same name.
	KindDuplicateTask Kind = "duplicate-task"
	// An unknown flag, a positional argument, or a flag and its value in one
	// argument ("--port 2222").
	KindUnknownFlag Kind = "unknown-flag"
	// A flag that needs a value given none, last or with an empty value.
	KindNoValue Kind = "flag-without-value"
	// --port outside 1-65535 or not a number.
	KindBadPort Kind = "bad-port"
	// A malformed or out-of-range value of another flag.
	KindBadValue Kind = "bad-value"
	// A role flag naming a task the job does not have or that has no
	// replicas, or a required role's task missing.
	KindMissingRole Kind = "missing-role"
	// Two role flags naming one task.
	KindDuplicateRole Kind = "duplicate-role"
	// A single-pod role (tensorflow chief or evaluator, pytorch and mpi
	// master, mxnet scheduler) with several replicas.
	KindSingleRole Kind = "single-role-replicas"
	// A launch-order cycle (dependsOn against a plugin's wait, dependsOn
	// alone, a task depending on itself) or a dependsOn naming no task.
	KindLaunchOrder Kind = "launch-order"
	// A pod hostname longer than 63 characters, or a job name (the pods'
	// subdomain) that is not a DNS label.
	KindHostname Kind = "hostname"
	// A host list over what a container's environment or a ConfigMap holds
	// (svc's VC_<TASK>_HOSTS and <task>.host files, TF_CONFIG). Such a Job
	// is denied, or admitted with warnings that say what its pods get
	// instead (Warned).
	KindTooLarge Kind = "too-large"
	// A task playing roles in two framework plugins.
	KindTwoFrameworks Kind = "two-frameworks"
)

// Arguments reports whether the defect is in a framework plugin's arguments
// or roles (its ParseArgs, or a task in two plugins): the validating admission
// admits such a Job, with warnings, when Volcano's own admission does
// (tensorflow, pytorch and mpi; webhook.ArgumentsWarning) and denies it
// otherwise.
func (k Kind) Arguments() bool {
	switch k {
	case KindUnknownFlag, KindNoValue, KindBadPort, KindBadValue, KindMissingRole,
		KindDuplicateRole, KindSingleRole, KindTwoFrameworks:
		return true
	}
	return false
}

// Warned reports whether a Job of the defect may be admitted with warnings
// instead of denied: a defect of the arguments (Arguments) where Volcano's
// admission accepts it, or host lists over a limit, which the plugins write
// in another form (the svc plugin's files as ranges, its variables and the
// optional host variables left out) or, for tensorflow's TF_CONFIG, which
// Volcano's in-tree plugin configures as on stock.
func (k Kind) Warned() bool { return k.Arguments() || k == KindTooLarge }

// Kinds lists every defect, in the order Cases cycles through them.
var Kinds = []Kind{
	KindNegativeReplicas, KindHugeReplicas, KindMinAvailable, KindTaskName, KindDuplicateTask,
	KindUnknownFlag, KindNoValue, KindBadPort, KindBadValue, KindMissingRole, KindDuplicateRole,
	KindSingleRole, KindLaunchOrder, KindHostname, KindTooLarge, KindTwoFrameworks,
}

// Kinds of Jobs that carry no known defect.
const (
	// A Job of one framework plugin that both validations allow.
	KindValid Kind = "valid"
	// A Job edited at random (Edit): it may be valid or not.
	KindEdited Kind = "edited"
)

// Case is one generated Job.
type Case struct {
	// Plugin is the framework plugin the Job was made for ("" for an edited
	// Job that did not start from a generated one).
	Plugin string
	// Kind is its defect, KindValid or KindEdited.
	Kind Kind
	// Job is the Job as decoded JSON (maps, slices, strings, int64, nil).
	Job map[string]any
}

// MustDeny reports whether the framework validation must deny the Job: it
// carries one of Kinds (for a defect of Kind.Arguments, unless Volcano's own
// admission accepts the Job: then it is admitted with warnings).
func (c Case) MustDeny() bool { return c.Kind != KindValid && c.Kind != KindEdited }

// Name returns the Job's metadata.name ("" when it has none).
func (c Case) Name() string {
	m, _ := c.Job["metadata"].(map[string]any)
	name, _ := m["name"].(string)
	return name
}

// JSON returns the Job encoded; nil for a Job that does not encode (never
// for the generator's own).
func (c Case) JSON() []byte {
	raw, err := json.Marshal(c.Job)
	if err != nil {
		return nil
	}
	return raw
}

// String is "<kind> <plugin> <name>", for messages.
func (c Case) String() string { return fmt.Sprintf("%s %s %s", c.Kind, c.Plugin, c.Name()) }

// Cases returns n malformed Jobs, the same for the same n: the i-th is
// Generate(Plugins[i%4], Kinds[i/4%len(Kinds)], Seeded(i)), so that every
// plugin meets every defect once in every 4*len(Kinds) Jobs. Names are made
// unique by an index prefix.
func Cases(n int) []Case {
	out := make([]Case, n)
	for i := range out {
		out[i] = Generate(Plugins[i%len(Plugins)], Kinds[i/len(Plugins)%len(Kinds)], Seeded(uint64(i)))
		m := out[i].Job["metadata"].(map[string]any)
		m["name"] = fmt.Sprintf("m%d-%s", i, m["name"])
	}
	return out
}

// Chooser hands out the generator's choices.
type Chooser interface {
	// Intn returns a number in [0, n); n > 0.
	IntN(n int) int
}

// Seeded returns a Chooser drawing from math/rand/v2's PCG with that seed.
func Seeded(seed uint64) Chooser { return rand.New(rand.NewPCG(seed, 0x7663706c7567696e)) }

// Bytes returns a Chooser that reads its choices from b, as a fuzzer drives
// it: one byte for a choice among at most 256, two up to 65536, four beyond,
// modulo n. Past the end of b every choice is 0.
func Bytes(b []byte) Chooser { return &byteChooser{b: b} }

type byteChooser struct{ b []byte }

func (c *byteChooser) IntN(n int) int {
	size := 4
	switch {
	case n <= 1<<8:
		size = 1
	case n <= 1<<16:
		size = 2
	}
	v := 0
	for i := 0; i < size && len(c.b) > 0; i++ {
		v = v<<8 | int(c.b[0])
		c.b = c.b[1:]
	}
	return v % n
}

func pick[T any](c Chooser, from []T) T { return from[c.IntN(len(from))] }

// between returns a number in [lo, hi].
func between(c Chooser, lo, hi int64) int64 { return lo + int64(c.IntN(int(hi-lo+1))) }

// Malformed returns a Job of a plugin and with a defect both chosen by c.
func Malformed(c Chooser) Case {
	plugin := pick(c, Plugins)
	return Generate(plugin, pick(c, Kinds), c)
}

// Valid returns a Job of plugin (one of Plugins) that both Volcano's job
// validation and the framework validation allow: the Job Generate starts from.
func Valid(plugin string, c Chooser) Case {
	b := newJob(plugin, c, 5)
	b.noise(false)
	return Case{Plugin: plugin, Kind: KindValid, Job: b.doc()}
}

// Generate returns a Job of plugin (one of Plugins) with the defect kind (one
// of Kinds; the next one in Kinds that Applies to plugin when kind does not),
// its other choices made by c: a valid Job (task names, replicas,
// GPUs, restart policies and plugin arguments varied), the defect, and
// disorder that does not make it valid: null templates, templates without a
// spec or containers, null plugin lists of svc, unknown fields.
func Generate(plugin string, kind Kind, c Chooser) Case {
	for i := slices.Index(Kinds, kind); !Applies(plugin, kind); {
		i = (i + 1) % len(Kinds)
		kind = Kinds[i]
	}
	nameLen := 5
	if kind == KindTooLarge || kind == KindHostname {
		// Their sizes are computed for names at least this long.
		nameLen = 10
	}
	b := newJob(plugin, c, nameLen)
	b.defect(kind)
	b.noise(true)
	return Case{Plugin: plugin, Kind: kind, Job: b.doc()}
}

// task is a task of a job being built.
type task = map[string]any

// job is a Job being built; doc assembles it.
type job struct {
	c       Chooser
	plugin  string
	name    string
	spec    map[string]any
	tasks   []task
	plugins map[string]any
	// roleFlags are the plugin's role flags in order (ps, worker, ...);
	// roles maps each to the task playing it (its default when not set).
	roleFlags []string
	roles     map[string]string
	// setRoles are the role flags given explicitly, first in the arguments
	// (Volcano's own mpi parser stops at the first flag it does not know).
	setRoles []string
	args     []any
}

// Flags returns every flag of plugin (its Sample's), for tests that check
// the lists against the plugins' parsers.
func Flags(plugin string) []string { return sampleOf(plugin).Flags() }

// Applies reports whether a Job of plugin can carry the defect kind: two
// role flags naming one task needs two role flags, a single-pod role with
// several replicas needs a single-pod role.
func Applies(plugin string, kind Kind) bool {
	s := sampleOf(plugin)
	switch kind {
	case KindDuplicateRole:
		return len(s.Roles) > 1
	case KindSingleRole:
		return slices.ContainsFunc(s.Roles, func(r sample.Role) bool { return r.Single })
	}
	return true
}

func newJob(plugin string, c Chooser, nameLen int) *job {
	b := &job{c: c, plugin: plugin, roles: map[string]string{}, plugins: map[string]any{}}
	b.name = plugin[:2] + "-" + letters(c, nameLen-3)
	for _, r := range sampleOf(plugin).Roles {
		b.roleFlags = append(b.roleFlags, r.Flag)
		b.roles[r.Flag] = r.Flag
		replicas := int64(r.Replicas)
		if !r.Single && replicas > 1 {
			replicas = between(c, 1, replicas)
		}
		if r.Single && !sampleOf(plugin).RequiredAlone(r.Flag) && c.IntN(2) == 0 {
			// An optional single-pod role (tensorflow's chief) comes and goes.
			replicas = 0
		}
		if replicas == 0 {
			// No task: the role keeps its default name and is not given.
			continue
		}
		if c.IntN(4) == 0 {
			// A renamed role, given by its flag.
			b.setRole(r.Flag, plugin[:2]+"-"+r.Flag)
		}
		b.tasks = append(b.tasks, b.newTask(b.roles[r.Flag], replicas))
	}
	for n := c.IntN(3); n > 0; n-- {
		b.args = append(b.args, pick(c, sampleOf(plugin).ValidArgs))
	}
	b.spec = map[string]any{}
	if c.IntN(2) == 0 {
		b.spec["schedulerName"] = "volcano"
	}
	if c.IntN(4) == 0 {
		b.spec["queue"] = "default"
	}
	return b
}

// letters returns n random lowercase letters.
func letters(c Chooser, n int) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte('a' + c.IntN(26))
	}
	return string(out)
}

func (b *job) newTask(name string, replicas int64) task {
	container := map[string]any{"name": "main", "image": "busybox:1.36.1", "command": []any{"true"}}
	switch b.c.IntN(4) {
	case 0:
		container["resources"] = map[string]any{"limits": map[string]any{"nvidia.com/gpu": strconv.Itoa(1 + b.c.IntN(8))}}
	case 1:
		container["resources"] = map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "16Mi"}}
	}
	spec := map[string]any{"containers": []any{container}}
	if rp := pick(b.c, []string{"", "", "Never", "OnFailure"}); rp != "" {
		spec["restartPolicy"] = rp
	}
	return task{"name": name, "replicas": replicas, "template": map[string]any{"spec": spec}}
}

// taskOf returns the task playing the role of flag, or nil.
func (b *job) taskOf(flag string) task {
	for _, t := range b.tasks {
		if t["name"] == b.roles[flag] {
			return t
		}
	}
	return nil
}

// anyTask returns one of the tasks and its index.
func (b *job) anyTask() (task, int) {
	i := b.c.IntN(len(b.tasks))
	return b.tasks[i], i
}

func (b *job) total() int64 {
	var n int64
	for _, t := range b.tasks {
		n += t["replicas"].(int64)
	}
	return n
}

// setRole plays role flag on task name, given explicitly.
func (b *job) setRole(flag, name string) {
	b.roles[flag] = name
	if !slices.Contains(b.setRoles, flag) {
		b.setRoles = append(b.setRoles, flag)
	}
}

// defect gives the Job the defect kind.
func (b *job) defect(kind Kind) {
	c := b.c
	switch kind {
	case KindNegativeReplicas:
		t, _ := b.anyTask()
		t["replicas"] = pick(c, []int64{-1, -2, -100, -2147483648, -between(c, 1, 1<<20)})

	case KindHugeReplicas:
		t, _ := b.anyTask()
		t["replicas"] = pick(c, []int64{MaxReplicas + 1, 1000000, 10000000, 2147483647, between(c, MaxReplicas+1, 2147483647)})

	case KindMinAvailable:
		t, _ := b.anyTask()
		r := t["replicas"].(int64)
		switch c.IntN(4) {
		case 0:
			t["minAvailable"] = r + between(c, 1, 5)
		case 1:
			t["minAvailable"] = -between(c, 1, 5)
		case 2:
			b.spec["minAvailable"] = b.total() + between(c, 1, 100)
		default:
			b.spec["minAvailable"] = pick(c, []int64{-1, -2147483648})
		}

	case KindTaskName:
		t, _ := b.anyTask()
		t["name"] = pick(c, []string{"Worker", "PS", "w_1", "tf.v2", "-w", "w-", "a b", "wörker", "1.2", strings.Repeat("x", 64)})

	case KindDuplicateTask:
		t, i := b.anyTask()
		if j := c.IntN(len(b.tasks)); j != i && c.IntN(2) == 0 {
			b.tasks[j]["name"] = t["name"]
			return
		}
		b.tasks = append(b.tasks, b.newTask(t["name"].(string), between(c, 1, 3)))

	case KindUnknownFlag:
		bogus := pick(c, []string{"bogus", "prot", "workers", "ps-replicas", "master-port", "nproc", "timeout", "Port",
			"WORKER", "wait-for", "launcher", "slots", "implementation", "replicas"})
		switch c.IntN(5) {
		case 0:
			b.args = append(b.args, pick(c, []string{"worker", "2222", "--", "-", "port=2222"}))
		case 1:
			// A flag and its value in one argument, as YAML lists invite.
			f := pick(c, sampleOf(b.plugin).ValueFlags)
			b.args = append(b.args, "--"+f+" "+pick(c, []string{"2222", "10m", "1", "x"}))
		case 2:
			b.args = append(b.args, "--"+bogus)
		default:
			b.args = append(b.args, "--"+bogus+"="+pick(c, []string{"1", "true", "worker", "", "2222"}))
		}

	case KindNoValue:
		if c.IntN(2) == 0 {
			// Last, so that it takes no other argument as its value.
			s := sampleOf(b.plugin)
			fs := slices.Concat(s.ValueFlags, s.StringFlags, b.roleFlags)
			b.args = append(b.args, "--"+pick(c, fs))
		} else {
			f := pick(c, slices.Concat(sampleOf(b.plugin).ValueFlags, b.roleFlags))
			b.args = append(b.args, "--"+f+"="+pick(c, []string{"", " "}))
		}

	case KindBadPort:
		b.args = append(b.args, "--port="+pick(c, []string{"0", "-1", "65536", "99999", "2147483648", "http", "22.5", "0x50",
			strconv.Itoa(int(between(c, 65536, 1<<30)))}))

	case KindBadValue:
		common := []string{"--wait=maybe", "--wait=2", "--wait=yes", "--wait-timeout=-5s", "--wait-timeout=-1",
			"--wait-timeout=1y", "--wait-timeout=soon"}
		own := sampleOf(b.plugin).BadValues
		if b.plugin == "pytorch" && c.IntN(3) == 0 {
			// Elastic bounds that exclude the job's pods, or each other.
			pods := b.total()
			b.args = append(b.args, pick(c, []string{
				"--min-nodes=" + strconv.FormatInt(pods+between(c, 1, 5), 10),
				"--max-nodes=" + strconv.FormatInt(pods-1, 10),
				"--min-nodes=4 --max-nodes=2",
			}))
			if s := b.args[len(b.args)-1].(string); strings.Contains(s, " ") {
				// Two arguments: --min-nodes=4, --max-nodes=2.
				b.args = append(b.args[:len(b.args)-1], "--min-nodes=4", "--max-nodes=2")
			}
			return
		}
		b.args = append(b.args, pick(c, append(common, own...)))

	case KindMissingRole:
		switch c.IntN(3) {
		case 0:
			flag := pick(c, b.roleFlags)
			b.setRole(flag, pick(c, []string{"nosuch", "trainer", "workers", "launcher"}))
		case 1:
			// A role given explicitly whose task has no replicas.
			var flags []string
			for _, f := range b.roleFlags {
				if b.taskOf(f) != nil {
					flags = append(flags, f)
				}
			}
			flag := pick(c, flags)
			b.taskOf(flag)["replicas"] = int64(0)
			b.setRole(flag, b.roles[flag])
		default:
			b.dropRequiredRoles()
		}

	case KindDuplicateRole:
		var flags []string
		for _, f := range b.roleFlags {
			if b.taskOf(f) != nil {
				flags = append(flags, f)
			}
		}
		other := pick(c, flags)
		var rest []string
		for _, f := range b.roleFlags {
			if f != other {
				rest = append(rest, f)
			}
		}
		b.setRole(pick(c, rest), b.roles[other])

	case KindSingleRole:
		var singles []string
		for _, r := range sampleOf(b.plugin).Roles {
			if r.Single {
				singles = append(singles, r.Flag)
			}
		}
		flag := pick(c, singles)
		r := between(c, 2, 6)
		if t := b.taskOf(flag); t != nil {
			t["replicas"] = r
		} else {
			b.tasks = append(b.tasks, b.newTask(b.roles[flag], r))
		}

	case KindLaunchOrder:
		b.launchOrder()

	case KindHostname:
		if c.IntN(3) > 0 {
			// <job>-<task>-<index> over 63 characters: the job name has 10
			// and a long task name between 56 and 63.
			t, _ := b.anyTask()
			long := letters(c, int(between(c, 56, 63)))
			for flag, name := range b.roles {
				if name == t["name"] {
					b.setRole(flag, long)
				}
			}
			t["name"] = long
			return
		}
		// The job name is every pod's subdomain: it must be a DNS label.
		if c.IntN(2) == 0 {
			b.name = b.name[:3] + "v2." + b.name[3:]
		} else {
			b.name += "-" + letters(c, int(between(c, 54, 80)))
		}

	case KindTooLarge:
		// The svc plugin (which the mutation adds) lists every host in
		// its ConfigMap <job>-svc (the <task>.host file, VC_<TASK>_HOSTS):
		// r hosts "<job>-worker-<i>.<job>", at least 28 characters each
		// with a 10-character job name, so 37,450 replicas make the file
		// pass the 1 MiB a ConfigMap holds (it is then written as ranges,
		// with a warning) and the variable MAX_ARG_STRLEN (left out, with
		// a warning).
		t := b.taskOf("worker")
		r := between(c, maxConfigMapBytes/28+1, MaxReplicas-b.total())
		t["replicas"] = r

	case KindTwoFrameworks:
		// A second framework plugin whose worker role names this one's
		// worker, with tasks of its own for the single-pod roles it cannot
		// do without (mxnet's scheduler). Not mpi: its launcher needs the
		// ssh plugin, which would make a second defect of a different kind.
		var others []string
		for _, p := range Plugins {
			if p != b.plugin && p != "mpi" && slices.Contains(sampleOf(p).RoleFlags(), "worker") {
				others = append(others, p)
			}
		}
		other := pick(c, others)
		args := []any{"--worker=" + b.roles["worker"]}
		for _, r := range sampleOf(other).Roles {
			if r.Single && sampleOf(other).RequiredAlone(r.Flag) {
				name := other[:2] + "-" + r.Flag
				b.tasks = append(b.tasks, b.newTask(name, 1))
				args = append(args, "--"+r.Flag+"="+name)
			}
		}
		b.plugins[other] = args
	}
}

// dropRequiredRoles removes the tasks of one set of roles the plugin cannot
// do without (its Sample's Required: the mpi master, the mxnet scheduler or
// workers, every role task of tensorflow and pytorch); a task "trainer" is
// left, so that the job has tasks.
func (b *job) dropRequiredRoles() {
	var drop []string
	for _, flag := range pick(b.c, sampleOf(b.plugin).Required) {
		drop = append(drop, b.roles[flag])
	}
	b.tasks = slices.DeleteFunc(b.tasks, func(t task) bool { return slices.Contains(drop, t["name"].(string)) })
	if len(b.tasks) == 0 {
		b.tasks = append(b.tasks, b.newTask("trainer", between(b.c, 1, 3)))
	}
}

// launchOrder adds a launch-order defect: a dependsOn against the plugin's
// wait, a cycle of dependsOn alone, a task depending on itself, or a
// dependsOn naming a task the job does not have.
func (b *job) launchOrder() {
	c := b.c
	dependsOn := func(t task, names ...string) {
		l := make([]any, len(names))
		for i, n := range names {
			l[i] = n
		}
		t["dependsOn"] = map[string]any{"name": l}
	}
	choice := c.IntN(4)
	edge := sampleOf(b.plugin).Wait
	if choice == 0 && (edge[0] == "" || b.taskOf(edge[0]) == nil || b.taskOf(edge[1]) == nil) {
		// No wait edge between tasks of this Job: a cycle of dependsOn alone.
		choice = 1
	}
	switch choice {
	case 0:
		// The plugin's wait edge (waiter waits for waited) closed by dependsOn.
		dependsOn(b.taskOf(edge[1]), b.roles[edge[0]])
	case 1:
		t, i := b.anyTask()
		j := (i + 1) % len(b.tasks)
		dependsOn(t, b.tasks[j]["name"].(string))
		dependsOn(b.tasks[j], t["name"].(string))
	case 2:
		t, _ := b.anyTask()
		dependsOn(t, t["name"].(string))
	default:
		t, _ := b.anyTask()
		dependsOn(t, pick(c, []string{"nosuch", "launcher", "trainer"}))
	}
}

// noise adds disorder that leaves the framework validation's verdict as it
// was: with templates, in one Job in four, a task whose template is null, has
// no spec or no containers (the API server then denies the Job for want of
// containers, after the mutations, before the validations); and a null plugin
// svc list, the plugins Volcano's mutation adds, given explicitly, policies,
// and unknown fields.
func (b *job) noise(templates bool) {
	c := b.c
	if templates && c.IntN(4) == 0 {
		t, _ := b.anyTask()
		switch c.IntN(4) {
		case 0:
			t["template"] = nil
		case 1:
			delete(t, "template")
		case 2:
			t["template"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}}
		default:
			if tmpl, ok := t["template"].(map[string]any); ok {
				if spec, ok := tmpl["spec"].(map[string]any); ok {
					spec["containers"] = nil
				}
			}
		}
	}
	for _, t := range b.tasks {
		switch c.IntN(6) {
		case 0:
			t["policies"] = []any{map[string]any{"event": "TaskCompleted", "action": "CompleteJob"}}
		case 1:
			t["unknownField"] = "x"
		}
	}
	switch c.IntN(6) {
	case 0:
		b.plugins["svc"] = pick(c, []any{nil, []any{}, []any{"--publish-not-ready-addresses"}})
	case 1:
		b.plugins["env"] = []any{}
	case 2:
		b.spec["frameworkVersion"] = int64(2)
	}
}

// doc assembles the Job.
func (b *job) doc() map[string]any {
	var args []any
	for _, f := range b.setRoles {
		args = append(args, "--"+f+"="+b.roles[f])
	}
	args = append(args, b.args...)
	if args == nil {
		// Not null: the API server drops a null list (the CRD's schema does
		// not make it nullable) before admission, and with it the plugin.
		args = []any{}
	}
	b.plugins[b.plugin] = args
	tasks := make([]any, len(b.tasks))
	for i, t := range b.tasks {
		tasks[i] = t
	}
	b.spec["tasks"] = tasks
	b.spec["plugins"] = b.plugins
	return map[string]any{
		"apiVersion": "batch.volcano.sh/v1alpha1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": b.name},
		"spec":       b.spec,
	}
}
