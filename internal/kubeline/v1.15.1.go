//go:build !volcano_line

// Package kubeline holds the calls into Kubernetes' libraries whose
// signatures differ between the Volcano lines' Kubernetes versions, for the
// tests that evaluate objects as kube-apiserver does. One file per line,
// chosen by build tag, as lines/controllers and lines/admissions; it sits
// under internal/ rather than lines/ because only tests import it (in webhook,
// installer, pkg/wait and internal/localcluster, which an internal directory
// of lines/ would not admit).
//
// The default line: Kubernetes libraries v0.35.3.
package kubeline

import (
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/pod-security-admission/policy"
)

// BaseEnvSet is kube-apiserver's base CEL environment at its default
// compatibility version, with strict cost estimation (always on from v0.35).
func BaseEnvSet() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
}

// PodSecurityEvaluator is Pod Security admission's evaluator of checks, at
// the library's own version.
func PodSecurityEvaluator(checks []policy.Check) (policy.Evaluator, error) {
	return policy.NewEvaluator(checks, nil)
}
