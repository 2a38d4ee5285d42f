package jobs

import (
	"fmt"
	"strings"
	"testing"
)

func TestAbbrev(t *testing.T) {
	if got := Abbrev("short"); got != "short" {
		t.Errorf("Abbrev(short) = %q", got)
	}
	s := "a" + strings.Repeat("é", QuoteMax) // 2 bytes each: the cut falls inside a rune
	got := Abbrev(s)
	want := "a" + strings.Repeat("é", QuoteMax/2-1) + fmt.Sprintf("... (%d bytes)", len(s))
	if got != want {
		t.Errorf("Abbrev = %q; want %q", got, want)
	}
}
