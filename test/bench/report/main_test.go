package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// benchLine is one `go test -bench` result line of BenchmarkPlugins.
func benchLine(fw, impl string, workers int, ns, cpu float64) string {
	return fmt.Sprintf("BenchmarkPlugins/framework=%s/impl=%s/workers=%d-2 \t 10\t %.0f ns/op\t %.0f cpu-ns/op\t 4096 B/op\t 16 allocs/op\t 100 retained-B/op\n",
		fw, impl, workers, ns, cpu)
}

// table returns the rows of the table printed under the title starting with
// title in out: each row's framework, workers and its time and CPU ratios;
// nil when there is no such table.
func table(out, title string) [][]string {
	for _, block := range strings.Split(out, "\n\n") {
		lines := strings.Split(block, "\n")
		if !strings.HasPrefix(lines[0], title) {
			continue
		}
		rows := [][]string{}
		for _, l := range lines[2:] {
			f := strings.Fields(l)
			if len(f) < 4 {
				continue
			}
			rows = append(rows, []string{f[0], f[1], f[len(f)-4], f[len(f)-3]})
		}
		return rows
	}
	return nil
}

const waitTitle = "Ours (default arguments) against in-tree pytorch with --wait-master-enabled"

func TestParseInTreeWait(t *testing.T) {
	results, err := parse([]byte(benchLine("pytorch", "in-tree-wait", 16, 2000, 1000)))
	if err != nil {
		t.Fatal(err)
	}
	r := results[key{"pytorch", "in-tree-wait", 16}]
	if r == nil {
		t.Fatalf("no result for pytorch/in-tree-wait/16 in %v", results)
	}
	if diff := cmp.Diff([]float64{2000, 1000}, []float64{r.median("ns/op"), r.median(cpuUnit)}); diff != "" {
		t.Errorf("ns/op, cpu-ns/op (-want +got):\n%s", diff)
	}
}

// TestWriteInTreeWait checks the table of ours against in-tree-wait: pytorch
// rows only, ratios against in-tree-wait (not in-tree), and that the
// in-tree-wait results change no target (they are measured against in-tree).
func TestWriteInTreeWait(t *testing.T) {
	var raw strings.Builder
	for _, n := range []int{midN, bigN} {
		g := float64(n / midN)
		for _, fw := range []string{"pytorch", "mpi"} {
			raw.WriteString(benchLine(fw, "in-tree", n, 1000*g, 1000*g))
			raw.WriteString(benchLine(fw, "ours", n, 2000*g, 1500*g))
		}
		raw.WriteString(benchLine("pytorch", "in-tree-wait", n, 4000*g, 3000*g))
	}
	tests := []struct {
		name                 string
		raw                  string
		wantWait, wantInTree [][]string
	}{
		{
			name: "with in-tree-wait",
			raw:  raw.String(),
			wantWait: [][]string{
				{"pytorch", "256", "0.500", "0.500"},
				{"pytorch", "2048", "0.500", "0.500"},
			},
			wantInTree: [][]string{
				{"pytorch", "256", "2.00", "1.50"}, {"pytorch", "2048", "2.00", "1.50"},
				{"mpi", "256", "2.00", "1.50"}, {"mpi", "2048", "2.00", "1.50"},
			},
		},
		{
			// Saved output of before in-tree-wait (report -in): no ratios.
			name:     "without in-tree-wait",
			raw:      strings.ReplaceAll(raw.String(), "impl=in-tree-wait", "impl=unknown"),
			wantWait: [][]string{{"pytorch", "256", "-", "-"}, {"pytorch", "2048", "-", "-"}},
			wantInTree: [][]string{
				{"pytorch", "256", "2.00", "1.50"}, {"pytorch", "2048", "2.00", "1.50"},
				{"mpi", "256", "2.00", "1.50"}, {"mpi", "2048", "2.00", "1.50"},
			},
		},
	}
	var failedBy [][]string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results, err := parse([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			failedBy = append(failedBy, write(&out, results, 0.1))
			if diff := cmp.Diff(tt.wantWait, table(out.String(), waitTitle)); diff != "" {
				t.Errorf("in-tree-wait table (-want +got):\n%s\n%s", diff, out.String())
			}
			if diff := cmp.Diff(tt.wantInTree, table(out.String(), "Ours (default arguments) against in-tree;")); diff != "" {
				t.Errorf("in-tree table (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(failedBy[0], failedBy[1]); diff != "" {
		t.Errorf("failed targets with in-tree-wait results (-) and without (+):\n%s", diff)
	}
}
