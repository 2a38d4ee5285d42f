package cli

import (
	"strings"
	"testing"
)

func TestIndent(t *testing.T) {
	var b strings.Builder
	w := Indent(&b, "  ")
	for _, s := range []string{"one\n", "two\nthree\n", "four"} {
		if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if want := "  one\n  two\n  three\n  four\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
