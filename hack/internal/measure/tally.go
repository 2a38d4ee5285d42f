package measure

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// PodTally counts, by name, the pods a measurement's pod watch
// (kubeutil.WatchPods) reports: those seen created and those seen bound to
// a node. A deletion takes nothing back.
type PodTally struct {
	created, bound map[string]bool
}

// NewPodTally returns an empty tally.
func NewPodTally() *PodTally {
	return &PodTally{created: map[string]bool{}, bound: map[string]bool{}}
}

// Observe records one watch event. It returns the event's pod, nil for a
// deletion or an event of no pod (a watch error), and whether this event
// was the first to show it, and the first to show it bound.
func (t *PodTally) Observe(ev watch.Event) (pod *corev1.Pod, created, bound bool) {
	p, ok := ev.Object.(*corev1.Pod)
	if !ok || ev.Type == watch.Deleted {
		return nil, false, false
	}
	if !t.created[p.Name] {
		t.created[p.Name], created = true, true
	}
	if p.Spec.NodeName != "" && !t.bound[p.Name] {
		t.bound[p.Name], bound = true, true
	}
	return p, created, bound
}

// Created is the number of pods seen created.
func (t *PodTally) Created() int { return len(t.created) }

// Bound is the number of pods seen bound to a node.
func (t *PodTally) Bound() int { return len(t.bound) }
