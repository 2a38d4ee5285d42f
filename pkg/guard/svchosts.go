package guard

import (
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"

	"github.com/vcplugins/framework-plugins/pkg/inject"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// ExpandHostsInPod turns the pod Volcano's svc plugin set up for a Job whose
// host files are ranges (bounds.SvcHostsAsRanges) into one that reads the
// hosts as on stock: the ConfigMap volume <job>-svc projects only the
// <task>.host keys and is mounted at bounds.SvcRangesDir in the init container
// bounds.SvcHostsContainerName (wait.RangesContainer, the controller's wait image),
// first of the pod's, which writes each file's lines into the emptyDir
// bounds.SvcHostsVolumeName; every container and init container that svc gave the
// ConfigMap at /etc/volcano gets the emptyDir there instead, read-only.
// /etc/volcano then holds the <task>.host files only, each line ending in a
// newline, written once when the pod starts (a ConfigMap volume would follow
// the ConfigMap when the Job is scaled; these files do not); the
// VC_<TASK>_NUM variables (and VC_<TASK>_HOSTS that fit) stay in the
// environment. A pod without svc's volume is left as it is; one that
// already has a container or volume named svc-hosts fails (the pod could
// not be created).
func ExpandHostsInPod(pod *v1.Pod, job *batch.Job) error {
	cm := job.Name + "-svc"
	i := slices.IndexFunc(pod.Spec.Volumes, func(v v1.Volume) bool {
		return v.Name == cm && v.ConfigMap != nil && v.ConfigMap.Name == cm
	})
	if i < 0 {
		return nil
	}
	taken := slices.ContainsFunc(pod.Spec.Volumes, func(v v1.Volume) bool { return v.Name == bounds.SvcHostsVolumeName })
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		taken = taken || slices.ContainsFunc(cs, func(c v1.Container) bool { return c.Name == bounds.SvcHostsContainerName })
	}
	if taken {
		return fmt.Errorf("plugin svc: Job %s's host files are over a ConfigMap and are written by an init container %q with a volume %q, but the pod template already has a container or volume of that name: rename it",
			job.Name, bounds.SvcHostsContainerName, bounds.SvcHostsVolumeName)
	}
	var keys []string
	for k := range bounds.SvcHostRanges(job) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]v1.KeyToPath, len(keys))
	for j, k := range keys {
		items[j] = v1.KeyToPath{Key: k, Path: k}
	}
	pod.Spec.Volumes[i].ConfigMap.Items = items
	inject.VolumeOnly(pod, v1.Volume{Name: bounds.SvcHostsVolumeName, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for j := range cs {
			// A new slice: the old one may share its array with another
			// object's (svc appended its mount to the template's).
			mounts := slices.Clone(cs[j].VolumeMounts)
			for m := range mounts {
				if vm := &mounts[m]; vm.Name == cm && vm.MountPath == svc.ConfigMapMountPath {
					vm.Name, vm.ReadOnly = bounds.SvcHostsVolumeName, true
				}
			}
			cs[j].VolumeMounts = mounts
		}
	}
	inject.FirstInitContainerFunc(pod, bounds.SvcHostsContainerName, func() v1.Container {
		return wait.RangesContainer(bounds.SvcHostsContainerName,
			v1.VolumeMount{Name: cm, MountPath: bounds.SvcRangesDir},
			v1.VolumeMount{Name: bounds.SvcHostsVolumeName, MountPath: svc.ConfigMapMountPath}, wait.Options{})
	})
	return nil
}
