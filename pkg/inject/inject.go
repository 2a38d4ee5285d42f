// Package inject adds environment variables, ports, volumes and init containers
// to a pod without ever duplicating or overwriting what the user already set.
// Every plugin writes into pods through it, so "the user wins" holds everywhere.
package inject

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Env adds each variable to every container and init container of the pod whose
// env does not already define a variable of that name. A variable the user set
// (or another plugin set first) is left as it is.
func Env(pod *v1.Pod, env ...v1.EnvVar) {
	for i := range pod.Spec.InitContainers {
		ContainerEnv(&pod.Spec.InitContainers[i], env...)
	}
	for i := range pod.Spec.Containers {
		ContainerEnv(&pod.Spec.Containers[i], env...)
	}
}

// ContainerEnv adds each variable to one container unless the container already
// defines a variable of that name.
func ContainerEnv(c *v1.Container, env ...v1.EnvVar) {
	if cap(c.Env)-len(c.Env) < len(env) {
		grown := make([]v1.EnvVar, len(c.Env), len(c.Env)+len(env))
		copy(grown, c.Env)
		c.Env = grown
	}
	existing := len(c.Env)
next:
	for _, e := range env {
		for j := 0; j < existing; j++ {
			if c.Env[j].Name == e.Name {
				continue next
			}
		}
		c.Env = append(c.Env, e)
	}
}

// Port declares containerPort (TCP) on the pod's first container, the main
// container by Kubernetes convention, unless a container of the pod already
// declares that port number (containers share the pod's network namespace, so one
// declaration serves the pod). The port is given name unless another port of the
// pod already uses it (port names are unique within a pod, 15 characters at
// most), in which case it stays unnamed.
func Port(pod *v1.Pod, name string, containerPort int32) {
	if len(pod.Spec.Containers) == 0 {
		return
	}
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.ContainerPort == containerPort {
				return
			}
		}
	}
	if portNameUsed(pod, name) {
		name = ""
	}
	c := &pod.Spec.Containers[0]
	c.Ports = append(c.Ports, v1.ContainerPort{Name: name, ContainerPort: containerPort, Protocol: v1.ProtocolTCP})
}

func portNameUsed(pod *v1.Pod, name string) bool {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			for _, p := range cs[i].Ports {
				if p.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// Volume adds vol to the pod unless a volume of that name exists, and mounts it
// in every container (init containers included when withInit) that has neither a
// mount of that volume nor any mount at mount.MountPath.
func Volume(pod *v1.Pod, vol v1.Volume, mount v1.VolumeMount, withInit bool) {
	VolumeOnly(pod, vol)
	mountIn := func(c *v1.Container) {
		for _, m := range c.VolumeMounts {
			if m.Name == mount.Name || m.MountPath == mount.MountPath {
				return
			}
		}
		c.VolumeMounts = append(c.VolumeMounts, mount)
	}
	if withInit {
		for i := range pod.Spec.InitContainers {
			mountIn(&pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		mountIn(&pod.Spec.Containers[i])
	}
}

// VolumeOnly adds vol to the pod's volumes unless one of its name is there,
// mounting it nowhere: for a container the plugin adds with its own mounts.
func VolumeOnly(pod *v1.Pod, vol v1.Volume) {
	for _, v := range pod.Spec.Volumes {
		if v.Name == vol.Name {
			return
		}
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
}

// FirstInitContainer puts c before the user's init containers, so that the
// user's own initialisation also runs only after it succeeded. A container of the
// same name already in the pod is left in place and c is not added.
func FirstInitContainer(pod *v1.Pod, c v1.Container) {
	FirstInitContainerFunc(pod, c.Name, func() v1.Container { return c })
}

// FirstInitContainerFunc is FirstInitContainer for the container build returns,
// which must be named name; build is called only if the container is added,
// and its result is written straight into the pod's new init-container slice.
// The pod's old slice is never written to: another object may share it.
func FirstInitContainerFunc(pod *v1.Pod, name string, build func() v1.Container) {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return
		}
	}
	cs := make([]v1.Container, len(pod.Spec.InitContainers)+1)
	cs[0] = build()
	copy(cs[1:], pod.Spec.InitContainers)
	pod.Spec.InitContainers = cs
}

// DNSSearches appends each domain to the pod's dnsConfig.searches unless the
// list has it already; the kubelet adds these after the cluster's own search
// path (dnsPolicy ClusterFirst) in the pod's /etc/resolv.conf.
func DNSSearches(pod *v1.Pod, domains ...string) {
	if len(domains) == 0 {
		return
	}
	if pod.Spec.DNSConfig == nil {
		pod.Spec.DNSConfig = &v1.PodDNSConfig{}
	}
	for _, d := range domains {
		if !slices.Contains(pod.Spec.DNSConfig.Searches, d) {
			pod.Spec.DNSConfig.Searches = append(pod.Spec.DNSConfig.Searches, d)
		}
	}
}

// PodIPEnv returns the variable name holding the pod's IP, from the downward
// API (status.podIP). Put it before the variables whose values refer to it as
// $(name): the kubelet expands a reference only from variables defined
// earlier in the list.
func PodIPEnv(name string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}
}
