// Package jobcache computes per-job data (cluster specs, host lists, hostfiles)
// once per Job spec revision instead of once per pod. Volcano builds a fresh plugin
// instance for every hook call, so plugins cannot keep it themselves; without it
// a job's OnPodCreate cost grows with the square of its size.
package jobcache

import (
	"container/list"
	"strconv"
	"sync"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// capacity bounds the number of entries: enough for every Job a controller
// syncs in turn. Volcano's job controller syncs a Job several times while its
// pods start (Pending, each pod created, Running), and between two syncs of
// one Job it syncs every other Job that changed meanwhile: a sweep of 500
// small Jobs created at once touches 500 plans per round, and a bound of 256
// (until issue #28) dropped each plan before its Job's next sync, so every
// sync built the plan again and re-read the plugin's ConfigMap. A small
// Job's plan is smaller than a 2,048-worker pytorch plan (about 4 KiB by
// Size, below), so 16,384 of them stay within maxBytes; stale revisions
// still fall out, least recently used first.
const capacity = 16384

// maxBytes bounds the entries' approximate size (Size), so that large Jobs
// (a user chooses the replicas, and a plan grows with them up to about the
// 1 MiB of a ConfigMap) cannot make the cache hold hundreds of MiB. By Size a
// 2,048-worker plan is about 4 KiB (pytorch, mxnet), 55 KiB (tensorflow) or
// 145 KiB (mpi): about 450 of the largest fit.
const maxBytes = 64 << 20

type key struct {
	uid, revision, plugin, args string
}

type entry struct {
	key   key
	value any
	size  int64
}

// Cache maps (Job UID, spec revision, plugin, arguments) to computed data. It
// keeps at most capacity entries and maxBytes of them by Size, dropping the
// least recently used first. It is safe for concurrent use; the zero value is
// ready. Values are shared between callers and must not be modified after
// compute returns them, except for state they guard themselves.
type Cache struct {
	mu      sync.Mutex
	entries map[key]*list.Element
	lru     list.List // of *entry, most recently used first
	bytes   int64
	// maxEntries and maxBytes override capacity and maxBytes when set (tests).
	maxEntries int
	maxBytes   int64
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
// A value larger than the byte bound by itself is returned but not kept:
// such a Job's plan is built on every call, which costs time but not
// memory.
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
	if e, ok := c.entries[k]; ok {
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*entry).value.(T)
	}
	c.mu.Unlock()

	v := compute()
	// Measured outside the lock: it walks the whole value.
	size := Size(v) + Size(k)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[key]*list.Element)
	}
	// A caller that computed the same entry meanwhile wins: plans hold some
	// state (what was already applied, TF_CONFIG buffers), so all callers
	// must share one.
	if e, ok := c.entries[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*entry).value.(T)
	}
	maxEntries, maxBytes := c.limits()
	if size > maxBytes {
		return v
	}
	c.entries[k] = c.lru.PushFront(&entry{key: k, value: v, size: size})
	c.bytes += size
	for c.lru.Len() > maxEntries || c.bytes > maxBytes {
		oldest := c.lru.Back()
		e := oldest.Value.(*entry)
		c.lru.Remove(oldest)
		delete(c.entries, e.key)
		c.bytes -= e.size
	}
	return v
}

func (c *Cache) limits() (int, int64) {
	entries, bytes := capacity, int64(maxBytes)
	if c.maxEntries > 0 {
		entries = c.maxEntries
	}
	if c.maxBytes > 0 {
		bytes = c.maxBytes
	}
	return entries, bytes
}

// Len returns the number of cached entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Bytes returns the cached entries' size (Size of each value and key).
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
