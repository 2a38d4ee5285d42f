package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"volcano.sh/apis/pkg/apis/scheduling/scheme"
	vcclient "volcano.sh/apis/pkg/client/clientset/versioned"
	vcinformers "volcano.sh/apis/pkg/client/informers/externalversions"
	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	"volcano.sh/volcano/pkg/kube"
	vcutil "volcano.sh/volcano/pkg/util"
	wkconfig "volcano.sh/volcano/pkg/webhooks/config"
	"volcano.sh/volcano/pkg/webhooks/router"

	"github.com/vcplugins/framework-plugins/lines/admissions"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
	"github.com/vcplugins/framework-plugins/pkg/tlsconfig"
	"github.com/vcplugins/framework-plugins/webhook"
)

// volcanoConfigurationPrefix starts the names of the webhook configurations
// of Volcano's admissions: the prefix, then the path with "/" as "-"
// (volcano-admission-service-jobs-mutate), as Volcano's chart names them.
const volcanoConfigurationPrefix = "volcano-admission-service"

// volcanoConfigurationWait bounds the wait for each of Volcano's
// configurations at start, as Volcano's manager waits.
const volcanoConfigurationWait = 5 * time.Minute

// baseTLS is the TLS configuration of Volcano's manager (v1.14.1 and v1.15.1) less its
// certificate (servingTLS supplies it).
func baseTLS() *tls.Config { return tlsconfig.Volcano() }

// volcanoConfigurations returns the names of the webhook configurations of
// the admissions Volcano's router serves under config.EnabledAdmission.
func volcanoConfigurations(config *options.Config) webhook.Configurations {
	var out webhook.Configurations
	_ = router.ForEachAdmission(config, func(s *router.AdmissionService) error {
		name := volcanoConfigurationPrefix + strings.ReplaceAll(s.Path, "/", "-")
		if s.MutatingConfig != nil {
			out.Mutating = append(out.Mutating, name)
		}
		if s.ValidatingConfig != nil {
			out.Validating = append(out.Validating, name)
		}
		return nil
	})
	return out
}

// run is Volcano's webhook-manager app.Run (v1.15.1) with one change: the
// HTTPS server's certificate follows --tls-cert-file and
// --tls-private-key-file (serving), where Volcano's loads them once. Volcano
// builds its server inside app.Run with no way to supply a certificate
// callback, so this function does what it does: healthz (with /metrics
// beside it, metrics.ServeHealthz), the component globals of the line
// (admissions.SetupGlobals), the queue informer and lister Volcano's job and
// queue admissions read (synced before the server listens), the admissions
// registered on mux with their clients and settings
// (admissions.Configure), each served as webhook.ServeVolcano serves it (the
// body capped, its structure bounded), the CA bundle
// set on their configurations (waiting up to 5 minutes for each), the
// admission configuration file watched, Volcano's server timeouts and more
// limits (webhook.NewServer: bodies read first, within a time and a budget,
// then at most maxInFlight requests at once), and on
// SIGTERM or SIGINT a graceful shutdown of at most --graceful-shutdown-time.
// It returns when the server stops.
func run(ctx context.Context, config *options.Config, serving *webhook.ServingTLS, maxInFlight int, mux *http.ServeMux) error {
	if config.EnableHealthz {
		// Healthz keeps Volcano's certificate loaded at start: the kubelet's
		// HTTPS probes do not verify it. It also serves the metrics
		// (Volcano's helpers.StartHealthz would not).
		if _, err := metrics.ServeHealthz(config.HealthzBindAddress, "volcano-admission", config.CaCertData, config.CertData, config.KeyData); err != nil {
			return err
		}
	}
	if config.WebhookURL == "" && config.WebhookNamespace == "" && config.WebhookName == "" {
		return fmt.Errorf("failed to start webhooks as both 'url' and 'namespace/name' of webhook are empty")
	}
	restConfig, err := kube.BuildConfig(config.KubeClientOptions)
	if err != nil {
		return fmt.Errorf("unable to build k8s config: %v", err)
	}
	if err := admissions.SetupGlobals(restConfig); err != nil {
		return fmt.Errorf("setting the component globals from the API server's version: %w", err)
	}
	admissionConf := wkconfig.LoadAdmissionConf(config.ConfigPath)
	if admissionConf == nil {
		klog.Errorf("loadAdmissionConf failed.")
	}
	kubeClient, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	vcClient, err := vcclient.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	// Volcano's job validation reads the Job's queue from this lister, and
	// its queue validation walks children by the parent index: both panic
	// or deny wrongly until it has synced.
	factory := vcinformers.NewSharedInformerFactory(vcClient, 0)
	queues := factory.Scheduling().V1beta1().Queues()
	queueInformer := queues.Informer()
	if err := queueInformer.AddIndexers(cache.Indexers{router.QueueParentIndexName: router.QueueParentIndexFunc}); err != nil {
		return fmt.Errorf("adding the queue parent index: %w", err)
	}
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&corev1.EventSinkImpl{Interface: kubeClient.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: vcutil.GenerateComponentName(config.SchedulerNames)})

	if err := router.ForEachAdmission(config, func(s *router.AdmissionService) error {
		if s.Config != nil {
			s.Config.VolcanoClient = vcClient
			s.Config.KubeClient = kubeClient
			s.Config.QueueLister = queues.Lister()
			s.Config.QueueInformer = queueInformer
			s.Config.SchedulerNames = config.SchedulerNames
			s.Config.Recorder = recorder
			s.Config.ConfigData = admissionConf
			admissions.Configure(s.Config, config)
		}
		mux.Handle(s.Path, webhook.ServeVolcano(s.Path, http.HandlerFunc(s.Handler)))
		return setVolcanoCABundle(ctx, kubeClient, s, config.CaCertData)
	}); err != nil {
		return err
	}

	stop, cancel := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	factory.Start(stop.Done())
	for informer, ok := range factory.WaitForCacheSync(stop.Done()) {
		if !ok {
			return fmt.Errorf("syncing the %v informer: stopped before it synced", informer)
		}
	}

	serving.Run(ctx)
	server := webhook.NewServer(config.ListenAddress+":"+strconv.Itoa(config.Port), serving.Config, maxInFlight, mux)
	served := make(chan error, 1)
	go func() { served <- server.ListenAndServeTLS("", "") }()

	if config.ConfigPath != "" {
		// Volcano's watcher stops when its channel is closed: on return.
		confStop := make(chan struct{})
		defer close(confStop)
		go wkconfig.WatchAdmissionConf(config.ConfigPath, confStop)
	}
	select {
	case <-stop.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), config.GracefulShutdownTime)
		defer cancel()
		if err := server.Shutdown(shutdown); err != nil {
			return fmt.Errorf("shutting the admission server down: %w", err)
		}
		return nil
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serving the admissions: %w", err)
	}
}

// setVolcanoCABundle sets caBundle on the configurations of one of
// Volcano's admissions, waiting for them to exist as Volcano's manager does.
func setVolcanoCABundle(ctx context.Context, client kubernetes.Interface, s *router.AdmissionService, caBundle []byte) error {
	var names webhook.Configurations
	name := volcanoConfigurationPrefix + strings.ReplaceAll(s.Path, "/", "-")
	if s.MutatingConfig != nil {
		names.Mutating = []string{name}
	}
	if s.ValidatingConfig != nil {
		names.Validating = []string{name}
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, volcanoConfigurationWait, true, func(ctx context.Context) (bool, error) {
		err := webhook.SetCABundleOn(ctx, client, caBundle, names)
		if apierrors.IsNotFound(err) {
			klog.ErrorS(err, "Waiting for the webhook configuration of a Volcano admission", "path", s.Path)
			return false, nil
		}
		return err == nil, err
	})
}

// caContent returns the CA file's content provider (dynamiccertificates,
// watched until ctx ends) as a function for webhook.Keeper.CA.
func caContent(ctx context.Context, file string) (func() []byte, error) {
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("ca-cert-file", file)
	if err != nil {
		return nil, err
	}
	go ca.Run(ctx, 1)
	return ca.CurrentCABundleContent, nil
}
