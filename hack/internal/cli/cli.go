// Package cli holds the terminal-output helpers shared by the commands under
// hack/ (demo, scale).
package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Indent returns a writer that writes every line written through it to w with
// prefix before it, so that a step's progress lines (e.g. localcluster.Up's
// Config.Out) nest under a heading. It reports len(p) written, or w's error.
func Indent(w io.Writer, prefix string) io.Writer { return indent{w, prefix} }

type indent struct {
	w      io.Writer
	prefix string
}

func (i indent) Write(p []byte) (int, error) {
	s := strings.TrimSuffix(string(p), "\n")
	for _, line := range strings.Split(s, "\n") {
		if _, err := fmt.Fprintln(i.w, i.prefix+line); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Warnings is a client-go rest.WarningHandler that prints the API server's
// warnings to stderr, except the one every Job created through the typed
// Volcano client causes: the Go types serialize a pod template's
// metadata.creationTimestamp as null, a field Volcano's Job CRD schema does
// not list.
type Warnings struct{}

// HandleWarningHeader prints "  warning: <text>" for a 299 warning.
func (Warnings) HandleWarningHeader(code int, agent, text string) {
	if code != 299 || strings.HasSuffix(text, ".template.metadata.creationTimestamp\"") {
		return
	}
	fmt.Fprintln(os.Stderr, "  warning:", text)
}
