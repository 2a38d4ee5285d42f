package jobtest

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"
)

// Builder is the form of a plugin builder in Volcano's factory.
type Builder = func(pluginsinterface.PluginClientset, []string) pluginsinterface.PluginInterface

// RunPod runs the plugin's OnJobAdd and then its OnPodCreate on the index-th pod
// of task, each on a fresh plugin instance as Volcano's controller does, with a
// fake clientset, and returns the pod. Hook errors fail the test.
func RunPod(t *testing.T, build Builder, plugin string, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	client := pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}
	if err := build(client, job.Spec.Plugins[plugin]).OnJobAdd(job); err != nil {
		t.Fatalf("OnJobAdd: %v", err)
	}
	pod := MakePod(job, task, index).Obj()
	if err := build(client, job.Spec.Plugins[plugin]).OnPodCreate(pod, job); err != nil {
		t.Fatalf("OnPodCreate: %v", err)
	}
	return pod
}

// ErrorString renders field errors as the API server and the plugins' events
// do ("" for none).
func ErrorString(errs field.ErrorList) string {
	if len(errs) == 0 {
		return ""
	}
	return errs.ToAggregate().Error()
}

// CountEnv returns how often a variable is defined in env.
func CountEnv(env []v1.EnvVar, name string) int {
	n := 0
	for _, e := range env {
		if e.Name == name {
			n++
		}
	}
	return n
}

// Events lists the events in namespace "default".
func Events(t *testing.T, client kubernetes.Interface) []v1.Event {
	t.Helper()
	evs, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return evs.Items
}
