package wait

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestPodTargets(t *testing.T) {
	mount := v1.VolumeMount{Name: "hosts", MountPath: "/etc/mpi", ReadOnly: true}
	cmVolume := func(items ...v1.KeyToPath) v1.Volume {
		return v1.Volume{Name: "hosts", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "job-mpi-hostfile"}, Items: items}}}
	}
	data := map[string]string{"wait-targets": "w-0.job:22\nw-1.job:22\n", "renamed": "x:1\n"}
	get := func(name string) (map[string]string, error) {
		if name != "job-mpi-hostfile" {
			return nil, errors.New("not found")
		}
		return data, nil
	}
	file := FileContainer("/etc/mpi/wait-targets", mount, Options{})
	cases := []struct {
		name    string
		c       v1.Container
		volumes []v1.Volume
		want    []string
		wantErr string
	}{
		{name: "variable", c: Container([]Target{{Host: "ps-0.job", Port: 2222}, {Host: "chief-0.job"}}, Options{}),
			want: []string{"ps-0.job:2222", "chief-0.job"}},
		{name: "file, volume items", c: file, volumes: []v1.Volume{cmVolume(v1.KeyToPath{Key: "wait-targets", Path: "wait-targets"})},
			want: []string{"w-0.job:22", "w-1.job:22"}},
		{name: "file, whole ConfigMap", c: file, volumes: []v1.Volume{cmVolume()}, want: []string{"w-0.job:22", "w-1.job:22"}},
		{name: "file under another key", c: file, volumes: []v1.Volume{cmVolume(v1.KeyToPath{Key: "renamed", Path: "wait-targets"})},
			want: []string{"x:1"}},
		{name: "missing key", c: file, volumes: []v1.Volume{cmVolume(v1.KeyToPath{Key: "gone", Path: "wait-targets"})},
			wantErr: `WAIT_TARGETS_FILE /etc/mpi/wait-targets: ConfigMap job-mpi-hostfile has no key "gone"`},
		{name: "no item at the path", c: file, volumes: []v1.Volume{cmVolume(v1.KeyToPath{Key: "hostfile", Path: "hostfile"})},
			wantErr: `WAIT_TARGETS_FILE /etc/mpi/wait-targets: volume "hosts" projects no item at wait-targets`},
		{name: "not a ConfigMap", c: file, volumes: []v1.Volume{{Name: "hosts", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
			wantErr: `WAIT_TARGETS_FILE /etc/mpi/wait-targets: volume "hosts" mounted at /etc/mpi is not a whole ConfigMap`},
		{name: "not mounted", c: FileContainer("/elsewhere/targets", mount, Options{}), volumes: []v1.Volume{cmVolume()},
			wantErr: `WAIT_TARGETS_FILE /elsewhere/targets: container wait-for-dependencies mounts no volume there`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Volumes: tc.volumes, InitContainers: []v1.Container{tc.c}}}
			got, err := PodTargets(pod, &pod.Spec.InitContainers[0], get)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}
