package plugins

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

// Every framework, on its Sample's base Job with each of its bad values and
// an unknown flag: the hooks return no error Volcano would retry, no pod is
// changed, and the Job gets exactly one InvalidPluginArguments Warning
// naming the plugin, however often the hooks run.
func TestInvalidArgumentsAreReportedOnce(t *testing.T) {
	for _, f := range samples.Frameworks() {
		for _, arg := range append([]string{"--no-such-flag=1"}, f.Sample.BadValues...) {
			t.Run(f.Name+"/"+arg, func(t *testing.T) {
				kube := fake.NewSimpleClientset()
				client := pluginsinterface.PluginClientset{KubeClients: kube}
				job := sampleJob(f.Name, f.Sample, nil, arg)
				job.Namespace = "default"
				for i := 0; i < 3; i++ {
					if err := f.New(client, job.Spec.Plugins[f.Name]).OnJobAdd(job); err != nil {
						t.Fatalf("OnJobAdd must not return an error Volcano would retry: %v", err)
					}
				}
				for _, task := range job.Spec.Tasks {
					for i := 0; i < int(task.Replicas); i++ {
						pod := jobtest.MakePod(job, task.Name, i).Obj()
						orig := pod.DeepCopy()
						if err := f.New(client, job.Spec.Plugins[f.Name]).OnPodCreate(pod, job); err != nil {
							t.Fatalf("OnPodCreate must not return an error Volcano would retry: %v", err)
						}
						if diff := cmp.Diff(orig, pod); diff != "" {
							t.Errorf("pod %s changed despite invalid arguments (-before +after):\n%s", pod.Name, diff)
						}
					}
				}
				evs, err := kube.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(evs.Items) != 1 {
					t.Fatalf("got %d events, want 1", len(evs.Items))
				}
				ev := evs.Items[0]
				if ev.Type != v1.EventTypeWarning || ev.Reason != events.ReasonInvalidArguments || ev.InvolvedObject.Name != job.Name ||
					!strings.Contains(ev.Message, "plugin "+f.Name) {
					t.Errorf("event = %s %s %q on %s, want Warning %s naming plugin %s on %s",
						ev.Type, ev.Reason, ev.Message, ev.InvolvedObject.Name, events.ReasonInvalidArguments, f.Name, job.Name)
				}
			})
		}
	}
}

// Every framework's Job hooks may run any number of times: OnJobAdd marks
// the Job controlled by the plugin, OnJobDelete unmarks it, twice over.
func TestJobHooksAreIdempotent(t *testing.T) {
	for _, f := range samples.Frameworks() {
		t.Run(f.Name, func(t *testing.T) {
			client := pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}
			job := sampleJob(f.Name, f.Sample, nil)
			job.Namespace = "default"
			for i := 0; i < 2; i++ {
				if err := f.New(client, job.Spec.Plugins[f.Name]).OnJobAdd(job); err != nil {
					t.Fatal(err)
				}
				if err := f.New(client, job.Spec.Plugins[f.Name]).OnJobUpdate(job); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(map[string]string{"plugin-" + f.Name: f.Name}, job.Status.ControlledResources); diff != "" {
				t.Errorf("after OnJobAdd (-want +got):\n%s", diff)
			}
			for i := 0; i < 2; i++ {
				if err := f.New(client, job.Spec.Plugins[f.Name]).OnJobDelete(job); err != nil {
					t.Fatal(err)
				}
			}
			if len(job.Status.ControlledResources) != 0 {
				t.Errorf("after OnJobDelete: %v", job.Status.ControlledResources)
			}
		})
	}
}
