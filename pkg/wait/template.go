package wait

import (
	v1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/pkg/inject"
)

// Template is a wait container built once per job plan, from which every pod
// that must wait gets its own deep copy: a pod shares no memory with the
// template or with another pod, so other Volcano plugins may change a pod's
// copy as they like. It is safe for concurrent use.
type Template struct {
	c v1.Container
}

// NewTemplate returns the template of Container(targets, o).
func NewTemplate(targets []Target, o Options) *Template {
	return &Template{c: Container(targets, o)}
}

// NewFileTemplate returns the template of FileContainer(path, mount, o).
func NewFileTemplate(path string, mount v1.VolumeMount, o Options) *Template {
	return &Template{c: FileContainer(path, mount, o)}
}

// Container returns a deep copy of the template's container for one pod.
func (t *Template) Container() v1.Container {
	return *t.c.DeepCopy()
}

// AddTo puts a copy of the container (Container) before the pod's init
// containers, unless the pod already has an init container named
// ContainerName (see inject.FirstInitContainer).
func (t *Template) AddTo(pod *v1.Pod) {
	inject.FirstInitContainerFunc(pod, ContainerName, t.Container)
}
