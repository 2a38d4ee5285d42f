package e2e

import (
	"context"
	"net/http"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
)

// scrape fetches url's metrics and returns them by family name
// (localcluster.ScrapeMetrics).
func scrape(ctx context.Context, client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	return localcluster.ScrapeMetrics(ctx, client, url)
}

// metricsEndpoints returns a client for the local cluster's managers' healthz
// listeners and the URLs of their metrics (localcluster.Cluster.MetricsEndpoints).
func metricsEndpoints(cl *localcluster.Cluster) (client *http.Client, webhookURL, controllerURL string) {
	client, webhookURL, controllerURL, err := cl.MetricsEndpoints()
	Expect(err).NotTo(HaveOccurred())
	return client, webhookURL, controllerURL
}

// slower counts the observations of the histogram family name over le
// seconds (the count less the bucket of upper bound le, which must be one of
// its buckets), over all its series.
func slower(families map[string]*dto.MetricFamily, name string, le float64) uint64 {
	var n uint64
	for _, m := range families[name].GetMetric() {
		h := m.GetHistogram()
		within := uint64(0)
		found := false
		for _, b := range h.GetBucket() {
			if b.GetUpperBound() == le {
				within, found = b.GetCumulativeCount(), true
			}
		}
		Expect(found).To(BeTrue(), "%s has a bucket of %v s", name, le)
		n += h.GetSampleCount() - within
	}
	return n
}

// sum adds the values of the family's counters whose labels include want
// (localcluster.CounterSum).
func sum(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	return localcluster.CounterSum(families, name, want)
}

var _ = Describe("The managers' metrics", func() {
	f := framework.New("metrics")

	It("count an allowed tensorflow Job and a denied mxnet Job in the webhook manager and the plan build in the controller manager",
		func(ctx SpecContext) {
			tc := framework.Cluster()
			if tc.Local == nil {
				Skip("KUBECONFIG cluster: the managers' healthz addresses are not known to the suite")
			}
			client, webhookURL, controllerURL := metricsEndpoints(tc.Local)

			admissions := metrics.Prefix + "admission_requests_total"
			builds := metrics.Prefix + "plan_builds_total"
			allowed := map[string]string{"path": webhook.ValidatePath, "framework": "tensorflow", "result": metrics.ResultAllowed}
			// Volcano's admission accepts any tensorflow arguments, and ours
			// then warns: the denied Job is an mxnet one (no in-tree plugin).
			denied := map[string]string{"path": webhook.ValidatePath, "framework": "mxnet", "result": metrics.ResultDenied, "reason": metrics.ReasonArguments}
			built := map[string]string{"framework": "tensorflow", "result": metrics.PlanValid}

			By("scraping both managers before")
			before, err := scrape(ctx, client, webhookURL)
			Expect(err).NotTo(HaveOccurred())
			beforeCM, err := scrape(ctx, client, controllerURL)
			Expect(err).NotTo(HaveOccurred())

			By("creating a valid tensorflow Job and a denied mxnet Job")
			job := f.CreateJob(ctx, framework.LoadJob(filepath.Join(testdata, "tf-only.yaml")))
			bad := framework.LoadJob(filepath.Join(testdata, "mxnet-only.yaml"))
			bad.Name = "bad-mxnet"
			bad.Spec.Plugins["mxnet"] = []string{"--no-such-flag"}
			_, err = f.TryCreateJob(ctx, bad)
			Expect(err).To(HaveOccurred(), "creating Job %s with an unknown mxnet flag", bad.Name)

			By("scraping the webhook manager: one more allowed and one more denied (arguments)")
			after, err := scrape(ctx, client, webhookURL)
			Expect(err).NotTo(HaveOccurred())
			Expect(sum(after, admissions, allowed)-sum(before, admissions, allowed)).To(BeNumerically(">=", 1), "%s%v", admissions, allowed)
			Expect(sum(after, admissions, denied)-sum(before, admissions, denied)).To(BeNumerically(">=", 1), "%s%v", admissions, denied)
			Expect(after).To(HaveKey(metrics.Prefix+"admission_duration_seconds"), "the admission latency histogram")

			By("scraping the controller manager until it has built the plan of " + job.Name)
			framework.Eventually(ctx, func(ctx context.Context) (float64, error) {
				now, err := scrape(ctx, client, controllerURL)
				if err != nil {
					return 0, err
				}
				return sum(now, builds, built) - sum(beforeCM, builds, built), nil
			}, framework.ObjectCreatedTimeout).Should(BeNumerically(">=", 1), "%s%v", builds, built)
		}, SpecTimeout(framework.SpecTimeout))
})
