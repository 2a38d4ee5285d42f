// Package args parses Volcano-style plugin arguments (["--flag=value", ...])
// strictly. Volcano's in-tree plugins log a parse error and carry on with defaults,
// so a typo silently changes a job; here every problem is a field error whose path
// names the plugin and the argument (spec.plugins[tensorflow][1]) and whose value
// is the argument as written. The controller and the admission webhook run the
// same parsers, so what admission accepts is exactly what the controller applies.
package args

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// Set is a strict flag set for one plugin. Flags accept the spellings Go's flag
// package accepts (-name=value, --name=value, --name value; booleans also bare
// --name), as Volcano's in-tree plugins use that package.
type Set struct {
	plugin string
	fs     *flag.FlagSet
	path   *field.Path
	args   []string
	errs   field.ErrorList
	set    map[string]int // flag name -> index of the argument that set it
}

// New returns an empty Set for the plugin of that name.
func New(plugin string) *Set {
	fs := flag.NewFlagSet(plugin, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := &Set{plugin: plugin, fs: fs, path: field.NewPath("spec", "plugins").Key(plugin), set: map[string]int{}}
	recording.Lock()
	if recording.sets != nil {
		*recording.sets = append(*recording.sets, s)
	}
	recording.Unlock()
	return s
}

// Flag describes one flag of a Set: its name, what its value is (a string,
// an integer and its range, a boolean, a duration and its unit), its
// default as the value would print it, and its usage.
type Flag struct {
	Name, Kind, Default, Usage string
}

// Flags returns the flags defined on s so far, sorted by name.
func (s *Set) Flags() []Flag {
	var out []Flag
	s.fs.VisitAll(func(f *flag.Flag) {
		kind := ""
		if v, ok := f.Value.(*value); ok {
			kind = v.kind
		}
		out = append(out, Flag{Name: f.Name, Kind: kind, Default: f.DefValue, Usage: f.Usage})
	})
	return out
}

// recording holds the Sets New makes while Record runs.
var recording struct {
	sync.Mutex
	sets *[]*Set
}

// recordOne serializes Record's callers.
var recordOne sync.Mutex

// Record runs parse (a plugin's argument parser on no arguments) and
// returns the flags of the Sets it made, by plugin: what the documentation's
// reference of plugin arguments is generated from.
func Record(parse func()) map[string][]Flag {
	recordOne.Lock()
	defer recordOne.Unlock()
	var sets []*Set
	recording.Lock()
	recording.sets = &sets
	recording.Unlock()
	defer func() {
		recording.Lock()
		recording.sets = nil
		recording.Unlock()
	}()
	parse()
	out := map[string][]Flag{}
	recording.Lock()
	defer recording.Unlock()
	for _, s := range sets {
		out[s.plugin] = append(out[s.plugin], s.Flags()...)
	}
	return out
}

// String defines a string flag.
func (s *Set) String(p *string, name, def, usage string) {
	*p = def
	s.fs.Var(&value{s: s, name: name, kind: "string", set: func(v string) error { *p = v; return nil }, str: func() string { return *p }}, name, usage)
}

// NonEmpty defines a string flag that must not be set to "".
func (s *Set) NonEmpty(p *string, name, def, usage string) {
	*p = def
	s.fs.Var(&value{s: s, name: name, kind: "string, not empty", set: func(v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("must not be empty")
		}
		*p = v
		return nil
	}, str: func() string { return *p }}, name, usage)
}

// Int defines an integer flag whose value must lie in [min, max].
func (s *Set) Int(p *int, name string, def, min, max int, usage string) {
	*p = def
	s.fs.Var(&value{s: s, name: name, kind: fmt.Sprintf("integer, %d to %d", min, max), set: func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("must be an integer")
		}
		if n < min || n > max {
			return fmt.Errorf("must be between %d and %d", min, max)
		}
		*p = n
		return nil
	}, str: func() string { return strconv.Itoa(*p) }}, name, usage)
}

// Port defines a TCP port flag: an integer from 1 to 65535.
func (s *Set) Port(p *int, name string, def int, usage string) {
	s.Int(p, name, def, 1, 65535, usage)
}

// Bool defines a boolean flag ("true", "false", "1", "0", ... as strconv.ParseBool).
func (s *Set) Bool(p *bool, name string, def bool, usage string) {
	*p = def
	s.fs.Var(&value{s: s, name: name, kind: "boolean", boolean: true, set: func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("must be true or false")
		}
		*p = b
		return nil
	}, str: func() string { return strconv.FormatBool(*p) }}, name, usage)
}

// Duration defines a duration flag between 0 and max. A bare integer is read
// in unit (so Volcano's "--wait-master-timeout=300" means 300 seconds);
// otherwise the value is a Go duration such as "10m" or "90s". A bare integer
// too large for a Duration in unit is over max, not wrapped around.
func (s *Set) Duration(p *time.Duration, name string, def, unit, max time.Duration, usage string) {
	*p = def
	s.fs.Var(&value{s: s, name: name, kind: fmt.Sprintf("duration, 0 to %v (a bare number: %s)", max, unitName(unit)), set: func(v string) error {
		var d time.Duration
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			if n > int64(max/unit) {
				return fmt.Errorf("must be at most %d %s (%v)", int64(max/unit), unitName(unit), max)
			}
			d = time.Duration(n) * unit
		} else if d, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("must be a duration such as 90s or 10m, or a whole number of %s", unitName(unit))
		}
		if d < 0 {
			return fmt.Errorf("must not be negative")
		}
		if d > max {
			return fmt.Errorf("must be at most %v", max)
		}
		*p = d
		return nil
	}, str: func() string { return p.String() }}, name, usage)
}

// Func defines a flag whose value is checked and stored by set; an error it
// returns becomes the reason of the field error.
func (s *Set) Func(name, usage string, current func() string, set func(string) error) {
	s.fs.Var(&value{s: s, name: name, kind: "string", set: set, str: current}, name, usage)
}

func unitName(d time.Duration) string {
	switch d {
	case time.Second:
		return "seconds"
	case time.Minute:
		return "minutes"
	}
	return d.String() + "s"
}

// Parse reads args. It returns every problem found: unknown flags, malformed
// values and stray positional arguments, each as a field error naming the
// argument. Later checks (Require, Invalid) add to the same list.
func (s *Set) Parse(args []string) field.ErrorList {
	s.args = args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			s.errs = append(s.errs, field.Invalid(s.path.Index(i), jobs.Abbrev(a), fmt.Sprintf("plugin %s: unexpected argument: arguments are --flag=value; accepted flags: %s", s.plugin, s.flagList())))
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := s.fs.Lookup(name)
		if f == nil {
			s.errs = append(s.errs, field.Invalid(s.path.Index(i), jobs.Abbrev(a), s.unknown(name, val, hasVal)))
			continue
		}
		v := f.Value.(*value)
		if !hasVal {
			if v.boolean {
				val = "true"
			} else if i+1 < len(args) {
				i++
				val = args[i]
			} else {
				s.errs = append(s.errs, field.Invalid(s.path.Index(i), jobs.Abbrev(a), fmt.Sprintf("plugin %s: flag --%s needs a value (--%s=<value>)", s.plugin, name, name)))
				continue
			}
		}
		if err := v.set(val); err != nil {
			s.errs = append(s.errs, field.Invalid(s.path.Index(s.indexOf(i, a)), jobs.Abbrev(args[s.indexOf(i, a)]), fmt.Sprintf("plugin %s: --%s=%s: %v", s.plugin, name, jobs.Abbrev(val), err)))
			continue
		}
		s.set[name] = s.indexOf(i, a)
	}
	return s.errs
}

// unknown explains an argument that names no flag: a flag and its value
// written as one argument ("--ps ps": Volcano passes every list item as one
// argument), else the closest flag when there is one, and the accepted flags.
func (s *Set) unknown(name, val string, hasVal bool) string {
	if fields := strings.Fields(name); len(fields) > 1 && !hasVal && s.fs.Lookup(fields[0]) != nil {
		return fmt.Sprintf("plugin %s: %q is a flag and its value in one argument; write --%s=%s",
			s.plugin, jobs.Abbrev("--"+name), fields[0], jobs.Abbrev(strings.Join(fields[1:], " ")))
	}
	hint := ""
	if c := s.closest(name); c != "" {
		if hasVal {
			hint = fmt.Sprintf(" (did you mean --%s=%s?)", c, jobs.Abbrev(val))
		} else {
			hint = fmt.Sprintf(" (did you mean --%s?)", c)
		}
	}
	return fmt.Sprintf("plugin %s: unknown flag --%s for plugin %s%s; accepted flags: %s", s.plugin, jobs.Abbrev(name), s.plugin, hint, s.flagList())
}

// closest returns the flag nearest to name, "" when none is near: a flag at
// most 2 single-character edits away (fewer than name has characters), or one
// that extends or shortens name (at least 3 characters); the fewest edits win.
func (s *Set) closest(name string) string {
	best, bestDist := "", -1
	s.fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		near := d <= 2 && d < len(name)
		if len(name) >= 3 && (strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name)) {
			near = true
		}
		if near && (bestDist < 0 || d < bestDist) {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b, with a
// transposition of neighbours counting as one edit ("prot" is one from "port").
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// indexOf maps the position reached while parsing back to the argument that
// named the flag (the value may be the following argument).
func (s *Set) indexOf(i int, a string) int {
	if s.args[i] == a {
		return i
	}
	return i - 1
}

// IsSet reports whether the user gave the flag explicitly.
func (s *Set) IsSet(name string) bool {
	_, ok := s.set[name]
	return ok
}

// Invalid records a problem with the flag's value that only shows against the
// Job (a task that does not exist, a limit exceeded). The path points at the
// argument that set it, or at the plugin when the default is at fault.
func (s *Set) Invalid(name, val, reason string) {
	if i, ok := s.set[name]; ok {
		s.errs = append(s.errs, field.Invalid(s.path.Index(i), jobs.Abbrev(s.args[i]), fmt.Sprintf("plugin %s: %s", s.plugin, reason)))
		return
	}
	s.errs = append(s.errs, field.Invalid(s.path, jobs.Abbrev("--"+name+"="+val)+" (default)", fmt.Sprintf("plugin %s: %s", s.plugin, reason)))
}

// Distinct checks that the named role flags name different tasks: one task
// cannot play two roles of the same framework. The error points at whichever of
// the two flags the user gave. It reports whether all were distinct.
func (s *Set) Distinct(names ...string) bool {
	seen := map[string]string{}
	ok := true
	for _, n := range names {
		v := s.fs.Lookup(n).Value.String()
		other, dup := seen[v]
		if !dup {
			seen[v] = n
			continue
		}
		ok = false
		first, second := other, n
		if s.IsSet(other) && !s.IsSet(n) {
			first, second = n, other
		}
		s.Invalid(second, v, fmt.Sprintf("--%s and --%s both name task %q; a task can play one role", first, second, v))
	}
	return ok
}

// Errors returns what Parse and later checks found.
func (s *Set) Errors() field.ErrorList { return s.errs }

// Task checks a role flag against the Job: when the flag was given explicitly, or
// required is true, the named task must exist and have at least one replica.
// maxReplicas > 0 also caps its replicas (roles that must be single). It returns
// the task, or nil when it is absent (and allowed to be).
func (s *Set) Task(job *batch.Job, flagName, taskName string, required bool, maxReplicas int32) *batch.TaskSpec {
	task, ok := jobs.Task(job, taskName)
	switch {
	case !ok:
		if required || s.IsSet(flagName) {
			s.Invalid(flagName, taskName, fmt.Sprintf("--%s names task %q, which the job does not have (tasks: %s)", flagName, jobs.Abbrev(taskName), jobs.TaskNames(job)))
		}
		return nil
	case task.Replicas < 1:
		if required || s.IsSet(flagName) {
			s.Invalid(flagName, taskName, fmt.Sprintf("--%s names task %q, which has no replicas", flagName, jobs.Abbrev(taskName)))
		}
		return nil
	case maxReplicas > 0 && task.Replicas > maxReplicas:
		s.Invalid(flagName, taskName, fmt.Sprintf("task %q (--%s) must have at most %d replica, has %d", taskName, flagName, maxReplicas, task.Replicas))
	}
	return task
}

func (s *Set) flagList() string {
	var names []string
	s.fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// value adapts a typed setter to flag.Value so that the flag package still
// records names, defaults and usage.
type value struct {
	s       *Set
	name    string
	kind    string // what the value is, for Flags
	boolean bool
	set     func(string) error
	str     func() string
}

func (v *value) String() string {
	if v == nil || v.str == nil {
		return ""
	}
	return v.str()
}

func (v *value) Set(x string) error { return v.set(x) }

func (v *value) IsBoolFlag() bool { return v.boolean }
