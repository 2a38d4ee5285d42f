// Package cli holds the terminal-output helpers shared by the commands under
// hack/ (conformance, demo, and through package measure scale and sweep).
package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
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

// Warnings prints the API server's warnings to stderr as "  warning: <text>",
// less the one every Job create through the typed Volcano client draws
// (kubeutil.Warnings).
var Warnings = kubeutil.Warnings{Prefix: "  warning: "}
