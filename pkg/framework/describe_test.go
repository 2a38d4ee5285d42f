package framework

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// The wait container a pod gets follows the edges: which tasks wait, for
// which hosts and port, and pod 0 of a task that waits for its own pod 0.
func TestWaiters(t *testing.T) {
	mk := jobtest.MakeTask
	job := jobtest.MakeJob("j").
		Task(mk("ps", 2).Obj()).Task(mk("worker", 3).Obj()).Task(mk("chief", 1).Obj()).
		Task(mk("shared", 4).Hostname("one").Subdomain("net").Obj()).Task(mk("idle", 0).Obj()).Obj()
	on := wait.Options{Enabled: true, Timeout: time.Minute}
	cases := map[string]struct {
		waits []Wait
		opts  wait.Options
		task  string
		index int
		want  string // WAIT_TARGETS; "": no wait container
	}{
		"every pod of the target":         {waits: []Wait{{From: "worker", To: "ps", Port: 2222}}, opts: on, task: "worker", index: 1, want: "j-ps-0.j.default.svc.cluster.local:2222 j-ps-1.j.default.svc.cluster.local:2222"},
		"target task does not wait":       {waits: []Wait{{From: "worker", To: "ps", Port: 2222}}, opts: on, task: "ps", index: 0},
		"DNS only":                        {waits: []Wait{{From: "chief", To: "ps"}}, opts: on, task: "chief", want: "j-ps-0.j.default.svc.cluster.local j-ps-1.j.default.svc.cluster.local"},
		"shared hostname listed once":     {waits: []Wait{{From: "worker", To: "shared", Port: 22}}, opts: on, task: "worker", want: "one.net.default.svc.cluster.local:22"},
		"first only":                      {waits: []Wait{{From: "worker", To: "chief", FirstOnly: true}}, opts: on, task: "worker", want: "j-chief-0.j.default.svc.cluster.local"},
		"own pod 0 does not wait":         {waits: []Wait{{From: "worker", To: "worker", FirstOnly: true}}, opts: on, task: "worker", index: 0},
		"own pod 0 waited for by pod 2":   {waits: []Wait{{From: "worker", To: "worker", FirstOnly: true}}, opts: on, task: "worker", index: 2, want: "j-worker-0.j.default.svc.cluster.local"},
		"two edges from one task":         {waits: []Wait{{From: "chief", To: "ps", Port: 1}, {From: "chief", To: "worker", Port: 2}}, opts: on, task: "chief", want: "j-ps-0.j.default.svc.cluster.local:1 j-ps-1.j.default.svc.cluster.local:1 j-worker-0.j.default.svc.cluster.local:2 j-worker-1.j.default.svc.cluster.local:2 j-worker-2.j.default.svc.cluster.local:2"},
		"edge's own domain":               {waits: []Wait{{From: "worker", To: "chief", Port: 22, Domain: "corp.example"}}, opts: on, task: "worker", want: "j-chief-0.j.default.svc.corp.example:22"},
		"waiting off":                     {waits: []Wait{{From: "worker", To: "ps", Port: 2222}}, task: "worker"},
		"edges only from tasks with pods": {waits: nil, opts: on, task: "idle"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := NewWaiters(job, tc.waits, tc.opts)
			task, _ := jobs.Task(job, tc.task)
			pod := jobs.NewPod(job, task, tc.index)
			added := w.AddTo(pod, tc.task, tc.index)
			got := ""
			for _, c := range pod.Spec.InitContainers {
				if c.Name == wait.ContainerName {
					got = envValue(c, wait.TargetsEnv)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WAIT_TARGETS (-want +got):\n%s", diff)
			}
			if added != (tc.want != "") {
				t.Errorf("AddTo = %v, want %v", added, tc.want != "")
			}
		})
	}
}

// AddRoles and AddWaits keep only tasks that exist with replicas.
func TestDescriptionPresentTasksOnly(t *testing.T) {
	mk := jobtest.MakeTask
	job := jobtest.MakeJob("j").Task(mk("a", 1).Obj()).Task(mk("b", 2).Obj()).Task(mk("empty", 0).Obj()).Obj()
	var d Description
	d.AddRoles(job, Role{Name: "x", Task: "a"}, Role{Name: "y", Task: "empty"}, Role{Name: "z", Task: "missing"}, Role{Name: "w", Task: "b"})
	d.AddWaits(job, "a", 7, false, "b", "empty", "missing")
	d.AddWaits(job, "empty", 7, false, "a", "b")
	want := Description{
		Roles: []Role{{Name: "x", Task: "a"}, {Name: "w", Task: "b"}},
		Waits: []Wait{{From: "b", To: "a", Port: 7}},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("description (-want +got):\n%s", diff)
	}
}

func envValue(c v1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// WaitTargetsLen measures exactly the file of WaitTargets' targets.
func TestWaitTargetsLen(t *testing.T) {
	mk := jobtest.MakeTask
	job := jobtest.MakeJob("resnet50-train").
		Task(mk("master", 1).Obj()).Task(mk("worker", 1203).Obj()).
		Task(mk("shared", 4).Hostname("one").Subdomain("net").Obj()).Obj()
	for _, w := range []Wait{
		{From: "master", To: "worker", Port: 22},
		{From: "worker", To: "master", Port: 29500, FirstOnly: true},
		{From: "worker", To: "master"},
		{From: "master", To: "shared", Port: 8080},
		{From: "master", To: "worker", Port: 22, Domain: "corp.example"},
		{From: "master", To: "shared", Domain: "corp.example"},
	} {
		if got, want := WaitTargetsLen(job, w), len(wait.TargetsFile(WaitTargets(job, w))); got != want {
			t.Errorf("WaitTargetsLen(%+v) = %d, want %d", w, got, want)
		}
	}
}
