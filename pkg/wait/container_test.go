package wait

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/vcplugins/framework-plugins/internal/kubeline"
)

// quantityEqual compares resource quantities by value, not representation.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestContainer(t *testing.T) {
	yes, no := true, false
	id := int64(65534)
	base := v1.Container{
		Name:    "wait-for-dependencies",
		Image:   BuiltinImage,
		Command: []string{"sh", "-c", script},
		Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		},
		ImagePullPolicy:          v1.PullIfNotPresent,
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &v1.SecurityContext{
			RunAsNonRoot:             &yes,
			RunAsUser:                &id,
			RunAsGroup:               &id,
			AllowPrivilegeEscalation: &no,
			ReadOnlyRootFilesystem:   &yes,
			Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}},
			SeccompProfile:           &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
		},
	}
	with := func(image, targets, timeout string) v1.Container {
		c := *base.DeepCopy()
		c.Image = image
		c.Env = []v1.EnvVar{{Name: "WAIT_TARGETS", Value: targets}, {Name: "WAIT_TIMEOUT_SECONDS", Value: timeout}}
		return c
	}
	cases := []struct {
		name    string
		targets []Target
		opts    Options
		want    v1.Container
	}{{
		name: "MPI master waits for workers' ssh",
		targets: []Target{
			{Host: "job-worker-0.job", Port: 22},
			{Host: "job-worker-1.job", Port: 22},
		},
		opts: Options{Enabled: true, Timeout: DefaultTimeout},
		want: with(BuiltinImage, "job-worker-0.job:22 job-worker-1.job:22", "600"),
	}, {
		name:    "PyTorch worker waits for the master's name only, no timeout",
		targets: []Target{{Host: "job-master-0.job"}},
		opts:    Options{Enabled: true, Image: "registry.example/busybox:1.36.1"},
		want:    with("registry.example/busybox:1.36.1", "job-master-0.job", "0"),
	}, {
		name:    "IPv6 address, sub-second timeout rounds up",
		targets: []Target{{Host: "fd00::1", Port: 2222}, {Host: "ps-0", Port: 2222}},
		opts:    Options{Timeout: 1500 * time.Millisecond},
		want:    with(BuiltinImage, "[fd00::1]:2222 ps-0:2222", "2"),
	}, {
		name:    "no targets, negative timeout",
		targets: nil,
		opts:    Options{Timeout: -time.Second},
		want:    with(BuiltinImage, "", "0"),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Container(tc.targets, tc.opts)
			if diff := cmp.Diff(tc.want, got, quantityEqual); diff != "" {
				t.Errorf("Container() (-want +got):\n%s", diff)
			}
		})
	}
}

// FileContainer is Container with the targets' variable replaced by the
// file's path and the mount that holds it; TargetsFile writes what the
// script reads, and TargetsFileLen measures it without writing it.
func TestFileContainer(t *testing.T) {
	mount := v1.VolumeMount{Name: "mpi-hostfile", MountPath: "/etc/mpi", ReadOnly: true}
	o := Options{Enabled: true, Timeout: DefaultTimeout}
	want := Container(nil, o)
	// Container's script with a first line that adds the file's targets.
	want.Command[2] = scriptOrigin + `WAIT_TARGETS="${WAIT_TARGETS:-} $(cat "$WAIT_TARGETS_FILE")" || exit 2` + "\n" +
		strings.TrimPrefix(script, scriptOrigin)
	want.Env = []v1.EnvVar{{Name: "WAIT_TARGETS_FILE", Value: "/etc/mpi/wait-targets"}, {Name: "WAIT_TIMEOUT_SECONDS", Value: "600"}}
	want.VolumeMounts = []v1.VolumeMount{mount}
	if diff := cmp.Diff(want, FileContainer("/etc/mpi/wait-targets", mount, o), quantityEqual); diff != "" {
		t.Errorf("FileContainer() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, NewFileTemplate("/etc/mpi/wait-targets", mount, o).Container(), quantityEqual); diff != "" {
		t.Errorf("NewFileTemplate().Container() (-want +got):\n%s", diff)
	}

	cases := []struct {
		targets []Target
		want    string
	}{
		{nil, ""},
		{[]Target{{Host: "job-worker-0.job", Port: 22}, {Host: "job-worker-1.job", Port: 22}}, "job-worker-0.job:22\njob-worker-1.job:22\n"},
		{[]Target{{Host: "job-master-0.job"}}, "job-master-0.job\n"},
		{[]Target{{Host: "w-9.j", Port: 65535}, {Host: "w-10.j", Port: 65535}}, "w-9.j:65535\nw-10.j:65535\n"},
	}
	for _, tc := range cases {
		got := TargetsFile(tc.targets)
		if got != tc.want {
			t.Errorf("TargetsFile(%v) = %q, want %q", tc.targets, got, tc.want)
		}
		hostsLen, port := 0, 0
		for _, x := range tc.targets {
			hostsLen, port = hostsLen+len(x.Host), x.Port
		}
		if n := TargetsFileLen(hostsLen, len(tc.targets), port); n != len(tc.want) {
			t.Errorf("TargetsFileLen for %v = %d, want %d", tc.targets, n, len(tc.want))
		}
	}
}

// TestContainerIndependent checks that results share no maps or pointers, so
// a plugin may adjust one pod's container without touching another's.
func TestContainerIndependent(t *testing.T) {
	targets := []Target{{Host: "a", Port: 1}}
	a := Container(targets, Options{})
	b := Container(targets, Options{})
	a.Env[0].Value = "changed"
	a.Resources.Limits[v1.ResourceMemory] = resource.MustParse("1Gi")
	*a.SecurityContext.RunAsUser = 0
	*a.SecurityContext.ReadOnlyRootFilesystem = false
	a.SecurityContext.Capabilities.Drop[0] = "NET_RAW"
	if diff := cmp.Diff(Container(targets, Options{}), b, quantityEqual); diff != "" {
		t.Errorf("changing one result changed another (-want +got):\n%s", diff)
	}
}

func TestTargetString(t *testing.T) {
	cases := []struct {
		target Target
		want   string
	}{
		{Target{Host: "job-ps-0.job", Port: 2222}, "job-ps-0.job:2222"},
		{Target{Host: "job-master-0.job"}, "job-master-0.job"},
		{Target{Host: "10.0.0.1", Port: 22}, "10.0.0.1:22"},
		{Target{Host: "fd00::1", Port: 22}, "[fd00::1]:22"},
	}
	for _, tc := range cases {
		if got := tc.target.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.target, got, tc.want)
		}
	}
}

func TestTimeoutSeconds(t *testing.T) {
	cases := []struct {
		in   time.Duration
		want int64
	}{
		{0, 0},
		{-time.Minute, 0},
		{time.Nanosecond, 1},
		{time.Second, 1},
		{1001 * time.Millisecond, 2},
		{10 * time.Minute, 600},
		{time.Duration(1<<63 - 1), 9223372037},
	}
	for _, tc := range cases {
		if got := timeoutSeconds(tc.in); got != tc.want {
			t.Errorf("timeoutSeconds(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// restrictedViolations evaluates a pod holding c as an init container against
// Pod Security "restricted", latest version, using the admission plugin's own
// checks. The pod and its main container set nothing of their own beyond what
// restricted needs, so every violation is c's.
func restrictedViolations(t *testing.T, c v1.Container) []string {
	t.Helper()
	evaluator, err := kubeline.PodSecurityEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	pod := v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Namespace: "ml"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{c},
			Containers: []v1.Container{{
				Name:  "worker",
				Image: "example/trainer",
				SecurityContext: &v1.SecurityContext{
					RunAsNonRoot:             &yes,
					AllowPrivilegeEscalation: &no,
					Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}},
					SeccompProfile:           &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
				},
			}},
		},
	}
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	var violations []string
	for _, r := range evaluator.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			violations = append(violations, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return violations
}

func TestContainerPodSecurityRestricted(t *testing.T) {
	c := Container([]Target{{Host: "job-master-0.job", Port: 23456}}, Options{Timeout: DefaultTimeout})
	if v := restrictedViolations(t, c); len(v) != 0 {
		t.Errorf("wait container violates Pod Security restricted (latest):\n%s", strings.Join(v, "\n"))
	}

	// The evaluation does look at the wait container: weakening any part of
	// its security context is caught.
	weakened := []struct {
		name   string
		change func(*v1.SecurityContext)
		reason string
	}{
		{"privilege escalation", func(s *v1.SecurityContext) { s.AllowPrivilegeEscalation = nil }, "allowPrivilegeEscalation != false"},
		{"capabilities", func(s *v1.SecurityContext) { s.Capabilities = nil }, "unrestricted capabilities"},
		{"NET_RAW", func(s *v1.SecurityContext) { s.Capabilities.Add = []v1.Capability{"NET_RAW"} }, "unrestricted capabilities"},
		{"root", func(s *v1.SecurityContext) { s.RunAsNonRoot = nil }, "runAsNonRoot != true"},
		{"uid 0", func(s *v1.SecurityContext) { *s.RunAsUser = 0 }, "runAsUser=0"},
		{"seccomp", func(s *v1.SecurityContext) { s.SeccompProfile = nil }, "seccompProfile"},
	}
	for _, w := range weakened {
		t.Run(w.name, func(t *testing.T) {
			c := Container(nil, Options{})
			w.change(c.SecurityContext)
			v := restrictedViolations(t, c)
			if len(v) == 0 {
				t.Fatalf("no violation reported")
			}
			if !strings.Contains(strings.Join(v, "\n"), w.reason) || !strings.Contains(strings.Join(v, "\n"), ContainerName) {
				t.Errorf("violations %q do not name %q for container %q", v, w.reason, ContainerName)
			}
		})
	}
}

// TestScriptCompact checks what goes into every pod: the script without
// comments, headed by where its source is, and identical for all pods.
func TestScriptCompact(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(script, "\n"), "\n")
	if lines[0]+"\n" != scriptOrigin {
		t.Errorf("first line %q, want %q", lines[0], scriptOrigin)
	}
	for i, l := range lines[1:] {
		if l == "" || strings.HasPrefix(l, "#") || strings.TrimSpace(l) != l {
			t.Errorf("line %d of the compacted script is blank, a comment or indented: %q", i+2, l)
		}
	}
	if len(script) >= len(scriptSource) {
		t.Errorf("compacted script has %d bytes, its source %d", len(script), len(scriptSource))
	}
	a := Container([]Target{{Host: "a", Port: 1}}, Options{})
	b := Container([]Target{{Host: "b"}}, Options{Timeout: time.Hour})
	if a.Command[2] != b.Command[2] {
		t.Error("the command differs between target lists; it must be the same constant script")
	}
}
