// Package apiflags raises the API client rate limits of both managers.
//
// Volcano's managers default to --kube-api-qps=50 --kube-api-burst=100. Its
// pod admission makes three API reads per pod, so a 300-pod Job's pods queue
// behind the limiter until the API server's 10 s webhook timeout expires, the
// job controller retries, and the backlog never drains. Volcano's chart
// (1.10.0) has no value for these flags, so the images change the defaults;
// a flag given on the command line still wins.
package apiflags

import (
	"strconv"

	"github.com/spf13/pflag"
)

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
