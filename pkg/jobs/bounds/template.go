package bounds

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	v1 "k8s.io/api/core/v1"
)

// Bounds on the lists and maps of the tasks' pod templates (entries: the
// elements of a list, the members of a map). The API server accepts a Job of
// up to 3 MiB, and in 3 MiB a template can carry 100,000s of env entries,
// arguments or tolerations. Kubernetes's pod template validation makes up to
// 8 errors per entry, each of 1 to 2 KB to build, and Volcano's own job
// validation (which this process serves) appends every one to a string, at a
// cost that grows with the square of their number (20,000 invalid env names:
// 7 s and 2.2 GB); decoding the Job, building its pods and the mutation's
// patch cost in proportion to the entries.
//
// The bounds sit far above any training Job. A container of Volcano's examples
// and of Kubeflow's job kinds has at most tens of env entries, arguments,
// ports and mounts, and a pod a handful of containers and tens of volumes;
// the largest pod templates we know of (env from whole config files, a
// hundred mounts) have about 1,000 entries. MaxTemplateEntries keeps what
// one template can cost Kubernetes's validation to tens of MB (4,096 entries
// of 8 errors).
const (
	// MaxContainers is the most entries each of a template's containers,
	// initContainers and ephemeralContainers may have.
	MaxContainers = 64
	// MaxEnv is the most env entries of one container.
	MaxEnv = 2048
	// MaxEnvFrom is the most envFrom entries of one container.
	MaxEnvFrom = 256
	// MaxArgs is the most entries of one container's args, and of its
	// command.
	MaxArgs = 2048
	// MaxPorts is the most ports of one container.
	MaxPorts = 1024
	// MaxVolumeMounts is the most volumeMounts of one container.
	MaxVolumeMounts = 1024
	// MaxVolumes is the most volumes of one template.
	MaxVolumes = 1024
	// MaxListEntries is the most entries of any other list or map of a
	// template, at any depth (tolerations, hostAliases, imagePullSecrets,
	// metadata.labels and annotations, nodeSelector, a container's
	// resources.limits, a volume's items, ...), and the most members of any
	// object (an object of the pod API has at most about 40 fields).
	MaxListEntries = 1024
	// MaxTemplateEntries is the most entries of lists and maps one pod
	// template may have, all its lists and maps together: 4 times the
	// largest templates we know of.
	MaxTemplateEntries = 4096
	// MaxJobTemplateEntries is the most entries of lists and maps the pod
	// templates of all tasks together may have.
	MaxJobTemplateEntries = 4 * MaxTemplateEntries
)

// TemplateShape is what the bounds look at in a task's pod template
// (v1.PodTemplateSpec): the entries of its lists and maps.
type TemplateShape struct {
	// Entries is the number of elements of its lists, at any depth, plus the
	// members of its maps (mapKeys).
	Entries int
	// Over is the first list or map over its bound, in the order they end in
	// the JSON (inner lists first); Over.Path is "" when there is none.
	Over ListShape
	// OverLists is the number of lists and maps over their bounds.
	OverLists int
	// Bytes is the length of the template's JSON without whitespace outside
	// strings: as the API server and encoding/json write it.
	Bytes int
}

// ListShape is a list or map of a pod template that is over its bound.
type ListShape struct {
	// Path is where it is in the template, as field.Path renders it:
	// "spec.containers[0].env". Keys over QuoteMax bytes are abbreviated.
	Path string
	// Entries is its number of entries; Max its bound.
	Entries, Max int
}

// mapKeys are the members of a pod template whose values are maps
// (map[string]string or a ResourceList) in k8s.io/api/core/v1 and metav1:
// their members count as entries. Every other object's members are bounded
// by MaxListEntries alone.
var mapKeys = map[string]bool{
	"labels": true, "annotations": true, "nodeSelector": true, "overhead": true,
	"limits": true, "requests": true, "options": true, "volumeAttributes": true,
	"matchLabels": true, "userAnnotations": true,
}

// containerLists are the bounds of a container's lists.
var containerLists = map[string]int{
	"env": MaxEnv, "envFrom": MaxEnvFrom, "args": MaxArgs, "command": MaxArgs,
	"ports": MaxPorts, "volumeMounts": MaxVolumeMounts,
}

var containerKinds = map[string]bool{"containers": true, "initContainers": true, "ephemeralContainers": true}

// templateShapeOf returns the TemplateShape of a decoded template, read from
// its JSON encoding, as ReadShape reads it from the request's.
func templateShapeOf(t *v1.PodTemplateSpec) TemplateShape {
	raw, err := json.Marshal(t)
	if err != nil {
		return TemplateShape{}
	}
	return readTemplate(raw)
}

// templateShape reads a task's template from JSON for ReadShape.
type templateShape TemplateShape

func (s *templateShape) UnmarshalJSON(b []byte) error {
	*s = templateShape(readTemplate(b))
	return nil
}

// readTemplate walks a template's JSON, which must be valid (encoding/json
// checks the whole document before it calls an UnmarshalJSON, and produces
// valid JSON when it encodes). It allocates nothing but the path of the
// first list over its bound, and keys that are escaped in the JSON (its
// walker, and the walker's path, come from a pool).
func readTemplate(b []byte) TemplateShape {
	w := walkers.Get().(*walker)
	w.b, w.path, w.shape = b, w.path[:0], TemplateShape{Bytes: len(b)}
	w.value(0)
	shape := w.shape
	// Keep no part of the JSON alive in the pool.
	w.b = nil
	clear(w.path[:cap(w.path)])
	walkers.Put(w)
	return shape
}

// step is one level of the path from the template to the value being read:
// an object member's key, or an array index.
type step struct {
	key   []byte // raw, as between the quotes; nil for an index
	index int
}

type walker struct {
	b     []byte
	path  []step
	shape TemplateShape
}

// walkers keeps the walkers and their paths: ReadShape walks the template of
// every task, of which a Job may have 30,000.
var walkers = sync.Pool{New: func() any { return new(walker) }}

// value reads the value at b[i:] (after whitespace) and returns the index
// after it.
func (w *walker) value(i int) int {
	i = w.space(i)
	if i >= len(w.b) {
		return i
	}
	switch w.b[i] {
	case '{':
		return w.object(i + 1)
	case '[':
		return w.array(i + 1)
	case '"':
		return w.str(i + 1)
	}
	// A number, true, false or null.
	for i < len(w.b) {
		switch w.b[i] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

func (w *walker) object(i int) int {
	n := 0
	for {
		i = w.space(i)
		if i >= len(w.b) || w.b[i] == '}' {
			break
		}
		if w.b[i] == ',' {
			i++
			continue
		}
		// A key, a colon, a value.
		start := i + 1
		i = w.str(start)
		key := w.b[start : i-1]
		if i = w.space(i); i < len(w.b) && w.b[i] == ':' {
			i++
		}
		w.path = append(w.path, step{key: key})
		i = w.value(i)
		w.path = w.path[:len(w.path)-1]
		n++
	}
	if d := len(w.path) - 1; d >= 0 && mapKeys[string(w.key(d))] {
		w.shape.Entries += n
	}
	w.bound(n, MaxListEntries)
	return i + 1
}

func (w *walker) array(i int) int {
	n := 0
	for {
		i = w.space(i)
		if i >= len(w.b) || w.b[i] == ']' {
			break
		}
		if w.b[i] == ',' {
			i++
			continue
		}
		w.path = append(w.path, step{index: n})
		i = w.value(i)
		w.path = w.path[:len(w.path)-1]
		n++
	}
	w.shape.Entries += n
	w.bound(n, w.listMax())
	return i + 1
}

// str returns the index after the string whose contents start at b[i].
func (w *walker) str(i int) int {
	for i < len(w.b) {
		switch w.b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		}
		i++
	}
	return i
}

func (w *walker) space(i int) int {
	start := i
	for i < len(w.b) && (w.b[i] == ' ' || w.b[i] == '\t' || w.b[i] == '\r' || w.b[i] == '\n') {
		i++
	}
	w.shape.Bytes -= i - start
	return i
}

// key returns the key of path step d, unescaped (nil for an index). Only a
// key escaped in the JSON is copied.
func (w *walker) key(d int) []byte {
	k := w.path[d].key
	if k == nil || bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &s) != nil {
		return k
	}
	return []byte(s)
}

// is reports whether path step d is the key name.
func (w *walker) is(d int, name string) bool { return string(w.key(d)) == name }

// listMax is the bound of the list at the current path.
func (w *walker) listMax() int {
	p := w.path
	if len(p) < 2 || !w.is(0, "spec") {
		return MaxListEntries
	}
	switch {
	case len(p) == 2 && containerKinds[string(w.key(1))]:
		return MaxContainers
	case len(p) == 2 && w.is(1, "volumes"):
		return MaxVolumes
	case len(p) == 4 && p[2].key == nil && containerKinds[string(w.key(1))]:
		if m, ok := containerLists[string(w.key(3))]; ok {
			return m
		}
	}
	return MaxListEntries
}

// bound notes a list or map of n entries at the current path over max.
func (w *walker) bound(n, max int) {
	if n <= max {
		return
	}
	w.shape.OverLists++
	if w.shape.OverLists == 1 {
		w.shape.Over = ListShape{Path: w.pathString(), Entries: n, Max: max}
	}
}

// pathString renders the current path as field.Path does.
func (w *walker) pathString() string {
	var s strings.Builder
	for d, st := range w.path {
		switch {
		case st.key == nil:
			s.WriteString("[" + strconv.Itoa(st.index) + "]")
		case d > 0:
			s.WriteString("." + jobs.Abbrev(string(w.key(d))))
		default:
			s.WriteString(jobs.Abbrev(string(w.key(d))))
		}
	}
	return s.String()
}
