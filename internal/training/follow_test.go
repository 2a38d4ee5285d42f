package training

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestUnstamped(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"2026-11-26T08:25:17.123456789Z rank 0 of 3 joined on a\n", "rank 0 of 3 joined on a\n"},
		{"2026-11-26T08:25:17Z one two\n2026-11-26T08:25:18Z \n2026-11-26T08:25:19Z last", "one two\n\nlast\n"},
	} {
		if got := Unstamped(tc.in); got != tc.want {
			t.Errorf("Unstamped(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppendAfter(t *testing.T) {
	var log bytes.Buffer
	first := []byte("2026-11-26T08:25:17.1Z rank 0 of 3 joined\n2026-11-26T08:25:17.5Z epoch 1 loss 2.0\n")
	last := appendAfter(&log, first, time.Time{})
	// The stream opened again from 08:25:17 (whole seconds) repeats both.
	again := []byte("2026-11-26T08:25:17.1Z rank 0 of 3 joined\n2026-11-26T08:25:17.5Z epoch 1 loss 2.0\n2026-11-26T08:25:18.2Z epoch 2 loss 1.0\n")
	last = appendAfter(&log, again, last)
	want := "2026-11-26T08:25:17.1Z rank 0 of 3 joined\n2026-11-26T08:25:17.5Z epoch 1 loss 2.0\n2026-11-26T08:25:18.2Z epoch 2 loss 1.0\n"
	if log.String() != want {
		t.Errorf("log = %q, want %q", log.String(), want)
	}
	if want := time.Date(2026, 11, 26, 8, 25, 18, 200000000, time.UTC); !last.Equal(want) {
		t.Errorf("last = %v, want %v", last, want)
	}
}

// Incarnations keeps every pod of a name, oldest first, where
// CollectStamped keeps the last.
func TestIncarnations(t *testing.T) {
	lf := &LogFollower{logs: map[types.UID]*followed{
		"new-w1": {name: "job-worker-1", seq: 3, buf: bytes.NewBufferString("new\n")},
		"m0":     {name: "job-master-0", seq: 1, buf: bytes.NewBufferString("master\n")},
		"old-w1": {name: "job-worker-1", seq: 2, buf: bytes.NewBufferString("old\n")},
	}}
	want := map[string][]string{"job-master-0": {"master\n"}, "job-worker-1": {"old\n", "new\n"}}
	if diff := cmp.Diff(want, lf.Incarnations()); diff != "" {
		t.Errorf("Incarnations (-want +got):\n%s", diff)
	}
}
