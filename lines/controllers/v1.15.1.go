//go:build !volcano_line

// Package controllers is the controller manager's wiring of one Volcano
// line: the Volcano controllers that line's own cmd/controller-manager links
// (their init registers them with Volcano's controller framework), and what
// its main does with them beyond app.Run. One file per line, chosen by build
// tag: this one, v1.15.1, is the default (no tag); another line's file is
// built with `-tags volcano_line,volcano_<line>` and that line's module file
// (lines/<line>.mod). lines/README.md says how to add a line.
package controllers

import (
	"flag"

	"github.com/spf13/pflag"
	// The REST client's request metrics, which v1.15's stock main registers
	// (v1.14's does not).
	_ "k8s.io/component-base/metrics/prometheus/restclient"

	_ "volcano.sh/volcano/pkg/controllers/colocationconfig"
	_ "volcano.sh/volcano/pkg/controllers/cronjob"
	"volcano.sh/volcano/pkg/controllers/framework"
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
const Volcano = "v1.15.1"

// AddFlags registers the flags of the controllers that define their own
// (framework.FlagProvider, since Volcano v1.15), as Volcano's main does after
// the server options' flags, and sets klog's stderr threshold as that main does.
func AddFlags(fs *pflag.FlagSet) {
	// As the line's stock main: klog's stderr threshold honoured with
	// -logtostderr (klog.InitFlags has run).
	_ = flag.Set("legacy_stderr_threshold_behavior", "false")
	_ = flag.Set("stderrthreshold", "INFO")
	framework.ForeachController(func(c framework.Controller) {
		if fp, ok := c.(framework.FlagProvider); ok {
			fp.AddFlags(fs)
		}
	})
}
