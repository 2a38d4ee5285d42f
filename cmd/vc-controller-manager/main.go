// Command vc-controller-manager is Volcano's controller manager (of the line it
// is built for, v1.15.1 by default: the same flags and the same controllers,
// linked by package lines/controllers) with this project's framework job plugins
// (plugins.Frameworks) registered, in place of Volcano's in-tree tensorflow,
// pytorch and mpi plugins. It is a drop-in
// replacement for Volcano's vc-controller-manager image. With --enable-healthz
// its healthz listener also serves this project's metrics at /metrics
// (docs/metrics.md).
package main

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/pflag"
	_ "go.uber.org/automaxprocs"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/server/routes"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseoptions "k8s.io/component-base/config/options"
	"k8s.io/klog/v2"

	"volcano.sh/volcano/cmd/controller-manager/app"
	"volcano.sh/volcano/cmd/controller-manager/app/options"
	"volcano.sh/volcano/pkg/controllers/framework"
	commonutil "volcano.sh/volcano/pkg/util"
	"volcano.sh/volcano/pkg/version"

	"github.com/vcplugins/framework-plugins/cmd/internal/apiflags"
	"github.com/vcplugins/framework-plugins/lines/controllers"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	// The podgroup-resync controller: syncs a Job whose PodGroup the job
	// controller missed leaving Pending (an informer relist).
	_ "github.com/vcplugins/framework-plugins/pkg/pgresync"
	// The wait-timeout controller: fails pods whose wait container timed out.
	_ "github.com/vcplugins/framework-plugins/pkg/waitwatch"
	"github.com/vcplugins/framework-plugins/plugins"
)

func main() {
	klog.InitFlags(nil)
	fs := pflag.CommandLine
	flushFreq := fs.Duration("log-flush-frequency", 5*time.Second, "Maximum number of seconds between log flushes")
	profiling := fs.Bool("profiling", false, "Serve Go's profiles at /debug/pprof on the healthz listener (--enable-healthz, --healthz-address), as kube-controller-manager's --profiling does on its port. Off by default: Volcano's default healthz address listens on every interface.")
	waitImage := fs.String("wait-image", wait.BuiltinImage, "Image of the init container the framework plugins add to wait for dependencies, unless a Job's plugin arguments name one (--wait-image).")

	opts := options.NewServerOption()
	opts.AddFlags(fs, controllerNames())
	controllers.AddFlags(fs)
	apiflags.SetDefaults(fs) // 500 QPS, burst 1000: large jobs stall at 50/100
	applyGPUResources := apiflags.GPUResources(fs)
	applyClusterDomain := apiflags.ClusterDomain(fs)
	utilfeature.DefaultMutableFeatureGate.AddFlag(fs)
	commonutil.LeaderElectionDefault(&opts.LeaderElection)
	opts.LeaderElection.ResourceName = "vc-controller-manager"
	componentbaseoptions.BindLeaderElectionFlags(&opts.LeaderElection, fs)
	cliflag.InitFlags()
	applyGPUResources()

	if opts.PrintVersion {
		version.PrintVersionAndExit()
	}
	if err := applyClusterDomain(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := opts.CheckOptionOrDie(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if opts.CaCertFile != "" && opts.CertFile != "" && opts.KeyFile != "" {
		if err := opts.ParseCAFiles(nil); err != nil {
			fmt.Fprintf(os.Stderr, "parsing CA files: %v\n", err)
			os.Exit(1)
		}
	}

	configurePlugins(*waitImage)

	klog.StartFlushDaemon(*flushFreq)
	defer klog.Flush()
	if err := serveHealthz(opts, *profiling); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := app.Run(opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// configurePlugins registers this project's plugins, replacing Volcano's in-tree
// tensorflow, pytorch and mpi builders (the factory is a map), before any
// controller runs.
func configurePlugins(waitImage string) {
	wait.SetDefaultImage(waitImage)
	plugins.Register()
}

// serveHealthz registers this project's metrics (pkg/metrics) and, with
// --enable-healthz, serves /healthz and /metrics on --healthz-address in
// place of Volcano's app.Run, whose healthz server has no metrics
// (metrics.ServeHealthz), and with profiling Go's profiles at /debug/pprof
// (k8s.io/apiserver's routes.Profiling, as Kubernetes' components serve
// them). It then clears opts.EnableHealthz, so that app.Run does not listen
// there too.
func serveHealthz(opts *options.ServerOption, profiling bool) error {
	metrics.Register()
	if !opts.EnableHealthz {
		return nil
	}
	var install []func(*mux.PathRecorderMux)
	if profiling {
		install = append(install, routes.Profiling{}.Install)
	}
	if _, err := metrics.ServeHealthz(opts.HealthzBindAddress, "volcano-controller", opts.CaCertData, opts.CertData, opts.KeyData, install...); err != nil {
		return err
	}
	opts.EnableHealthz = false
	return nil
}

// controllerNames lists the controllers linked in, for --controllers.
func controllerNames() []string {
	var names []string
	framework.ForeachController(func(c framework.Controller) { names = append(names, c.Name()) })
	sort.Strings(names)
	return names
}
