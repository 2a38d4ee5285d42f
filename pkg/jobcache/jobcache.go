// Package jobcache computes per-job data (cluster specs, host lists, hostfiles)
// once per Job spec revision instead of once per pod. Volcano builds a fresh plugin
// instance for every hook call, so plugins cannot keep it themselves; without it
// a job's OnPodCreate cost grows with the square of its size.
package jobcache

import (
	"strconv"
	"sync"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// capacity bounds the cache: enough for the jobs a controller creates pods for
// at once, small enough that stale revisions fall out quickly.
const capacity = 256

type key struct {
	uid, revision, plugin, args string
}

// Cache maps (Job UID, spec revision, plugin, arguments) to computed data. It is
// safe for concurrent use; the zero value is ready. Values are shared between
// callers and must not be modified after compute returns them.
type Cache struct {
	mu      sync.Mutex
	entries map[key]any
	order   []key
	next    int
}

// Get returns the value computed for this spec revision of job, calling
// compute when there is none. The revision is metadata.generation, which the
// API server raises on every change of the Job's spec but not on status
// updates (the Job CRD has a status subresource): the controller updates a
// Job's status thousands of times while its pods start, and each would
// otherwise cost a new plan. Jobs with generation 0 (objects not from the API
// server, as in unit tests) use their resourceVersion instead; jobs without UID
// or either are never cached. argsKey must encode every plugin argument that
// influences the result, and compute may read only the Job's name, namespace,
// UID and spec.
//
// The key holds only for stored Jobs, whose generation changes with the spec.
// Admission requests carry the UID and the generation the Job would get
// (validating admission runs after the API server has set them), and a denied
// UPDATE and its corrected retry share both: admission must not go through
// this cache (framework.Definition.UncachedBase).
func Get[T any](c *Cache, job *batch.Job, plugin, argsKey string, compute func() T) T {
	revision := ""
	switch {
	case job.UID == "":
	case job.Generation > 0:
		revision = "g" + strconv.FormatInt(job.Generation, 10)
	case job.ResourceVersion != "":
		revision = "rv" + job.ResourceVersion
	}
	if revision == "" {
		return compute()
	}
	k := key{uid: string(job.UID), revision: revision, plugin: plugin, args: argsKey}
	c.mu.Lock()
	if v, ok := c.entries[k]; ok {
		c.mu.Unlock()
		return v.(T)
	}
	c.mu.Unlock()

	v := compute()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[key]any, capacity)
		c.order = make([]key, capacity)
	}
	// A caller that computed the same entry meanwhile wins: plans hold some
	// state (what was already applied, TF_CONFIG buffers), so all callers
	// must share one.
	if stored, ok := c.entries[k]; ok {
		return stored.(T)
	}
	if old := c.order[c.next]; old != (key{}) {
		delete(c.entries, old)
	}
	c.order[c.next] = k
	c.next = (c.next + 1) % capacity
	c.entries[k] = v
	return v
}

// Len returns the number of cached entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
