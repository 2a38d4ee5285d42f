package bounds

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"
	"volcano.sh/volcano/pkg/controllers/job/plugins/ssh"
)

// sshJob returns Job name with the ssh plugin (args) and the tasks.
func sshJob(name string, args []string, tasks ...batch.TaskSpec) *batch.Job {
	return &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batch.JobSpec{Tasks: tasks, Plugins: map[string][]string{"ssh": args}}}
}

func sshTaskSpec(name string, replicas int32, hostname, subdomain string) batch.TaskSpec {
	return batch.TaskSpec{Name: name, Replicas: replicas, Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
		Hostname: hostname, Subdomain: subdomain, Containers: []v1.Container{{Name: "a", Image: "b"}}}}}
}

// volcanoSSHConfig returns the config Volcano's own ssh plugin writes for job
// into the Secret <job>-ssh.
func volcanoSSHConfig(t *testing.T, job *batch.Job) string {
	t.Helper()
	client := fake.NewSimpleClientset()
	job = job.DeepCopy()
	job.Status.ControlledResources = map[string]string{}
	p := ssh.New(pluginsinterface.PluginClientset{KubeClients: client}, job.Spec.Plugins["ssh"])
	if err := p.OnJobAdd(job); err != nil {
		t.Fatal(err)
	}
	s, err := client.CoreV1().Secrets(job.Namespace).Get(context.Background(), job.Name+"-ssh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data["config"])
}

// SSHConfigBytes is the length of the config Volcano's ssh plugin writes, to
// the byte, and ReadShape and ShapeOf read what it needs.
func TestSSHConfigBytesMatchesVolcano(t *testing.T) {
	// A user-provided key spares each case an RSA key generation.
	key := []string{"--ssh-private-key=k", "--ssh-public-key=p"}
	tests := []struct {
		name  string
		job   *batch.Job
		hosts int64
	}{
		{"one task", sshJob("db", key, sshTaskSpec("worker", 3, "", "")), 3},
		{"indexes of 1 to 4 digits", sshJob("train", key, sshTaskSpec("m", 1, "", ""), sshTaskSpec("worker", 1001, "", "")), 1002},
		{"hostname and subdomain", sshJob("j", key, sshTaskSpec("named", 5, "fixed-host", ""), sshTaskSpec("sub", 12, "", "other-subdomain"),
			sshTaskSpec("both", 2, "h", "s")), 1 + 12 + 1},
		{"no replicas", sshJob("j", key, sshTaskSpec("none", 0, "", ""), sshTaskSpec("none-named", 0, "x", ""), sshTaskSpec("neg", -2, "", "")), 0},
		{"port", sshJob("p", append([]string{"--ssh-port=2222"}, key...), sshTaskSpec("w", 11, "", "")), 11},
		{"port out of range", sshJob("p", append([]string{"--ssh-port=99999"}, key...), sshTaskSpec("w", 11, "", "")), 11},
		{"port not a number", sshJob("p", append(key, "--ssh-port=x"), sshTaskSpec("w", 2, "", "")), 2},
		{"port after a non-flag", sshJob("p", append(key, "x", "--ssh-port=12345"), sshTaskSpec("w", 2, "", "")), 2},
		{"port as a key's value", sshJob("p", append(key, "--ssh-public-key", "--ssh-port=7"), sshTaskSpec("w", 2, "", "")), 2},
		{"port in hex, one digit", sshJob("p", append(key, "-ssh-port", "0x7"), sshTaskSpec("w", 2, "", "")), 2},
		{"generated key", sshJob("gen", nil, sshTaskSpec("w", 4, "", "")), 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			config := volcanoSSHConfig(t, tc.job)
			hosts, b := SSHConfigBytes(tc.job, tc.job.Spec.Plugins["ssh"])
			if b != int64(len(config)) || hosts != tc.hosts || int64(strings.Count(config, "\nHost ")) != tc.hosts {
				t.Errorf("SSHConfigBytes = %d hosts, %d bytes; Volcano's config has %d hosts, %d bytes (want %d hosts):\n%s",
					hosts, b, strings.Count(config, "\nHost "), len(config), tc.hosts, config)
			}
			raw, err := json.Marshal(tc.job)
			if err != nil {
				t.Fatal(err)
			}
			read, err := ReadShape(raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ShapeOf(tc.job), read); diff != "" {
				t.Errorf("ShapeOf (-) and ReadShape (+) differ:\n%s", diff)
			}
			if h, b := read.sshConfigSize(); h != hosts || b != int64(len(config)) {
				t.Errorf("the shape's ssh config: %d hosts, %d bytes; want %d, %d", h, b, hosts, len(config))
			}
		})
	}
}

// The ssh bound: in Shape.Check for every Job with the ssh plugin (the H4
// Job of 40,000 replicas is over it), from the JSON as from the decoded Job,
// and in CheckSSHConfig, with the same error.
func TestSSHConfigBound(t *testing.T) {
	workers := func(name string, n int32) *batch.Job {
		return sshJob(name, nil, sshTaskSpec("worker", n, "", ""))
	}
	atBound := MaxSSHReplicas(len("train"), len("worker"))
	tests := []struct {
		name string
		job  *batch.Job
		raw  string // instead of job
		want []string
	}{
		{name: "H4: 40,000 replicas", job: workers("train", 40000), want: []string{
			"spec.plugins[ssh]: Too long: the ssh plugin's config for the job's 40000 hosts would be 2777834 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin",
		}},
		{name: "20,000 replicas", job: workers("train", 20000), want: []string{
			"spec.plugins[ssh]: Too long: the ssh plugin's config for the job's 20000 hosts would be 1377834 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin",
		}},
		{name: "at the bound", job: workers("train", int32(atBound))},
		{name: "one over", job: workers("train", int32(atBound+1)), want: []string{
			fmt.Sprintf("spec.plugins[ssh]: Too long: the ssh plugin's config for the job's %d hosts would be 1032244 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin", atBound+1),
		}},
		{name: "without the ssh plugin", job: &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "train"},
			Spec: batch.JobSpec{Tasks: []batch.TaskSpec{sshTaskSpec("worker", 40000, "", "")}, Plugins: map[string][]string{"svc": nil}}}},
		{name: "a hostname: one host", job: sshJob("train", nil, sshTaskSpec("worker", 40000, "h", ""))},
		// generateName: the name the API server will generate, at most
		// 58 bytes of it and 5 more: 63 bytes, which 5,000 replicas would
		// fit with the name "train"; 4,274 fit.
		{name: "generateName of 70 bytes", raw: `{"metadata":{"generateName":"` + strings.Repeat("t", 70) + `"},"spec":{"plugins":{"ssh":[]},"tasks":[{"name":"worker","replicas":5000}]}}`, want: []string{
			"spec.plugins[ssh]: Too long: the ssh plugin's config for the job's 5000 hosts would be 1207834 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin",
		}},
		{name: "generateName of 70 bytes, within", raw: `{"metadata":{"generateName":"` + strings.Repeat("t", 70) + `"},"spec":{"plugins":{"ssh":[]},"tasks":[{"name":"worker","replicas":4274}]}}`},
		// "train-" makes a name of 11 bytes.
		{name: "generateName train-", raw: `{"metadata":{"generateName":"train-"},"spec":{"plugins":{"ssh":[]},"tasks":[{"name":"worker","replicas":` + fmt.Sprint(MaxSSHReplicas(11, len("worker"))) + `}]}}`},
		{name: "no name at all: 63 bytes", raw: `{"spec":{"plugins":{"ssh":[]},"tasks":[{"name":"worker","replicas":5000}]}}`, want: []string{
			"spec.plugins[ssh]: Too long: the ssh plugin's config for the job's 5000 hosts would be 1207834 bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin",
		}},
		// The port's digits count: 13 hosts of 3 more bytes each.
		{name: "escaped names and a long port", raw: `{"metadata":{"name":"tr\u0061in"},"spec":{"plugins":{"ssh":["--ssh-port=65535"]},"tasks":[{"name":"w\u006frker","replicas":` + fmt.Sprint(atBound) + `}]}}`, want: []string{
			fmt.Sprintf("spec.plugins[ssh]: Too long: the ssh plugin's config for the job's %d hosts would be %d bytes; it may have at most 1032192 (MaxSSHConfigBytes), as it is stored in the Secret <job>-ssh, of at most 1 MiB with the keys, and the plugin builds it in a time that grows with the square of the hosts: use fewer replicas, shorter job and task names, or no ssh plugin", atBound, func() int64 { _, b := SSHConfigBytes(workers("train", int32(atBound)), nil); return b + 3*atBound }()),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			if tc.job != nil {
				var err error
				if raw, err = json.Marshal(tc.job); err != nil {
					t.Fatal(err)
				}
			}
			read, err := ReadShape(raw)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range read.Check() {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadShape(...).Check() (-want +got):\n%s", diff)
			}
			if tc.job == nil {
				return
			}
			got = nil
			for _, e := range Check(tc.job) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
			got = nil
			for _, e := range CheckSSHConfig(tc.job, tc.job.Spec.Plugins["ssh"]) {
				got = append(got, e.Error())
			}
			if tc.job.Spec.Plugins["ssh"] == nil {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckSSHConfig (-want +got):\n%s", diff)
			}
		})
	}
}

// The numbers MaxSSHReplicas's docstring gives.
func TestMaxSSHReplicas(t *testing.T) {
	got := map[int]int64{}
	for _, n := range []int{8, 16, 32, 63, 0} {
		got[n] = MaxSSHReplicas(n, len("worker"))
	}
	want := map[int]int64{8: 13346, 16: 10236, 32: 6942, 63: 4274, 0: 4274}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MaxSSHReplicas(job name, 6) (-want +got):\n%s", diff)
	}
	for n, r := range got {
		_, at := sshConfigSize(n, []sshTask{{name: 6, replicas: r}}, DefaultSSHPort)
		_, over := sshConfigSize(n, []sshTask{{name: 6, replicas: r + 1}}, DefaultSSHPort)
		if at > MaxSSHConfigBytes || over <= MaxSSHConfigBytes {
			t.Errorf("name %d: %d replicas take %d bytes, %d take %d", n, r, at, r+1, over)
		}
	}
}

func TestIndexDigits(t *testing.T) {
	for _, n := range []int64{0, 1, 9, 10, 11, 99, 100, 101, 1000, 12345} {
		var want int64
		for i := int64(0); i < n; i++ {
			want += int64(len(fmt.Sprint(i)))
		}
		if got := indexDigits(n); got != want {
			t.Errorf("indexDigits(%d) = %d, want %d", n, got, want)
		}
	}
}
