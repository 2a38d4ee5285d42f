//go:build volcano_line && volcano_v1.14.1

// The v1.14.1 line: Kubernetes libraries v0.34.1.

package kubeline

import (
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/pod-security-admission/policy"
)

// BaseEnvSet is kube-apiserver's base CEL environment at its default
// compatibility version, with strict cost estimation (kube-apiserver 1.34's
// default for admission).
func BaseEnvSet() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true)
}

// PodSecurityEvaluator is Pod Security admission's evaluator of checks.
func PodSecurityEvaluator(checks []policy.Check) (policy.Evaluator, error) {
	return policy.NewEvaluator(checks)
}
