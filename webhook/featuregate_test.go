package webhook

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// The gate the install test turns off with custom.admission_feature_gates
// (--feature-gates=PodLevelResources=false) changes what Volcano v1.15.1's
// job validation answers: with it on, pod-level resources that request
// more than their limit are refused; with it off they are not checked.
// (Volcano v1.14.1 does not read the gate; this package's tests run on the
// default line.)
func TestPodLevelResourcesGateDecidesVolcanosAnswer(t *testing.T) {
	admit := volcanoValidate(t)
	task := jobtest.MakeTask("main", 1).Obj()
	task.Template.Spec.Resources = &v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
	}
	job := mkJob("pod-level").Task(task).Obj()
	job.Namespace, job.Spec.Queue = "default", "default"
	saved := utilfeature.DefaultFeatureGate.Enabled("PodLevelResources")
	defer func() {
		_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{"PodLevelResources": saved})
	}()
	for _, on := range []bool{true, false} {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{"PodLevelResources": on}); err != nil {
			t.Fatal(err)
		}
		resp := admit(review(t, admissionv1.Create, job, nil))
		if resp.Allowed == on {
			t.Errorf("PodLevelResources=%v: Volcano's validation allowed %v (%v), want %v", on, resp.Allowed, resp.Result, !on)
		}
	}
}
