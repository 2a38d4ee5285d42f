package docs_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestChartValuesTable checks install.md's "Chart values" table against the
// chart's values.yaml: every value the chart has is in the table, with its
// default, and the table names no value the chart lacks. A row may name
// several values: `a.b.c`, `.d` is a.b.c and a.b.d, their defaults in the
// same order in the next cell.
func TestChartValuesTable(t *testing.T) {
	data, err := os.ReadFile("../installer/helm/framework-plugins/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	flattenValues("", values, want)

	doc, err := os.ReadFile("install.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := chartValuesTable(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("install.md's chart values table against values.yaml (-values.yaml +install.md):\n%s", diff)
	}
}

// flattenValues adds each leaf of v under its dotted key, formatted as the
// table writes a default: "" for an empty string, [] and {} for empty lists
// and maps.
func flattenValues(prefix string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			out[prefix] = "{}"
			return
		}
		for k, child := range v {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flattenValues(key, child, out)
		}
	case []any:
		if len(v) == 0 {
			out[prefix] = "[]"
			return
		}
		out[prefix] = fmt.Sprint(v)
	case string:
		if v == "" {
			out[prefix] = `""`
			return
		}
		out[prefix] = v
	default:
		out[prefix] = fmt.Sprint(v)
	}
}

// chartValuesTable reads the table under "## Chart values": each row's
// values (first cell) and their defaults (the code spans of the second, in
// order).
func chartValuesTable(doc string) (map[string]string, error) {
	_, section, ok := strings.Cut(doc, "\n## Chart values\n")
	if !ok {
		return nil, fmt.Errorf(`no "## Chart values" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	span := regexp.MustCompile("`([^`]*)`")
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		var keys, defaults []string
		for _, m := range span.FindAllStringSubmatch(cells[0], -1) {
			keys = append(keys, m[1])
		}
		for _, m := range span.FindAllStringSubmatch(cells[1], -1) {
			defaults = append(defaults, m[1])
		}
		if len(defaults) < len(keys) {
			return nil, fmt.Errorf("row %q: %d values, %d defaults", line, len(keys), len(defaults))
		}
		first := strings.TrimPrefix(keys[0], "| ")
		parent := first[:strings.LastIndex(first, ".")+1]
		for i, k := range keys {
			if i > 0 {
				k = parent + strings.TrimPrefix(k, ".")
			}
			out[k] = defaults[i]
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no rows in the chart values table")
	}
	return out, nil
}
