package main

import (
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
