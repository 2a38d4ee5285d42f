package bounds

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// The keys of the svc plugin's ConfigMap data and variables
// (volcano.sh/volcano pkg/controllers/job/plugins/svc, v1.10 to v1.15.1;
// TestSvcKeys compares): written here, as importing the plugin's package
// would link Volcano's scheduler into the packages that only describe Jobs.
const (
	SvcTaskHostFmt    = "%s.host"
	SvcEnvTaskHostFmt = "VC_%s_HOSTS"
	SvcEnvHostNumFmt  = "VC_%s_NUM"
)

// SvcSizes returns the length of every value of the map svc.GenerateHosts
// returns (the svc plugin's ConfigMap data, which its VC_ variables read by
// reference; the same in Volcano v1.10.0 to v1.15.1),
// under the same keys, computed from the names and replica counts: per task,
// "<task>.host" (hosts joined by newlines), "VC_<TASK>_HOSTS" (joined by
// commas) and "VC_<TASK>_NUM", with "-" in task names turned into "_"; a later
// task replaces an earlier one's keys, as in the map GenerateHosts fills. A
// task whose template sets a hostname lists one host.
func SvcSizes(job *batch.Job) map[string]int {
	sizes := make(map[string]int, 3*len(job.Spec.Tasks))
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		n := jobs.DistinctHostCount(t)
		// Volcano's hosts are <hostname>.<subdomain>: ours less the qualifier.
		joined := jobs.DistinctHostsLen(job, t) - n*len(jobs.Domain("").Qualifier(job)) + max(n-1, 0)
		key := strings.ReplaceAll(t.Name, "-", "_")
		sizes[fmt.Sprintf(SvcTaskHostFmt, key)] = joined
		sizes[fmt.Sprintf(SvcEnvTaskHostFmt, strings.ToUpper(key))] = joined
		sizes[fmt.Sprintf(SvcEnvHostNumFmt, strings.ToUpper(key))] = len(strconv.Itoa(n))
	}
	return sizes
}

// SvcHostsEnvDropped reports whether the svc plugin's variable key
// (VC_<TASK>_HOSTS, the value valueLen bytes) is one no pod gets: its
// environment string would be over MaxArgStrlen, so that no container given
// it could start (execve fails with E2BIG). pkg/guard leaves such a variable
// out of the pods and its key out of the ConfigMap <job>-svc (Volcano v1.16's
// svc --inject-hosts-env=false leaves out all of them); the <task>.host key
// keeps the hosts. Other keys are never dropped.
func SvcHostsEnvDropped(key string, valueLen int) bool {
	return strings.HasPrefix(key, "VC_") && strings.HasSuffix(key, "_HOSTS") && EnvBytes(key, valueLen) > MaxArgStrlen
}

// SvcConfigMapBytes returns the bytes of the values of the svc plugin's
// ConfigMap <job>-svc as the guarded svc plugin writes it: every value of
// SvcSizes but those of the dropped VC_<TASK>_HOSTS keys
// (SvcHostsEnvDropped). The API server refuses a ConfigMap whose values pass
// 1 MiB together (its validation counts values, not keys).
func SvcConfigMapBytes(job *batch.Job) int {
	total := 0
	for k, n := range SvcSizes(job) {
		if !SvcHostsEnvDropped(k, n) {
			total += n
		}
	}
	return total
}

// The pod's parts for the svc plugin's host files written as ranges
// (SvcHostsAsRanges; pkg/guard's ExpandHostsInPod adds them).
const (
	// SvcHostsContainerName is the init container, first of the pod's, that
	// writes the <task>.host files into svc.ConfigMapMountPath
	// (/etc/volcano) from their ranges.
	SvcHostsContainerName = "svc-hosts"
	// SvcHostsVolumeName is the emptyDir it writes them into, mounted where
	// Volcano's svc mounts its ConfigMap.
	SvcHostsVolumeName = "svc-hosts"
	// SvcRangesDir is where the init container alone mounts the ConfigMap's
	// <task>.host keys (the ranges).
	SvcRangesDir = "/etc/volcano-ranges"
)

// SvcHostsAsRanges reports whether the guarded svc plugin writes the
// <task>.host values of its ConfigMap <job>-svc as ranges
// (SvcHostRanges): the ConfigMap as Volcano's svc fills it would pass the
// 1 MiB a ConfigMap holds (SvcConfigMapBytes; some 10,000 to 26,000 hosts,
// by the names' length). Each pod then gets the host files from an init
// container (pkg/guard: ExpandHostsInPod).
func SvcHostsAsRanges(job *batch.Job) bool {
	return SvcConfigMapBytes(job) > v1.MaxSecretSize
}

// SvcHostRanges returns, by key of the svc plugin's ConfigMap
// ("<task>.host", "-" in task names turned into "_"; a later task replaces
// an earlier one's key, as in Volcano's svc.GenerateHosts), the task's
// hosts <hostname>.<subdomain> as ranges: wait.ExpandRanges of them is the
// value Volcano's svc writes under that key, each line ending in a newline
// (Volcano's value has none after its last line). A task of no replicas has
// no ranges; a task whose template sets a hostname has one host.
func SvcHostRanges(job *batch.Job) map[string][]wait.Range {
	out := make(map[string][]wait.Range, len(job.Spec.Tasks))
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		key := fmt.Sprintf(SvcTaskHostFmt, strings.ReplaceAll(t.Name, "-", "_"))
		n := jobs.DistinctHostCount(t)
		if n == 0 {
			out[key] = nil
			continue
		}
		// Volcano's hosts are ours less the qualifier (.<namespace>.svc...).
		prefix, suffix, indexed := jobs.HostParts(job, t)
		q := jobs.Domain("").Qualifier(job)
		if indexed {
			out[key] = []wait.Range{{Prefix: prefix, Suffix: strings.TrimSuffix(suffix, q), Count: n, Indexed: true}}
		} else {
			out[key] = []wait.Range{{Prefix: strings.TrimSuffix(prefix, q), Suffix: suffix, Count: 1}}
		}
	}
	return out
}

// SvcRangesConfigMapBytes returns the bytes of the values of the ConfigMap
// <job>-svc as the guarded svc writes it with ranges (SvcHostsAsRanges):
// SvcConfigMapBytes with each <task>.host value replaced by its ranges
// (wait.RangesFile of SvcHostRanges).
func SvcRangesConfigMapBytes(job *batch.Job) int {
	ranges := SvcHostRanges(job)
	total := 0
	for k, n := range SvcSizes(job) {
		if r, ok := ranges[k]; ok {
			n = len(wait.RangesFile(r))
		}
		if !SvcHostsEnvDropped(k, n) {
			total += n
		}
	}
	return total
}
