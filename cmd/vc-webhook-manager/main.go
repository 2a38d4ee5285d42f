// Command vc-webhook-manager is Volcano's webhook manager (of the line it is
// built for, v1.15.1 by default: the same flags and the same admissions,
// linked by package lines/admissions) with this
// project's framework job plugins (plugins.Frameworks) registered, so that
// Volcano's job validation accepts them (those it has no plugin for included), and with this
// project's job admissions (package webhook) served beside Volcano's. Volcano's
// job validation sees framework Jobs without their framework plugins, whose
// arguments ours judges alone (webhook.WithoutFrameworkPlugins). Unlike
// Volcano's, it follows a renewed serving certificate and CA without a
// restart (server.go), and its healthz listener (--enable-healthz) also
// serves the framework admissions' metrics at /metrics (docs/metrics.md).
// It is a
// drop-in replacement for Volcano's vc-webhook-manager image. docs/webhook.md
// describes the admissions, their webhook configurations and the flags.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"
	_ "go.uber.org/automaxprocs"
	"k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"

	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	"volcano.sh/volcano/pkg/kube"
	"volcano.sh/volcano/pkg/version"

	"github.com/vcplugins/framework-plugins/cmd/internal/apiflags"
	"github.com/vcplugins/framework-plugins/lines/admissions"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/webhook"
)

// defaultMaxInFlight bounds the admission requests served at once. The API
// server sends at most its own in-flight requests (400 plus 200 mutating by
// default) and a review of a Pod is some 10 KiB, so 256 leaves room for
// bursts of Volcano's pod admissions; the bound is for direct callers, who
// could otherwise hold any number of multi-MiB bodies at once.
const defaultMaxInFlight = 256

func main() {
	klog.InitFlags(nil)
	fs := pflag.CommandLine
	flushFreq := fs.Duration("log-flush-frequency", 5*time.Second, "Maximum number of seconds between log flushes")
	config := options.NewConfig()
	config.AddFlags(fs)
	admissions.AddFlags(fs)  // the line's own: --feature-gates on v1.15
	apiflags.SetDefaults(fs) // 500 QPS, burst 1000: large jobs stall at 50/100
	frameworks := fs.Bool("framework-admission", true,
		"Serve the framework job admissions ("+webhook.MutatePath+", "+webhook.ValidatePath+") in addition to --enabled-admission.")
	createConfigs := fs.Bool("create-framework-webhook-configurations", true,
		"Create the webhook configurations of the framework job admissions ("+webhook.ConfigurationName(webhook.MutatePath)+", "+
			webhook.ConfigurationName(webhook.ValidatePath)+"), or point existing ones at this manager, once every serving endpoint of the admission service serves them (an endpoint serves while ready, and while terminating until its preStop pause ends; during a rolling upgrade from Volcano's own manager, once the old pod has left). Without it they must be installed beforehand; the manager then only sets their CA bundle.")
	maxInFlight := fs.Int("max-requests-in-flight", defaultMaxInFlight,
		"The most admission requests served at once, on every path; one more is answered 429 Too Many Requests at once (the API server counts it as a failed call). 0 means no limit.")
	strictArguments := fs.Bool("strict-plugin-arguments", false,
		"Deny a tensorflow, pytorch or mpi job whose only problems are in its framework plugins' arguments, with the problems as the denial's message. Without it such a job is admitted as Volcano admits it, with the problems as warnings, and Volcano's in-tree plugin of the same name configures its pods. Strict mode is also on while the file of --admission-conf says "+webhook.StrictArgumentsKey+": true (read at each such job).")
	applyGPUResources := apiflags.GPUResources(fs)
	applyClusterDomain := apiflags.ClusterDomain(fs)
	cliflag.InitFlags()
	gpuResources := applyGPUResources()

	if config.PrintVersion {
		version.PrintVersionAndExit()
	}
	// The admission bounds measure hosts as the controller names them.
	if err := applyClusterDomain(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	klog.StartFlushDaemon(*flushFreq)
	defer klog.Flush()

	if err := config.CheckPortOrDie(); err != nil {
		klog.Fatalf("Configured port is invalid: %v", err)
	}
	if err := config.ParseCAFiles(nil); err != nil {
		klog.Fatalf("Failed to parse CA file: %v", err)
	}

	ctx := context.Background()
	// The serving certificate and the CA bundle follow their files (a
	// renewed Secret) without a restart; Volcano's manager reads them once.
	serving, err := webhook.NewServingTLS(baseTLS(), config.CertFile, config.KeyFile)
	if err != nil {
		klog.Fatalf("Loading the serving certificate: %v", err)
	}

	// Served on the healthz listener (--enable-healthz) by run.
	metrics.Register()

	// The admission port serves the admissions alone: not
	// http.DefaultServeMux, where imported packages register handlers of
	// their own (expvar's /debug/vars: the command line and memstats, and a
	// stop of the world per request, to any pod).
	mux := newAdmissionMux()

	// Volcano's job validation rejects plugin names its factory does not know;
	// registering ours there makes it accept mxnet (and use our builders).
	plugins.Register()

	if *frameworks {
		// Served beside Volcano's admissions on the mux its manager serves,
		// but not through its router: that would make the manager wait for
		// their configurations before it listens (see webhook.Keeper).
		opts := webhook.Options{GPUResources: gpuResources}
		if len(config.SchedulerNames) > 0 {
			// GPU jobs that name no scheduler get the first --scheduler-name,
			// as Volcano's own job mutation gives jobs.
			opts.SchedulerName = config.SchedulerNames[0]
		}
		webhook.SetStrictArguments(webhook.StrictArgumentsFrom(*strictArguments, config.ConfigPath))
		webhook.Handle(mux, opts)
		// Our validation judges the framework plugins' arguments; Volcano's
		// in-tree mpi parser misreads them and would deny beside it.
		if err := webhook.WrapVolcanoValidation(); err != nil {
			klog.Fatalf("Wrapping Volcano's job validation: %v", err)
		}
		config.EnabledAdmission = webhook.WithoutPaths(config.EnabledAdmission)
	}
	// Every Job Volcano's own job admissions see is held to the bounds
	// first: the process also answers Volcano's fail-closed Pod admissions.
	if err := webhook.BoundVolcanoAdmissions(); err != nil {
		klog.Fatalf("Bounding Volcano's job admissions: %v", err)
	}
	if *frameworks {
		keeper, err := newKeeper(config, *createConfigs)
		if err != nil {
			klog.Fatalf("%v", err)
		}
		if keeper.CA, err = caContent(ctx, config.CaCertFile); err != nil {
			klog.Fatalf("Loading the CA bundle: %v", err)
		}
		keeper.Others = volcanoConfigurations(config)
		go func() {
			if err := keeper.Run(ctx); err != nil {
				klog.ErrorS(err, "Framework admissions' webhook configurations")
			}
		}()
	}

	if err := run(ctx, config, serving, *maxInFlight, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// newKeeper returns the webhook.Keeper of the framework admissions'
// configurations: with create, it creates or repoints them once every endpoint
// of the admission service (or the --webhook-url) serves them; without, it
// sets the CA bundle of configurations an installer made.
func newKeeper(config *options.Config, create bool) (webhook.Keeper, error) {
	ep := webhook.Endpoint{
		URL:              config.WebhookURL,
		ServiceNamespace: config.WebhookNamespace,
		ServiceName:      config.WebhookName,
		CABundle:         config.CaCertData,
	}
	// Checked here as well as by EnsureConfigurations, so that the manager
	// fails at start rather than retrying.
	if err := ep.Check(); create && err != nil {
		return webhook.Keeper{}, fmt.Errorf("--create-framework-webhook-configurations: %w", err)
	}
	restConfig, err := kube.BuildConfig(config.KubeClientOptions)
	if err != nil {
		return webhook.Keeper{}, fmt.Errorf("unable to build k8s config: %v", err)
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return webhook.Keeper{}, fmt.Errorf("unable to build k8s client: %v", err)
	}
	return webhook.Keeper{Client: client, Create: create, Endpoint: ep}, nil
}

// newAdmissionMux returns the mux of the admission port: empty, for the
// admissions alone.
func newAdmissionMux() *http.ServeMux { return http.NewServeMux() }
