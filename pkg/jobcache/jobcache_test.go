package jobcache

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

func job(uid, rv string) *batch.Job {
	return &batch.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: rv}}
}

func TestGetComputesOncePerRevision(t *testing.T) {
	var c Cache
	calls := 0
	compute := func() int { calls++; return calls }
	for i := 0; i < 3; i++ {
		if got := Get(&c, job("a", "1"), "tf", "", compute); got != 1 {
			t.Fatalf("call %d: got %d, want the cached 1", i, got)
		}
	}
	if got := Get(&c, job("a", "2"), "tf", "", compute); got != 2 {
		t.Errorf("new resourceVersion: got %d, want a fresh 2", got)
	}
	if got := Get(&c, job("a", "2"), "tf", "--port=1", compute); got != 3 {
		t.Errorf("other arguments: got %d, want a fresh 3", got)
	}
	if got := Get(&c, job("a", "2"), "mpi", "", compute); got != 4 {
		t.Errorf("other plugin: got %d, want a fresh 4", got)
	}
	if got := Get(&c, job("", ""), "tf", "", compute); got != 5 {
		t.Errorf("job without UID: got %d, want a fresh 5", got)
	}
	if got := Get(&c, job("", ""), "tf", "", compute); got != 6 {
		t.Errorf("job without UID is never cached: got %d, want 6", got)
	}
}

// A status update changes the resourceVersion but not the generation: the
// plan of the spec revision is kept. A spec change (new generation) gets a new one.
func TestGetKeysOnGenerationWhenSet(t *testing.T) {
	var c Cache
	calls := 0
	compute := func() int { calls++; return calls }
	at := func(gen int64, rv string) *batch.Job {
		j := job("a", rv)
		j.Generation = gen
		return j
	}
	for i, j := range []*batch.Job{at(1, "10"), at(1, "11"), at(1, "12")} {
		if got := Get(&c, j, "mpi", "", compute); got != 1 {
			t.Fatalf("generation 1, resourceVersion %s (%d): got %d, want the cached 1", j.ResourceVersion, i, got)
		}
	}
	if got := Get(&c, at(2, "13"), "mpi", "", compute); got != 2 {
		t.Errorf("generation 2: got %d, want a fresh 2", got)
	}
	// Generation and resourceVersion keys never collide.
	if got := Get(&c, job("a", "1"), "mpi", "", compute); got != 3 {
		t.Errorf("generation 0, resourceVersion 1: got %d, want a fresh 3", got)
	}
}

// Two callers missing at once must end up with the same value: plans carry
// state, so the entry stored first wins.
func TestGetConcurrentMissesShareTheStoredValue(t *testing.T) {
	var c Cache
	j := job("a", "1")
	got := Get(&c, j, "mpi", "", func() int {
		// Another caller computes and stores the entry while this one computes.
		return Get(&c, j, "mpi", "", func() int { return 1 }) + 1
	})
	if got != 1 {
		t.Errorf("got %d, want the value stored first (1)", got)
	}
	if again := Get(&c, j, "mpi", "", func() int { return 3 }); again != 1 {
		t.Errorf("cached value = %d, want 1", again)
	}
}

func TestGetIsBounded(t *testing.T) {
	var c Cache
	for i := 0; i < 3*capacity; i++ {
		Get(&c, job(fmt.Sprint(i), "1"), "tf", "", func() int { return i })
	}
	if c.Len() != capacity {
		t.Errorf("Len = %d, want %d", c.Len(), capacity)
	}
	// The newest entries survive.
	last := 3*capacity - 1
	if got := Get(&c, job(fmt.Sprint(last), "1"), "tf", "", func() int { return -1 }); got != last {
		t.Errorf("newest entry evicted: got %d", got)
	}
}

// A sweep: many small Jobs, each synced several times in turn with all the
// others in between (Volcano's job controller), must build each plan once.
func TestGetKeepsASweepsPlans(t *testing.T) {
	const jobs, syncs = 2000, 4
	var c Cache
	builds := 0
	for range syncs {
		for i := range jobs {
			Get(&c, job(fmt.Sprint(i), "1"), "tensorflow", "--ps=ps", func() *bigPlan { builds++; return newBigPlan(2048) })
		}
	}
	if builds != jobs {
		t.Errorf("%d syncs of each of %d jobs built %d plans, want %d", syncs, jobs, builds, jobs)
	}
}

// bigPlan stands for a large Job's plan: n bytes of host list.
type bigPlan struct {
	hosts string
	env   []string
}

func newBigPlan(n int) *bigPlan {
	return &bigPlan{hosts: strings.Repeat("h", n), env: []string{"A=1"}}
}

// Large plans are dropped, least recently used first, before the entry
// bound is reached: the cache holds at most maxBytes by Size, and Size is
// close to the heap the plans really hold.
func TestGetIsBoundedByBytes(t *testing.T) {
	const planBytes = 1 << 20
	const n = 2 * maxBytes / planBytes // twice what fits, fewer than capacity
	if n >= capacity {
		t.Fatalf("%d plans reach the entry bound %d", n, capacity)
	}
	var c Cache
	before := heap()
	for i := 0; i < n; i++ {
		Get(&c, job(fmt.Sprint(i), "1"), "mpi", "", func() *bigPlan { return newBigPlan(planBytes) })
		if got := c.Bytes(); got > maxBytes {
			t.Fatalf("after %d plans: %d bytes cached, over the bound %d", i+1, got, maxBytes)
		}
	}
	held := heap() - before
	if c.Len() >= n/2+1 || c.Len() < n/2-1 {
		t.Errorf("Len = %d, want about %d plans of 1 MiB within %d bytes", c.Len(), n/2, maxBytes)
	}
	// The estimate is what the heap holds, within 10%.
	if est := c.Bytes(); float64(held) < 0.9*float64(est) || float64(held) > 1.1*float64(est) {
		t.Errorf("cache holds %d bytes of heap, Size says %d", held, est)
	}
	last := n - 1
	if got := Get(&c, job(fmt.Sprint(last), "1"), "mpi", "", func() *bigPlan { return nil }); got == nil {
		t.Error("newest plan evicted")
	}
	if got := Get(&c, job("0", "1"), "mpi", "", func() *bigPlan { return nil }); got != nil {
		t.Error("oldest plan kept")
	}
}

// heap returns the live heap after a collection.
func heap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A value larger than the byte bound is computed on every call and not kept.
func TestGetDoesNotKeepAValueOverTheBound(t *testing.T) {
	c := Cache{maxBytes: 1 << 10}
	calls := 0
	compute := func() *bigPlan { calls++; return newBigPlan(2 << 10) }
	for i := 0; i < 2; i++ {
		Get(&c, job("a", "1"), "mpi", "", compute)
	}
	if calls != 2 || c.Len() != 0 || c.Bytes() != 0 {
		t.Errorf("calls %d, Len %d, Bytes %d; want 2, 0, 0", calls, c.Len(), c.Bytes())
	}
}

// The entry used last stays; the one unused longest goes.
func TestGetEvictsLeastRecentlyUsed(t *testing.T) {
	c := Cache{maxEntries: 2}
	get := func(uid string, v int) int { return Get(&c, job(uid, "1"), "tf", "", func() int { return v }) }
	get("a", 1)
	get("b", 2)
	get("a", -1) // a is used again
	get("c", 3)  // b goes
	got := []int{get("a", -1), get("c", -1), get("b", -2)}
	if diff := cmp.Diff([]int{1, 3, -2}, got); diff != "" {
		t.Errorf("values after eviction (-want +got):\n%s", diff)
	}
}

func TestSize(t *testing.T) {
	type node struct {
		next *node
		name string
	}
	cyclic := &node{name: "abcd"}
	cyclic.next = cyclic
	shared := &node{name: "xy"}
	ptr, str, slice := int64(8), int64(16), int64(24)
	nodeSize := ptr + str
	for name, tc := range map[string]struct {
		v    any
		want int64
	}{
		"nil":                         {nil, 0},
		"int":                         {1, 8},
		"string":                      {"hello", str + 5},
		"byte slice counts its cap":   {make([]byte, 3, 10), slice + 10},
		"string slice":                {[]string{"ab", "cde"}, slice + 2*str + 5},
		"map":                         {map[string]int{"ab": 1}, ptr + (str + 8) + 2},
		"pointer cycle counted once":  {cyclic, ptr + nodeSize + 4},
		"shared pointer counted once": {[]*node{shared, shared}, slice + 2*ptr + nodeSize + 2},
		"unexported fields":           {bigPlan{hosts: "abc"}, str + slice + 3},
		"interface in a struct":       {struct{ v any }{v: "ab"}, 2*ptr + str + 2},
	} {
		if got := Size(tc.v); got != tc.want {
			t.Errorf("%s: Size = %d, want %d", name, got, tc.want)
		}
	}
}

// BenchmarkGetMiss is one plan built and measured for a 2,048-worker job:
// what a new Job revision costs beyond its build.
func BenchmarkGetMiss(b *testing.B) {
	var c Cache
	hosts := make([]string, 2048)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("job-worker-%d.job.default.svc:2222", i)
	}
	plan := &struct{ hosts []string }{hosts}
	i := 0
	for b.Loop() {
		i++
		Get(&c, job("a", strconv.Itoa(i)), "tf", "", func() any { return plan })
	}
}

// BenchmarkGetHit is the per-pod cost once the plan is cached.
func BenchmarkGetHit(b *testing.B) {
	var c Cache
	j := job("a", "1")
	Get(&c, j, "tf", "", func() int { return 1 })
	for b.Loop() {
		Get(&c, j, "tf", "", func() int { return 2 })
	}
}
