package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	utiltesting "github.com/vcplugins/framework-plugins/pkg/testing"
)

// A Job over jobs.CheckBounds that reaches the controller without admission
// (created while the webhook configurations were absent, or in a namespace
// they skip) gets nothing from the plugin: no variable, no wait container, no
// ConfigMap, and one Warning on the Job naming the bound.
func TestJobsOverBoundsAreReported(t *testing.T) {
	for _, f := range Frameworks {
		t.Run(f.Name, func(t *testing.T) {
			kube := fake.NewSimpleClientset()
			client := pluginsinterface.PluginClientset{KubeClients: kube}
			b := utiltesting.MakeJob("big")
			for _, role := range []string{"ps", "worker", "chief", "master", "launcher", "scheduler", "server"} {
				b.Task(utiltesting.MakeTask(role, 1).Obj())
			}
			for i := 0; i < jobs.MaxTasks; i++ {
				b.Task(utiltesting.MakeTask(fmt.Sprintf("extra-%d", i), 1).Obj())
			}
			job := b.Plugin(f.Name).Obj()
			for i := 0; i < 2; i++ {
				if err := f.New(client, job.Spec.Plugins[f.Name]).OnJobAdd(job); err != nil {
					t.Fatalf("OnJobAdd must not return an error Volcano would retry: %v", err)
				}
			}
			pod := utiltesting.MakePod(job, "worker", 0).Obj()
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
				!strings.Contains(evs.Items[0].Message, fmt.Sprintf("spec.tasks: Too many: %d: must have at most %d items", jobs.MaxTasks+7, jobs.MaxTasks)) {
				t.Errorf("events %+v; want one %s naming the bound", evs.Items, events.ReasonInvalidArguments)
			}
		})
	}
}
