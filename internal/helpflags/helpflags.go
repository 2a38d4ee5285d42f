// Package helpflags reads the flags a command's --help lists, in the format
// of spf13/pflag's usage (the managers' flag sets): for the flag-parity test
// of the managers against Volcano's stock ones and the docs' reference of
// the managers' flags.
package helpflags

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Spec is what --help says of a flag: its type (pflag's name for it; ""
// for a boolean), its default ("" when none is printed) and its usage
// (without the default).
type Spec struct{ Type, Default, Usage string }

var (
	flagLine     = regexp.MustCompile(`^\s+(?:-\w, )?--([\w.-]+)(?: ([\w.]+))?\s{2,}(.*)$`)
	boolFlagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([\w.-]+)\s{2,}(.*)$`)
	defaultOf    = regexp.MustCompile(`\s*\(default (.*)\)$`)
)

// Of runs bin --help and returns the flags it lists, by name.
func Of(bin string) map[string]Spec {
	out, _ := exec.Command(bin, "--help").CombinedOutput() // pflag exits 2 after --help
	return Parse(out)
}

// Parse returns the flags a --help output lists, by name. A usage of
// several lines is joined with spaces.
func Parse(out []byte) map[string]Spec {
	flags := map[string]Spec{}
	var name, usage string
	flush := func() {
		if name == "" {
			return
		}
		spec := flags[name]
		usage = strings.TrimSpace(usage)
		if m := defaultOf.FindStringSubmatch(usage); m != nil {
			spec.Default = m[1]
			usage = strings.TrimSpace(strings.TrimSuffix(usage, m[0]))
		}
		spec.Usage = usage
		flags[name] = spec
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			m = boolFlagLine.FindStringSubmatch(line)
			if m != nil {
				m = []string{m[0], m[1], "", m[2]}
			}
		}
		switch {
		case m != nil && strings.HasPrefix(strings.TrimSpace(line), "-"):
			flush()
			name, usage = m[1], m[3]
			flags[name] = Spec{Type: m[2]}
		case name != "":
			usage += " " + strings.TrimSpace(line) // a usage of several lines
		}
	}
	flush()
	return flags
}

// Build builds the commands pkgs into dir with the go command and the
// environment's GOFLAGS (a Volcano line's -modfile and tags under make
// test-lines), returning its output on failure.
func Build(dir string, pkgs ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Env = os.Environ()
	return cmd.CombinedOutput()
}
