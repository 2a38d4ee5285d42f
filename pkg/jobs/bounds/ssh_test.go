package bounds

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
		})
	}
}

// CompactSSHConfig means to OpenSSH what Volcano's per-host config means:
// for every pod's short name, and for names that are not one (dotted, of
// another Job), ssh -G (which prints the configuration it would use,
// without connecting) gives the same hostname and port with either, for
// tasks whose names extend each other, a task with its own subdomain and
// one whose pods share a hostname.
func TestCompactSSHConfigResolvesAsVolcanos(t *testing.T) {
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Fatalf("the test needs OpenSSH's client (Debian: openssh-client): %v", err)
	}
	job := sshJob("train", []string{"--ssh-port=2222", "--ssh-private-key=k", "--ssh-public-key=p"},
		sshTaskSpec("worker", 12, "", ""), sshTaskSpec("worker-extra", 3, "", "other"),
		sshTaskSpec("ps", 2, "shared", ""), sshTaskSpec("none", 0, "", ""))
	dir := t.TempDir()
	volcanoFile, compactFile := filepath.Join(dir, "volcano"), filepath.Join(dir, "compact")
	compact := CompactSSHConfig(job, 2222)
	for f, c := range map[string]string{volcanoFile: volcanoSSHConfig(t, job), compactFile: compact} {
		if err := os.WriteFile(f, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(compact, "Host "); n != 3 {
		t.Errorf("the compact config has %d entries, want 3 (one a task):\n%s", n, compact)
	}
	resolve := func(config, host string) string {
		out, err := exec.Command(sshBin, "-G", "-F", config, host).Output()
		if err != nil {
			t.Fatalf("ssh -G -F %s %s: %v", config, host, err)
		}
		var got []string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "hostname ") || strings.HasPrefix(line, "port ") {
				got = append(got, line)
			}
		}
		return strings.Join(got, ", ")
	}
	hosts := []string{"shared", "train-ps-0", "train-none-0", "train-worker.x", "other-worker-0", "train-worker-0.train"}
	for i := range 12 {
		hosts = append(hosts, fmt.Sprintf("train-worker-%d", i))
	}
	for i := range 3 {
		hosts = append(hosts, fmt.Sprintf("train-worker-extra-%d", i))
	}
	for _, h := range hosts {
		if v, c := resolve(volcanoFile, h), resolve(compactFile, h); v != c && !unlistedPod(h) {
			t.Errorf("%s: Volcano's config gives %q, the compact one %q", h, v, c)
		}
	}
	if got := resolve(compactFile, "train-worker-extra-2"); got != "hostname train-worker-extra-2.other, port 2222" {
		t.Errorf("train-worker-extra-2: %q", got)
	}
}

// unlistedPod: a name of the Job's pattern that no pod has (task "none" has
// no replicas); Volcano lists no such host, the compact config resolves it
// as it would a pod of that name. Nothing answers there either way.
func unlistedPod(host string) bool { return host == "train-none-0" }

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
