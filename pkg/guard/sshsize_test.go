package guard

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// sshJob returns Job "db" with the ssh plugin and one task of replicas pods.
func sshJob(replicas int32) *batch.Job {
	job := jobtest.MakeJob("db").Task(jobtest.MakeTask("worker", replicas).Obj()).Plugin("ssh").Obj()
	job.Status.ControlledResources = map[string]string{}
	return job
}

// subdomainJob returns sshJob(2) whose template's subdomain has n bytes.
func subdomainJob(n int) *batch.Job {
	job := sshJob(2)
	job.Spec.Tasks[0].Template.Spec.Subdomain = strings.Repeat("s", n)
	return job
}

// The guarded ssh plugin refuses a Job whose config would be over
// bounds.MaxSSHConfigBytes before Volcano's plugin builds it (20,000 hosts took
// 6.7 s there, then the Secret's create failed): a *framework.OverBoundsError
// with the bound's error, an InvalidPluginArguments event, no Secret, the Job
// not marked. A Job at the bound is set up as before, and one already set up
// is not looked at again.
func TestSSHConfigOverBounds(t *testing.T) {
	atBound := int32(bounds.MaxSSHReplicas(len("db"), len("worker")))
	if atBound != 17284 {
		t.Fatalf("MaxSSHReplicas(2, 6) = %d, want 17284", atBound)
	}
	tests := []struct {
		name     string
		job      *batch.Job
		wantErrs []string // of the OverBoundsError; nil: no error
	}{
		{name: "20,000 replicas", job: sshJob(20000), wantErrs: []string{
			"spec.plugins[ssh]: Too long: the ssh plugin's config for the job's 20000 hosts would be 1197834 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin",
		}},
		{name: "one over the bound", job: sshJob(atBound + 1), wantErrs: []string{
			"spec.plugins[ssh]: Too long: the ssh plugin's config for the job's 17285 hosts would be 1032219 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin",
		}},
		// Exactly at the bound, in two hosts of a long subdomain: Volcano's
		// plugin takes 10 to 25 s to build 17,284 hosts (the benchmark).
		{name: "at the bound", job: subdomainJob(516018)},
		{name: "one byte over", job: subdomainJob(516019), wantErrs: []string{
			"spec.plugins[ssh]: Too long: the ssh plugin's config for the job's 2 hosts would be 1032194 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin",
		}},
		{name: "1,000 replicas", job: sshJob(1000)},
		{name: "already set up", job: func() *batch.Job {
			job := sshJob(40000)
			job.Status.ControlledResources["plugin-ssh"] = "ssh"
			return job
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			p := Wrap("ssh", volcano(t, "ssh"))(pluginsinterface.PluginClientset{KubeClients: client}, nil)
			job := tc.job.DeepCopy()
			err := p.OnJobAdd(job)
			var over *framework.OverBoundsError
			var gotErrs []string
			if errors.As(err, &over) {
				for _, e := range over.Errs {
					gotErrs = append(gotErrs, e.Error())
				}
			} else if err != nil {
				t.Fatalf("OnJobAdd: %v; want nil or an OverBoundsError", err)
			}
			if diff := cmp.Diff(tc.wantErrs, gotErrs); diff != "" {
				t.Errorf("OnJobAdd's bounds errors (-want +got):\n%s", diff)
			}
			var warned []string
			for _, e := range jobtest.Events(t, client) {
				if e.Reason == events.ReasonInvalidArguments && e.Type == v1.EventTypeWarning && e.InvolvedObject.Name == "db" {
					warned = append(warned, e.Message)
				}
			}
			secret, getErr := client.CoreV1().Secrets("default").Get(context.Background(), "db-ssh", metav1.GetOptions{})
			refused := tc.wantErrs != nil
			if refused {
				if diff := cmp.Diff(tc.wantErrs, warned); diff != "" {
					t.Errorf("InvalidPluginArguments events (-want +got):\n%s", diff)
				}
				if !apierrors.IsNotFound(getErr) {
					t.Errorf("Secret db-ssh: %v; want none", getErr)
				}
				if job.Status.ControlledResources["plugin-ssh"] != "" {
					t.Errorf("the Job is marked as set up for ssh")
				}
				return
			}
			if len(warned) > 0 {
				t.Errorf("events %q; want none", warned)
			}
			if tc.job.Status.ControlledResources["plugin-ssh"] != "" {
				return
			}
			if getErr != nil {
				t.Fatalf("Secret db-ssh: %v; want it created", getErr)
			}
			if _, want := bounds.SSHConfigBytes(tc.job, nil); int64(len(secret.Data["config"])) != want {
				t.Errorf("the Secret's config has %d bytes; SSHConfigBytes says %d", len(secret.Data["config"]), want)
			}
		})
	}
}

// BenchmarkSSHOnJobAdd times the guarded ssh plugin's OnJobAdd: over the bound
// it answers without building the config (Volcano's own took 6.7 s for
// 20,000 hosts and 47 s for 40,000); at the bound it is Volcano's plugin
// building the largest config the bound allows.
func BenchmarkSSHOnJobAdd(b *testing.B) {
	atBound := int32(bounds.MaxSSHReplicas(len("db"), len("worker")))
	for _, bc := range []struct {
		name     string
		replicas int32
	}{{"refused 20000", 20000}, {"refused 40000", 40000}, {"at the bound", atBound}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				client := fake.NewSimpleClientset()
				build, _ := vcplugins.GetPluginBuilder("ssh")
				p := Wrap("ssh", build)(pluginsinterface.PluginClientset{KubeClients: client}, []string{"--ssh-private-key=k", "--ssh-public-key=p"})
				job := sshJob(bc.replicas)
				b.StartTimer()
				err := p.OnJobAdd(job)
				if (err != nil) != (bc.replicas > atBound) {
					b.Fatalf("OnJobAdd of %d replicas: %v", bc.replicas, err)
				}
			}
		})
	}
}
