package training

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// followInterval is how often a LogFollower looks for new pods and retries a
// log stream that cannot be opened yet.
const followInterval = time.Second

// LogFollower streams the log of one container of every pod of a Job while
// the pods run. A Job whose completing task finishes first has its other,
// still running pods deleted (Volcano's CompleteJob), and a deleted pod's log
// can no longer be read: only a log followed from the start is complete.
type LogFollower struct {
	kube kubernetes.Interface
	opts corev1.PodLogOptions
	// stopDiscover ends the search for new pods, stopStreams the streams.
	stopDiscover, stopStreams context.CancelFunc
	discover                  sync.WaitGroup
	streams                   sync.WaitGroup

	mu sync.Mutex
	// logs are by pod UID: a restarted Job's pods come back under their old
	// names, and each incarnation has its own log.
	logs map[types.UID]*followed
	seq  int
}

// followed is the log of one pod, with the kubelet's timestamp before each
// line, and the order in which its pod was found.
type followed struct {
	name string
	seq  int
	buf  *bytes.Buffer
}

// FollowLogs starts following the log of container (a container or an init
// container) in every pod that pods returns, now or at a later call (it is
// called every second until Collect), each from the start of the container
// until it ends (its first run only). It reads the logs with the kubelet's
// timestamps (CollectStamped, ParseTimestamped: when a line was printed, to
// the nanosecond, where a pod's status has whole seconds).
func FollowLogs(ctx context.Context, kube kubernetes.Interface, container string, pods func(context.Context) []*corev1.Pod) *LogFollower {
	opts := corev1.PodLogOptions{Container: container, Follow: true, Timestamps: true}
	streamCtx, stopStreams := context.WithCancel(ctx)
	discoverCtx, stopDiscover := context.WithCancel(streamCtx)
	lf := &LogFollower{kube: kube, opts: opts, stopDiscover: stopDiscover, stopStreams: stopStreams, logs: map[types.UID]*followed{}}
	lf.discover.Add(1)
	go func() {
		defer lf.discover.Done()
		for {
			for _, pod := range pods(discoverCtx) {
				lf.mu.Lock()
				_, seen := lf.logs[pod.UID]
				if !seen {
					lf.seq++
					lf.logs[pod.UID] = &followed{name: pod.Name, seq: lf.seq, buf: &bytes.Buffer{}}
				}
				lf.mu.Unlock()
				if !seen {
					lf.streams.Add(1)
					go lf.follow(streamCtx, pod)
				}
			}
			select {
			case <-discoverCtx.Done():
				return
			case <-time.After(followInterval):
			}
		}
	}()
	return lf
}

// follow copies the pod's container log into its buffer: it retries opening
// the stream until the container has started, then reads until the stream
// ends. A stream that ends while the container has not terminated is opened
// again from the last line read (SinceTime; the lines up to that timestamp
// are skipped): a restarted kubelet, containerd or API server cuts every
// stream, and on the real node a followed log once came back empty from a
// container that had printed.
func (lf *LogFollower) follow(ctx context.Context, pod *corev1.Pod) {
	defer lf.streams.Done()
	var log bytes.Buffer
	var last time.Time // the timestamp of the last line in log
	for {
		opts := lf.opts
		if !last.IsZero() {
			// SinceTime travels in whole seconds: the lines of that second
			// that log has already are skipped below.
			since := metav1.NewTime(last)
			opts.SinceTime = &since
		}
		rc, err := lf.kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &opts).Stream(ctx)
		if err == nil {
			data, _ := io.ReadAll(rc)
			rc.Close()
			last = appendAfter(&log, data, last)
			lf.mu.Lock()
			lf.logs[pod.UID].buf = bytes.NewBuffer(bytes.Clone(log.Bytes()))
			lf.mu.Unlock()
			if lf.terminated(ctx, pod) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(followInterval):
		}
	}
}

// appendAfter appends to log the lines of data, read with timestamps, whose
// timestamp is after last, and returns the timestamp of the last line it
// appended (last if none). A line without a timestamp is appended as it is.
func appendAfter(log *bytes.Buffer, data []byte, last time.Time) time.Time {
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		stamp, _, _ := bytes.Cut(line, []byte(" "))
		if at, err := time.Parse(time.RFC3339Nano, string(stamp)); err == nil {
			if !at.After(last) {
				continue
			}
			last = at
		}
		log.Write(line)
	}
	return last
}

// terminated reports whether the followed container (or init container) of
// pod has terminated or the pod is gone (not found, or replaced by a pod of
// the same name); an error reading it says neither.
func (lf *LogFollower) terminated(ctx context.Context, pod *corev1.Pod) bool {
	p, err := lf.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && pod.UID != "" && p.UID != pod.UID) {
		return true
	}
	if err != nil {
		return ctx.Err() != nil
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if cs.Name == lf.opts.Container {
			return cs.State.Terminated != nil
		}
	}
	return false
}

// Collect stops looking for new pods, waits up to timeout for the streams of
// the pods found to end, and returns each pod's log by pod name ("" for a pod
// whose container never started); of a pod name that came back (a restarted
// Job), the log of the last pod found. Streams still open after timeout are
// cut and return what they had read.
func (lf *LogFollower) Collect(timeout time.Duration) map[string]string {
	out := lf.CollectStamped(timeout)
	for name, log := range out {
		out[name] = Unstamped(log)
	}
	return out
}

// CollectStamped is Collect with the kubelet's RFC 3339 timestamp and a space
// before each line, as `kubectl logs --timestamps` prints them.
func (lf *LogFollower) CollectStamped(timeout time.Duration) map[string]string {
	lf.stopDiscover()
	lf.discover.Wait()
	done := make(chan struct{})
	go func() {
		lf.streams.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	}
	lf.stopStreams()
	lf.streams.Wait()
	lf.mu.Lock()
	defer lf.mu.Unlock()
	latest := map[string]*followed{}
	for _, f := range lf.logs {
		if l, ok := latest[f.name]; !ok || f.seq > l.seq {
			latest[f.name] = f
		}
	}
	out := make(map[string]string, len(latest))
	for name, f := range latest {
		out[name] = f.buf.String()
	}
	return out
}

// Incarnations returns, after Collect or CollectStamped, the stamped log of
// every pod followed, by pod name, oldest pod first: a name that came back (a
// pod Volcano re-created) has one log per pod, where CollectStamped keeps the
// last one only.
func (lf *LogFollower) Incarnations() map[string][]string {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	all := make([]*followed, 0, len(lf.logs))
	for _, f := range lf.logs {
		all = append(all, f)
	}
	slices.SortFunc(all, func(a, b *followed) int { return a.seq - b.seq })
	out := map[string][]string{}
	for _, f := range all {
		out[f.name] = append(out[f.name], f.buf.String())
	}
	return out
}

// Unstamped is a log read with timestamps as it reads without them, one
// newline after each line (ParseTimestamped, Untimestamped); it ends at a
// line without a timestamp, which the kubelet never writes.
func Unstamped(log string) string {
	lines, _ := ParseTimestamped(log)
	return Untimestamped(lines)
}
