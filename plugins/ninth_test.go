package plugins

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/catalog/ninthtest"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

// A ninth framework registered in the catalog alone reaches the controller:
// Builders has its builder and Register gives it to Volcano's factory, whose
// plugin sets its variable in the Job's pods; the eight stay registered.
func TestNinthFrameworkReachesTheController(t *testing.T) {
	Register()
	ninthtest.Register(t)
	if _, ok := Builders()[ninthtest.Name]; !ok {
		t.Fatalf("Builders() has no %s: %v", ninthtest.Name, slices.Sorted(maps.Keys(Builders())))
	}
	if _, ok := vcplugins.GetPluginBuilder(ninthtest.Name); ok {
		t.Fatalf("Volcano's factory has %s before Register", ninthtest.Name)
	}
	Register()
	build, ok := vcplugins.GetPluginBuilder(ninthtest.Name)
	if !ok {
		t.Fatalf("Register did not give %s to Volcano's factory", ninthtest.Name)
	}
	job := &batch.Job{}
	job.Name, job.Namespace = "nine", "default"
	tmpl := v1.PodTemplateSpec{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: "busybox"}}}}
	job.Spec.Tasks = []batch.TaskSpec{{Name: "lead", Replicas: 1, Template: tmpl}, {Name: "worker", Replicas: 2, Template: tmpl}}
	job.Spec.Plugins = map[string][]string{ninthtest.Name: {}}
	worker := &job.Spec.Tasks[1]
	pod := jobs.NewPod(job, worker, 1)
	p := build(pluginsinterface.PluginClientset{}, nil)
	if p.Name() != ninthtest.Name {
		t.Errorf("Volcano's factory builds %q for %s", p.Name(), ninthtest.Name)
	}
	if err := p.OnPodCreate(pod, job); err != nil {
		t.Fatalf("OnPodCreate: %v", err)
	}
	want := v1.EnvVar{Name: ninthtest.EnvLead, Value: jobs.Host(job, &job.Spec.Tasks[0], 0) + ":7777"}
	if !slices.Contains(pod.Spec.Containers[0].Env, want) {
		t.Errorf("worker 1's variables %v, want %v among them", pod.Spec.Containers[0].Env, want)
	}
	for _, f := range Frameworks {
		if _, ok := vcplugins.GetPluginBuilder(f.Name); !ok {
			t.Errorf("%s is no longer in Volcano's factory", f.Name)
		}
	}
}

// The ninth framework's Sample passes what every Sample must.
func TestNinthSample(t *testing.T) {
	ninthtest.Register(t)
	fws := samples.Frameworks()
	checkSample(t, fws[len(fws)-1])
}
