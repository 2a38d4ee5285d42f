package plugins

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// A Job over bounds.Check or bounds.CheckReplicas that reaches the
// controller without admission (created while the webhook configurations
// were absent, or in a namespace they skip) gets nothing from the plugin: no
// variable, no wait container, no ConfigMap, and one Warning on the Job
// naming the bound; and OnJobAdd returns a framework.OverBoundsError, so that
// Volcano builds none of its pods (#38 M3, L3: it would build all of them in
// memory first).
func TestJobsOverBoundsAreReported(t *testing.T) {
	big := func(f *framework.Framework) *batch.Job {
		b := jobtest.MakeJob("big")
		for _, role := range []string{"ps", "worker", "chief", "master", "launcher", "scheduler", "server"} {
			b.Task(jobtest.MakeTask(role, 1).Obj())
		}
		for i := 0; i < bounds.MaxTasks; i++ {
			b.Task(jobtest.MakeTask(fmt.Sprintf("extra-%d", i), 1).Obj())
		}
		return b.Plugin(f.Name).Obj()
	}
	many := func(f *framework.Framework) *batch.Job {
		b := jobtest.MakeJob("big")
		for _, role := range []string{"ps", "chief", "master", "launcher", "scheduler", "server"} {
			b.Task(jobtest.MakeTask(role, 1).Obj())
		}
		return b.Task(jobtest.MakeTask("worker", bounds.MaxReplicas).Obj()).Plugin(f.Name).Obj()
	}
	for _, tc := range []struct {
		name  string
		job   func(*framework.Framework) *batch.Job
		bound string
	}{
		{"tasks", big, fmt.Sprintf("spec.tasks: Too many: %d: must have at most %d items", bounds.MaxTasks+7, bounds.MaxTasks)},
		{"replicas", many, fmt.Sprintf("the job asks for %d pods in all", bounds.MaxReplicas+6)},
	} {
		for _, f := range Frameworks {
			t.Run(tc.name+"/"+f.Name, func(t *testing.T) {
				testJobOverBounds(t, f, tc.job(f), tc.bound)
			})
		}
	}
}

func testJobOverBounds(t *testing.T, f *framework.Framework, job *batch.Job, bound string) {
	kube := fake.NewSimpleClientset()
	client := pluginsinterface.PluginClientset{KubeClients: kube}
	for i := 0; i < 2; i++ {
		var over *framework.OverBoundsError
		if err := f.New(client, job.Spec.Plugins[f.Name]).OnJobAdd(job); !errors.As(err, &over) || !strings.Contains(err.Error(), bound) {
			t.Fatalf("OnJobAdd: %v; want an OverBoundsError naming the bound", err)
		}
	}
	if len(job.Status.ControlledResources) > 0 {
		t.Errorf("the Job was marked: %v", job.Status.ControlledResources)
	}
	pod := jobtest.MakePod(job, "worker", 0).Obj()
	before := pod.DeepCopy()
	if err := f.New(client, job.Spec.Plugins[f.Name]).OnPodCreate(pod, job); err != nil {
		t.Fatalf("OnPodCreate: %v", err)
	}
	if diff := cmp.Diff(before.Spec, pod.Spec); diff != "" {
		t.Errorf("the pod was changed (-before +after):\n%s", diff)
	}
	cms, _ := kube.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
	if len(cms.Items) > 0 {
		t.Errorf("%d ConfigMaps created", len(cms.Items))
	}
	evs, _ := kube.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != events.ReasonInvalidArguments ||
		!strings.Contains(evs.Items[0].Message, bound) {
		t.Errorf("events %+v; want one %s naming the bound", evs.Items, events.ReasonInvalidArguments)
	}
}
