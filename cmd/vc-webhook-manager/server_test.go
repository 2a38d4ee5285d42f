package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"volcano.sh/volcano/cmd/webhook-manager/app/options"

	"github.com/vcplugins/framework-plugins/webhook"
)

// The CA bundle follows renewals on the configurations Volcano's chart
// installs for the admissions its router serves, named as its manager names
// them.
func TestVolcanoConfigurations(t *testing.T) {
	config := options.NewConfig()
	config.EnabledAdmission = "/jobs/mutate,/jobs/validate,/pods/validate,/unknown"
	want := webhook.Configurations{
		Mutating:   []string{"volcano-admission-service-jobs-mutate"},
		Validating: []string{"volcano-admission-service-jobs-validate", "volcano-admission-service-pods-validate"},
	}
	if diff := cmp.Diff(want, volcanoConfigurations(config)); diff != "" {
		t.Errorf("volcanoConfigurations (-want +got):\n%s", diff)
	}
}

// The admission port serves the admissions alone: expvar, which the
// metrics library imports, registers GET /debug/vars (the command line and
// memstats) on http.DefaultServeMux, which the port no longer serves.
func TestAdmissionMuxServesNoDebugVars(t *testing.T) {
	get := func(h http.Handler) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/vars", nil))
		return rec.Code
	}
	if code := get(http.DefaultServeMux); code != http.StatusOK {
		t.Fatalf("http.DefaultServeMux answers /debug/vars with %d: expvar is not linked, so this test shows nothing", code)
	}
	mux := newAdmissionMux()
	webhook.Handle(mux, webhook.Options{})
	if code := get(mux); code != http.StatusNotFound {
		t.Errorf("the admission mux answers GET /debug/vars with %d; want 404", code)
	}
}
