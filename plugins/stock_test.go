package plugins

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	stockmpi "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/mpi"
	stockpytorch "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/pytorch"
	stocktensorflow "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/tensorflow"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

// Volcano's in-tree plugins of the frameworks that have a Stock, by name.
var stockBuilders = map[string]vcplugins.PluginBuilder{
	"tensorflow": stocktensorflow.New,
	"pytorch":    stockpytorch.New,
	"mpi":        stockmpi.New,
}

// The frameworks with a Stock are exactly those Volcano has in-tree.
func TestStockFrameworks(t *testing.T) {
	for _, f := range Frameworks {
		if _, inTree := stockBuilders[f.Name]; inTree != (f.Stock != nil) {
			t.Errorf("%s: Stock set %v, Volcano has an in-tree plugin %v", f.Name, f.Stock != nil, inTree)
		}
	}
}

// runHooks runs OnJobAdd and then OnPodCreate on every pod of job with the
// plugin name's builder b, and returns the pods.
func runHooks(t *testing.T, b vcplugins.PluginBuilder, client pluginsinterface.PluginClientset, name string, job *batch.Job) []*v1.Pod {
	t.Helper()
	if job.Status.ControlledResources == nil { // as Volcano's controller makes it before any hook
		job.Status.ControlledResources = map[string]string{}
	}
	if err := b(client, job.Spec.Plugins[name]).OnJobAdd(job); err != nil {
		t.Fatalf("OnJobAdd: %v", err)
	}
	var pods []*v1.Pod
	for _, task := range job.Spec.Tasks {
		for i := range int(task.Replicas) {
			pod := jobtest.MakePod(job, task.Name, i).Obj()
			if err := b(client, job.Spec.Plugins[name]).OnPodCreate(pod, job); err != nil {
				t.Fatalf("OnPodCreate %s: %v", pod.Name, err)
			}
			pods = append(pods, pod)
		}
	}
	return pods
}

// A Job whose arguments our plugin refuses while Volcano's admission accepts
// them gets from the factory's builder exactly what Volcano's in-tree plugin
// gives it (Go's flag parsing stops at the first flag it does not know; the
// rest keep their defaults), and one InvalidPluginArguments event that says
// so; a Job with valid arguments gets our plugin's, as from Framework.New.
func TestStockFallback(t *testing.T) {
	Register()
	for _, f := range samples.Frameworks() {
		if f.Stock == nil {
			continue
		}
		factory, _ := vcplugins.GetPluginBuilder(f.Name)
		for _, tc := range []struct {
			name  string
			args  []string
			stock bool
		}{
			{"unknown flag first", []string{"--prot=2222", "--port=3333"}, true},
			{"unknown flag last", []string{f.Sample.ValidArgs[0], "--no-such-flag=1"}, true},
			{"valid", []string{f.Sample.ValidArgs[0]}, false},
		} {
			t.Run(f.Name+"/"+tc.name, func(t *testing.T) {
				job := sampleJob(f.Name, f.Sample, nil, tc.args...)
				job.Namespace = "default"
				job.UID = types.UID("uid-" + f.Name + "-" + strings.ReplaceAll(tc.name, " ", "-"))
				want := stockBuilders[f.Name]
				if !tc.stock {
					want = f.New
				}
				kube := fake.NewSimpleClientset()
				client := pluginsinterface.PluginClientset{KubeClients: kube}
				got := runHooks(t, factory, client, f.Name, job.DeepCopy())
				expected := runHooks(t, want, pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}, f.Name, job.DeepCopy())
				if diff := cmp.Diff(expected, got); diff != "" {
					t.Errorf("pods from the factory's %s differ from %s's (-want +got):\n%s", f.Name, map[bool]string{true: "Volcano's in-tree plugin", false: "ours"}[tc.stock], diff)
				}
				evs := jobtest.Events(t, kube)
				switch {
				case !tc.stock && len(evs) > 0:
					t.Errorf("valid arguments: events %v, want none", evs)
				case tc.stock && (len(evs) != 1 || evs[0].Reason != events.ReasonInvalidArguments ||
					!strings.Contains(evs[0].Message, "Volcano's in-tree "+f.Name+" plugin configures the job's pods instead")):
					t.Errorf("events %+v, want one %s saying Volcano's in-tree plugin configures the pods", evs, events.ReasonInvalidArguments)
				}
			})
		}
	}
}

// Volcano's in-tree tensorflow plugin gives every pod the whole cluster:
// past framework.MaxStockPodBytes for the Job's pods, neither plugin
// configures them, and the event says why.
func TestStockFallbackBound(t *testing.T) {
	Register()
	factory, _ := vcplugins.GetPluginBuilder("tensorflow")
	job := jobtest.MakeJob("a-training-job-with-a-long-name").Namespace("default").UID("uid-stock-bound").
		Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 3000).Obj()).
		Plugin("tensorflow", "--prot=2222").Obj()
	kube := fake.NewSimpleClientset()
	b := factory(pluginsinterface.PluginClientset{KubeClients: kube}, job.Spec.Plugins["tensorflow"])
	job.Status.ControlledResources = map[string]string{}
	if err := b.OnJobAdd(job); err != nil {
		t.Fatalf("OnJobAdd: %v", err)
	}
	pod := jobtest.MakePod(job, "worker", 7).Obj()
	orig := pod.DeepCopy()
	if err := b.OnPodCreate(pod, job); err != nil {
		t.Fatalf("OnPodCreate: %v", err)
	}
	if diff := cmp.Diff(orig, pod); diff != "" {
		t.Errorf("pod changed (-before +after):\n%s", diff)
	}
	evs := jobtest.Events(t, kube)
	if len(evs) != 1 || !strings.Contains(evs[0].Message, "no plugin configures the job's pods") {
		t.Errorf("events %+v, want one saying no plugin configures the pods (over %d bytes)", evs, framework.MaxStockPodBytes)
	}
}
