// Package ownedcm keeps a plugin's ConfigMap in step with its Job: created with
// the Job as controlling owner (so the garbage collector removes it with the Job),
// updated only while the Job controls it, and never touched when somebody else's
// ConfigMap already has the name. The Job controls a ConfigMap when its
// controller reference names the Job by apiVersion, kind, name and UID
// (events.ControlledBy): a reference that copies only the UID is somebody else's.
package ownedcm

import (
	"context"
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/events"
)

// MaxConfigMapBytes is the most data a ConfigMap holds: Kubernetes' ConfigMap
// validation limits the sum of its values to 1 MiB (core.MaxSecretSize).
const MaxConfigMapBytes = v1.MaxSecretSize

// NotOwnedError reports a ConfigMap that exists under the name a plugin needs but
// is not controlled by the Job. It is permanent: retrying cannot fix it.
type NotOwnedError struct {
	Namespace, Name, Job string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("ConfigMap %s/%s exists and is not controlled by Job %s; rename or delete it", e.Namespace, e.Name, e.Job)
}

// ControllerRef returns the ownerReference (controller=true, blockOwnerDeletion)
// that marks an object as belonging to job.
func ControllerRef(job *batch.Job) metav1.OwnerReference {
	return *metav1.NewControllerRef(job, batch.SchemeGroupVersion.WithKind("Job"))
}

// Apply makes ConfigMap name in the Job's namespace hold exactly data and labels.
// It creates the ConfigMap when missing and updates it when its content differs
// and the Job controls it. It returns a *NotOwnedError when a ConfigMap of that
// name is not controlled by the Job, and API errors as they come. A conflict
// (another writer updated or created the ConfigMap between the read and the
// write) is retried with a fresh read (retry.DefaultRetry: up to 5 tries, about
// 10ms apart), so that it does not fail the Job's sync and count towards
// Volcano's requeues; a conflict that outlasts them is returned.
func Apply(ctx context.Context, client kubernetes.Interface, job *batch.Job, name string, labels, data map[string]string) error {
	return onConflict(func() error { return apply(ctx, client, job, name, labels, data) })
}

// onConflict runs fn again while it fails with a conflict: a stale
// resourceVersion or UID (409 Conflict) or a create that lost a race (409
// AlreadyExists). Both are cured by reading again.
func onConflict(fn func() error) error {
	return retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, fn)
}

// CreateOrApply is Apply for a ConfigMap that most likely does not exist
// yet (a new Job's): it creates it without reading first, and only when one
// of that name exists (409 AlreadyExists) goes on as Apply does. For a new
// Job that saves Apply's GET; for an existing ConfigMap it costs a refused
// create. Errors as Apply.
func CreateOrApply(ctx context.Context, client kubernetes.Interface, job *batch.Job, name string, labels, data map[string]string) error {
	_, err := client.CoreV1().ConfigMaps(job.Namespace).Create(ctx, newConfigMap(job, name, labels, data), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	return Apply(ctx, client, job, name, labels, data)
}

// newConfigMap is ConfigMap name holding labels and data, controlled by job.
func newConfigMap(job *batch.Job, name string, labels, data map[string]string) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       job.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{ControllerRef(job)},
		},
		Data: data,
	}
}

func apply(ctx context.Context, client kubernetes.Interface, job *batch.Job, name string, labels, data map[string]string) error {
	cms := client.CoreV1().ConfigMaps(job.Namespace)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, newConfigMap(job, name, labels, data), metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if !events.ControlledBy(cm, job) {
		return &NotOwnedError{Namespace: job.Namespace, Name: name, Job: job.Name}
	}
	if maps.Equal(cm.Data, data) && labelsContain(cm.Labels, labels) {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = data
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	maps.Copy(cm.Labels, labels)
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

func labelsContain(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Delete removes ConfigMap name when the Job controls it. A missing ConfigMap is
// not an error; one the Job does not control is left alone and reported as a
// *NotOwnedError.
//
// The delete is conditional on the UID read: if the ConfigMap was replaced in
// between (409 Conflict), it is read and checked again, as in Apply.
func Delete(ctx context.Context, client kubernetes.Interface, job *batch.Job, name string) error {
	return onConflict(func() error {
		cm, err := owned(ctx, client, job, name)
		if cm == nil || err != nil {
			return err
		}
		uid := cm.UID
		err = client.CoreV1().ConfigMaps(job.Namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// Check reports whether a pod may mount ConfigMap name for job: nil when the
// Job controls it or it does not exist (yet; the kubelet waits for it), a
// *NotOwnedError when another owner's ConfigMap has the name, and API errors
// as they come. It reads, never writes.
func Check(ctx context.Context, client kubernetes.Interface, job *batch.Job, name string) error {
	_, err := owned(ctx, client, job, name)
	return err
}

// owned returns ConfigMap name if job controls it, nil and nil if it does not
// exist, nil and a *NotOwnedError if another owner's has the name, and API
// errors as they come.
func owned(ctx context.Context, client kubernetes.Interface, job *batch.Job, name string) (*v1.ConfigMap, error) {
	cm, err := client.CoreV1().ConfigMaps(job.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !events.ControlledBy(cm, job) {
		return nil, &NotOwnedError{Namespace: job.Namespace, Name: name, Job: job.Name}
	}
	return cm, nil
}
