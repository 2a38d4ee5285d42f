package jobcache

import (
	"fmt"
	"testing"

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
