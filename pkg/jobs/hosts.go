package jobs

import (
	"errors"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// Why hosts are fully qualified: a pod's resolv.conf has ndots:5 and searches
// <namespace>.svc.<domain>, svc.<domain> and <domain>. A two-label name
// <hostname>.<subdomain> whose record is not yet published (the pod is not
// ready) falls through to <hostname>.<subdomain>.svc.<domain>: Service
// <hostname> in namespace <subdomain>, the Job's name, which whoever may
// create that namespace controls (docs/security.md, M1). A name with the
// namespace and the cluster domain is tried as is first (it has at least 5
// dots with cluster.local), and a search suffix appended to it cannot name an
// object a user can create. It has no trailing dot: TLS names and several
// frameworks' address parsers refuse one.

const (
	// DefaultClusterDomain is the DNS domain of the cluster's Services: the
	// default of the kubelet's clusterDomain in kubeadm and most
	// distributions, and the local cluster's.
	DefaultClusterDomain = "cluster.local"
	// MaxClusterDomainLength is the longest cluster domain: with it the
	// longest host, <hostname>.<subdomain>.<namespace>.svc.<cluster domain>
	// with a DNS label (63 characters) for each of the first three, is a DNS
	// name of at most 253 characters: 253 - 3*63 - len("...svc.") = 57.
	MaxClusterDomainLength = validation.DNS1123SubdomainMaxLength - 3*validation.DNS1123LabelMaxLength - len("...svc.")
)

// clusterDomain is the process-wide cluster domain (SetClusterDomain).
var clusterDomain = DefaultClusterDomain

// CheckClusterDomain returns an error saying why d is not a cluster domain: a
// DNS-1123 subdomain (lowercase letters, digits, '-' and '.', no trailing dot)
// of at most MaxClusterDomainLength characters; nil when it is one.
func CheckClusterDomain(d string) error {
	if len(validation.IsDNS1123Subdomain(d)) > 0 {
		return errors.New("must be a DNS name (RFC 1123 subdomain: lowercase letters, digits, '-' and '.'; no trailing dot), such as cluster.local")
	}
	if len(d) > MaxClusterDomainLength {
		return fmt.Errorf("must be at most %d characters, so that <hostname>.<subdomain>.<namespace>.svc.<cluster domain> is a DNS name", MaxClusterDomainLength)
	}
	return nil
}

// SetClusterDomain sets the process-wide cluster domain (the managers'
// --cluster-domain) in which Host and the other package-level functions name
// pods; empty restores DefaultClusterDomain. It returns CheckClusterDomain's
// error, and then changes nothing. Call it before the controller or the
// webhook starts.
func SetClusterDomain(d string) error {
	if d == "" {
		d = DefaultClusterDomain
	}
	if err := CheckClusterDomain(d); err != nil {
		return err
	}
	clusterDomain = d
	return nil
}

// ClusterDomain returns the process-wide cluster domain (SetClusterDomain).
func ClusterDomain() string { return clusterDomain }

// Domain is a cluster DNS domain in which its methods name a Job's pods; the
// zero Domain is the process-wide one (ClusterDomain). The package-level Host,
// Hosts, HostParts, HostsLen, DistinctHosts and DistinctHostsLen are its
// methods on the zero Domain; a plugin that takes the domain as an argument
// (mpi's --cluster-domain) calls them on its own.
type Domain string

// String returns the domain's name: d, or ClusterDomain() when d is empty.
func (d Domain) String() string {
	if d == "" {
		return clusterDomain
	}
	return string(d)
}

// Qualifier returns what follows <hostname>.<subdomain> in the hosts of job's
// pods: ".<namespace>.svc.<domain>". Volcano's svc plugin lists hosts without
// it; the webhook measures those lists with it.
func (d Domain) Qualifier(job *batch.Job) string {
	return "." + job.Namespace + ".svc." + d.String()
}

// Host returns the DNS name under which the index-th pod of task is
// reachable: <hostname>.<subdomain>.<namespace>.svc.<domain>. Like Volcano's
// svc plugin it uses the pod name (<job>-<task>-<index>) and the Job name
// unless the task template sets its own hostname or subdomain. A template
// hostname is shared by every replica, exactly as Kubernetes would apply it.
func (d Domain) Host(job *batch.Job, task *batch.TaskSpec, index int) string {
	return hostOf(d.HostParts(job, task))(index)
}

// hostOf returns the host of the index-th replica from HostParts' results.
func hostOf(prefix, suffix string, indexed bool) func(index int) string {
	return func(index int) string {
		if !indexed {
			return prefix
		}
		return prefix + strconv.Itoa(index) + suffix
	}
}

// Hosts returns Host for every replica of task, in index order. With port > 0
// each entry is "host:port".
func (d Domain) Hosts(job *batch.Job, task *batch.TaskSpec, port int) []string {
	out := make([]string, max(task.Replicas, 0))
	suffix := ""
	if port > 0 {
		suffix = ":" + strconv.Itoa(port)
	}
	// The parts once, not per replica.
	host := hostOf(d.HostParts(job, task))
	for i := range out {
		out[i] = host(i) + suffix
	}
	return out
}

// HostParts returns what Host(job, task, i) is made of: prefix +
// strconv.Itoa(i) + suffix when indexed is true; when the template sets a
// hostname, every replica's host is prefix and indexed is false. Callers use
// it to compute the length of host lists from the replica count, without
// building them.
func (d Domain) HostParts(job *batch.Job, task *batch.TaskSpec) (prefix, suffix string, indexed bool) {
	tail := "." + Subdomain(job, task) + d.Qualifier(job)
	if h := task.Template.Spec.Hostname; h != "" {
		return h + tail, "", false
	}
	return job.Name + "-" + task.Name + "-", tail, true
}

// HostsLen returns the total length, in bytes, of the strings Hosts(job,
// task, port) returns (no separators), computed from the names and the
// replica count.
func (d Domain) HostsLen(job *batch.Job, task *batch.TaskSpec, port int) int {
	n := int(task.Replicas)
	if n <= 0 {
		return 0
	}
	suffixLen := 0
	if port > 0 {
		suffixLen = 1 + len(strconv.Itoa(port))
	}
	prefix, suffix, indexed := d.HostParts(job, task)
	if !indexed {
		return n * (len(prefix) + suffixLen)
	}
	return n*(len(prefix)+len(suffix)+suffixLen) + IndexDigits(n)
}

// DistinctHosts returns the distinct DNS names of task's pods in index order:
// Hosts(job, task, 0), or the one name all replicas share when the template
// sets a hostname (as Volcano's svc plugin and in-tree mpi plugin list it).
func (d Domain) DistinctHosts(job *batch.Job, task *batch.TaskSpec) []string {
	if sharedHost(task) {
		return []string{d.Host(job, task, 0)}
	}
	return d.Hosts(job, task, 0)
}

// DistinctHostsLen is the total length of DistinctHosts(job, task) (no
// separators), computed from the names and the replica count.
func (d Domain) DistinctHostsLen(job *batch.Job, task *batch.TaskSpec) int {
	if sharedHost(task) {
		return len(d.Host(job, task, 0))
	}
	return d.HostsLen(job, task, 0)
}
