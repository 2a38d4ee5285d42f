// Package e2e is the end-to-end suite of the framework plugins: real Volcano
// Jobs through the real kube-apiserver (webhooks over TLS, Pod Security
// admission), this repository's vc-controller-manager creating real pods,
// vc-scheduler binding them on KWOK nodes (and the real node, where the
// machine has one, whose pods really run) and kube-controller-manager's
// garbage collector. Run it with `make test-e2e` (builds the binaries, then
// `go test ./test/e2e/... -ginkgo.v`). Without KUBECONFIG it starts its own
// local cluster in _output/e2e-cluster and stops it afterwards, also when specs
// fail or the run is interrupted; with KUBECONFIG it uses that cluster.
package e2e

import (
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	// go test -timeout kills the process without running AfterSuite, which
	// would leave the local cluster's processes behind: time out as a Ginkgo
	// suite first, which still runs the cleanup.
	if deadline, ok := t.Deadline(); ok {
		if left := time.Until(deadline) - framework.SuiteCleanupReserve; left > 0 {
			suiteConfig.Timeout = left
		}
	}
	RunSpecs(t, "framework-plugins e2e", suiteConfig, reporterConfig)
}

// failed records whether a spec failed, so that AfterSuite keeps the logs.
var failed atomic.Bool

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() {
		failed.Store(true)
	}
})

var _ = BeforeSuite(func(ctx SpecContext) {
	start := time.Now()
	_, err := framework.SetupCluster(ctx, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("cluster ready in %.1fs\n", time.Since(start).Seconds())
}, NodeTimeout(framework.ClusterUpTimeout+30*time.Second))

var _ = AfterSuite(func() {
	Expect(framework.TeardownCluster(failed.Load(), GinkgoWriter)).To(Succeed())
})
