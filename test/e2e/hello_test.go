package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// Issue #25: the first Job a user was told to run hung (its ps never served
// the port its workers waited for), as the examples only ever ran on KWOK.
// Here every example that runs as written (samples.Hellos, each framework
// Sample's: README's "A Job", the Job of docs/install.md's Verify and of the
// chart's NOTES, each framework's minimal Job) runs on the real node, its
// public image swapped for the local one with the same interpreter (nothing
// else changed but the node selection), in a namespace that enforces Pod Security baseline. The
// training examples run in training_test.go; the GPU examples, which need
// GPUs, only on KWOK GPU nodes (examples_test.go). samples'
// TestEveryExampleRuns checks that together they cover example/.
var _ = Describe("The examples that run as written, on the real node", func() {
	f := framework.New("hello", framework.WithNamespaceLabels(map[string]string{
		"pod-security.kubernetes.io/enforce":         "baseline",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}))

	for _, h := range samples.Hellos() {
		It(fmt.Sprintf("completes %s (%s) within %s, every pod printing its check's success", h.Name, h.Source, framework.HelloJobCompletedTimeout), func(ctx SpecContext) {
			framework.RequireRealNode()
			requireTrainingImage()
			job, err := h.Load(framework.Path("."))
			Expect(err).NotTo(HaveOccurred())
			_, err = training.Localize(job)
			Expect(err).NotTo(HaveOccurred())
			job = framework.OnRealNode(job)

			created, run, took := runOnRealNode(ctx, f, job, h.Container, framework.HelloJobCompletedTimeout)
			lines, err := h.Judge(run)
			Expect(err).NotTo(HaveOccurred(), "Job %s (%s)", created.Name, h.Source)
			line := fmt.Sprintf("%s: Completed in %s from submission, %d success lines", created.Name, took, lines)
			GinkgoWriter.Println(line)
			AddReportEntry(created.Name, line)
		}, SpecTimeout(framework.RealSpecTimeout))
	}
})
