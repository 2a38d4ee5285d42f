package jobs

import (
	"fmt"
	"strings"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// QuoteMax is the most bytes of a user's value Abbrev keeps.
const QuoteMax = 256

// Abbrev returns s when it has at most QuoteMax bytes, else its first QuoteMax
// bytes (cut at a rune boundary) followed by "... (N bytes)": what a message
// may quote of a value the user wrote, so that an error about a long value is
// not as long as the value.
func Abbrev(s string) string {
	if len(s) <= QuoteMax {
		return s
	}
	cut := QuoteMax
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// TaskNames returns the names of the Job's tasks in spec order, joined by ", "
// ("none" when it has none): at most 10 names, each abbreviated (Abbrev),
// then "and N more", so that a message that lists them stays short.
func TaskNames(job *batch.Job) string {
	const shown = 10
	n := len(job.Spec.Tasks)
	if n == 0 {
		return "none"
	}
	names := make([]string, 0, min(n, shown)+1)
	for i := 0; i < n && i < shown; i++ {
		names = append(names, Abbrev(job.Spec.Tasks[i].Name))
	}
	if n > shown {
		names = append(names, fmt.Sprintf("and %d more", n-shown))
	}
	return strings.Join(names, ", ")
}
