package bench

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"
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
				if _, err := checkPods(fw, job, kube, pods, im.Name == "in-tree"); err != nil {
					t.Error(err)
				}
			})
		}
	}
}
