package main

import (
	_ "embed"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
)

// conformanceStages is kwokstages.yaml: the pod stages that play the suites'
// containers (see its header).
//
//go:embed kwokstages.yaml
var conformanceStages string

// scriptQuery (script.jq) is the jq expression kwokstages.yaml calls
// $SCRIPT: the shell script of a pod's first container, the argument after
// "-c" in its command and args together (Volcano's e2e helpers write command
// ["/bin/sh"] and args ["-c", script]; its TensorFlow specs command ["sh",
// "-c", script]), or "". One line: it is substituted into YAML strings.
//
//go:embed script.jq
var scriptQuery string

// readyStage is the stage of the local cluster's default configuration the
// conformance cluster keeps: a bound pod turns Running.
const readyStage = "pod-ready"

// kwokConfig returns the conformance cluster's KWOK configuration: the
// default configuration's pod-ready stage, then kwokstages.yaml with $SCRIPT
// substituted. It fails if the default configuration has no pod-ready stage.
func kwokConfig() (string, error) {
	var ready string
	for _, doc := range strings.Split(localcluster.DefaultKwokConfig, "\n---\n") {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return "", fmt.Errorf("the local cluster's KWOK stages: %w", err)
		}
		if meta.Kind == "Stage" && meta.Metadata.Name == readyStage {
			ready = strings.TrimSpace(doc)
		}
	}
	if ready == "" {
		return "", fmt.Errorf("the local cluster's KWOK configuration has no %s stage", readyStage)
	}
	return ready + "\n---\n" + strings.ReplaceAll(conformanceStages, "$SCRIPT", strings.TrimSpace(scriptQuery)), nil
}

// nodeResources is the shape of each of the 4 KWOK nodes: that of a worker of
// Volcano's own e2e cluster (kind on a 4-CPU, 16 GiB CI runner), so that the
// suites' jobs sized to the cluster (ClusterSize) have as many pods as there.
func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
}

// e2eWebhooks are the admission webhooks Volcano's own e2e cluster enables
// (hack/run-e2e-kind.sh of v1.14.1 and v1.15.1: enabled_admissions of every
// suite but the admission-policy one), with the rules of its Helm chart
// (templates/webhooks.yaml). The webhook manager is started with exactly
// these paths in --enabled-admission, stock and ours alike.
func e2eWebhooks() []localcluster.Webhook {
	rule := func(group, version, res string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
		scope := admissionregistrationv1.AllScopes
		return admissionregistrationv1.RuleWithOperations{
			Operations: ops,
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{res}, Scope: &scope,
			},
		}
	}
	const (
		create = admissionregistrationv1.Create
		update = admissionregistrationv1.Update
		del    = admissionregistrationv1.Delete
	)
	return []localcluster.Webhook{
		{Path: "/pods/mutate", Name: "mutatepod.volcano.sh", Mutating: true, Rule: rule("", "v1", "pods", create)},
		{Path: "/queues/mutate", Name: "mutatequeue.volcano.sh", Mutating: true, Rule: rule("scheduling.volcano.sh", "v1beta1", "queues", create)},
		{Path: "/podgroups/mutate", Name: "mutatepodgroup.volcano.sh", Mutating: true, Rule: rule("scheduling.volcano.sh", "v1beta1", "podgroups", create)},
		{Path: "/jobs/mutate", Name: "mutatejob.volcano.sh", Mutating: true, Rule: rule("batch.volcano.sh", "v1alpha1", "jobs", create)},
		{Path: "/jobs/validate", Name: "validatejob.volcano.sh", Rule: rule("batch.volcano.sh", "v1alpha1", "jobs", create, update)},
		{Path: "/jobflows/validate", Name: "validatejob.volcano.sh", Rule: rule("flow.volcano.sh", "v1alpha1", "jobflows", create, update)},
		{Path: "/pods/validate", Name: "validatepod.volcano.sh", Rule: rule("", "v1", "pods", create)},
		{Path: "/queues/validate", Name: "validatequeue.volcano.sh", Rule: rule("scheduling.volcano.sh", "v1beta1", "queues", create, update, del)},
		{Path: "/podgroups/validate", Name: "validatepodgroup.volcano.sh", Rule: rule("scheduling.volcano.sh", "v1beta1", "podgroups", create)},
		{Path: "/hypernodes/validate", Name: "validatehypernodes.volcano.sh", Rule: rule("topology.volcano.sh", "v1alpha1", "hypernodes", create, update)},
		{Path: "/cronjobs/validate", Name: "validatecronjob.volcano.sh", Rule: rule("batch.volcano.sh", "v1alpha1", "cronjobs", create, update)},
	}
}
