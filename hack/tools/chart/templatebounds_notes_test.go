package chart

import (
	"strings"
	"testing"
)

const (
	boundsPolicy     = "ValidatingAdmissionPolicy/framework-plugins-job-template-bounds"
	boundsPolicyBind = "ValidatingAdmissionPolicyBinding/framework-plugins-job-template-bounds"
)

// The CronJob and JobTemplate bounds policy (security round 4, M3) is
// rendered, bound, where the cluster serves ValidatingAdmissionPolicy v1 and
// jobTemplateBounds.create is on (the default). What it admits is tested on
// the rendered manifest in installer/ (templatebounds_test.go).
func TestRenderedTemplateBoundsPolicy(t *testing.T) {
	checkRendered(t, []renderCase{
		{"served", "1.35.3", vapAPI, "", true},
		{"not served (before 1.30, or turned off)", "1.29.6", nil, "", false},
		{"switched off", "1.35.3", vapAPI, "jobTemplateBounds: {create: false}", false},
	}, boundsPolicy, boundsPolicyBind)
}

// The admission NetworkPolicy is off by default (the chart cannot know the
// API server's addresses), so the install's NOTES warn about it loudly and
// say how to turn it on; with it on, they name it instead.
func TestNotesWarnWithoutAdmissionNetworkPolicy(t *testing.T) {
	const warning = "WARNING: no NetworkPolicy guards Volcano's admission pods (admissionNetworkPolicy.create=false, the default)."
	r, err := render(t, "1.35.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{warning, "Any pod in the cluster can call vc-webhook-manager on :8443 without authentication",
		"--set admissionNetworkPolicy.create=true --set-json 'admissionNetworkPolicy.from=[{\"ipBlock\""} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("NOTES with the defaults lack %q:\n%s", want, r.notes)
		}
	}
	r, err = render(t, "1.35.3", values(t, "admissionNetworkPolicy: {create: true, from: [{ipBlock: {cidr: 172.18.0.2/32}}]}"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.notes, "WARNING") || !strings.Contains(r.notes, "NetworkPolicy volcano-system/framework-plugins-admission admits to the admission port (:8443) only admissionNetworkPolicy.from") {
		t.Errorf("NOTES with the NetworkPolicy on:\n%s", r.notes)
	}
}
