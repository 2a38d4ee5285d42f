//go:build !volcano_line

// Package admissions is the webhook manager's wiring of one Volcano line:
// the admission packages that line's own cmd/webhook-manager links (their
// init registers their paths with Volcano's router), and the settings its
// app.Run gives them and the process beyond what every line shares
// (cmd/vc-webhook-manager). One file per line, chosen by build tag, as in
// package controllers; this one, v1.15.1, is the default.
package admissions

import (
	"flag"

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"

	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	_ "volcano.sh/volcano/pkg/features"
	commonutil "volcano.sh/volcano/pkg/util"
	_ "volcano.sh/volcano/pkg/webhooks/admission/cronjobs/validate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/hypernodes/validate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/jobflows/validate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/jobs/mutate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/jobs/validate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/podgroups/mutate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/podgroups/validate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/pods/mutate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/pods/validate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/queues/mutate"
	_ "volcano.sh/volcano/pkg/webhooks/admission/queues/validate"
	"volcano.sh/volcano/pkg/webhooks/router"
)

// Volcano is the Volcano release this line's managers are built from.
const Volcano = "v1.15.1"

// SetupGlobals aligns the default feature gates with the connected
// cluster's Kubernetes version (Volcano v1.15's app.Run does it first). It
// returns the error of reading the server's version.
func SetupGlobals(config *rest.Config) error {
	return commonutil.SetupComponentGlobals(config)
}

// Configure gives one admission's configuration the settings of this
// line's flags beyond the clients, queue lister and informer, recorder and
// admission configuration that every line sets: the three queue settings
// of Volcano v1.15 (--enable-queue-allocated-pods-check, --max-queue-depth,
// --enable-root-queue-protection).
func Configure(c *router.AdmissionServiceConfig, config *options.Config) {
	c.EnableQueueAllocatedPodsCheck = config.EnableQueueAllocatedPodsCheck
	c.MaxQueueDepth = config.MaxQueueDepth
	c.EnableRootQueueProtection = config.EnableRootQueueProtection
}

// AddFlags does what the line's stock main (cmd/webhook-manager/main.go)
// does to the flags beyond options.Config.AddFlags: klog's stderr threshold
// honoured with -logtostderr (legacy_stderr_threshold_behavior false,
// stderrthreshold INFO; klog.InitFlags must have run), and --feature-gates
// (Volcano's chart passes it with custom.admission_feature_gates).
func AddFlags(fs *pflag.FlagSet) {
	_ = flag.Set("legacy_stderr_threshold_behavior", "false")
	_ = flag.Set("stderrthreshold", "INFO")
	utilfeature.DefaultMutableFeatureGate.AddFlag(fs)
}
