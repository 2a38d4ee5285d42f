package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	jsonpatch "gomodules.xyz/jsonpatch/v2"
)

// anchorPatch rewrites ops, a JSON patch computed between two encodings of the
// Job's struct (before and after the mutation), so that it applies to raw, the
// object as the API server sent it, and changes nothing of raw the mutation did
// not change. after is the mutated struct's encoding.
//
// The struct encoding differs from raw where raw has null or leaves out an
// object (`template: null`, a task without `template.spec`): there the struct
// has the zero value, encoded as an object, and an op such as
// "add /spec/tasks/0/template/spec/restartPolicy" would not apply to raw. Such
// an op becomes one op that sets the first missing or null parent to the
// mutated value, with its null members left out (they were absent or null in
// raw); later ops under that parent are dropped. A "replace" of a member raw
// does not have becomes an "add", a "remove" of one is dropped. Fields of raw
// the struct does not know (newer API versions) are never touched.
func anchorPatch(raw, after []byte, ops []jsonpatch.Operation) ([]jsonpatch.Operation, error) {
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("decoding the object: %v", err)
	}
	target, err := decodeJSON(after)
	if err != nil {
		return nil, fmt.Errorf("decoding the mutated object: %v", err)
	}
	out := make([]jsonpatch.Operation, 0, len(ops))
	var replaced [][]string
	for _, op := range ops {
		toks, err := pointerTokens(op.Path)
		if err != nil || len(toks) == 0 {
			return nil, fmt.Errorf("patch path %q: %v", op.Path, err)
		}
		if underAny(toks, replaced) {
			continue
		}
		node, missing := doc, -1
		for i := 0; i < len(toks)-1; i++ {
			child, ok := member(node, toks[i])
			if !ok || child == nil {
				missing = i
				break
			}
			node = child
		}
		if missing >= 0 {
			prefix := toks[:missing+1]
			v, ok := memberPath(target, prefix)
			if !ok {
				return nil, fmt.Errorf("patch path %q: %s is not in the mutated object", op.Path, pointer(prefix))
			}
			kind := "add"
			if _, isArray := node.([]any); isArray {
				// "add" would insert before the null element.
				kind = "replace"
			}
			out = append(out, jsonpatch.Operation{Operation: kind, Path: pointer(prefix), Value: withoutNulls(v)})
			replaced = append(replaced, prefix)
			continue
		}
		_, exists := member(node, toks[len(toks)-1])
		switch op.Operation {
		case "remove":
			if !exists {
				continue
			}
		case "replace":
			if _, isObject := node.(map[string]any); isObject && !exists {
				op.Operation = "add"
			}
		}
		out = append(out, op)
	}
	return out, nil
}

func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// pointerTokens splits a JSON pointer (RFC 6901) into its unescaped tokens.
func pointerTokens(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("not a JSON pointer")
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

func pointer(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func underAny(toks []string, prefixes [][]string) bool {
	for _, p := range prefixes {
		if len(p) <= len(toks) && equalTokens(p, toks[:len(p)]) {
			return true
		}
	}
	return false
}

func equalTokens(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// member returns the member tok of an object or the element tok of an array.
func member(node any, tok string) (any, bool) {
	switch n := node.(type) {
	case map[string]any:
		v, ok := n[tok]
		return v, ok
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(n) {
			return nil, false
		}
		return n[i], true
	}
	return nil, false
}

func memberPath(node any, toks []string) (any, bool) {
	for _, t := range toks {
		var ok bool
		if node, ok = member(node, t); !ok {
			return nil, false
		}
	}
	return node, true
}

// withoutNulls returns v without the null members of its objects, at any depth.
func withoutNulls(v any) any {
	switch n := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, x := range n {
			if x != nil {
				out[k] = withoutNulls(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, x := range n {
			out[i] = withoutNulls(x)
		}
		return out
	}
	return v
}
