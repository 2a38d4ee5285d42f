package bounds

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
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
