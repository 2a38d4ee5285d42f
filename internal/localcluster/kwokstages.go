package localcluster

import _ "embed"

// Annotations on a pod (set them in a Volcano task's template metadata) that
// steer what the fake nodes make of it under DefaultKwokConfig. KWOK runs no
// containers: these stand in for what a container would do.
const (
	// AnnotationPodResult is how a Running pod ends: "Succeeded" (default for
	// pods owned by a Job-kind object, Volcano Jobs included; other pods keep
	// running), "Failed", or "Running" to keep it running until deleted.
	AnnotationPodResult = "localcluster.vcplugins.io/result"
	// AnnotationPodRunFor is how long a pod stays Running before its result,
	// as a Go duration ("10s") or an RFC 3339 time. Default: it ends at once.
	AnnotationPodRunFor = "localcluster.vcplugins.io/run-for"
	// AnnotationPodExitCode is the exit code of every container of a pod whose
	// result is "Failed". Default 1.
	AnnotationPodExitCode = "localcluster.vcplugins.io/exit-code"
)

// KwokBuiltin as Config.KwokConfig runs KWOK with its compiled-in stages
// (v0.6.1's "fast" pod stages) instead of DefaultKwokConfig.
const KwokBuiltin = "builtin"

// DefaultKwokConfig is the KWOK configuration Up uses unless Config.KwokConfig
// says otherwise. Without annotations it behaves as KWOK v0.6.1's compiled-in
// "fast" pod stages (kustomize/stage/pod/fast, copied here as KWOK drops all
// of its default pod stages once a configuration holds any): a bound pod
// turns Running with every init container completed, a Running pod owned by a
// Job-kind object turns Succeeded at once, and a deleted pod goes away at
// once. The annotations above make a pod run longer, fail or never finish, so
// e2e tests can observe Running jobs and exercise failure policies.
//
// The stages are kwokstages.yaml, embedded; the annotation names in it are
// the constants above (TestKwokStagesAnnotations).
//
//go:embed kwokstages.yaml
var DefaultKwokConfig string
