package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// The lines follow prints for a sequence of observations of one job: one per
// change, and "still waiting" every heartbeatEvery while nothing changes.
func TestProgressLines(t *testing.T) {
	// step is one observation: a poll seeing state (with why), or a pod
	// bound (pod set).
	type step struct {
		at        time.Duration
		state     jobState
		why       string
		pod, node string
	}
	s := time.Second
	pending := func(created, bound int) jobState {
		return jobState{Phase: batch.Pending, Want: 3, Created: created, Bound: bound}
	}
	running := func(running, succeeded int) jobState {
		return jobState{Phase: batch.Running, Want: 3, Created: 3, Bound: 3, Running: running, Succeeded: succeeded}
	}
	cases := []struct {
		name  string
		steps []step
		want  []string
	}{{
		name: "a job that runs through: one line per change, none for the same state polled again",
		steps: []step{
			{at: 0, state: pending(0, 0)},
			{at: s / 4, state: pending(0, 0)},
			{at: s, state: pending(3, 0)},
			{at: s + s/2, pod: "tf-dist-ps-0", node: "kwok-node-0"},
			{at: 2 * s, state: pending(3, 1)},
			{at: 2 * s, state: running(3, 0)},
			{at: 3 * s, state: running(3, 0)},
			{at: 6 * s, state: running(2, 1)},
			{at: 7 * s, state: jobState{Phase: batch.Completed, Want: 3, Created: 3, Bound: 3, Succeeded: 3}},
		},
		want: []string{
			"  [  0.0s] tf-dist       Pending     pods: 0/3 created, 0 bound, 0 running, 0 succeeded",
			"  [  1.0s] tf-dist       Pending     pods: 3/3 created, 0 bound, 0 running, 0 succeeded",
			"  [  1.5s] tf-dist       pod tf-dist-ps-0           bound to kwok-node-0",
			"  [  2.0s] tf-dist       Running     pods: 3/3 created, 3 bound, 3 running, 0 succeeded",
			"  [  6.0s] tf-dist       Running     pods: 3/3 created, 3 bound, 2 running, 1 succeeded",
			"  [  7.0s] tf-dist       Completed   pods: 3/3 created, 3 bound, 0 running, 3 succeeded",
		},
	}, {
		name: "a job that waits: still waiting every 30s, with why, counted from the last line",
		steps: []step{
			{at: 0, state: pending(3, 0), why: "; PodGroup: Inqueue"},
			{at: 3 * s, state: pending(3, 0), why: "; PodGroup: Inqueue"},
			{at: 29 * s, state: pending(3, 0), why: "; PodGroup: Pending, 3/3 tasks in gang unschedulable"},
			{at: 30 * s, state: pending(3, 0), why: "; PodGroup: Pending, 3/3 tasks in gang unschedulable"},
			{at: 45 * s, state: pending(3, 0)},
			{at: 59 * s, state: pending(3, 0)},
			{at: 60 * s, state: pending(3, 0)},
			{at: 61 * s, state: running(3, 0)},
			{at: 90 * s, state: running(3, 0)},
			{at: 91 * s, state: running(3, 0)},
		},
		want: []string{
			"  [  0.0s] tf-dist       Pending     pods: 3/3 created, 0 bound, 0 running, 0 succeeded",
			"  [ 30.0s] tf-dist       still waiting (no change for 30.0s): Pending, pods: 3/3 created, 0 bound, 0 running, 0 succeeded; PodGroup: Pending, 3/3 tasks in gang unschedulable",
			"  [ 60.0s] tf-dist       still waiting (no change for 60.0s): Pending, pods: 3/3 created, 0 bound, 0 running, 0 succeeded",
			"  [ 61.0s] tf-dist       Running     pods: 3/3 created, 3 bound, 3 running, 0 succeeded",
			"  [ 91.0s] tf-dist       still waiting (no change for 30.0s): Running, pods: 3/3 created, 3 bound, 3 running, 0 succeeded",
		},
	}, {
		name: "a bound pod is a change: it has its own line, delays the next still waiting, and its count alone prints no state line",
		steps: []step{
			{at: 0, state: pending(3, 0)},
			{at: 20 * s, pod: "tf-dist-worker-0", node: "node-real"},
			{at: 21 * s, state: pending(3, 1)},
			{at: 30 * s, state: pending(3, 1)},
			{at: 49 * s, state: pending(3, 1)},
			{at: 50 * s, state: pending(3, 1)},
		},
		want: []string{
			"  [  0.0s] tf-dist       Pending     pods: 3/3 created, 0 bound, 0 running, 0 succeeded",
			"  [ 20.0s] tf-dist       pod tf-dist-worker-0       bound to node-real",
			"  [ 50.0s] tf-dist       still waiting (no change for 30.0s): Pending, pods: 3/3 created, 1 bound, 0 running, 0 succeeded",
		},
	}, {
		name: "a phase change alone prints",
		steps: []step{
			{at: 0, state: running(3, 0)},
			{at: s, state: jobState{Phase: batch.Restarting, Want: 3, Created: 3, Bound: 3, Running: 3}},
		},
		want: []string{
			"  [  0.0s] tf-dist       Running     pods: 3/3 created, 3 bound, 3 running, 0 succeeded",
			"  [  1.0s] tf-dist       Restarting  pods: 3/3 created, 3 bound, 3 running, 0 succeeded",
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := progress{name: "tf-dist"}
			var got []string
			for _, st := range tc.steps {
				if st.pod != "" {
					got = append(got, p.bound(st.at, st.pod, st.node))
				} else if line := p.update(st.at, st.state, st.why); line != "" {
					got = append(got, line)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
