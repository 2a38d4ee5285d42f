//go:build volcano_line && volcano_v1.14.1

// The v1.14.1 line: Volcano v1.14.1 with Kubernetes libraries v0.34.1
// (lines/v1.14.1.mod).

package controllers

import (
	"github.com/spf13/pflag"

	_ "volcano.sh/volcano/pkg/controllers/colocationconfig"
	_ "volcano.sh/volcano/pkg/controllers/cronjob"
	_ "volcano.sh/volcano/pkg/controllers/garbagecollector"
	_ "volcano.sh/volcano/pkg/controllers/hypernode"
	_ "volcano.sh/volcano/pkg/controllers/job"
	_ "volcano.sh/volcano/pkg/controllers/jobflow"
	_ "volcano.sh/volcano/pkg/controllers/jobtemplate"
	_ "volcano.sh/volcano/pkg/controllers/podgroup"
	_ "volcano.sh/volcano/pkg/controllers/queue"
	_ "volcano.sh/volcano/pkg/controllers/sharding"
)

// Volcano is the Volcano release this line's managers are built from.
const Volcano = "v1.14.1"

// AddFlags does nothing: no controller of Volcano v1.14 defines flags of
// its own (framework.FlagProvider came in v1.15).
func AddFlags(*pflag.FlagSet) {}
