package guard

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
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

// The guarded ssh plugin gives a Job whose config would be over
// bounds.MaxSSHConfigBytes bounds.CompactSSHConfig, without Volcano's plugin
// building the per-host config (20,000 hosts took 6.7 s there, then the
// Secret's create failed): the Secret has Volcano's keys and the compact
// config, the Job is marked, and a CompactSSHConfig event says so. A Job at
// the bound gets Volcano's config, and one already set up is not looked at
// again.
func TestSSHConfigCompact(t *testing.T) {
	atBound := int32(bounds.MaxSSHReplicas(len("db"), len("worker")))
	if atBound != 17284 {
		t.Fatalf("MaxSSHReplicas(2, 6) = %d, want 17284", atBound)
	}
	tests := []struct {
		name    string
		job     *batch.Job
		compact bool
	}{
		{name: "40,000 replicas", job: sshJob(40000), compact: true},
		{name: "one over the bound", job: sshJob(atBound + 1), compact: true},
		// Exactly at the bound, in two hosts of a long subdomain: Volcano's
		// plugin takes 10 to 25 s to build 17,284 hosts (the benchmark).
		{name: "at the bound", job: subdomainJob(516018)},
		{name: "one byte over", job: subdomainJob(516019), compact: true},
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
			if err := p.OnJobAdd(job); err != nil {
				t.Fatalf("OnJobAdd: %v", err)
			}
			var reported []string
			for _, e := range jobtest.Events(t, client) {
				if e.Reason == events.ReasonCompactSSHConfig && e.Type == v1.EventTypeNormal && e.InvolvedObject.Name == "db" {
					reported = append(reported, e.Message)
				}
			}
			if (len(reported) == 1) != tc.compact || len(reported) > 1 {
				t.Errorf("CompactSSHConfig events %q, want one: %v", reported, tc.compact)
			}
			secret, err := client.CoreV1().Secrets("default").Get(context.Background(), "db-ssh", metav1.GetOptions{})
			if tc.job.Status.ControlledResources["plugin-ssh"] != "" {
				if !apierrors.IsNotFound(err) {
					t.Errorf("Secret db-ssh of a Job set up before: %v; want none made", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Secret db-ssh: %v; want it created", err)
			}
			if job.Status.ControlledResources["plugin-ssh"] != "ssh" {
				t.Errorf("the Job is not marked as set up for ssh")
			}
			for _, k := range []string{"id_rsa", "id_rsa.pub", "authorized_keys"} {
				if len(secret.Data[k]) == 0 {
					t.Errorf("the Secret has no %s", k)
				}
			}
			if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != job.UID {
				t.Errorf("the Secret's owners %v; want the Job", secret.OwnerReferences)
			}
			config := string(secret.Data["config"])
			if tc.compact {
				if want := bounds.CompactSSHConfig(tc.job, bounds.DefaultSSHPort); config != want {
					t.Errorf("the Secret's config:\n%s\nwant CompactSSHConfig:\n%s", config, want)
				}
				return
			}
			if _, want := bounds.SSHConfigBytes(tc.job, nil); int64(len(config)) != want {
				t.Errorf("the Secret's config has %d bytes; SSHConfigBytes says %d", len(config), want)
			}
		})
	}
}

// BenchmarkSSHOnJobAdd times the guarded ssh plugin's OnJobAdd: over the bound
// it writes the compact config without Volcano's plugin building the
// per-host one (Volcano's own took 6.7 s for 20,000 hosts and 47 s for
// 40,000); at the bound it is Volcano's plugin building the largest config
// the bound allows.
func BenchmarkSSHOnJobAdd(b *testing.B) {
	atBound := int32(bounds.MaxSSHReplicas(len("db"), len("worker")))
	for _, bc := range []struct {
		name     string
		replicas int32
	}{{"compact 20000", 20000}, {"compact 40000", 40000}, {"at the bound", atBound}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				client := fake.NewSimpleClientset()
				build, _ := vcplugins.GetPluginBuilder("ssh")
				p := Wrap("ssh", build)(pluginsinterface.PluginClientset{KubeClients: client}, []string{"--ssh-private-key=k", "--ssh-public-key=p"})
				job := sshJob(bc.replicas)
				b.StartTimer()
				if err := p.OnJobAdd(job); err != nil {
					b.Fatalf("OnJobAdd of %d replicas: %v", bc.replicas, err)
				}
			}
		})
	}
}
