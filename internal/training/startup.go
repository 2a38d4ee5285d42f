package training

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// LogLine is one line of a container's log and when the kubelet received it.
type LogLine struct {
	// At is the kubelet's timestamp of the line (nanoseconds, the host's
	// clock).
	At time.Time
	// Text is the line without its timestamp and newline.
	Text string
}

// ParseTimestamped splits a log read with PodLogOptions{Timestamps: true}
// (FollowTimestampedLogs) into its lines: the kubelet puts an RFC 3339
// timestamp with nanoseconds and one space before every line (a line the
// program wrote in several parts gets one timestamp). A last line without a
// newline is kept. It returns an error naming the first line that does not
// start with a timestamp.
func ParseTimestamped(log string) ([]LogLine, error) {
	log = strings.TrimSuffix(log, "\n")
	if log == "" {
		return nil, nil
	}
	var out []LogLine
	for i, raw := range strings.Split(log, "\n") {
		stamp, text, _ := strings.Cut(raw, " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			return out, fmt.Errorf("line %d of the log, %q: no kubelet timestamp: %w", i+1, raw, err)
		}
		out = append(out, LogLine{At: at, Text: text})
	}
	return out, nil
}

// Untimestamped returns lines as the log reads without timestamps, one
// newline after each line.
func Untimestamped(lines []LogLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// FirstMatch returns the time of the first of lines that re matches, and
// whether one does.
func FirstMatch(re *regexp.Regexp, lines []LogLine) (time.Time, bool) {
	for _, l := range lines {
		if re.MatchString(l.Text) {
			return l.At, true
		}
	}
	return time.Time{}, false
}

// StartedAt returns when container of pod started, as its status says (whole
// seconds: the API's resolution), or the zero time when it has not.
func StartedAt(pod *corev1.Pod, container string) time.Time {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name != container {
			continue
		}
		if s.State.Running != nil {
			return s.State.Running.StartedAt.Time
		}
		if s.State.Terminated != nil {
			return s.State.Terminated.StartedAt.Time
		}
	}
	return time.Time{}
}

// DigitsJoinedLine is the first line a rank of example/pytorch/train_digits.py
// or example/mpi/train_mpi.py prints, once the framework's init has connected
// every rank: "rank R of W joined on HOST" (after torchrun's "[default0]:"
// with --tee).
var DigitsJoinedLine = regexp.MustCompile(`^(?:\[[a-z]+[0-9]+\]:)?rank (?P<rank>\d+) of (?P<world>\d+) joined on `)

// Joined says from a Job's logs when every rank of its program had joined:
// the first line each rank prints.
type Joined struct {
	// Line matches a rank's first line in a pod's log (a log of the
	// Example's Container). Its submatch "rank", if any, names the rank,
	// else the pod does (one rank per pod); its submatch "world", if any,
	// is the number of ranks, else the Job's pods of Tasks are.
	Line *regexp.Regexp
	// Tasks are the tasks whose pods are ranks when Line has no "world"
	// submatch; nil: every task.
	Tasks []string
}

// At returns when every rank of job had joined: the earliest time at which
// the ranks of one world size (ranks are counted per world size, so an
// elastic Job's rounds of different sizes do not mix) had all printed Line,
// each counted at its first line. pods are the Job's pods (their task
// annotations pick the pods of Tasks), logs their Container logs by pod
// name. It returns an error saying how many ranks joined when not all did.
func (j Joined) At(job *batch.Job, pods []*corev1.Pod, logs map[string][]LogLine) (time.Time, error) {
	rankAt, worldAt := j.Line.SubexpIndex("rank"), j.Line.SubexpIndex("world")
	tasks := map[string]bool{}
	for _, t := range j.Tasks {
		tasks[t] = true
	}
	want := 0
	for _, t := range job.Spec.Tasks {
		if len(tasks) == 0 || tasks[t.Name] {
			want += int(t.Replicas)
		}
	}
	// first[world][rank] is when rank first printed its line in a world of
	// that size ("" when Line names no world).
	first := map[string]map[string]time.Time{}
	for _, pod := range pods {
		if worldAt < 0 && len(tasks) > 0 && !tasks[pod.Annotations[batch.TaskSpecKey]] {
			continue
		}
		for _, l := range logs[pod.Name] {
			m := j.Line.FindStringSubmatch(l.Text)
			if m == nil {
				continue
			}
			world, rank := "", pod.Name
			if worldAt >= 0 {
				world = m[worldAt]
			}
			if rankAt >= 0 {
				rank = m[rankAt]
			}
			if first[world] == nil {
				first[world] = map[string]time.Time{}
			}
			if at, seen := first[world][rank]; !seen || l.At.Before(at) {
				first[world][rank] = l.At
			}
		}
	}
	var done time.Time
	most, mostOf := 0, want
	for world, ranks := range first {
		n := want
		if world != "" {
			n, _ = strconv.Atoi(world)
		}
		times := make([]time.Time, 0, len(ranks))
		for _, at := range ranks {
			times = append(times, at)
		}
		sort.Slice(times, func(a, b int) bool { return times[a].Before(times[b]) })
		if n > 0 && len(times) >= n {
			if at := times[n-1]; done.IsZero() || at.Before(done) {
				done = at
			}
		} else if len(times) > most {
			most, mostOf = len(times), n
		}
	}
	if done.IsZero() {
		return done, fmt.Errorf("%d of %d ranks printed that they joined", most, mostOf)
	}
	return done, nil
}
