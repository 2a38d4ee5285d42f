package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// The controller manager's API requests are counted from kube-apiserver's
// audit log, not from its apiserver_request_total: that counter's labels
// (Kubernetes 1.30) are verb, dry_run, group, version, resource,
// subresource, scope, component (the server's: "apiserver") and code, none
// of them the client, and every process of the local cluster
// uses the same admin credentials, so during a sweep it also counts the
// scheduler's bindings and PodGroup updates, KWOK's pod and node status
// patches, kube-controller-manager's endpoint slices and the sweep's own
// Job creates. The controller manager's client-go metric
// (rest_client_requests_total) has the client but only the method and host,
// not the resource, and Volcano's stock controller manager serves no
// metrics at all. An audit event has the verb, the resource and
// subresource and the client's user agent, which client-go makes of the
// binary's name (vc-controller-manager/<version> ..., and
// vc-controller-manager-stock/... for stock).

// auditPolicy logs one event per request at the Metadata level (no bodies),
// when it completes, so a watch is counted when it ends. The KWOK nodes'
// leases and the non-resource paths (health, discovery, metrics) are left
// out: many requests, none of them a controller manager's work on a Job.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  resources:
  - group: coordination.k8s.io
    resources: [leases]
- level: None
  nonResourceURLs: ["*"]
- level: Metadata
`

// auditLogName is the audit log in the audit directory; rotated files
// (lumberjack's audit-<time>.log) are read too.
const auditLogName = "audit.log"

// auditArgs writes the audit policy into dir (created if need be) and
// returns the kube-apiserver flags that log to dir/audit.log with it. The
// log is written in blocking mode, the log backend's default: every event
// is in the file when its request completes, and none is dropped, as a full
// batch buffer would; it costs each request a write of ~1 KB, the same for
// both controller managers. 4 GiB before a rotation, far more than a sweep
// of 500 jobs should log (a few tens of MB); rotated files are read too.
func auditArgs(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file", policy,
		"--audit-log-path", filepath.Join(dir, auditLogName),
		"--audit-log-format", "json",
		"--audit-log-mode", "blocking",
		"--audit-log-maxsize", "4096",
	}, nil
}

// auditLogs returns the audit log files in dir: audit.log and its rotated
// predecessors.
func auditLogs(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, strings.TrimSuffix(auditLogName, ".log")+"*.log"))
}

// countAuditFiles adds the requests of files (countAudit) into counts.
func countAuditFiles(files []string, agent string, from, to time.Time, counts map[string]int) error {
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		err = countAudit(f, agent, from, to, counts)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	return nil
}

// agentMarker is the text every audit event line of the client whose user
// agent's product is agent holds (and few others do): its userAgent field's
// start.
func agentMarker(agent string) []byte { return []byte(`"userAgent":"` + agent + `/`) }

// countAudit reads audit events (JSON, one per line) from r and adds to
// counts one for each request of a resource that the client whose user
// agent's product is agent (the text before the first "/",
// "vc-controller-manager") received between from and to inclusive, by
// requestKey. It returns an error if a line of that client does not decode
// or r cannot be read.
func countAudit(r io.Reader, agent string, from, to time.Time, counts map[string]int) error {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 16<<20)
	// Most lines are other clients'; only those that can be this one's are decoded.
	quoted := agentMarker(agent)
	for s.Scan() {
		line := s.Bytes()
		if !bytes.Contains(line, quoted) {
			continue
		}
		var ev auditv1.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("audit event %.80q: %w", line, err)
		}
		if ev.ObjectRef == nil || !strings.HasPrefix(ev.UserAgent, agent+"/") {
			continue
		}
		at := ev.RequestReceivedTimestamp.Time
		if at.Before(from) || at.After(to) {
			continue
		}
		counts[requestKey(ev.Verb, ev.ObjectRef)]++
	}
	return s.Err()
}

// requestKey is how Measurement.Requests names a request: its verb and
// resource, the resource qualified by its API group unless core and followed
// by its subresource ("create pods", "update jobs.batch.volcano.sh/status",
// "create pods/binding").
func requestKey(verb string, ref *auditv1.ObjectReference) string {
	res := ref.Resource
	if ref.APIGroup != "" {
		res += "." + ref.APIGroup
	}
	if ref.Subresource != "" {
		res += "/" + ref.Subresource
	}
	return verb + " " + res
}

// writeVerbs are the verbs that change objects.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// isWrite reports whether the request key is a write (writeVerbs).
func isWrite(key string) bool {
	verb, _, _ := strings.Cut(key, " ")
	for _, v := range writeVerbs {
		if verb == v {
			return true
		}
	}
	return false
}

// isObjectCreate reports whether key creates an object that stays with the
// Job (a pod, PodGroup, Service, ConfigMap, Secret, NetworkPolicy):
// a create of a resource, not of a subresource, and not of an event.
func isObjectCreate(key string) bool {
	verb, res, _ := strings.Cut(key, " ")
	return verb == "create" && !strings.Contains(res, "/") && res != "events" && res != "events.events.k8s.io"
}

// Named periods of the wait for the controller manager's last requests.
const (
	// auditQuiet is how long the controller manager must send no request
	// before its requests are counted. Its event broadcaster sends the Job
	// events' patches one at a time, and after a sweep it was still sending
	// them (about 150 a second) once its CPU had gone idle: counting up to
	// the CPU's idleness missed a part of them that varied from run to run
	// (one mpi sweep counted 4.6 of stock's event patches per job where the
	// audit log held 7.0).
	auditQuiet = 5 * time.Second
	// auditQuietTimeout bounds that wait.
	auditQuietTimeout = 3 * time.Minute
	// auditPoll is how often the audit log is read during the wait.
	auditPoll = time.Second
)

// auditTail counts, across calls, the audit log lines of one client in the
// audit directory's files, reading only what was appended since the last
// call (the files are only appended to; a rotated file is a new name).
type auditTail struct {
	dir    string
	quoted []byte
	read   map[string]int64 // bytes of each file already counted
	lines  int
}

func newAuditTail(dir, agent string) *auditTail {
	return &auditTail{dir: dir, quoted: agentMarker(agent), read: map[string]int64{}}
}

// count reads what was appended to the audit logs since the last call (up
// to their last complete line) and returns the lines of the client so far.
// It returns an error if a file cannot be listed or read.
func (t *auditTail) count() (int, error) {
	files, err := auditLogs(t.dir)
	if err != nil {
		return t.lines, err
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return t.lines, err
		}
		_, err = f.Seek(t.read[file], io.SeekStart)
		var data []byte
		if err == nil {
			data, err = io.ReadAll(f)
		}
		f.Close()
		if err != nil {
			return t.lines, err
		}
		// A line being written is counted once it is complete.
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		t.read[file] += int64(len(data))
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if bytes.Contains(line, t.quoted) {
				t.lines++
			}
		}
	}
	return t.lines, nil
}

// waitAuditQuiet waits until the audit logs in dir gain no request of the
// client whose user agent's product is agent during quiet, reading them
// every poll. It returns an error if that does not happen within timeout,
// the logs cannot be read, or ctx ends.
func waitAuditQuiet(ctx context.Context, dir, agent string, quiet, poll, timeout time.Duration) error {
	tail := newAuditTail(dir, agent)
	last, err := tail.count()
	if err != nil {
		return err
	}
	since := time.Now()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for time.Since(since) < quiet {
		select {
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("%s still sent API requests after %s (%d in the audit log)", agent, timeout, last)
		case <-ctx.Done():
			return ctx.Err()
		}
		n, err := tail.count()
		if err != nil {
			return err
		}
		if n != last {
			last, since = n, time.Now()
		}
	}
	return nil
}
