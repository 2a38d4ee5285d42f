package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/catalog"
	"github.com/vcplugins/framework-plugins/plugins/catalog/ninthtest"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
)

// Every framework of the catalog, and a ninth registered in the catalog
// alone, gets its Job from its Sample, and each Job can complete: run
// through the framework's own plugin, a pod that checks the variable has it,
// and the listeners accept exactly as many connections as pods wait.
func TestFrameworkJobs(t *testing.T) {
	ninthtest.Register(t)
	var names []string
	for _, f := range samples.Frameworks() {
		j, err := frameworkJob(f, "busybox:local")
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		names = append(names, j.Name)
		if !slices.Contains(j.Spec.Plugins[f.Name], "--wait-image=busybox:local") {
			t.Errorf("%s: arguments %v without the local wait image", f.Name, j.Spec.Plugins[f.Name])
		}
		if j.Spec.MinAvailable != int32(len(j.Spec.Tasks)) {
			t.Errorf("%s: minAvailable %d for %d pods", f.Name, j.Spec.MinAvailable, len(j.Spec.Tasks))
		}
		// The connections the wait containers make, and those the
		// listeners accept, by host:port.
		connects, accepts := map[string]int{}, map[string]int{}
		// The Job's ConfigMaps (mpi's hostfile, which holds its launcher's
		// wait targets) as the controller would create them.
		kube := fake.NewSimpleClientset()
		plugin := func() pluginsinterface.PluginInterface {
			return f.NewUncached(pluginsinterface.PluginClientset{KubeClients: kube}, j.Spec.Plugins[f.Name])
		}
		if err := plugin().OnJobAdd(j); err != nil {
			t.Fatalf("%s: OnJobAdd: %v", f.Name, err)
		}
		for i := range j.Spec.Tasks {
			task := &j.Spec.Tasks[i]
			pod := jobs.NewPod(j, task, 0)
			if err := plugin().OnPodCreate(pod, j); err != nil {
				t.Fatalf("%s: OnPodCreate of %s: %v", f.Name, task.Name, err)
			}
			for _, target := range waitTargets(t, kube, pod) {
				if strings.Contains(target, ":") {
					connects[target]++
				}
			}
			script := task.Template.Spec.Containers[0].Command[2]
			var n, port int
			if _, err := fmt.Sscanf(script, "i=0; while [ $i -lt %d ]; do timeout 20 nc -l -p %d ", &n, &port); err == nil {
				accepts[net.JoinHostPort(jobs.Host(j, task, 0), strconv.Itoa(port))] += n
				continue
			}
			env := f.Sample.Install.Env
			if !slices.ContainsFunc(pod.Spec.Containers[0].Env, func(e v1.EnvVar) bool { return e.Name == env }) {
				t.Errorf("%s: the pod of %s checks %s, which the plugin does not set", f.Name, task.Name, env)
			}
		}
		if diff := cmp.Diff(connects, accepts); diff != "" {
			t.Errorf("%s: connections of the wait containers (-) and of the listeners (+):\n%s", f.Name, diff)
		}
	}
	var want []string
	for _, name := range catalog.Names() {
		want = append(want, "ours-"+name)
	}
	if !slices.Equal(names, want) || !slices.Contains(names, "ours-"+ninthtest.Name) {
		t.Errorf("Jobs %v, want %v (with the ninth)", names, want)
	}
}

// waitTargets returns the targets of pod's wait container: its TargetsEnv,
// or the file TargetsFileEnv names, read from the ConfigMap mounted there.
func waitTargets(t *testing.T, kube *fake.Clientset, pod *v1.Pod) []string {
	t.Helper()
	for _, c := range pod.Spec.InitContainers {
		if c.Name != wait.ContainerName {
			continue
		}
		for _, e := range c.Env {
			switch e.Name {
			case wait.TargetsEnv:
				return strings.Fields(e.Value)
			case wait.TargetsFileEnv:
				for _, m := range c.VolumeMounts {
					rel, err := filepath.Rel(m.MountPath, e.Value)
					if err != nil || strings.HasPrefix(rel, "..") {
						continue
					}
					for _, vol := range pod.Spec.Volumes {
						if vol.Name != m.Name || vol.ConfigMap == nil {
							continue
						}
						key := rel
						for _, item := range vol.ConfigMap.Items {
							if item.Path == rel {
								key = item.Key
							}
						}
						cm, err := kube.CoreV1().ConfigMaps(pod.Namespace).Get(context.Background(), vol.ConfigMap.Name, metav1.GetOptions{})
						if err != nil {
							t.Fatalf("pod %s: its wait targets' ConfigMap: %v", pod.Name, err)
						}
						return strings.Fields(cm.Data[key])
					}
				}
				t.Fatalf("pod %s: no ConfigMap holds its wait targets at %s", pod.Name, e.Value)
			}
		}
	}
	return nil
}
