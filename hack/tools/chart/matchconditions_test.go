package chart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admv1 "k8s.io/api/admissionregistration/v1"
)

// The webhooks' matchConditions: rendered from Kubernetes 1.28 (beta, on by
// default; GA in 1.30), left out before, where the API server, and Helm's
// schema check against it, do not know the field. Their expressions are
// checked against package webhook's in installer/manifests_test.go.
func TestRenderedMatchConditions(t *testing.T) {
	names := func(cs []admv1.MatchCondition) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	for _, tc := range []struct {
		kubeVersion                  string
		wantMutating, wantValidating []string
	}{
		{"1.35.3", []string{"uses-framework-plugins"}, []string{"uses-framework-plugins", "spec-changed"}},
		{"1.28.0", []string{"uses-framework-plugins"}, []string{"uses-framework-plugins", "spec-changed"}},
		{"1.27.9", nil, nil},
		{"1.21.0", nil, nil},
	} {
		t.Run(tc.kubeVersion, func(t *testing.T) {
			r, err := render(t, tc.kubeVersion, values(t, "webhook: {create: true}"))
			if err != nil {
				t.Fatal(err)
			}
			m := decode[admv1.MutatingWebhookConfiguration](t, r, mutating)
			v := decode[admv1.ValidatingWebhookConfiguration](t, r, validating)
			if diff := cmp.Diff(tc.wantMutating, names(m.Webhooks[0].MatchConditions)); diff != "" {
				t.Errorf("mutating matchConditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantValidating, names(v.Webhooks[0].MatchConditions)); diff != "" {
				t.Errorf("validating matchConditions (-want +got):\n%s", diff)
			}
		})
	}
}
