//go:build volcano_line && volcano_v1.14.1

// The v1.14.1 line: Volcano v1.14.1 with Kubernetes libraries v0.34.1
// (lines/v1.14.1.mod).

package admissions

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"volcano.sh/volcano/cmd/webhook-manager/app/options"
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
const Volcano = "v1.14.1"

// SetupGlobals does nothing: Volcano v1.14's app.Run sets no component
// globals from the cluster's version (SetupComponentGlobals came in v1.15).
func SetupGlobals(*rest.Config) error { return nil }

// Configure does nothing: Volcano v1.14's admissions have no settings
// beyond those every line sets (the queue settings came in v1.15).
func Configure(*router.AdmissionServiceConfig, *options.Config) {}

// AddFlags does nothing: Volcano v1.14.1's webhook-manager main adds no flag
// beyond options.Config.AddFlags (no --feature-gates) and keeps klog's
// legacy stderr threshold.
func AddFlags(*pflag.FlagSet) {}
