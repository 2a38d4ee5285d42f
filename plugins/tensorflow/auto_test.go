package tensorflow

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

// jobOfClusterSize returns a job "tf" of 1 ps and some workers whose cluster
// JSON is exactly n bytes (n at least 100): the ps task's template hostname,
// which the cluster lists instead of the pod name, pads it, within a DNS
// label's 63 characters.
func jobOfClusterSize(t *testing.T, n int) *batch.Job {
	t.Helper()
	mk := jobtest.MakeTask
	for workers := int32(1); workers < 1000; workers++ {
		job := jobtest.MakeJob("tf").Task(mk("ps", 1).Hostname("p").Obj()).Task(mk("worker", workers).Obj()).Plugin(Name).Obj()
		a, errs := ParseArgs(nil, job)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if pad := n - ClusterSize(job, a); pad >= 0 && pad <= 62 {
			job.Spec.Tasks[0].Template.Spec.Hostname += strings.Repeat("p", pad)
			return job
		}
	}
	t.Fatalf("no job of 1 ps and workers has a cluster JSON of %d bytes", n)
	return nil
}

// TestMode: auto resolves to inline up to AutoInlineMaxBytes of cluster JSON
// and to reference above; reference and inline are kept whatever the size.
// The plan (buildPlan) follows Mode, and the boundary jobs' cluster JSON,
// as the plan builds it, is the size ClusterSize computes.
func TestMode(t *testing.T) {
	mk := jobtest.MakeTask
	small := jobtest.MakeJob("tf").Task(mk("ps", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj()
	large := jobtest.MakeJob("resnet50-train").Task(mk("ps", 2).Obj()).Task(mk("worker", 2048).Obj()).Plugin(Name).Obj()
	atLimit := jobOfClusterSize(t, AutoInlineMaxBytes)
	overLimit := jobOfClusterSize(t, AutoInlineMaxBytes+1)
	cases := map[string]struct {
		job  *batch.Job
		args []string
		// clusterLen is the cluster JSON's length the case is about, 0 if
		// any.
		clusterLen int
		want       TFConfigMode
	}{
		"auto (the default), 1 ps and 2 workers":           {job: small, want: Inline},
		"auto given, 1 ps and 2 workers":                   {job: small, args: []string{"--tf-config=auto"}, want: Inline},
		"auto, cluster JSON of exactly AutoInlineMaxBytes": {job: atLimit, clusterLen: AutoInlineMaxBytes, want: Inline},
		"auto, one byte over":                              {job: overLimit, clusterLen: AutoInlineMaxBytes + 1, want: Reference},
		"auto, 2 ps and 2,048 workers":                     {job: large, want: Reference},
		"reference, 1 ps and 2 workers":                    {job: small, args: []string{"--tf-config=reference"}, want: Reference},
		"reference, one byte over":                         {job: overLimit, args: []string{"--tf-config=reference"}, want: Reference},
		"inline, at the limit":                             {job: atLimit, args: []string{"--tf-config=inline"}, want: Inline},
		"inline, 2 ps and 2,048 workers":                   {job: large, args: []string{"--tf-config=inline"}, want: Inline},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := tc.job.DeepCopy()
			job.Spec.Plugins[Name] = tc.args
			job.UID = types.UID(t.Name())
			a, errs := ParseArgs(tc.args, job)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tc.want, a.Mode(job)); diff != "" {
				t.Errorf("Mode (-want +got):\n%s", diff)
			}
			pl := jobPlan(t, pluginsinterface.PluginClientset{KubeClients: fake.NewSimpleClientset()}, job)
			if diff := cmp.Diff(tc.want == Reference, pl.reference); diff != "" {
				t.Errorf("plan by reference (-want +got):\n%s", diff)
			}
			if tc.clusterLen == 0 {
				return
			}
			if diff := cmp.Diff([]int{tc.clusterLen, tc.clusterLen}, []int{ClusterSize(job, a), len(pl.cluster)}); diff != "" {
				t.Errorf("ClusterSize and the plan's cluster JSON (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAutoPods: with the default auto, a small job makes no ConfigMap call
// and its pods get the inline TF_CONFIG; a job over AutoInlineMaxBytes gets
// the cluster ConfigMap, created before any pod, and pods that refer to it,
// which the kubelet expands to the inline value.
func TestAutoPods(t *testing.T) {
	mk := jobtest.MakeTask
	large := jobtest.MakeJob("tf").Task(mk("ps", 1).Obj()).Task(mk("worker", 60).Obj()).Plugin(Name).Obj()
	largeCluster := func() string {
		hosts := []string{}
		for i := range 60 {
			hosts = append(hosts, `"tf-worker-`+strconv.Itoa(i)+`.tf.default.svc.cluster.local:2222"`)
		}
		return `{"ps":["tf-ps-0.tf.default.svc.cluster.local:2222"],"worker":[` + strings.Join(hosts, ",") + `]}`
	}()
	cases := map[string]struct {
		job         *batch.Job
		wantActions []string // on configmaps, before the pod and with it
		wantCM      map[string]string
		wantEnv     []v1.EnvVar
		wantTF      string // the TF_CONFIG the process sees
	}{
		"1 ps and 2 workers: inline": {
			job:     jobtest.MakeJob("tf").Task(mk("ps", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
			wantEnv: []v1.EnvVar{{Name: EnvTFConfig, Value: `{"cluster":{"ps":["tf-ps-0.tf.default.svc.cluster.local:2222"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222","tf-worker-1.tf.default.svc.cluster.local:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}`}},
			wantTF:  `{"cluster":{"ps":["tf-ps-0.tf.default.svc.cluster.local:2222"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222","tf-worker-1.tf.default.svc.cluster.local:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}`,
		},
		"1 ps and 60 workers: reference": {
			job:         large,
			wantActions: []string{"create configmaps"},
			wantCM:      map[string]string{ClusterKey: largeCluster},
			wantEnv: []v1.EnvVar{
				{Name: EnvCluster, ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
					LocalObjectReference: v1.LocalObjectReference{Name: "tf-tf-cluster"}, Key: ClusterKey}}},
				{Name: EnvTFConfig, Value: `{"cluster":$(TF_CONFIG_CLUSTER),"task":{"type":"worker","index":1},"environment":"cloud"}`},
			},
			wantTF: `{"cluster":` + largeCluster + `,"task":{"type":"worker","index":1},"environment":"cloud"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod, kube := runPod(t, tc.job, "worker", 1)
			var actions []string
			for _, a := range kube.Actions() {
				if a.GetResource().Resource == "configmaps" {
					actions = append(actions, a.GetVerb()+" configmaps")
				}
			}
			if diff := cmp.Diff(tc.wantActions, actions); diff != "" {
				t.Errorf("ConfigMap calls (-want +got):\n%s", diff)
			}
			if tc.wantCM != nil {
				if diff := cmp.Diff(tc.wantCM, clusterConfigMap(t, kube, tc.job).Data); diff != "" {
					t.Errorf("cluster ConfigMap (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.wantEnv, pod.Spec.Containers[0].Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTF, processEnv(t, kube, pod, 0)[EnvTFConfig]); diff != "" {
				t.Errorf("TF_CONFIG the process sees (-want +got):\n%s", diff)
			}
		})
	}
}
