package inject

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestEnv(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init"}},
		Containers: []v1.Container{
			{Name: "main", Env: []v1.EnvVar{{Name: "A", Value: "user"}}},
			{Name: "sidecar"},
		},
	}}
	Env(pod, v1.EnvVar{Name: "A", Value: "plugin"}, v1.EnvVar{Name: "B", Value: "plugin"})
	Env(pod, v1.EnvVar{Name: "B", Value: "again"})
	want := map[string][]v1.EnvVar{
		"init":    {{Name: "A", Value: "plugin"}, {Name: "B", Value: "plugin"}},
		"main":    {{Name: "A", Value: "user"}, {Name: "B", Value: "plugin"}},
		"sidecar": {{Name: "A", Value: "plugin"}, {Name: "B", Value: "plugin"}},
	}
	got := map[string][]v1.EnvVar{}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		got[c.Name] = c.Env
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestPort(t *testing.T) {
	cases := map[string]struct {
		containers []v1.Container
		want       [][]v1.ContainerPort
	}{
		"declared on the first container": {
			containers: []v1.Container{{Name: "main"}, {Name: "sidecar"}},
			want:       [][]v1.ContainerPort{{{Name: "p", ContainerPort: 22, Protocol: v1.ProtocolTCP}}, nil},
		},
		"a container already declares the number": {
			containers: []v1.Container{{Name: "main"}, {Name: "sidecar", Ports: []v1.ContainerPort{{ContainerPort: 22}}}},
			want:       [][]v1.ContainerPort{nil, {{ContainerPort: 22}}},
		},
		"the name is taken": {
			containers: []v1.Container{{Name: "main", Ports: []v1.ContainerPort{{Name: "p", ContainerPort: 80}}}},
			want:       [][]v1.ContainerPort{{{Name: "p", ContainerPort: 80}, {ContainerPort: 22, Protocol: v1.ProtocolTCP}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: tc.containers}}
			Port(pod, "p", 22)
			Port(pod, "p", 22)
			var got [][]v1.ContainerPort
			for _, c := range pod.Spec.Containers {
				got = append(got, c.Ports)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVolume(t *testing.T) {
	vol := v1.Volume{Name: "hostfile"}
	mount := v1.VolumeMount{Name: "hostfile", MountPath: "/etc/mpi", ReadOnly: true}
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init"}},
		Containers: []v1.Container{
			{Name: "main"},
			{Name: "user", VolumeMounts: []v1.VolumeMount{{Name: "mine", MountPath: "/etc/mpi"}}},
		},
	}}
	Volume(pod, vol, mount, false)
	Volume(pod, vol, mount, false)
	if diff := cmp.Diff([]v1.Volume{vol}, pod.Spec.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	want := [][]v1.VolumeMount{nil, {mount}, {{Name: "mine", MountPath: "/etc/mpi"}}}
	got := [][]v1.VolumeMount{pod.Spec.InitContainers[0].VolumeMounts, pod.Spec.Containers[0].VolumeMounts, pod.Spec.Containers[1].VolumeMounts}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
}

func TestFirstInitContainer(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "user"}}}}
	FirstInitContainer(pod, v1.Container{Name: "wait"})
	FirstInitContainer(pod, v1.Container{Name: "wait", Image: "other"})
	if diff := cmp.Diff([]v1.Container{{Name: "wait"}, {Name: "user"}}, pod.Spec.InitContainers); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
}

func TestFirstInitContainerFunc(t *testing.T) {
	// Spare capacity in the pod's slice must not be written into.
	shared := make([]v1.Container, 1, 2)
	shared[0] = v1.Container{Name: "user"}
	pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: shared}}
	calls := 0
	build := func() v1.Container { calls++; return v1.Container{Name: "wait", Image: "busybox"} }
	FirstInitContainerFunc(pod, "wait", build)
	FirstInitContainerFunc(pod, "wait", build)
	if diff := cmp.Diff([]v1.Container{{Name: "wait", Image: "busybox"}, {Name: "user"}}, pod.Spec.InitContainers); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}
	if calls != 1 {
		t.Errorf("build called %d times, want 1: only when the container is added", calls)
	}
	if diff := cmp.Diff([]v1.Container{{Name: "user"}, {}}, shared[:2]); diff != "" {
		t.Errorf("the pod's old slice was written to (-want +got):\n%s", diff)
	}
}

func TestDNSSearches(t *testing.T) {
	cases := map[string]struct {
		config  *v1.PodDNSConfig
		domains []string
		want    *v1.PodDNSConfig
	}{
		"nothing to add leaves no dnsConfig": {},
		"added to a pod without dnsConfig": {
			domains: []string{"a.ns.svc.cluster.local", "b.ns.svc.cluster.local"},
			want:    &v1.PodDNSConfig{Searches: []string{"a.ns.svc.cluster.local", "b.ns.svc.cluster.local"}},
		},
		"the user's searches and options come first and are kept": {
			config:  &v1.PodDNSConfig{Searches: []string{"corp.example"}, Options: []v1.PodDNSConfigOption{{Name: "ndots"}}},
			domains: []string{"a.ns.svc.cluster.local"},
			want:    &v1.PodDNSConfig{Searches: []string{"corp.example", "a.ns.svc.cluster.local"}, Options: []v1.PodDNSConfigOption{{Name: "ndots"}}},
		},
		"a domain listed already is not repeated": {
			config:  &v1.PodDNSConfig{Searches: []string{"a.ns.svc.cluster.local"}},
			domains: []string{"a.ns.svc.cluster.local", "a.ns.svc.cluster.local"},
			want:    &v1.PodDNSConfig{Searches: []string{"a.ns.svc.cluster.local"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{DNSConfig: tc.config}}
			DNSSearches(pod, tc.domains...)
			if diff := cmp.Diff(tc.want, pod.Spec.DNSConfig); diff != "" {
				t.Errorf("dnsConfig (-want +got):\n%s", diff)
			}
		})
	}
}
