package chart

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const admissionPolicy = "NetworkPolicy/framework-plugins-admission"

// The admission NetworkPolicy (#38 H3) is off by default, refuses to render
// without the API server's addresses, and when on admits the admission port
// only from them and the metrics port from metricsFrom (every source when
// empty).
func TestAdmissionNetworkPolicy(t *testing.T) {
	r, err := renderChart(t, chartDir, "framework-plugins", "1.35.3", nil, values(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.docs[admissionPolicy]; ok {
		t.Errorf("rendered by default")
	}
	if _, err := renderChart(t, chartDir, "framework-plugins", "1.35.3", nil, values(t, "admissionNetworkPolicy: {create: true}")); err == nil ||
		!strings.Contains(err.Error(), "admissionNetworkPolicy.from must list the API server's addresses") {
		t.Errorf("create without from: %v; want the chart to fail naming admissionNetworkPolicy.from", err)
	}
	r, err = renderChart(t, chartDir, "framework-plugins", "1.35.3", nil, values(t,
		"volcano: {namespace: batch-system}\nadmissionNetworkPolicy: {create: true, from: [{ipBlock: {cidr: 172.18.0.2/32}}], metricsFrom: [{namespaceSelector: {matchLabels: {name: monitoring}}}]}"))
	if err != nil {
		t.Fatal(err)
	}
	np := decode[networkingv1.NetworkPolicy](t, r, admissionPolicy)
	tcp := func(p int) []networkingv1.NetworkPolicyPort {
		proto, port := "TCP", intstr.FromInt32(int32(p))
		return []networkingv1.NetworkPolicyPort{{Protocol: (*corev1.Protocol)(&proto), Port: &port}}
	}
	want := networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "volcano-admission"}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{
			// The API server's addresses, and the admission pods: each
			// manager calls every endpoint before it creates or repoints
			// the framework webhook configurations.
			{Ports: tcp(8443), From: []networkingv1.NetworkPolicyPeer{
				{IPBlock: &networkingv1.IPBlock{CIDR: "172.18.0.2/32"}},
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "volcano-admission"}}},
			}},
			{Ports: tcp(11251), From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "monitoring"}}}}},
		},
	}
	if np.Namespace != "batch-system" {
		t.Errorf("namespace %q, want volcano.namespace", np.Namespace)
	}
	if diff := cmp.Diff(want, np.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}
