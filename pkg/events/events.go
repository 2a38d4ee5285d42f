// Package events reports a plugin's permanent problems as Warning events on the
// Job. Volcano requeues a Job whose plugin returns an error and terminates it
// after 15 requeues (--max-requeue-num), so a problem no retry can fix (bad
// arguments) is reported here instead and the plugin carries on. A problem
// that must stop the Job (mpi: a foreign hostfile ConfigMap) is reported here
// and also returned, so that Volcano creates no pods and ends the Job.
//
// The package also holds ControlledBy, the test of whether a Job controls an
// object, shared by the packages that report through it.
package events

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// Event reasons. They are part of the user-facing contract: docs and alerts match on them.
const (
	// ReasonInvalidArguments: a framework plugin's arguments do not parse or do not
	// fit the Job; the plugin injects nothing into the Job's pods.
	ReasonInvalidArguments = "InvalidPluginArguments"
	// ReasonConfigMapConflict: a ConfigMap the plugin needs exists and is not
	// controlled by the Job; the plugin leaves it alone, and (mpi's hostfile)
	// the Job's pods are not created while it is there.
	ReasonConfigMapConflict = "PluginConfigMapConflict"
	// ReasonObjectConflict: an object one of Volcano's in-tree plugins (svc,
	// ssh, ray) writes for the Job exists under its name and is not controlled
	// by the Job; the plugin neither adopts, overwrites nor deletes it
	// (pkg/guard), and the Job's pods are not created while it is there.
	ReasonObjectConflict = "PluginObjectConflict"
	// ReasonWaitTimedOut: a pod's wait-for-dependencies container gave up
	// after --wait-timeout; the message names the task, the pod and the
	// dependencies that never answered. The pod is failed (pkg/waitwatch).
	ReasonWaitTimedOut = "WaitTimedOut"
	// ReasonPodGroupResynced (Normal): Volcano's job controller missed the
	// Job's PodGroup leaving Pending (its informer listed again, as after a
	// kube-apiserver restart), and a SyncJob Command asks it to create the
	// pods (pkg/pgresync).
	ReasonPodGroupResynced = "PodGroupResynced"
	// ReasonCompactSSHConfig (Normal): the ssh plugin's Secret of a Job with
	// more hosts than its per-host config may list got one entry per task
	// (pkg/guard).
	ReasonCompactSSHConfig = "CompactSSHConfig"
)

// Component is the event source the plugins report as.
const Component = "vc-controller-manager"

// maxMessage is the API server's limit on an Event message (1024 characters).
const maxMessage = 1024

// Warn records a Warning event with reason and message on job, once. The event's
// name is derived from the Job UID, reason and message, so reporting the same
// problem again (a fresh plugin instance per call, a controller restart) finds
// the event already there and adds nothing. When an event of that name exists
// and is not this one (somebody else's, made to hide the warning; told by a
// list of events by name, so client needs list on events), the event is
// created under a generated name <job>.<random> instead, on every call.
// Failures to record are logged: an event is never worth failing the Job over.
func Warn(ctx context.Context, client kubernetes.Interface, job *batch.Job, reason, message string) {
	record(ctx, client, job, v1.EventTypeWarning, reason, message)
}

// Normal records a Normal event with reason and message on job, once, as
// Warn does.
func Normal(ctx context.Context, client kubernetes.Interface, job *batch.Job, reason, message string) {
	record(ctx, client, job, v1.EventTypeNormal, reason, message)
}

func record(ctx context.Context, client kubernetes.Interface, job *batch.Job, eventType, reason, message string) {
	if len(message) > maxMessage {
		message = message[:maxMessage-3] + "..."
	}
	klog.InfoS(eventType+" on Job", "job", klog.KObj(job), "reason", reason, "message", message)
	if client == nil {
		return
	}
	sum := sha256.Sum256([]byte(string(job.UID) + "\x00" + reason + "\x00" + message))
	now := metav1.Now()
	ev := &v1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      job.Name + "." + hex.EncodeToString(sum[:8]),
			Namespace: job.Namespace,
		},
		InvolvedObject: v1.ObjectReference{
			APIVersion:      batch.SchemeGroupVersion.String(),
			Kind:            "Job",
			Namespace:       job.Namespace,
			Name:            job.Name,
			UID:             job.UID,
			ResourceVersion: job.ResourceVersion,
		},
		Reason:         reason,
		Message:        message,
		Type:           eventType,
		Source:         v1.EventSource{Component: Component},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	evs := client.CoreV1().Events(job.Namespace)
	_, err := evs.Create(ctx, ev, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// The name is predictable, so whoever may create Events in the
		// namespace can take it first: only our own event stands for this one.
		var ours bool
		ours, err = exists(ctx, evs, ev)
		if ours {
			return
		}
		if err == nil {
			ev.Name, ev.GenerateName = "", job.Name+"."
			_, err = evs.Create(ctx, ev, metav1.CreateOptions{})
		}
	}
	if err != nil {
		klog.ErrorS(err, "Recording event failed", "job", klog.KObj(job), "reason", reason)
	}
}

// exists reports whether the event of want's name is want (same). It lists by
// name rather than reading it: Volcano's chart grants vc-controller-manager
// list on events, not get. The name is matched here too, as a field selector
// may be ignored (the fake clientset does).
func exists(ctx context.Context, evs corev1client.EventInterface, want *v1.Event) (bool, error) {
	list, err := evs.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", want.Name).String()})
	if err != nil {
		return false, err
	}
	for i := range list.Items {
		if list.Items[i].Name == want.Name && same(&list.Items[i], want) {
			return true, nil
		}
	}
	return false, nil
}

// same reports whether have is the event want, as record made it: from
// Component, about the same object (the Job's resourceVersion aside, which
// changes between reports), with the same type, reason and message.
func same(have, want *v1.Event) bool {
	h, w := have.InvolvedObject, want.InvolvedObject
	h.ResourceVersion, w.ResourceVersion = "", ""
	return have.Source.Component == want.Source.Component && h == w &&
		have.Type == want.Type && have.Reason == want.Reason && have.Message == want.Message
}
