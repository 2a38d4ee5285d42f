package chart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admv1 "k8s.io/api/admissionregistration/v1"
)

const (
	cmPolicy     = "ValidatingAdmissionPolicy/framework-plugins-controller-configmaps"
	cmPolicyBind = "ValidatingAdmissionPolicyBinding/framework-plugins-controller-configmaps"
	// Its other side: nobody else claims those objects for a Job.
	claimsPolicy     = "ValidatingAdmissionPolicy/framework-plugins-job-object-claims"
	claimsPolicyBind = "ValidatingAdmissionPolicyBinding/framework-plugins-job-object-claims"
)

// The ConfigMap policy is rendered, bound with Deny, where the cluster
// serves ValidatingAdmissionPolicy v1 (1.30+) and rbac.controllerConfigMapPolicy
// is on (the default); it applies to the controller ServiceAccount of the
// values. What it admits is tested on the rendered manifest in installer/
// (configmappolicy_test.go) with kube-apiserver's CEL code.
func TestRenderedConfigMapPolicy(t *testing.T) {
	checkRendered(t, []renderCase{
		{"served", "1.35.3", vapAPI, "", true},
		{"with the configurations", "1.35.3", vapAPI, "webhook: {create: true}", true},
		{"not served (before 1.30, or turned off)", "1.29.6", nil, "", false},
		{"switched off", "1.35.3", vapAPI, "rbac: {controllerConfigMapPolicy: false}", false},
	}, cmPolicy, cmPolicyBind, claimsPolicy, claimsPolicyBind)

	r, err := renderChart(t, chartDir, "framework-plugins", "1.35.3", vapAPI,
		values(t, "volcano: {namespace: batch-system, controllerServiceAccount: vc-ctrl}\nwebhook: {service: {namespace: batch-system}}"))
	if err != nil {
		t.Fatal(err)
	}
	p := decode[admv1.ValidatingAdmissionPolicy](t, r, cmPolicy)
	want := []admv1.MatchCondition{{Name: "volcano-controllers", Expression: `request.userInfo.username == "system:serviceaccount:batch-system:vc-ctrl"`}}
	if diff := cmp.Diff(want, p.Spec.MatchConditions); diff != "" {
		t.Errorf("matchConditions (-want +got):\n%s", diff)
	}
	ops := []admv1.OperationType{admv1.Create, admv1.Update, admv1.Delete}
	if rules := p.Spec.MatchConstraints.ResourceRules; len(rules) != 2 ||
		!cmp.Equal(rules[0].Operations, ops) || !cmp.Equal(rules[0].APIGroups, []string{""}) ||
		!cmp.Equal(rules[0].Resources, []string{"configmaps", "secrets", "services"}) ||
		!cmp.Equal(rules[1].Operations, ops) || !cmp.Equal(rules[1].APIGroups, []string{"networking.k8s.io"}) ||
		!cmp.Equal(rules[1].Resources, []string{"networkpolicies"}) {
		t.Errorf("resourceRules %+v, want configmaps, secrets, services and networkpolicies %v", rules, ops)
	}
	b := decode[admv1.ValidatingAdmissionPolicyBinding](t, r, cmPolicyBind)
	if b.Spec.PolicyName != p.Name || !cmp.Equal(b.Spec.ValidationActions, []admv1.ValidationAction{admv1.Deny}) {
		t.Errorf("binding %+v, want %s with Deny", b.Spec, p.Name)
	}

	c := decode[admv1.ValidatingAdmissionPolicy](t, r, claimsPolicy)
	want = []admv1.MatchCondition{{Name: "not-volcano-controllers", Expression: `request.userInfo.username != "system:serviceaccount:batch-system:vc-ctrl"`}}
	if diff := cmp.Diff(want, c.Spec.MatchConditions); diff != "" {
		t.Errorf("claims policy's matchConditions (-want +got):\n%s", diff)
	}
	// Deletes stay with RBAC: the garbage collector deletes the Jobs' objects.
	ops = []admv1.OperationType{admv1.Create, admv1.Update}
	if rules := c.Spec.MatchConstraints.ResourceRules; len(rules) != 2 ||
		!cmp.Equal(rules[0].Operations, ops) || !cmp.Equal(rules[0].Resources, []string{"configmaps", "secrets", "services"}) ||
		!cmp.Equal(rules[1].Operations, ops) || !cmp.Equal(rules[1].Resources, []string{"networkpolicies"}) {
		t.Errorf("claims policy's resourceRules %+v, want configmaps, secrets, services and networkpolicies %v", rules, ops)
	}
	b = decode[admv1.ValidatingAdmissionPolicyBinding](t, r, claimsPolicyBind)
	if b.Spec.PolicyName != c.Name || !cmp.Equal(b.Spec.ValidationActions, []admv1.ValidationAction{admv1.Deny}) {
		t.Errorf("binding %+v, want %s with Deny", b.Spec, c.Name)
	}
}

// renderCase is a rendering of the chart: the cluster's Kubernetes version
// and served APIs, the values, and whether the objects are to be rendered.
type renderCase struct {
	name string
	kube string
	apis []string
	vals string
	want bool
}

// checkRendered renders the chart for each case and checks that each of
// keys is rendered exactly when the case wants it.
func checkRendered(t *testing.T, cases []renderCase, keys ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := renderChart(t, chartDir, "framework-plugins", tc.kube, tc.apis, values(t, tc.vals))
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range keys {
				if _, got := r.docs[key]; got != tc.want {
					t.Errorf("%s rendered %v, want %v (objects %v)", key, got, tc.want, r.keys())
				}
			}
		})
	}
}
