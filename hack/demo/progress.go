package main

import (
	"fmt"
	"time"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// heartbeatEvery is how long follow stays silent about a job whose state does
// not change before it says the job is still waiting, and again after each
// such line.
const heartbeatEvery = 30 * time.Second

// jobState is what the progress lines say about a job.
type jobState struct {
	Phase batch.JobPhase
	// Want is the number of pods the job's tasks ask for; the others count
	// the job's pods as last seen (Running excludes deleted pods).
	Want, Created, Bound, Running, Succeeded int
}

func (s jobState) String() string {
	return fmt.Sprintf("pods: %d/%d created, %d bound, %d running, %d succeeded", s.Created, s.Want, s.Bound, s.Running, s.Succeeded)
}

// progress decides the progress lines of one job, so that the user sees each
// change once instead of every job's state every few seconds: a line when the
// state changes, and, while it does not, "still waiting" once every
// heartbeatEvery. Bound pods have lines of their own (bound), so the bound
// count alone prints no state line. Times are durations since the first
// submission, as the lines' stamps show them.
type progress struct {
	name    string // the job's name
	seen    bool   // a state was seen
	state   jobState
	changed time.Duration // when the state last changed
	printed time.Duration // when the last line about the job was printed
}

// update returns the line to print on seeing state s at time at, or "" when
// there is nothing new to say. why is where a waiting job stands (its
// PodGroup's message, waiting containers), shown on the "still waiting"
// lines only.
func (p *progress) update(at time.Duration, s jobState, why string) string {
	key, last := s, p.state
	key.Bound, last.Bound = 0, 0
	switch {
	case !p.seen || key != last:
		p.seen, p.state, p.changed, p.printed = true, s, at, at
		return fmt.Sprintf("  %s %-13s %-11s %s", stampAt(at), p.name, s.Phase, s)
	case at-p.printed >= heartbeatEvery:
		p.state, p.printed = s, at
		return fmt.Sprintf("  %s %-13s still waiting (no change for %s): %s, %s%s", stampAt(at), p.name, seconds(at-p.changed), s.Phase, s, why)
	}
	p.state = s
	return ""
}

// bound returns the line for pod bound to node at time at; a binding is a
// change, so the next "still waiting" comes heartbeatEvery later.
func (p *progress) bound(at time.Duration, pod, node string) string {
	p.changed, p.printed = at, at
	return fmt.Sprintf("  %s %-13s pod %-22s bound to %s", stampAt(at), p.name, pod, node)
}
