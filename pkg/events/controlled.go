package events

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// ControlledBy reports whether job is obj's controller: obj's controller
// reference (its first ownerReference with controller: true) has apiVersion
// batch.volcano.sh/v1alpha1, kind Job, job's name and job's UID.
//
// metav1.IsControlledBy compares the UID alone, and anyone who can read the
// Job can copy its UID into a reference of another kind, apiVersion or name,
// which the chart's job-object-claims policy does not stop (it matches only
// references with the Job's coordinates). It lives here because ownedcm and
// guard both import this package and it imports none of ours.
func ControlledBy(obj metav1.Object, job *batch.Job) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil &&
		ref.APIVersion == batch.SchemeGroupVersion.String() &&
		ref.Kind == "Job" &&
		ref.Name == job.Name &&
		ref.UID == job.UID
}
