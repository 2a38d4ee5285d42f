package tensorflow

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// packedJob has enough pods for several TF_CONFIG chunks, every role and a
// task that plays none.
func packedJob() (*batch.Job, map[string]int) {
	replicas := map[string]int{"ps": 2, "worker": 40, "chief": 1, "evaluator": 1, "tensorboard": 1}
	w := jobtest.MakeJob("tf")
	for _, task := range []string{"ps", "worker", "chief", "evaluator", "tensorboard"} {
		w.Task(jobtest.MakeTask(task, int32(replicas[task])).Obj())
	}
	return w.Plugin(Name).Obj(), replicas
}

// wantTFConfig is the TF_CONFIG of a pod of packedJob as encoding/json writes
// it, independently of the plugin; "" for a task that plays no role.
func wantTFConfig(t *testing.T, replicas map[string]int, task string, index int) string {
	t.Helper()
	if task == "tensorboard" {
		return ""
	}
	cluster := map[string][]string{}
	for _, role := range []string{"ps", "worker", "chief"} {
		for i := 0; i < replicas[role]; i++ {
			cluster[role] = append(cluster[role], fmt.Sprintf("tf-%s-%d.tf.default.svc.cluster.local:2222", role, i))
		}
	}
	type taskSpec struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	raw, err := json.Marshal(struct {
		Cluster     map[string][]string `json:"cluster"`
		Task        taskSpec            `json:"task"`
		Environment string              `json:"environment"`
	}{cluster, taskSpec{task, index}, "cloud"})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

type podOf struct {
	pod   *v1.Pod
	task  string
	index int
}

func packedPods(job *batch.Job, replicas map[string]int) []podOf {
	var pods []podOf
	for _, task := range job.Spec.Tasks {
		for i := 0; i < replicas[task.Name]; i++ {
			pods = append(pods, podOf{jobtest.MakePod(job, task.Name, i).Obj(), task.Name, i})
		}
	}
	return pods
}

// checkPods checks every pod's TF_CONFIG byte for byte and that the pods that
// must wait got the wait container.
func checkPods(t *testing.T, kube *fake.Clientset, pods []podOf, replicas map[string]int) {
	t.Helper()
	for _, p := range pods {
		want := wantTFConfig(t, replicas, p.task, p.index)
		if diff := cmp.Diff(want, processEnv(t, kube, p.pod, 0)[EnvTFConfig]); diff != "" {
			t.Errorf("pod %s: TF_CONFIG (-want +got):\n%s", p.pod.Name, diff)
		}
		wantWait := p.task != "ps" && p.task != "tensorboard"
		if hasWait := len(p.pod.Spec.InitContainers) > 0 && p.pod.Spec.InitContainers[0].Name == wait.ContainerName; hasWait != wantWait {
			t.Errorf("pod %s: wait container %v, want %v", p.pod.Name, hasWait, wantWait)
		}
	}
}

// jobPlan returns the plan the plugin has cached for job.
func jobPlan(t *testing.T, client pluginsinterface.PluginClientset, job *batch.Job) *plan {
	t.Helper()
	pl, ok := New(client, job.Spec.Plugins[Name]).(*Plugin).Plan(job)
	if !ok {
		t.Fatal("invalid arguments")
	}
	return pl
}

// addedPackedJob returns packedJob in mode, its replicas by task, and the
// fake clientset and plugin clients on which OnJobAdd has run for it.
func addedPackedJob(t *testing.T, mode TFConfigMode) (*batch.Job, map[string]int, *fake.Clientset, pluginsinterface.PluginClientset) {
	t.Helper()
	packed, replicas := packedJob()
	job := withMode(packed, mode)
	job.UID = types.UID(t.Name())
	kube := fake.NewSimpleClientset()
	client := pluginsinterface.PluginClientset{KubeClients: kube}
	if err := New(client, job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
		t.Fatal(err)
	}
	return job, replicas, kube, client
}

// TestTFConfigEveryPod creates every pod of a job one after the other, and
// one again later for the same revision: each gets its own TF_CONFIG, in
// every mode (the job is under AutoInlineMaxBytes: auto inlines it).
func TestTFConfigEveryPod(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			job, replicas, kube, client := addedPackedJob(t, mode)
			pods := packedPods(job, replicas)
			for _, p := range pods {
				if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(p.pod, job); err != nil {
					t.Fatalf("OnPodCreate %s: %v", p.pod.Name, err)
				}
			}
			checkPods(t, kube, pods, replicas)

			// A pod created again later for the same revision gets its own value.
			again := []podOf{{jobtest.MakePod(job, "worker", 7).Obj(), "worker", 7}}
			if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(again[0].pod, job); err != nil {
				t.Fatal(err)
			}
			checkPods(t, kube, again, replicas)
		})
	}
}

// TestTFConfigConcurrent creates a job's pods from several goroutines, each
// on a fresh plugin instance sharing the cached plan (run it with -race), in
// every mode.
func TestTFConfigConcurrent(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			job, replicas, kube, client := addedPackedJob(t, mode)
			pods := packedPods(job, replicas)
			const goroutines = 6
			errs := make(chan error, len(pods))
			var wg sync.WaitGroup
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; i < len(pods); i += goroutines {
						if err := New(client, job.Spec.Plugins[Name]).OnPodCreate(pods[i].pod, job); err != nil {
							errs <- fmt.Errorf("OnPodCreate %s: %w", pods[i].pod.Name, err)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			checkPods(t, kube, pods, replicas)
		})
	}
}

// TFConfigSize computes, without building it, the length of the TF_CONFIG
// OnPodCreate sets, for every pod that gets one and for pods that get none.
func TestTFConfigSize(t *testing.T) {
	mk := jobtest.MakeTask
	packed, _ := packedJob()
	tests := []struct {
		name string
		job  *batch.Job
	}{
		{"every role and a task without one", packed},
		{"single worker: no TF_CONFIG", jobtest.MakeJob("tf").Task(mk("worker", 1).Obj()).Plugin(Name).Obj()},
		{"workers only, 11", jobtest.MakeJob("tf").Task(mk("worker", 11).Obj()).Plugin(Name).Obj()},
		{"named ports, hostname, subdomain, escaped characters",
			jobtest.MakeJob("tf").Task(mk("ps", 2).Port(PortName, 7).Hostname("p<s>").Obj()).
				Task(mk("worker", 3).Subdomain("a&b\u2028").Obj()).Task(mk("evaluator", 1).Obj()).Plugin(Name, "--port=65535").Obj()},
		{"chief and evaluator only", jobtest.MakeJob("tf").Task(mk("chief", 1).Obj()).Task(mk("evaluator", 1).Obj()).Plugin(Name).Obj()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv := tc.job.Spec.Plugins[Name]
			a, errs := ParseArgs(argv, tc.job)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			for _, task := range tc.job.Spec.Tasks {
				for _, index := range []int{0, int(task.Replicas) - 1} {
					pod, kube := runPod(t, tc.job, task.Name, index)
					want := 0
					if v, ok := processEnv(t, kube, pod, 0)[EnvTFConfig]; ok {
						want = len(v)
					}
					if got := TFConfigSize(tc.job, a, task.Name, index); got != want {
						t.Errorf("TFConfigSize(%s, %d) = %d, OnPodCreate's is %d bytes", task.Name, index, got, want)
					}
				}
			}
		})
	}
}
