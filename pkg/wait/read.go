package wait

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// PodTargets returns the dependencies that wait container c of pod waits
// for, as its script reads them: the words of TargetsEnv, then those of the
// file TargetsFileEnv names. That file is read from the ConfigMap volume c
// mounts over it, through configMap (which returns a ConfigMap's data by
// name; the file's key is the volume item whose path it is, else its own
// name). It serves readers of a running job (the demo, the e2e tests,
// `kubectl` users following docs/troubleshooting.md) and inverts Container
// and FileContainer.
//
// Errors: the file is on no volume c mounts, or on one that is not a
// ConfigMap's, mounts a subPath or projects no item there; the ConfigMap
// lacks the key; configMap's own error.
func PodTargets(pod *v1.Pod, c *v1.Container, configMap func(name string) (map[string]string, error)) ([]string, error) {
	var out []string
	var file string
	for _, e := range c.Env {
		switch e.Name {
		case TargetsEnv:
			out = append(out, strings.Fields(e.Value)...)
		case TargetsFileEnv:
			file = e.Value
		}
	}
	if file == "" {
		return out, nil
	}
	for _, m := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok {
			continue
		}
		var vol *v1.Volume
		for i := range pod.Spec.Volumes {
			if pod.Spec.Volumes[i].Name == m.Name {
				vol = &pod.Spec.Volumes[i]
			}
		}
		if vol == nil || vol.ConfigMap == nil || m.SubPath != "" {
			return nil, fmt.Errorf("%s %s: volume %q mounted at %s is not a whole ConfigMap", TargetsFileEnv, file, m.Name, m.MountPath)
		}
		// Without items every key is a file of its name; with items only
		// theirs are (as the kubelet projects them).
		key, found := rel, len(vol.ConfigMap.Items) == 0
		for _, it := range vol.ConfigMap.Items {
			if it.Path == rel {
				key, found = it.Key, true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s %s: volume %q projects no item at %s", TargetsFileEnv, file, m.Name, rel)
		}
		data, err := configMap(vol.ConfigMap.Name)
		if err != nil {
			return nil, err
		}
		content, ok := data[key]
		if !ok {
			return nil, fmt.Errorf("%s %s: ConfigMap %s has no key %q", TargetsFileEnv, file, vol.ConfigMap.Name, key)
		}
		return append(out, strings.Fields(content)...), nil
	}
	return nil, fmt.Errorf("%s %s: container %s mounts no volume there", TargetsFileEnv, file, c.Name)
}
