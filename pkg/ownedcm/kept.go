package ownedcm

import (
	"errors"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/metrics"
)

// Recheck is how long Kept.Sync trusts an earlier check of a plan's
// ConfigMap. The controller calls OnJobAdd on every sync of a Pending Job and
// OnJobUpdate on every sync of a started one, thousands of times while a
// large job's pods start; the ConfigMap's content only changes with the Job's
// spec, which gets a new plan. The recheck restores a ConfigMap deleted by
// hand within this time.
const Recheck = time.Minute

// Kept is the ConfigMap a plugin keeps for each of its Jobs (mpi's hostfile,
// tensorflow's cluster): created by OnJobAdd with the Job as controller,
// rechecked by OnJobUpdate, read before a pod that uses it is prepared, and
// deleted by OnJobDelete. A ConfigMap of its name that the Job does not
// control is never written: it is reported as a PluginConfigMapConflict
// event on the Job and returned as a *ConflictError.
type Kept struct {
	// Plugin is the plugin's name, for messages.
	Plugin string
	// Purpose says what the ConfigMap is to the pods, for messages ("the
	// launcher's hostfile").
	Purpose string
	// Name returns the ConfigMap's name in the Job's namespace.
	Name func(job *batch.Job) string
	// Now is time.Now when nil; tests move it forward.
	Now func() time.Time
}

// Synced is one plan's record of when its ConfigMap was last found or made
// to match it (the plan's one mutable field). The zero value: never.
type Synced struct{ at atomic.Int64 }

func (k *Kept) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// Sync applies data and the Job-name label to the Job's ConfigMap (Apply;
// CreateOrApply, which skips the read, for a plan never synced of a Job that
// has not started: its ConfigMap most likely does not exist yet) unless s
// records a success less than Recheck ago; each Apply counts in
// metrics.ConfigMapSyncs. Errors: a *ConflictError
// (after the event) when another owner's ConfigMap has the name, API errors
// as they come.
func (k *Kept) Sync(client kubernetes.Interface, job *batch.Job, s *Synced, data map[string]string) error {
	if k.fresh(s) {
		return nil
	}
	ctx, cancel := framework.Context()
	defer cancel()
	apply := Apply
	if s.at.Load() == 0 && isNew(job) {
		apply = CreateOrApply
	}
	err := apply(ctx, client, job, k.Name(job), map[string]string{batch.JobNameKey: job.Name}, data)
	if err == nil {
		s.at.Store(k.now().UnixNano())
	}
	err = k.conflict(client, job, err)
	metrics.ConfigMapSyncs.WithLabelValues(metrics.Framework(k.Plugin), syncResult(err)).Inc()
	return err
}

// fresh reports whether s records a Sync less than Recheck ago.
func (k *Kept) fresh(s *Synced) bool {
	return k.now().Sub(time.Unix(0, s.at.Load())) < Recheck
}

// isNew reports whether job has not started yet: Volcano has not moved it
// past Pending (the phase is empty before its first sync) and never
// restarted it.
func isNew(job *batch.Job) bool {
	switch job.Status.State.Phase {
	case "", batch.Pending:
		return job.Status.RetryCount == 0
	}
	return false
}

// syncResult is the metrics result of a Sync that returned err.
func syncResult(err error) string {
	switch {
	case err == nil:
		return metrics.SyncOK
	case errors.As(err, new(*ConflictError)):
		return metrics.SyncConflict
	}
	return metrics.SyncError
}

// Check returns a *ConflictError (after the event) when the ConfigMap's name
// is taken by one the Job does not control, nil when it is the Job's or
// missing. Without a client (admission's simulation) there is nothing to
// read.
func (k *Kept) Check(client kubernetes.Interface, job *batch.Job) error {
	if client == nil {
		return nil
	}
	ctx, cancel := framework.Context()
	defer cancel()
	return k.conflict(client, job, Check(ctx, client, job, k.Name(job)))
}

// Delete deletes the ConfigMap when the Job controls it and forgets s's
// record, so that a restarted Job's OnJobAdd creates it again. A missing
// one is fine; another owner's is left alone and reported as an event but
// not returned: stopping the Job's pods must go on. API errors are returned.
func (k *Kept) Delete(client kubernetes.Interface, job *batch.Job, s *Synced) error {
	ctx, cancel := framework.Context()
	defer cancel()
	err := k.conflict(client, job, Delete(ctx, client, job, k.Name(job)))
	if err != nil && !errors.As(err, new(*ConflictError)) {
		return err
	}
	if s != nil {
		s.at.Store(0)
	}
	return nil
}

// Hooks are the Job hooks of a framework plugin with plan type P that keeps
// a ConfigMap per Job (Kept): the plugin's OnJobAdd, OnJobUpdate and
// OnJobDelete call them with their framework.Base. Invalid arguments (no
// plan) write nothing.
type Hooks[P any] struct {
	Kept
	// Data returns the ConfigMap's data for plan (nil: this plan needs no
	// ConfigMap) and the plan's record of its last sync.
	Data func(plan P) (data map[string]string, synced *Synced)
}

// OnJobAdd marks the Job as the plugin's (framework.MarkControlled) and
// syncs the ConfigMap (OnJobUpdate). A Job over the bounds gets
// framework's *OverBoundsError, and nothing is written.
func (h *Hooks[P]) OnJobAdd(b *framework.Base[P], job *batch.Job) error {
	if err := b.OverBounds(job); err != nil {
		return err
	}
	framework.MarkControlled(job, b.Name())
	return h.OnJobUpdate(b, job)
}

// OnJobUpdate applies the plan's data to the ConfigMap (Kept.Sync) when
// the plan has data. Errors as Kept.Sync.
func (h *Hooks[P]) OnJobUpdate(b *framework.Base[P], job *batch.Job) error {
	plan, ok := b.Plan(job)
	if !ok {
		return nil
	}
	data, synced := h.Data(plan)
	if data == nil {
		return nil
	}
	return h.Sync(b.Client, job, synced, data)
}

// OnJobDelete deletes the ConfigMap (Kept.Delete, whatever the plan: a
// plan without data may follow one with) and removes the plugin's mark.
func (h *Hooks[P]) OnJobDelete(b *framework.Base[P], job *batch.Job) error {
	var synced *Synced
	if plan, ok := b.Plan(job); ok {
		_, synced = h.Data(plan)
	}
	if err := h.Delete(b.Client, job, synced); err != nil {
		return err
	}
	framework.UnmarkControlled(job, b.Name())
	return nil
}

// ConflictError is what Kept's methods return while the ConfigMap's name is
// taken by one the Job does not control. Its message is that of the
// PluginConfigMapConflict event: which ConfigMap, and why nothing starts.
type ConflictError struct {
	Plugin, Purpose string
	NotOwned        *NotOwnedError
}

func (e *ConflictError) Error() string {
	return "plugin " + e.Plugin + ": " + e.NotOwned.Error() +
		"; it would be " + e.Purpose + ", so the plugin does not overwrite it and the Job's pods are not created while it is there" +
		" (Volcano retries, then terminates the Job)"
}

func (e *ConflictError) Unwrap() error { return e.NotOwned }

// conflict turns a *NotOwnedError into a Warning event on the Job and a
// *ConflictError; other errors (and nil) are returned as they are.
func (k *Kept) conflict(client kubernetes.Interface, job *batch.Job, err error) error {
	var notOwned *NotOwnedError
	if !errors.As(err, &notOwned) {
		return err
	}
	c := &ConflictError{Plugin: k.Plugin, Purpose: k.Purpose, NotOwned: notOwned}
	ctx, cancel := framework.Context()
	defer cancel()
	events.Warn(ctx, client, job, events.ReasonConfigMapConflict, c.Error())
	return c
}
