package strpack

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// value returns the i-th test value, n bytes long, as three parts.
func value(i, n int) []string {
	head := fmt.Sprintf("v%d:", i)
	return []string{head, strings.Repeat("x", n-len(head)-1), "."}
}

// chunks groups values by the allocation they live in: a value that starts
// where the previous one ends shares its chunk. Values of test lengths that
// are no size class cannot be adjacent otherwise.
func chunks(values []string) []int {
	var sizes []int
	for i, v := range values {
		if i > 0 && unsafe.Pointer(unsafe.StringData(v)) == unsafe.Add(unsafe.Pointer(unsafe.StringData(values[i-1])), len(values[i-1])) {
			sizes[len(sizes)-1]++
			continue
		}
		sizes = append(sizes, 1)
	}
	return sizes
}

func TestConcatPacksValues(t *testing.T) {
	cases := []struct {
		name             string
		expected, maxLen int
		values, length   int
		want             []int
	}{{
		name:     "chunks double up to MaxChunkValues, the last holds what is left, later values are their own",
		expected: 40, maxLen: 100, values: 43, length: 90,
		want: []int{1, 1, 2, 4, 8, 16, 8, 1, 1, 1},
	}, {
		name:     "MaxChunkBytes bounds a chunk",
		expected: 30, maxLen: 300_000, values: 30, length: 299_990,
		want: []int{1, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 2},
	}, {
		name:     "a value longer than maxLen gets its own allocation",
		expected: 10, maxLen: 50, values: 10, length: 1000,
		want: []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	}, {
		name:     "no bound on length: no chunks",
		expected: 10, maxLen: 0, values: 4, length: 90,
		want: []int{1, 1, 1, 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.expected, tc.maxLen)
			var got []string
			for i := 0; i < tc.values; i++ {
				parts := value(i, tc.length)
				v := p.Concat(parts...)
				if want := strings.Join(parts, ""); v != want {
					t.Fatalf("value %d = %.20q... (%d bytes), want %.20q... (%d bytes)", i, v, len(v), want, len(want))
				}
				got = append(got, v)
			}
			if sizes := chunks(got); fmt.Sprint(sizes) != fmt.Sprint(tc.want) {
				t.Errorf("values per allocation = %v, want %v", sizes, tc.want)
			}
			if r := p.Retained(); r != 0 {
				t.Errorf("Retained() = %d after all expected values, want 0", r)
			}
			// Earlier values are intact after later writes into their chunks.
			for i, v := range got {
				if want := strings.Join(value(i, tc.length), ""); v != want {
					t.Errorf("value %d changed later", i)
				}
			}
		})
	}
}

// TestRetainedBound checks that the Packer never holds more unused room than
// it has handed out, and at most one chunk of MaxChunkBytes (rounded up by the
// allocator).
func TestRetainedBound(t *testing.T) {
	const maxLen = 60_000
	p := New(100, maxLen)
	handedOut := 0
	for i := 0; i < 100; i++ {
		handedOut += len(p.Concat(value(i, maxLen-5)...))
		if r := p.Retained(); r > handedOut+maxLen+8<<10 || r > MaxChunkBytes+8<<10 {
			t.Fatalf("after %d values (%d bytes) Retained() = %d", i+1, handedOut, r)
		}
	}
	if r := p.Retained(); r != 0 {
		t.Errorf("Retained() = %d after all expected values, want 0", r)
	}
}

func TestConcatConcurrent(t *testing.T) {
	const goroutines, each, length = 8, 50, 1000
	p := New(goroutines*each, length)
	got := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				got[g] = append(got[g], p.Concat(value(g*each+i, length)...))
			}
		}()
	}
	wg.Wait()
	for g := range goroutines {
		for i, v := range got[g] {
			if want := strings.Join(value(g*each+i, length), ""); v != want {
				t.Errorf("goroutine %d value %d = %.20q..., want %.20q...", g, i, v, want)
			}
		}
	}
	if r := p.Retained(); r != 0 {
		t.Errorf("Retained() = %d after all expected values, want 0", r)
	}
}
