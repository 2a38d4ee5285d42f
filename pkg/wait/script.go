package wait

import (
	_ "embed" // the wait script is a file so that it can be read, linted and run on its own
	"strings"
)

//go:embed script.sh
var scriptSource string

// script is the POSIX sh program the wait container runs: script.sh without
// its comments, blank lines and indentation, as it is stored in every pod of
// a job. It is a constant: the dependencies and the timeout reach it through
// TargetsEnv (or the file TargetsFileEnv names) and TimeoutEnv, so the
// plugins build the container once per job and deep-copy it per pod.
var script = compact(scriptSource)

// fileScript is script for FileContainer: a first line appends the words of
// the file TargetsFileEnv names (one target per line, as TargetsFile writes
// them) to TargetsEnv, or exits 2 after cat's message when it cannot be read.
// A line of its own rather than part of script.sh, so that the pods whose
// few targets are in TargetsEnv (every waiting pod but mpi's launcher) do not
// store it: ~70 bytes on each of 2,000 TensorFlow workers.
var fileScript = scriptOrigin + readTargetsFile + strings.TrimPrefix(script, scriptOrigin)

const readTargetsFile = `WAIT_TARGETS="${WAIT_TARGETS:-} $(cat "$` + TargetsFileEnv + `")" || exit 2` + "\n"

// scriptOrigin heads the compacted script, for readers of a pod's spec.
const scriptOrigin = "# wait-for-dependencies; source: github.com/vcplugins/framework-plugins/pkg/wait/script.sh\n"

// compact drops comment lines, blank lines and leading whitespace from a
// shell script. Only valid for scripts without here-documents or multi-line
// quoted strings, which script.sh does not have.
func compact(src string) string {
	var b strings.Builder
	b.WriteString(scriptOrigin)
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
