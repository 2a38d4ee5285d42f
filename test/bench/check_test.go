package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/plugins/pytorch"
)

// TestBenchmarkedJobsInject runs each benchmarked implementation once on a
// small job, as the benchmarks' first iteration does, and checks every pod
// with the framework's Sample.Check: `make test` does not run the
// benchmarks, and a check that cannot pass would make `make bench` fail.
func TestBenchmarkedJobsInject(t *testing.T) {
	for _, fw := range Frameworks {
		for _, im := range Impls {
			build, args := im.Build(fw)
			if build == nil {
				continue
			}
			t.Run(fw.Name+"/"+im.Name, func(t *testing.T) {
				job := Job(fw, 3)
				job.Spec.Plugins[fw.Name] = args
				job.Status.ControlledResources = map[string]string{}
				kube := fake.NewSimpleClientset()
				client := pluginsinterface.PluginClientset{KubeClients: kube}
				if err := build(client, args).OnJobAdd(job); err != nil {
					t.Fatalf("OnJobAdd: %v", err)
				}
				pods := podsOf(job)
				for _, pod := range pods {
					if err := build(client, args).OnPodCreate(pod, job); err != nil {
						t.Fatalf("OnPodCreate %s: %v", pod.Name, err)
					}
				}
				if _, err := checkPods(fw, job, kube, pods, im.InTree); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestCheckInTreeWait checks that the in-tree pytorch check tells stock's
// wait apart: pods made with --wait-master-enabled fail when checked as
// without it and the other way round, and a worker whose init container
// probes another port fails.
func TestCheckInTreeWait(t *testing.T) {
	fw := Frameworks[slices.IndexFunc(Frameworks, func(f Framework) bool { return f.Name == pytorch.Name })]
	// run returns the pods the in-tree plugin made with args for a job of 2 workers.
	run := func(args []string) (*batch.Job, []*v1.Pod) {
		job := Job(fw, 2)
		job.Spec.Plugins[fw.Name] = args
		client := pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}
		pods := podsOf(job)
		for _, pod := range pods {
			if err := fw.InTree(client, args).OnPodCreate(pod, job); err != nil {
				t.Fatalf("OnPodCreate %s: %v", pod.Name, err)
			}
		}
		return job, pods
	}
	otherPort := func(pods []*v1.Pod) {
		for _, p := range pods {
			for i := range p.Spec.InitContainers {
				c := p.Spec.InitContainers[i].Command
				c[2] = strings.ReplaceAll(c[2], " 23456", " 23457")
			}
		}
	}
	tests := []struct {
		name    string
		args    []string
		edit    func([]*v1.Pod)
		wait    bool
		wantErr []bool // per pod: master, worker 0, worker 1
	}{
		{name: "no wait, checked as such", args: nil, wait: false, wantErr: []bool{false, false, false}},
		{name: "wait, checked as such", args: []string{"--wait-master-enabled"}, wait: true, wantErr: []bool{false, false, false}},
		{name: "no wait, checked as wait", args: nil, wait: true, wantErr: []bool{false, true, true}},
		{name: "wait, checked as no wait", args: []string{"--wait-master-enabled"}, wait: false, wantErr: []bool{false, true, true}},
		{name: "wait on another port", args: []string{"--wait-master-enabled"}, edit: otherPort, wait: true, wantErr: []bool{false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, pods := run(tt.args)
			if tt.edit != nil {
				tt.edit(pods)
			}
			roles := []string{"master", "worker", "worker"}
			var got []bool
			for i, pod := range pods {
				got = append(got, checkInTreeWait(job, pod, roles[i], tt.wait) != nil)
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Errorf("errors per pod (-want +got):\n%s", diff)
			}
		})
	}
}
