package bounds

import (
	"encoding/json"
	"math"
	"reflect"

	sigsjson "sigs.k8s.io/json"
)

// ReadShape returns the Shape of a Job given as JSON (an admission review's
// object), reading no more of it than the bounds need: of every task its
// replicas, its dependsOn names and the entries of its template's lists and
// maps (counted by walking the JSON, nothing decoded), of every plugin its
// name and its arguments, each argument and name read for its length alone
// (a JSON string at most MaxPluginArgBytes long, quotes aside, is never
// decoded). It allocates a few bytes per task, list element and plugin, a
// small part of what decoding the Job would (about 60 times its JSON for a
// Job of many tasks, each with a pod template). An error means raw is not a
// JSON object of the expected types; decoding it as a Job then fails too.
//
// Member names match case-sensitively, as the API machinery's decoder
// (sigs.k8s.io/json) matches them: "SPEC" is not spec, so a review cannot
// show the bounds one Job and the decoder another. A member given twice
// where the shape reads it (the Job, spec, one of the first MaxTasks tasks,
// dependsOn) is a *DuplicateFieldError: the API server never sends one (it
// encodes the object it decoded), so such JSON came from elsewhere.
func ReadShape(raw []byte) (Shape, error) {
	var view struct {
		Spec struct {
			Tasks   tasksShape   `json:"tasks"`
			Plugins pluginsShape `json:"plugins"`
		} `json:"spec"`
	}
	strict, err := sigsjson.UnmarshalStrict(raw, &view, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return Shape{}, err
	}
	if len(strict) > 0 {
		return Shape{}, &DuplicateFieldError{Err: strict[0]}
	}
	tasks := view.Spec.Tasks.first
	s := Shape{Tasks: view.Spec.Tasks.n, Plugins: view.Spec.Plugins.n, Args: view.Spec.Plugins.args}
	for i := range tasks {
		n := 0
		if d := tasks[i].DependsOn; d != nil {
			n = len(d.Name)
		}
		s.DependsOn = append(s.DependsOn, n)
		s.Templates = append(s.Templates, TemplateShape(tasks[i].Template))
		// Within int32, as the decoder reads it (larger fails there).
		s.Replicas = append(s.Replicas, min(max(tasks[i].Replicas, 0), math.MaxInt32))
	}
	return s, nil
}

// tasksShape reads spec.tasks: the number of tasks, and the first MaxTasks
// (a Job of 30,000 tasks is over MaxTasks whatever they hold, and reading
// them all would cost 100 bytes each).
type tasksShape struct {
	n     int
	first []taskShape
}

type taskShape struct {
	DependsOn *struct {
		Name []length `json:"name"`
	} `json:"dependsOn"`
	Template templateShape `json:"template"`
	Replicas int64         `json:"replicas"`
}

// UnmarshalJSON splits the array, which encoding/json has checked is valid
// JSON, into its elements by scanning for commas outside strings at its own
// depth, as members does.
func (t *tasksShape) UnmarshalJSON(b []byte) error {
	if b[0] != '[' {
		if string(b) == "null" {
			return nil
		}
		return &json.UnmarshalTypeError{Value: "non-array", Type: reflect.TypeOf(t)}
	}
	depth, inString, escaped, start := 0, false, false, -1
	for i, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case depth == 1 && start < 0 && c != ']':
			start = i
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 && start >= 0 {
				return t.element(b[start:i])
			}
		case ',':
			if depth == 1 {
				if err := t.element(b[start:i]); err != nil {
					return err
				}
				start = -1
			}
		}
	}
	return nil
}

// element counts one task, and reads it when it is among the first MaxTasks.
func (t *tasksShape) element(b []byte) error {
	t.n++
	if t.n > MaxTasks {
		return nil
	}
	var task taskShape
	strict, err := sigsjson.UnmarshalStrict(b, &task, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return &DuplicateFieldError{Err: strict[0]}
	}
	t.first = append(t.first, task)
	return nil
}

// DuplicateFieldError is ReadShape's error for JSON that names a member
// twice; Err is the decoder's, naming the member.
type DuplicateFieldError struct{ Err error }

func (e *DuplicateFieldError) Error() string { return "malformed Job JSON: " + e.Err.Error() }

// pluginsShape reads spec.plugins: the number of plugins, and each plugin's
// arguments when there are at most MaxPlugins (a map of many plugins'
// argument lists would cost ten times its JSON).
type pluginsShape struct {
	n    int
	args []PluginShape
}

func (p *pluginsShape) UnmarshalJSON(b []byte) error {
	var n members
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	p.n = int(n)
	if p.n == 0 || p.n > MaxPlugins {
		return nil
	}
	var plugins map[string][]length
	if err := json.Unmarshal(b, &plugins); err != nil {
		return err
	}
	p.args = pluginShapes(plugins, func(n length) int { return int(n) })
	return nil
}

// length reads a JSON string for its length in bytes: exact when over
// MaxPluginArgBytes, else the JSON's length less its quotes, an upper bound
// (escapes are longer than what they stand for) that is enough to know it is
// within the bound. Other JSON values count their JSON's length.
type length int32

func (l *length) UnmarshalJSON(b []byte) error {
	n := len(b) - 2
	if n > MaxPluginArgBytes && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		n = len(s)
	}
	*l = length(min(n, 1<<30))
	return nil
}

// members reads a JSON object for the number of its members, allocating
// nothing: it counts the colons outside strings at the object's own depth.
// encoding/json has checked that the object is valid JSON before it calls
// UnmarshalJSON. null has none.
type members int

func (m *members) UnmarshalJSON(b []byte) error {
	if b[0] != '{' {
		if string(b) == "null" {
			return nil
		}
		return &json.UnmarshalTypeError{Value: "non-object", Type: reflect.TypeOf(m)}
	}
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ':' && depth == 1:
			*m++
		}
	}
	return nil
}
