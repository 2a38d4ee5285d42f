package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcbatch "volcano.sh/apis/pkg/client/clientset/versioned/typed/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/hack/internal/measure"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// Named timeouts and periods of a run.
const (
	// sweepTimeout bounds the first create call to every pod bound.
	sweepTimeout = 10 * time.Minute
	// progressEvery is how often progress is printed while the jobs start.
	progressEvery = 5 * time.Second
)

// admissionHistogram is the framework admissions' latency histogram of the
// webhook manager (pkg/metrics.AdmissionDuration: both paths, mutate and
// validate, every result).
const admissionHistogram = metrics.Prefix + "admission_duration_seconds"

// Measurement is what one sweep (many small jobs created at once on a fresh
// cluster) cost one controller manager. Durations are wall-clock from the
// first create call; CPU is user plus system time of the
// vc-controller-manager process.
type Measurement struct {
	Impl  string `json:"impl"`
	Round int    `json:"round"`
	// Mix names the mix (plan); Frameworks are its frameworks, whose jobs
	// take turns in the order of creation.
	Mix        string   `json:"mix"`
	Frameworks []string `json:"frameworks"`
	Jobs       int      `json:"jobs"`
	Pods       int      `json:"pods"`
	// Submitted is when the last create call returned.
	Submitted time.Duration `json:"submitted"`
	// Created is when the last pod of the jobs was seen created.
	Created time.Duration `json:"created"`
	// Bound is when every pod of every job was seen created and bound to a
	// node: the sweep's time. BoundOf is the same for the pods of each
	// framework's jobs.
	Bound   time.Duration            `json:"bound"`
	BoundOf map[string]time.Duration `json:"boundOf"`
	// CPUToBound is the controller's CPU time from the first create call to
	// Bound; CPUTotal until it was idle again (less than measure.QuietCPU in
	// measure.QuietWindow) after Bound.
	CPUToBound time.Duration `json:"cpuToBound"`
	CPUTotal   time.Duration `json:"cpuTotal"`
	// Admissions is the number of framework admission requests (mutate and
	// validate of a Job) the webhook manager answered from the first create
	// call until the controller was idle; AdmissionP50 and AdmissionP99 are
	// quantiles of their latency in seconds, estimated from its histogram as
	// histogram_quantile does (measure.Histogram.Quantile).
	Admissions   int     `json:"admissions"`
	AdmissionP50 float64 `json:"admissionP50Seconds"`
	AdmissionP99 float64 `json:"admissionP99Seconds"`
	// Requests counts the controller manager's API requests received from
	// the first create call until it was idle and had sent no request for
	// auditQuiet, from kube-apiserver's audit log, by requestKey ("create
	// pods", "update jobs.batch.volcano.sh/status").
	Requests map[string]int `json:"requests"`
	// Plugin counts our controller manager's framework plugins' work over
	// the same interval, from its own metrics (pkg/metrics), by name
	// ("plan builds", "plan cache hits", "ConfigMap syncs"); nil for stock,
	// which serves no metrics.
	Plugin map[string]float64 `json:"plugin,omitempty"`
	// AuditErrors is the audit events kube-apiserver failed to write over
	// the same interval (apiserver_audit_error_total); when not 0, Requests
	// misses requests.
	AuditErrors float64 `json:"auditErrors"`
}

// sweeper runs one sweep on one cluster.
type sweeper struct {
	cl *measure.Cluster
	// agent is the controller manager's user agent product: its binary's name.
	agent string
	// auditDir holds kube-apiserver's audit log (auditArgs).
	auditDir string
	// parallel is the number of create calls in flight.
	parallel int
	// ours is set when the controller manager is ours: it serves the
	// plugins' metrics (Measurement.Plugin).
	ours bool
	// profile, when set, is the path prefix of the controller manager's CPU
	// profile pieces (Cluster.StartCPUProfile); it then runs with
	// measure.ProfileArgs.
	profile string
}

// run creates jobs, parallel at a time, waits until all their pods are
// created and bound, then until the controller manager is idle, and returns
// the measurement (Impl, Round, Mix and Frameworks unset). It returns an
// error if a create call fails, sweepTimeout passes first, a metrics scrape
// or the audit log fails, or ctx ends.
func (s *sweeper) run(ctx context.Context, jobs []*batch.Job) (Measurement, error) {
	res := Measurement{Jobs: len(jobs), BoundOf: map[string]time.Duration{}}
	frameworkOf := map[string]string{} // by job name
	podsOf := map[string]int{}         // by framework
	for _, job := range jobs {
		fw := jobFramework(job)
		frameworkOf[job.Name] = fw
		for _, t := range job.Spec.Tasks {
			podsOf[fw] += int(t.Replicas)
			res.Pods += int(t.Replicas)
		}
	}
	controller := s.cl.PIDs[localcluster.ControllerManager]

	if _, err := measure.WaitIdle(ctx, s.cl.AllPIDs(), measure.ClusterQuietCPU); err != nil {
		return res, err
	}
	metricsClient, webhookURL, controllerURL, err := s.cl.MetricsEndpoints()
	if err != nil {
		return res, err
	}
	apiClient, err := rest.HTTPClientFor(s.cl.RESTConfig)
	if err != nil {
		return res, err
	}
	apiURL := s.cl.Server + metrics.Path
	webhook0, err := localcluster.ScrapeMetrics(ctx, metricsClient, webhookURL)
	if err != nil {
		return res, fmt.Errorf("the webhook manager's metrics: %w", err)
	}
	api0, err := localcluster.ScrapeMetrics(ctx, apiClient, apiURL)
	if err != nil {
		return res, fmt.Errorf("kube-apiserver's metrics: %w", err)
	}
	var controller0 map[string]*dto.MetricFamily
	if s.ours {
		if controller0, err = localcluster.ScrapeMetrics(ctx, metricsClient, controllerURL); err != nil {
			return res, fmt.Errorf("the controller manager's metrics: %w", err)
		}
	}

	// Every pod a Volcano Job creates has its job's name as a label; the
	// watch starts before the first create, so every pod's creation is seen.
	w, existing, err := kubeutil.WatchPods(ctx, s.cl.Kube.CoreV1().Pods(metav1.NamespaceDefault), batch.JobNameKey)
	if err != nil {
		return res, err
	}
	defer w.Stop()
	if existing > 0 {
		return res, fmt.Errorf("namespace %s already has %d pods of Volcano jobs", metav1.NamespaceDefault, existing)
	}

	cpu0, err := measure.ProcessCPU(controller)
	if err != nil {
		return res, err
	}
	stopProfile, err := s.cl.StartCPUProfile(ctx, s.profile)
	if err != nil {
		return res, err
	}
	defer stopProfile() // when run fails; a second call is harmless
	t0 := time.Now()
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var submitted atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- submit(subCtx, s.cl.Volcano.BatchV1alpha1().Jobs(metav1.NamespaceDefault), jobs, s.parallel, &submitted)
	}()

	pods := measure.NewPodTally()
	boundOf := map[string]int{}
	deadline := time.NewTimer(sweepTimeout)
	defer deadline.Stop()
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	for done != nil || pods.Bound() < res.Pods {
		select {
		case err := <-done:
			if err != nil {
				return res, err
			}
			res.Submitted, done = time.Since(t0), nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return res, errors.New("pod watch ended")
			}
			p, created, bound := pods.Observe(ev)
			if p == nil {
				continue
			}
			if created && pods.Created() == res.Pods {
				res.Created = time.Since(t0)
			}
			if bound {
				fw := frameworkOf[p.Labels[batch.JobNameKey]]
				if boundOf[fw]++; boundOf[fw] == podsOf[fw] {
					res.BoundOf[fw] = time.Since(t0)
				}
			}
		case <-progress.C:
			fmt.Printf("    %5.1fs  %d/%d jobs created, %d/%d pods created, %d bound\n",
				time.Since(t0).Seconds(), submitted.Load(), len(jobs), pods.Created(), res.Pods, pods.Bound())
		case <-deadline.C:
			return res, fmt.Errorf("after %s only %d of %d jobs, %d of %d pods created and %d bound",
				sweepTimeout, submitted.Load(), len(jobs), pods.Created(), res.Pods, pods.Bound())
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	res.Bound = time.Since(t0)
	cpu1, err := measure.ProcessCPU(controller)
	if err != nil {
		return res, err
	}
	res.CPUToBound = cpu1 - cpu0
	fmt.Printf("    %5.1fs  all %d pods of %d jobs created (%.1fs) and bound; waiting for the controller to go idle\n",
		res.Bound.Seconds(), res.Pods, len(jobs), res.Created.Seconds())

	cpu2, err := measure.WaitIdle(ctx, []int{controller}, measure.QuietCPU)
	if err != nil {
		return res, err
	}
	res.CPUTotal = cpu2 - cpu0
	if err := stopProfile(); err != nil {
		return res, fmt.Errorf("the controller manager's CPU profile: %w", err)
	}
	if err := waitAuditQuiet(ctx, s.auditDir, s.agent, auditQuiet, auditPoll, auditQuietTimeout); err != nil {
		return res, err
	}
	t1 := time.Now()
	fmt.Printf("    %5.1fs  the controller idle, and no API request of it for %s\n", t1.Sub(t0).Seconds(), auditQuiet)

	webhook1, err := localcluster.ScrapeMetrics(ctx, metricsClient, webhookURL)
	if err != nil {
		return res, fmt.Errorf("the webhook manager's metrics: %w", err)
	}
	if err := admissionLatency(webhook0, webhook1, &res); err != nil {
		return res, err
	}
	api1, err := localcluster.ScrapeMetrics(ctx, apiClient, apiURL)
	if err != nil {
		return res, fmt.Errorf("kube-apiserver's metrics: %w", err)
	}
	res.AuditErrors = localcluster.CounterSum(api1, auditErrorMetric, nil) - localcluster.CounterSum(api0, auditErrorMetric, nil)
	if s.ours {
		controller1, err := localcluster.ScrapeMetrics(ctx, metricsClient, controllerURL)
		if err != nil {
			return res, fmt.Errorf("the controller manager's metrics: %w", err)
		}
		res.Plugin = map[string]float64{}
		for name, family := range pluginCounters {
			res.Plugin[name] = localcluster.CounterSum(controller1, family, nil) - localcluster.CounterSum(controller0, family, nil)
		}
	}
	files, err := auditLogs(s.auditDir)
	if err != nil {
		return res, err
	}
	res.Requests = map[string]int{}
	if err := countAuditFiles(files, s.agent, t0, t1, res.Requests); err != nil {
		return res, fmt.Errorf("reading the audit log: %w", err)
	}
	if len(res.Requests) == 0 {
		return res, fmt.Errorf("the audit log (%v) holds no request of %s", files, s.agent)
	}
	return res, nil
}

// pluginCounters are the counters of our controller manager's plugin work
// that Measurement.Plugin reports, by the name it reports them under.
var pluginCounters = map[string]string{
	"plan builds":     metrics.Prefix + "plan_builds_total",
	"plan cache hits": metrics.Prefix + "plan_cache_hits_total",
	"ConfigMap syncs": metrics.Prefix + "configmap_syncs_total",
}

// auditErrorMetric counts the audit events kube-apiserver failed to write,
// by audit backend plugin.
const auditErrorMetric = "apiserver_audit_error_total"

// admissionLatency sets res's Admissions, AdmissionP50 and AdmissionP99 from
// the webhook manager's admission histogram scraped before and after the
// sweep. It returns an error if the histogram's buckets changed or it is
// not a histogram.
func admissionLatency(before, after map[string]*dto.MetricFamily, res *Measurement) error {
	h0, err := measure.MergedHistogram(before, admissionHistogram)
	if err != nil {
		return err
	}
	h1, err := measure.MergedHistogram(after, admissionHistogram)
	if err != nil {
		return err
	}
	d, err := h1.Sub(h0)
	if err != nil {
		return fmt.Errorf("%s: %w", admissionHistogram, err)
	}
	res.Admissions = int(d.Count)
	res.AdmissionP50, res.AdmissionP99 = d.Quantile(0.5), d.Quantile(0.99)
	return nil
}

// jobFramework returns the framework of a sweep's job: the plugin of its
// plugins stanza that has a shape (a framework plugin, not svc or ssh).
func jobFramework(job *batch.Job) string {
	for name := range job.Spec.Plugins {
		if _, ok := shape(name); ok {
			return name
		}
	}
	return ""
}

// submit creates jobs through api, parallel calls at a time, and adds one
// to submitted for each job created. It returns the first create call's
// error (and then makes no more), or ctx's.
func submit(ctx context.Context, api vcbatch.JobInterface, jobs []*batch.Job, parallel int, submitted *atomic.Int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan *batch.Job)
	workers := max(1, min(parallel, len(jobs)))
	// Each worker sends at most one error, then stops.
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				if _, err := api.Create(ctx, job, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating job %s: %w", job.Name, err)
					cancel()
					return
				}
				submitted.Add(1)
			}
		}()
	}
feed:
	for _, job := range jobs {
		select {
		case next <- job:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}
