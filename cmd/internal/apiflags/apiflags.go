// Package apiflags holds the flags both managers share: it raises the API
// client rate limits and defines the one GPU rule (--gpu-resources) and the
// cluster domain (--cluster-domain).
//
// Volcano's managers default to --kube-api-qps=50 --kube-api-burst=100. Its
// pod admission makes three API reads per pod, so a 300-pod Job's pods queue
// behind the limiter until the API server's 10 s webhook timeout expires, the
// job controller retries, and the backlog never drains. The binaries change
// the defaults; a flag given on the command line still wins. Since v1.11
// Volcano's chart passes --kube-api-qps=50 --kube-api-burst=100 to the
// controller manager itself (its controller_kube_api_qps and _burst values),
// which would win over these defaults: installer/helm/volcano-values.yaml
// sets those values to QPS and Burst. The chart passes neither flag to the
// webhook manager, whose defaults these remain.
package apiflags

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
)

// GPUResources defines --gpu-resources on fs, the one GPU rule of both
// managers (jobs.MatchesGPU), and returns a function that applies the parsed
// value process-wide (jobs.SetGPUResources); call it after fs.Parse. The
// controller's plugins (mpi's slots and NVIDIA_VISIBLE_DEVICES) and the
// webhook's gang scheduling then agree on what a GPU is.
func GPUResources(fs *pflag.FlagSet) (apply func() []string) {
	patterns := fs.StringSlice("gpu-resources", jobs.DefaultGPUResources,
		"A container resource whose name contains one of these strings (case-insensitive) is a GPU: tasks of framework jobs that request one are gang-scheduled all-or-nothing, and the mpi plugin counts them as slots.")
	return func() []string {
		jobs.SetGPUResources(*patterns)
		return *patterns
	}
}

// ClusterDomain defines --cluster-domain on fs, the cluster's DNS domain (the
// kubelet's clusterDomain) in which the plugins name pods, and returns a
// function that applies the parsed value process-wide (jobs.SetClusterDomain);
// call it after fs.Parse. It returns an error naming the flag when the value
// is not a DNS name of at most jobs.MaxClusterDomainLength characters. The
// controller names hosts in it; the webhook measures the same hosts against
// its bounds.
func ClusterDomain(fs *pflag.FlagSet) (apply func() error) {
	domain := fs.String("cluster-domain", jobs.DefaultClusterDomain,
		"The cluster's DNS domain (the kubelet's clusterDomain). The framework plugins name pods <hostname>.<subdomain>.<namespace>.svc.<cluster domain>, so that a name cannot fall through the pods' DNS search path to another namespace's Service.")
	return func() error {
		if err := jobs.SetClusterDomain(*domain); err != nil {
			return fmt.Errorf("--cluster-domain=%q: %w", *domain, err)
		}
		return nil
	}
}

// Defaults of this project's managers: QPS (requests per second, sustained)
// and Burst (requests at once) of their Kubernetes clients.
const (
	QPS   = 500
	Burst = 1000
)

// SetDefaults makes QPS and Burst the defaults (value and help text) of the
// kube-api-qps and kube-api-burst flags already defined on fs. It must run
// before fs.Parse; it panics if a flag is missing (a build against another
// Volcano release).
func SetDefaults(fs *pflag.FlagSet) {
	for name, v := range map[string]string{"kube-api-qps": strconv.Itoa(QPS), "kube-api-burst": strconv.Itoa(Burst)} {
		f := fs.Lookup(name)
		if f == nil {
			panic("apiflags: no --" + name + " flag")
		}
		if err := f.Value.Set(v); err != nil {
			panic(err)
		}
		f.DefValue = v
	}
}
