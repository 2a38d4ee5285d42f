package tensorflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
)

// processEnv returns the environment container i of pod starts with, resolved
// as the kubelet does (pkg/kubelet makeEnvironmentVariables): variables in
// declaration order, a value's $(NAME) references expanded with the kubelet's
// own expansion package against the variables declared before it, a
// configMapKeyRef read from kube (a missing ConfigMap or key fails the test,
// as the kubelet fails the container with CreateContainerConfigError).
func processEnv(t *testing.T, kube *fake.Clientset, pod *v1.Pod, i int) map[string]string {
	t.Helper()
	env := map[string]string{}
	mapping := expansion.MappingFuncFor(env)
	for _, e := range pod.Spec.Containers[i].Env {
		switch {
		case e.Value != "":
			env[e.Name] = expansion.Expand(e.Value, mapping)
		case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			cm, err := kube.CoreV1().ConfigMaps(pod.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s: the kubelet could not start the container: %v", e.Name, err)
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				t.Fatalf("%s: ConfigMap %s has no key %s", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		default:
			env[e.Name] = ""
		}
	}
	return env
}

// TestReferenceEnv: by reference the pod spec holds the reference, declared
// after the variable it refers to; a container that declares that variable
// itself gets the inline value instead; inline, and the default auto for a
// job this small, write only TF_CONFIG.
func TestReferenceEnv(t *testing.T) {
	mk := jobtest.MakeTask
	cluster := v1.EnvVar{Name: EnvCluster, ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "tf-tf-cluster"}, Key: ClusterKey}}}
	inline := `{"cluster":{"worker":["tf-worker-0.tf.default.svc.cluster.local:2222","tf-worker-1.tf.default.svc.cluster.local:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}`
	cases := map[string]struct {
		job  *batch.Job
		want []v1.EnvVar
	}{
		"reference": {
			job: jobtest.MakeJob("tf").Task(mk("worker", 2).Env("A", "1").Obj()).Plugin(Name, "--tf-config=reference").Obj(),
			want: []v1.EnvVar{{Name: "A", Value: "1"}, cluster,
				{Name: EnvTFConfig, Value: `{"cluster":$(TF_CONFIG_CLUSTER),"task":{"type":"worker","index":1},"environment":"cloud"}`}},
		},
		"inline": {
			job:  jobtest.MakeJob("tf").Task(mk("worker", 2).Obj()).Plugin(Name, "--tf-config=inline").Obj(),
			want: []v1.EnvVar{{Name: EnvTFConfig, Value: inline}},
		},
		"the default auto inlines a small job": {
			job:  jobtest.MakeJob("tf").Task(mk("worker", 2).Env("A", "1").Obj()).Plugin(Name).Obj(),
			want: []v1.EnvVar{{Name: "A", Value: "1"}, {Name: EnvTFConfig, Value: inline}},
		},
		"a container declaring the cluster variable itself gets the inline value": {
			job:  jobtest.MakeJob("tf").Task(mk("worker", 2).Env(EnvCluster, "mine").Obj()).Plugin(Name, "--tf-config=reference").Obj(),
			want: []v1.EnvVar{{Name: EnvCluster, Value: "mine"}, {Name: EnvTFConfig, Value: inline}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod, _ := runPod(t, tc.job, "worker", 1)
			if diff := cmp.Diff(tc.want, pod.Spec.Containers[0].Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReferenceExpandsToInline: for every pod of a job with every role, the
// TF_CONFIG the kubelet makes from the reference is the inline value byte for
// byte, and a reference pod's spec is small whatever the job's size.
func TestReferenceExpandsToInline(t *testing.T) {
	job, replicas := packedJob()
	job.Spec.Tasks[1].Replicas = 500
	replicas["worker"] = 500
	for _, task := range job.Spec.Tasks {
		for _, index := range []int{0, replicas[task.Name] - 1} {
			ref, kube := runPod(t, withMode(job, Reference), task.Name, index)
			in, _ := runPod(t, withMode(job, Inline), task.Name, index)
			got, want := processEnv(t, kube, ref, 0)[EnvTFConfig], jobtest.Env(in, 0)[EnvTFConfig]
			if got != want {
				t.Errorf("%s-%d: expanded reference differs from inline:\n got %.200q\nwant %.200q", task.Name, index, got, want)
			}
			specBytes := 0
			for _, e := range ref.Spec.Containers[0].Env {
				specBytes += len(e.Name) + len(e.Value)
			}
			if specBytes > 200 {
				t.Errorf("%s-%d: the reference pod's env takes %d bytes of its spec, want at most 200", task.Name, index, specBytes)
			}
		}
	}
}

// TestClusterConfigMap: OnJobAdd creates the ConfigMap, controlled by the Job,
// before any pod; within ownedcm.Recheck the hooks make no API call; later a
// deleted ConfigMap is recreated; OnJobDelete deletes it. Inline jobs, auto
// jobs that resolve to inline and jobs of one pod get none.
func TestClusterConfigMap(t *testing.T) {
	mk := jobtest.MakeTask
	t.Run("lifecycle", func(t *testing.T) {
		kube := fake.NewSimpleClientset()
		client := pluginsinterface.PluginClientset{KubeClients: kube}
		job := jobtest.MakeJob("tf").Task(mk("ps", 1).Obj()).Task(mk("worker", 2).Obj()).Plugin(Name, "--tf-config=reference").Obj()
		job.UID = types.UID(t.Name())
		if err := New(client, job.Spec.Plugins[Name]).OnJobAdd(job); err != nil {
			t.Fatal(err)
		}
		cm := clusterConfigMap(t, kube, job)
		want := map[string]string{ClusterKey: `{"ps":["tf-ps-0.tf.default.svc.cluster.local:2222"],"worker":["tf-worker-0.tf.default.svc.cluster.local:2222","tf-worker-1.tf.default.svc.cluster.local:2222"]}`}
		if diff := cmp.Diff(want, cm.Data); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
		if !metav1.IsControlledBy(cm, job) || cm.Labels[batch.JobNameKey] != "tf" {
			t.Errorf("owners %v, labels %v: want the Job as controller and its name label", cm.OwnerReferences, cm.Labels)
		}

		kube.ClearActions()
		if err := New(client, job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
			t.Fatal(err)
		}
		if got := kube.Actions(); len(got) != 0 {
			t.Errorf("OnJobUpdate within the recheck interval: API calls %v, want none", got)
		}
		if err := kube.CoreV1().ConfigMaps("default").Delete(context.Background(), ConfigMapName(job), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func(orig func() time.Time) { clusterCM.Now = orig }(clusterCM.Now)
		clusterCM.Now = func() time.Time { return time.Now().Add(ownedcm.Recheck) }
		if err := New(client, job.Spec.Plugins[Name]).OnJobUpdate(job); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, clusterConfigMap(t, kube, job).Data); diff != "" {
			t.Errorf("recreated (-want +got):\n%s", diff)
		}

		if err := New(client, job.Spec.Plugins[Name]).OnJobDelete(job); err != nil {
			t.Fatal(err)
		}
		if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), ConfigMapName(job), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("after OnJobDelete: %v, want it gone", err)
		}
	})
	for name, job := range map[string]*batch.Job{
		"inline":      jobtest.MakeJob("tf").Task(mk("worker", 2).Obj()).Plugin(Name, "--tf-config=inline").Obj(),
		"small, auto": jobtest.MakeJob("tf").Task(mk("worker", 2).Obj()).Plugin(Name).Obj(),
		"one pod":     jobtest.MakeJob("tf").Task(mk("worker", 1).Obj()).Plugin(Name, "--tf-config=reference").Obj(),
	} {
		t.Run(name+" gets none", func(t *testing.T) {
			_, kube := runPod(t, job, "worker", 0)
			if _, err := kube.CoreV1().ConfigMaps("default").Get(context.Background(), ConfigMapName(job), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("ConfigMap: %v, want none", err)
			}
		})
	}
}

// TestClusterConfigMapOwnedByAnother: a ConfigMap of the name that the Job
// does not control is never written; OnJobAdd and OnJobUpdate return a
// *ConflictError (Volcano then creates no pods) and one event names it;
// OnJobDelete leaves it without error.
func TestClusterConfigMapOwnedByAnother(t *testing.T) {
	foreign := &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "tf-tf-cluster", Namespace: "default"},
		Data:       map[string]string{ClusterKey: `{"worker":["elsewhere:1"]}`},
	}
	hooks := map[string]struct {
		call     func(p pluginsinterface.PluginInterface, job *batch.Job) error
		conflict bool
	}{
		"OnJobAdd":    {func(p pluginsinterface.PluginInterface, job *batch.Job) error { return p.OnJobAdd(job) }, true},
		"OnJobUpdate": {func(p pluginsinterface.PluginInterface, job *batch.Job) error { return p.OnJobUpdate(job) }, true},
		"OnJobDelete": {func(p pluginsinterface.PluginInterface, job *batch.Job) error { return p.OnJobDelete(job) }, false},
	}
	for name, h := range hooks {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewSimpleClientset(foreign.DeepCopy())
			job := jobtest.MakeJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin(Name, "--tf-config=reference").Obj()
			job.UID = types.UID(t.Name())
			err := h.call(New(pluginsinterface.PluginClientset{KubeClients: kube}, job.Spec.Plugins[Name]), job)
			var conflict *ConflictError
			if got := errors.As(err, &conflict); got != h.conflict || (!h.conflict && err != nil) {
				t.Fatalf("error = %v, want a *ConflictError: %v", err, h.conflict)
			}
			cm := clusterConfigMap(t, kube, job)
			if diff := cmp.Diff(foreign.Data, cm.Data); diff != "" || cm.OwnerReferences != nil {
				t.Errorf("foreign ConfigMap changed (-want +got):\n%s%v", diff, cm.OwnerReferences)
			}
			var got []string
			for _, ev := range jobtest.Events(t, kube) {
				got = append(got, ev.Reason+": "+ev.Message)
			}
			want := []string{events.ReasonConfigMapConflict + ": plugin tensorflow: ConfigMap default/tf-tf-cluster exists and is not controlled by Job tf; rename or delete it; " +
				"it would be the cluster in every pod's TF_CONFIG, so the plugin does not overwrite it and the Job's pods are not created while it is there (Volcano retries, then terminates the Job)"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClusterTooLargeForConfigMap: admission (ParseArgs) refuses a job
// whose cluster JSON a ConfigMap cannot hold when its mode is or resolves to
// reference, the argument at fault named as given; inline has no such bound.
func TestClusterTooLargeForConfigMap(t *testing.T) {
	name := strings.Repeat("x", 40)
	job := jobtest.MakeJob(name).Task(jobtest.MakeTask("worker", 20000).Obj()).Plugin(Name).Obj()
	a, _ := ParseArgs([]string{"--tf-config=inline"}, job)
	size := ClusterSize(job, a)
	if size <= ownedcm.MaxConfigMapBytes {
		t.Fatalf("cluster JSON %d bytes: the job is not large enough for the test", size)
	}
	tooLarge := fmt.Sprintf("plugin tensorflow: the cluster spec would be %d bytes, more than the %d bytes a ConfigMap holds; use fewer replicas or shorter names",
		size, ownedcm.MaxConfigMapBytes)
	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"auto, the default": {wantErr: `spec.plugins[tensorflow]: Invalid value: "--tf-config=auto (default)": ` + tooLarge},
		"auto":              {args: []string{"--tf-config=auto"}, wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--tf-config=auto": ` + tooLarge},
		"reference":         {args: []string{"--port=2222", "--tf-config=reference"}, wantErr: `spec.plugins[tensorflow][1]: Invalid value: "--tf-config=reference": ` + tooLarge},
		"inline":            {args: []string{"--tf-config=inline"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs := ParseArgs(tc.args, job)
			if diff := cmp.Diff(tc.wantErr, jobtest.ErrorString(errs)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func clusterConfigMap(t *testing.T, kube *fake.Clientset, job *batch.Job) *v1.ConfigMap {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(job.Namespace).Get(context.Background(), ConfigMapName(job), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("cluster ConfigMap: %v", err)
	}
	return cm
}
