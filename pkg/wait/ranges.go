package wait

import (
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Range is a run of lines that differ only in an index: Prefix, the index
// in decimal, Suffix, for the indexes 0 to Count-1. A Range that is not
// Indexed is the one line Prefix+Suffix (a task whose pods share a
// hostname). Host lists of a Job are such runs (jobs.Domain.HostParts): a
// file of ranges takes a few bytes per task where the lines take a few
// hundred per pod, so that the lists of any Job fit in one ConfigMap.
type Range struct {
	Prefix, Suffix string
	Count          int
	Indexed        bool
}

// RangesFile returns ranges as RangesContainer reads them: per Range one line
// "<count> <prefix> <suffix>\n", the count "=" for a Range that is not
// Indexed. Prefix must not be empty and neither may contain a space or a
// newline at its start or a newline anywhere (host names, ":<port>",
// " slots=<n>" and ":<n>" qualify).
func RangesFile(ranges []Range) string {
	var b strings.Builder
	for _, r := range ranges {
		if r.Indexed {
			b.WriteString(strconv.Itoa(r.Count))
		} else {
			b.WriteByte('=')
		}
		b.WriteByte(' ')
		b.WriteString(r.Prefix)
		b.WriteByte(' ')
		b.WriteString(r.Suffix)
		b.WriteByte('\n')
	}
	return b.String()
}

// ExpandRanges returns the lines of ranges, each ending in a newline: what
// RangesContainer writes for RangesFile(ranges).
func ExpandRanges(ranges []Range) string {
	var b strings.Builder
	b.Grow(ExpandedLen(ranges))
	for _, r := range ranges {
		if !r.Indexed {
			b.WriteString(r.Prefix + r.Suffix + "\n")
			continue
		}
		for i := range r.Count {
			b.WriteString(r.Prefix)
			b.WriteString(strconv.Itoa(i))
			b.WriteString(r.Suffix)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ExpandedLen returns len(ExpandRanges(ranges)) without building it.
func ExpandedLen(ranges []Range) int {
	n := 0
	for _, r := range ranges {
		if !r.Indexed {
			n += len(r.Prefix) + len(r.Suffix) + 1
			continue
		}
		n += r.Count*(len(r.Prefix)+len(r.Suffix)+1) + indexDigits(r.Count)
	}
	return n
}

// indexDigits returns the decimal digits of 0, 1, ..., n-1 together.
func indexDigits(n int) int {
	sum := 0
	for lo, hi, d := 0, 10, 1; lo < n; lo, hi, d = hi, hi*10, d+1 {
		sum += d * (min(n, hi) - lo)
	}
	return sum
}

// Environment of RangesContainer.
const (
	// RangesDirEnv is the directory of the ranges files: every file in it
	// not starting with "." (a ConfigMap volume's keys).
	RangesDirEnv = "RANGES_DIR"
	// RangesOutEnv is the directory the expanded files are written to,
	// under the same names.
	RangesOutEnv = "RANGES_OUT"
)

// rangesScript expands every ranges file of $RANGES_DIR into the file of
// the same name in $RANGES_OUT and logs its line count. POSIX sh with
// busybox's printf, wc and mv: 100,000 lines take about a second.
const rangesScript = `# expand host ranges; source: github.com/vcplugins/framework-plugins/pkg/wait/ranges.go
set -eu
for f in "$` + RangesDirEnv + `"/*; do
out="$` + RangesOutEnv + `/${f##*/}"
while read -r n prefix suffix; do
if [ "$n" = "=" ]; then printf '%s%s\n' "$prefix" "$suffix"; continue; fi
i=0
while [ "$i" -lt "$n" ]; do printf '%s%s%s\n' "$prefix" "$i" "$suffix"; i=$((i+1)); done
done < "$f" > "$out.tmp"
mv "$out.tmp" "$out"
echo "$out: $(wc -l < "$out") lines"
done
`

// RangesContainer returns an init container named name that writes, for
// every ranges file (RangesFile) under in.MountPath, its lines
// (ExpandRanges) into the file of the same name under out.MountPath, which
// must be writable (an emptyDir), and exits 0; a file it cannot read or
// write fails it (exit status 1, the shell's message as its termination
// message). It is Container's image, user, resources and security context
// (Pod Security "restricted"); the image needs busybox's sh, printf, wc and
// mv.
func RangesContainer(name string, in, out v1.VolumeMount, o Options) v1.Container {
	c := Container(nil, o)
	c.Name = name
	c.Command = []string{"sh", "-c", rangesScript}
	c.Env = []v1.EnvVar{{Name: RangesDirEnv, Value: in.MountPath}, {Name: RangesOutEnv, Value: out.MountPath}}
	in.ReadOnly, out.ReadOnly = true, false
	c.VolumeMounts = []v1.VolumeMount{in, out}
	return c
}
