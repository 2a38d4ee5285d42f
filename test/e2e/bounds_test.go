package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/webhooktest"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

const (
	// boundsAnswerTimeout bounds the API server's answer to one of the Jobs
	// over the bounds, up to 3 MiB each. Most of it is the API server's own
	// work on such an object (decoding, schema, managed fields: a Job of
	// 196,000 plugins took it over 10 s in one run on the 2-core CI
	// machine); the webhook manager's part is bounded by
	// boundsAdmissionSeconds.
	boundsAnswerTimeout = 60 * time.Second
	// boundsAdmissionSeconds bounds each of our admissions' own answer
	// (framework_plugins_admission_duration_seconds, a bucket's upper
	// bound) to these Jobs, decoding the review included.
	boundsAdmissionSeconds = 0.6103515625
	// boundsPeakGrowth bounds how much the peak RSS of vc-webhook-manager
	// (VmHWM) may grow while it answers them all, one at a time. Before the
	// bounds, four such Jobs took it from 86 MiB to 2.5 GB.
	boundsPeakGrowth = 100 << 20
	// volcanoReviewCap is Volcano v1.15's cap on a review's body
	// (router.MaxRequestBody), which the webhook manager also applies on
	// every line; reviewOverhead is at most what a review adds to the Job's
	// JSON (its request's metadata, the user's name and groups).
	volcanoReviewCap = 3 << 20
	reviewOverhead   = 16 << 10
)

// The reviewers' Jobs, grown to what the API server accepts (3 MiB), through
// the real kube-apiserver with server-side dry runs (nothing stored): each is
// denied quickly, by our validation and Volcano's, and vc-webhook-manager,
// which also answers Volcano's other fail-closed admissions (and its Pod
// admissions where they are enabled), stays small.
var _ = Describe("Jobs over the bounds through the real kube-apiserver", Serial, func() {
	f := framework.New("bounds")

	It("are denied naming the bound, each of our admissions answers within 0.61 s, and the webhook manager's peak memory barely grows", func(ctx SpecContext) {
		tc := framework.Cluster()
		pid := 0
		if tc.Local != nil {
			raw, err := os.ReadFile(filepath.Join(tc.Local.RootDir, "pids", localcluster.WebhookManager+".pid"))
			Expect(err).NotTo(HaveOccurred())
			pid, err = strconv.Atoi(strings.TrimSpace(string(raw)))
			Expect(err).NotTo(HaveOccurred())
		}
		var metricsBefore map[string]*dto.MetricFamily
		var client *http.Client
		var webhookURL string
		if tc.Local != nil {
			var err error
			client, webhookURL, _ = metricsEndpoints(tc.Local)
			metricsBefore, err = scrape(ctx, client, webhookURL)
			Expect(err).NotTo(HaveOccurred())
		}
		before := peakRSS(pid)
		for _, tc := range webhooktest.BoundsCases(f.Namespace) {
			By(fmt.Sprintf("%s: %d bytes", tc.Name, len(tc.JSON)))
			reqCtx, cancel := context.WithTimeout(ctx, boundsAnswerTimeout)
			start := time.Now()
			err := f.Volcano.BatchV1alpha1().RESTClient().Post().Namespace(f.Namespace).Resource("jobs").
				Param("dryRun", metav1.DryRunAll).SetHeader("Content-Type", "application/json").
				Body(tc.JSON).Do(reqCtx).Error()
			elapsed := time.Since(start)
			cancel()
			GinkgoWriter.Printf("%s: answered in %v: %.200v\n", tc.Name, elapsed, err)
			Expect(err).To(HaveOccurred(), "%s was admitted", tc.Name)
			if strings.Contains(err.Error(), "status code 413") {
				// Volcano v1.15's router caps a review at 3 MiB, as stock
				// does: a Job near the API server's own 3 MiB limit makes a
				// review over it, which Volcano's admission answers 413, and
				// the API server refuses the Job as a failed call
				// (failurePolicy Fail). Only such a Job may get that answer.
				Expect(len(tc.JSON)).To(BeNumerically(">", volcanoReviewCap-reviewOverhead),
					"%s: a Job of %d bytes got Volcano's body cap: %v", tc.Name, len(tc.JSON), err)
				continue
			}
			Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)).To(BeTrue(),
				"%s: the answer is a clean denial, not a failed call: %v", tc.Name, err)
			if !tc.Within {
				// Within the bounds, Volcano's own validation may deny first
				// for its own reasons (missing dependsOn tasks).
				Expect(err.Error()).To(ContainSubstring(tc.Want), tc.Name)
			}
		}
		if tc.Local != nil {
			metricsAfter, err := scrape(ctx, client, webhookURL)
			Expect(err).NotTo(HaveOccurred())
			name := metrics.Prefix + "admission_duration_seconds"
			Expect(slower(metricsAfter, name, boundsAdmissionSeconds)-slower(metricsBefore, name, boundsAdmissionSeconds)).To(BeZero(),
				"our admissions' answers over %v s", boundsAdmissionSeconds)
		}
		if pid != 0 {
			after := peakRSS(pid)
			GinkgoWriter.Printf("vc-webhook-manager peak RSS: %d MiB before, %d MiB after\n", before>>20, after>>20)
			Expect(after-before).To(BeNumerically("<=", boundsPeakGrowth), "growth of vc-webhook-manager's peak RSS (VmHWM)")
		}
	})
})

// peakRSS returns the peak resident set size of process pid (VmHWM of
// /proc/<pid>/status), in bytes; 0 for pid 0.
func peakRSS(pid int) int64 {
	if pid == 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	Expect(err).NotTo(HaveOccurred())
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			Expect(err).NotTo(HaveOccurred())
			return kb << 10
		}
	}
	Fail("no VmHWM in /proc/" + strconv.Itoa(pid) + "/status")
	return 0
}
