package bounds

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// The ssh config: Volcano's ssh plugin (volcano.sh/volcano
// pkg/controllers/job/plugins/ssh, generateSSHConfig) writes it into the
// Secret <job>-ssh in OnJobAdd. It is two lines of options, then for every
// host
//
//	Host <host>
//	  HostName <host>.<subdomain>
//	  Port <port>
//
// where a task whose template sets spec.hostname is one host of that name
// (when it has a replica), any other task one host <job>-<task>-<index> per
// replica, and the subdomain is the template's spec.subdomain, or the Job's
// name. The plugin appends each line to one string, copying all before it:
// the time grows with the square of the hosts (40,000 hosts: 47 s of a job
// worker), and past 1 MiB the Secret's create fails and the next sync
// starts over. pkg/guard therefore has it build the config of a Job over
// MaxSSHConfigBytes for no host, and writes CompactSSHConfig instead.
const (
	// MaxSSHConfigBytes is the largest ssh config, in bytes, that the
	// guarded ssh plugin lets Volcano's build host by host; past it the
	// Secret gets CompactSSHConfig (SSHConfigCompact). A Secret's data may
	// hold: a Secret's data may have 1 MiB in all
	// (Kubernetes's MaxSecretSize), of which the plugin's keys take the
	// rest: about 2.5 KB for the 2048-bit key it generates, at most
	// 3 × MaxPluginArgBytes (12 KiB) for keys given as its
	// --ssh-private-key and --ssh-public-key arguments (the public one is
	// stored twice). 1,032,192 bytes. A config at the bound (17,284 hosts
	// of Job "db", task "worker") still takes the plugin about 18 s and
	// 27 GB of allocations, once per Job (pkg/guard BenchmarkSSHOnJobAdd,
	// on a busy 2-core machine).
	MaxSSHConfigBytes = 1<<20 - 16<<10
	// MaxGeneratedNameBytes is the longest name the API server generates
	// from metadata.generateName (a prefix of at most 58 bytes and 5
	// random characters); the bounds take it for a Job with no name yet.
	MaxGeneratedNameBytes = 63
	// DefaultSSHPort is the ssh plugin's port when its arguments give no
	// valid --ssh-port.
	DefaultSSHPort = 22

	sshConfigHeader = len("StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n")
	// sshHostFixed is what a host's three lines hold besides the host name
	// (twice), the subdomain and the port's digits.
	sshHostFixed = len("Host \n") + len("  HostName .\n") + len("  Port \n")
)

// SSHPort returns the port the ssh plugin writes into its config, given its
// arguments: --ssh-port, parsed as the plugin parses its flags (Go's flag
// package with the plugin's four flags, stopping at the first error or
// non-flag argument); DefaultSSHPort when it is absent or not in 1-65535.
func SSHPort(args []string) int {
	fs := flag.NewFlagSet("ssh", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The string flags matter: each takes the next argument as its value.
	fs.String("ssh-key-file-path", "", "")
	fs.String("ssh-private-key", "", "")
	fs.String("ssh-public-key", "", "")
	port := fs.Int("ssh-port", DefaultSSHPort, "")
	_ = fs.Parse(args)
	if *port <= 0 || *port > 65535 {
		return DefaultSSHPort
	}
	return *port
}

// sshTask is what the ssh config takes of a task: the lengths in bytes of its
// name and of its template's spec.hostname and spec.subdomain (0 when unset),
// and its replicas.
type sshTask struct {
	name, hostname, subdomain int
	replicas                  int64
}

// sshConfigSize returns the hosts of the ssh config of a Job whose name has
// jobName bytes (MaxGeneratedNameBytes when 0), and its length in bytes, for
// the given port. Its cost is per task, not per replica.
func sshConfigSize(jobName int, tasks []sshTask, port int) (hosts, bytes int64) {
	if jobName == 0 {
		jobName = MaxGeneratedNameBytes
	}
	portDigits := int64(len(fmt.Sprint(port)))
	bytes = int64(sshConfigHeader)
	for _, t := range tasks {
		if t.replicas <= 0 {
			continue
		}
		sub := int64(t.subdomain)
		if sub == 0 {
			sub = int64(jobName)
		}
		per := int64(sshHostFixed) + sub + portDigits
		if t.hostname > 0 {
			hosts++
			bytes += per + 2*int64(t.hostname)
			continue
		}
		// <job>-<task>-<index>, twice per host.
		hosts += t.replicas
		bytes += t.replicas*(per+2*int64(jobName+1+t.name+1)) + 2*indexDigits(t.replicas)
	}
	return hosts, bytes
}

// indexDigits returns the decimal digits of 0, 1, ..., n-1 together.
func indexDigits(n int64) int64 {
	var sum int64
	for lo, hi, d := int64(0), int64(10), int64(1); lo < n; lo, hi, d = hi, hi*10, d+1 {
		sum += d * (min(n, hi) - lo)
	}
	return sum
}

// SSHConfigBytes returns the length in bytes of the ssh config Volcano's ssh
// plugin, given args, writes for job (exact, as the plugin builds it), and
// its number of hosts. A Job with no name counts as MaxGeneratedNameBytes
// long.
func SSHConfigBytes(job *batch.Job, args []string) (hosts, bytes int64) {
	tasks := make([]sshTask, len(job.Spec.Tasks))
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		tasks[i] = sshTask{name: len(t.Name), hostname: len(t.Template.Spec.Hostname), subdomain: len(t.Template.Spec.Subdomain), replicas: int64(t.Replicas)}
	}
	return sshConfigSize(len(job.Name), tasks, SSHPort(args))
}

// SSHConfigCompact reports whether the ssh config Volcano's ssh plugin,
// given args, would write for job (SSHConfigBytes) is over
// MaxSSHConfigBytes, so that the guarded plugin writes CompactSSHConfig.
func SSHConfigCompact(job *batch.Job, args []string) bool {
	_, b := SSHConfigBytes(job, args)
	return b > MaxSSHConfigBytes
}

// CompactSSHConfig returns the ssh config of job with port in one entry per
// task rather than one per host: Volcano's two lines of options; for each
// task whose template sets spec.hostname (and has a replica) the host's
// entry as Volcano writes it; then, for the other tasks with replicas,
// longest task name first,
//
//	Host <job>-<task>-* !*.*
//	  HostName %h.<subdomain>
//	  Port <port>
//
// which gives every pod's short name (<job>-<task>-<index>, without a dot:
// "!*.*" leaves dotted names alone) the HostName and Port of Volcano's
// entry for it (ssh_config(5): %h is the name as given; for each option
// the first matching entry wins, so a task whose name extends another's
// comes first). Its length grows with the tasks, not the pods.
func CompactSSHConfig(job *batch.Job, port int) string {
	var b strings.Builder
	b.WriteString("StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n")
	entry := func(host, hostName string) {
		fmt.Fprintf(&b, "Host %s\n  HostName %s\n  Port %d\n", host, hostName, port)
	}
	subdomain := func(t *batch.TaskSpec) string {
		if s := t.Template.Spec.Subdomain; s != "" {
			return s
		}
		return job.Name
	}
	var indexed []*batch.TaskSpec
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		switch {
		case t.Replicas <= 0:
		case t.Template.Spec.Hostname != "":
			entry(t.Template.Spec.Hostname, t.Template.Spec.Hostname+"."+subdomain(t))
		default:
			indexed = append(indexed, t)
		}
	}
	slices.SortStableFunc(indexed, func(x, y *batch.TaskSpec) int { return len(y.Name) - len(x.Name) })
	for _, t := range indexed {
		entry(job.Name+"-"+t.Name+"-* !*.*", "%h."+subdomain(t))
	}
	return b.String()
}

// MaxSSHReplicas returns the most replicas a Job of one task may have with the
// ssh plugin at DefaultSSHPort and a template that sets neither
// spec.hostname nor spec.subdomain, for a Job name of jobName bytes
// (MaxGeneratedNameBytes when 0) and a task name of taskName bytes, before
// its Secret gets CompactSSHConfig: the largest such Job within
// MaxSSHConfigBytes. Each host takes
// 3 × jobName + 2 × taskName + 33 bytes plus twice its index's digits, so,
// for a task named "worker":
//
//	job name   8 bytes: 13,346 replicas
//	job name  16 bytes: 10,236
//	job name  32 bytes:  6,942
//	job name  63 bytes:  4,274 (a generated name, or none yet)
//
// (TestMaxSSHReplicas checks these.)
func MaxSSHReplicas(jobName, taskName int) int64 {
	fits := func(r int64) bool {
		_, b := sshConfigSize(jobName, []sshTask{{name: taskName, replicas: r}}, DefaultSSHPort)
		return b <= MaxSSHConfigBytes
	}
	// Each host takes at least 30 bytes.
	return int64(sort.Search(MaxSSHConfigBytes/30+1, func(r int) bool { return !fits(int64(r)) })) - 1
}
