package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// timeline is when a run of make startup reached each stage. Every time is on
// the host's clock, which the kubelet shares; a zero time is a stage not
// reached.
type timeline struct {
	// Created is just before the Job's create call.
	Created time.Time `json:"created"`
	// Bound is when the last of the Job's pods was first seen bound to a
	// node (pod watch; a few milliseconds after the scheduler bound it).
	Bound time.Time `json:"bound"`
	// Started is the latest start of the pods' main containers, from the
	// pods' status: whole seconds, the API's resolution, so up to 1 s early.
	Started time.Time `json:"started"`
	// Joined is when every rank had printed its first line (Example.Joined),
	// from the kubelet's timestamps of the lines.
	Joined time.Time `json:"joined"`
	// JoinErr says why Joined is zero.
	JoinErr string `json:"joinErr,omitempty"`
	// Completed is when the Job was first seen Completed (polled every
	// 250 ms).
	Completed time.Time `json:"completed"`
}

// stage returns the time from Created to at, and whether at was reached.
func (t timeline) stage(at time.Time) (time.Duration, bool) {
	if at.IsZero() {
		return 0, false
	}
	return at.Sub(t.Created), true
}

// timelineOf computes the timeline of a run of job created at created, whose
// want pods are pods (as last seen), first seen bound at boundAt (by pod
// name), whose program runs in container; joined reads the ranks' first
// lines from lines (the container's logs with timestamps, by pod name);
// completed is when the Job was seen Completed (zero: it was not).
func timelineOf(created time.Time, job *batch.Job, want int, pods []*corev1.Pod, boundAt map[string]time.Time, container string, joined training.Joined, lines map[string][]training.LogLine, completed time.Time) timeline {
	t := timeline{Created: created, Completed: completed}
	if len(boundAt) >= want {
		for _, at := range boundAt {
			t.Bound = latest(t.Bound, at)
		}
	}
	started := 0
	var last time.Time
	for _, p := range pods {
		if at := training.StartedAt(p, container); !at.IsZero() {
			started++
			last = latest(last, at)
		}
	}
	if started >= want {
		t.Started = last
	}
	at, err := joined.At(job, pods, lines)
	if err != nil {
		t.JoinErr = err.Error()
	} else {
		t.Joined = at
	}
	return t
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// restarts counts the restarts of pods' containers (init containers too) and
// the pods replaced by new ones (replaced).
func restarts(pods []*corev1.Pod, replaced int) int {
	n := replaced
	for _, p := range pods {
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			n += int(cs.RestartCount)
		}
	}
	return n
}

// Proxies for the moment a wait container's dependency answered.
const (
	// proxyListening: the dependency printed its Example.Listening line
	// (its port accepts connections from then on); kubelet timestamp.
	proxyListening = "listening line"
	// proxyReady: the dependency pod was first seen Ready (pod watch). Its
	// DNS name is published from then on (Volcano's svc plugin publishes
	// Ready pods only), after kube-controller-manager's EndpointSlice and
	// CoreDNS's watch have caught up: the latency measured from it is an
	// upper bound of the wait's own.
	proxyReady = "seen Ready"
)

// waitRelease is how soon one wait container let its pod's program start
// once its dependencies answered.
type waitRelease struct {
	Pod string `json:"pod"`
	// Waited is set when the wait logged "waiting for": a dependency had
	// not answered at its first check. A wait that found every dependency
	// ready at once released its pod as soon as it started; it says nothing
	// about the release latency and is left out of the median.
	Waited bool `json:"waited"`
	// Released is the kubelet's timestamp of the wait's last line, "... ready
	// after Ns", which it prints as it exits 0.
	Released time.Time `json:"released"`
	// Answered is when the last of its dependencies answered, by Proxy.
	Answered time.Time `json:"answered"`
	Proxy    string    `json:"proxy"`
	// Err says why the release could not be measured.
	Err string `json:"err,omitempty"`
}

// Latency is Released - Answered.
func (w waitRelease) Latency() time.Duration { return w.Released.Sub(w.Answered) }

// waitReadyLine is the wait script's last line when every dependency answered
// (pkg/wait/script.sh).
var waitReadyLine = regexp.MustCompile(`^(?:(?:all \d+ dependencies|1 dependency) ready after \d+s|no dependencies to wait for)$`)

// waitingLine is the script's progress line while a dependency is pending.
const waitingLine = "waiting for "

// waitReleases measures the wait container of every pod of pods that has
// one: pods are a run's pods as last seen; configMap returns a ConfigMap's
// data as seen during the run (for wait targets read from a file);
// waitLines and lines are the wait containers' and the programs' logs with
// timestamps by pod name; listening is the example's Listening line (nil:
// none); readyAt is when each pod was first seen Ready. A dependency is
// answered at its listening line when it is a TCP target and listening is
// set, else when it was seen Ready (proxyReady). Target hosts name pods by
// their first label: the pod's hostname, else its name (Volcano's svc
// plugin). Waits that cannot be measured carry Err.
func waitReleases(pods []*corev1.Pod, configMap func(string) (map[string]string, error), waitLines, lines map[string][]training.LogLine, listening *regexp.Regexp, readyAt map[string]time.Time) []waitRelease {
	byHost := map[string]*corev1.Pod{}
	for _, p := range pods {
		host := p.Spec.Hostname
		if host == "" {
			host = p.Name
		}
		byHost[host] = p
	}
	var out []waitRelease
	for _, p := range pods {
		c := waitContainer(p)
		if c == nil {
			continue
		}
		w := waitRelease{Pod: p.Name}
		if err := w.measure(p, c, configMap, waitLines[p.Name], lines, listening, readyAt, byHost); err != nil {
			w.Err = err.Error()
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

func (w *waitRelease) measure(p *corev1.Pod, c *corev1.Container, configMap func(string) (map[string]string, error), log []training.LogLine, lines map[string][]training.LogLine, listening *regexp.Regexp, readyAt map[string]time.Time, byHost map[string]*corev1.Pod) error {
	if len(log) == 0 {
		return fmt.Errorf("no log of its wait container")
	}
	last := log[len(log)-1]
	if !waitReadyLine.MatchString(last.Text) {
		return fmt.Errorf("its wait did not end ready: %q", last.Text)
	}
	w.Released = last.At
	for _, l := range log {
		if strings.HasPrefix(l.Text, waitingLine) {
			w.Waited = true
		}
	}
	targets, err := wait.PodTargets(p, c, configMap)
	if err != nil {
		return err
	}
	proxies := map[string]bool{}
	for _, t := range targets {
		host, port := t, ""
		if i := strings.LastIndex(t, ":"); i >= 0 && !strings.HasSuffix(t, "]") {
			host, port = t[:i], t[i+1:]
		}
		dep := byHost[strings.SplitN(host, ".", 2)[0]]
		if dep == nil {
			return fmt.Errorf("no pod of the Job is %s", t)
		}
		var answered time.Time
		if port != "" && listening != nil {
			at, ok := training.FirstMatch(listening, lines[dep.Name])
			if !ok {
				return fmt.Errorf("%s never printed a line matching %s", dep.Name, listening)
			}
			answered = at
			proxies[proxyListening] = true
		} else {
			at, ok := readyAt[dep.Name]
			if !ok {
				return fmt.Errorf("%s was never seen Ready", dep.Name)
			}
			answered = at
			proxies[proxyReady] = true
		}
		w.Answered = latest(w.Answered, answered)
	}
	if len(targets) == 0 {
		return fmt.Errorf("it waits for nothing")
	}
	w.Proxy = strings.Join(sortedKeys(proxies), ", ")
	return nil
}
