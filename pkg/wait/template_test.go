package wait

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

var templateCases = []struct {
	name    string
	targets []Target
	opts    Options
}{
	{"ssh of two workers", []Target{{Host: "job-worker-0.job", Port: 22}, {Host: "job-worker-1.job", Port: 22}}, Options{Enabled: true, Timeout: DefaultTimeout}},
	{"DNS only, own image, no timeout", []Target{{Host: "job-master-0.job"}}, Options{Image: "registry.example/busybox"}},
	{"no targets", nil, Options{Timeout: time.Second}},
}

// TestTemplateContainerEqualsDeepCopy checks that a pod's copy is exactly
// *c.DeepCopy() of Container's result.
func TestTemplateContainerEqualsDeepCopy(t *testing.T) {
	for _, tc := range templateCases {
		t.Run(tc.name, func(t *testing.T) {
			c := Container(tc.targets, tc.opts)
			want := *c.DeepCopy()
			got := NewTemplate(tc.targets, tc.opts).Container()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Container() (-DeepCopy +got):\n%s", diff)
			}
			// Stricter than cmp's Quantity.Equal: the same representation.
			if !reflect.DeepEqual(want, got) {
				t.Errorf("Container() = %#v, not reflect.DeepEqual to DeepCopy %#v", got, want)
			}
		})
	}
}

// TestTemplateSharesNothing checks that a pod's copy shares no memory with
// the template or with another pod's copy (strings aside, which are
// immutable).
func TestTemplateSharesNothing(t *testing.T) {
	tpl := NewTemplate(templateCases[0].targets, templateCases[0].opts)
	a, b := tpl.Container(), tpl.Container()
	want := []string{}
	for _, pair := range []struct {
		name string
		x, y v1.Container
	}{{"template and a copy", tpl.c, a}, {"two copies", a, b}} {
		if diff := cmp.Diff(want, sharedMemory(pair.x, pair.y)); diff != "" {
			t.Errorf("%s share (-want +got):\n%s", pair.name, diff)
		}
	}
	// Within one copy, no two pointers alias each other either.
	sc := a.SecurityContext
	if sc.RunAsNonRoot == sc.ReadOnlyRootFilesystem || sc.RunAsUser == sc.RunAsGroup {
		t.Errorf("pointers of one copy's security context alias each other")
	}
}

// TestTemplateSlicesFull checks that every slice of a copy has cap == len, so
// that appending to it reallocates instead of writing into spare capacity.
func TestTemplateSlicesFull(t *testing.T) {
	c := NewTemplate(templateCases[0].targets, templateCases[0].opts).Container()
	for name, s := range map[string]reflect.Value{
		"Command":                           reflect.ValueOf(c.Command),
		"Env":                               reflect.ValueOf(c.Env),
		"SecurityContext.Capabilities.Drop": reflect.ValueOf(c.SecurityContext.Capabilities.Drop),
	} {
		if s.Len() == 0 || s.Cap() != s.Len() {
			t.Errorf("%s: len %d, cap %d; want cap == len > 0", name, s.Len(), s.Cap())
		}
	}
}

// TestTemplateCopiesIndependent changes one pod's copy as plugins do (Volcano's
// env and svc plugins append to init containers' Env, svc and ssh to their
// VolumeMounts) and beyond, and checks that neither another pod's copy nor
// later copies change.
func TestTemplateCopiesIndependent(t *testing.T) {
	tc := templateCases[0]
	tpl := NewTemplate(tc.targets, tc.opts)
	pods := []*v1.Pod{{}, {}}
	for _, pod := range pods {
		tpl.AddTo(pod)
	}
	a := &pods[0].Spec.InitContainers[0]
	a.Env = append(a.Env, v1.EnvVar{Name: "VK_TASK_INDEX", Value: "0"})
	a.VolumeMounts = append(a.VolumeMounts, v1.VolumeMount{Name: "job-svc", MountPath: "/etc/volcano"})
	a.Env[0].Value = "changed"
	a.Command[2] = "exit 0"
	*a.SecurityContext.RunAsUser = 0
	*a.SecurityContext.ReadOnlyRootFilesystem = false
	a.SecurityContext.Capabilities.Drop[0] = "NET_RAW"
	a.SecurityContext.SeccompProfile.Type = v1.SeccompProfileTypeUnconfined

	want := Container(tc.targets, tc.opts)
	if diff := cmp.Diff(want, pods[1].Spec.InitContainers[0]); diff != "" {
		t.Errorf("changing one pod's copy changed another's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tpl.Container()); diff != "" {
		t.Errorf("changing one pod's copy changed later copies (-want +got):\n%s", diff)
	}
}

func TestTemplateAddTo(t *testing.T) {
	tpl := NewTemplate([]Target{{Host: "job-ps-0.job", Port: 2222}}, Options{})
	pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "user-init"}}}}
	tpl.AddTo(pod)
	tpl.AddTo(pod)
	want := []v1.Container{Container([]Target{{Host: "job-ps-0.job", Port: 2222}}, Options{}), {Name: "user-init"}}
	if diff := cmp.Diff(want, pod.Spec.InitContainers); diff != "" {
		t.Errorf("init containers (-want +got):\n%s", diff)
	}

	own := &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: ContainerName, Image: "mine"}}}}
	tpl.AddTo(own)
	if diff := cmp.Diff([]v1.Container{{Name: ContainerName, Image: "mine"}}, own.Spec.InitContainers); diff != "" {
		t.Errorf("a pod's own %s was replaced (-want +got):\n%s", ContainerName, diff)
	}
}

// sharedMemory returns the paths at which x and y hold the same pointer, map or
// slice backing array, sorted.
func sharedMemory(x, y v1.Container) []string {
	found := map[string]bool{}
	walkShared("", reflect.ValueOf(x), reflect.ValueOf(y), found)
	paths := make([]string, 0, len(found))
	for p := range found {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

func walkShared(path string, x, y reflect.Value, found map[string]bool) {
	switch x.Kind() {
	case reflect.Pointer:
		if x.IsNil() || y.IsNil() {
			return
		}
		if x.Pointer() == y.Pointer() {
			found[path] = true
		}
		walkShared(path, x.Elem(), y.Elem(), found)
	case reflect.Slice:
		if x.Cap() == 0 || y.Cap() == 0 {
			return
		}
		if x.Pointer() == y.Pointer() {
			found[path] = true
		}
		for i := 0; i < x.Len() && i < y.Len(); i++ {
			walkShared(fmt.Sprintf("%s[%d]", path, i), x.Index(i), y.Index(i), found)
		}
	case reflect.Map:
		if x.IsNil() || y.IsNil() {
			return
		}
		if x.Pointer() == y.Pointer() {
			found[path] = true
			return
		}
		for _, k := range x.MapKeys() {
			if v := y.MapIndex(k); v.IsValid() {
				walkShared(fmt.Sprintf("%s[%v]", path, k), x.MapIndex(k), v, found)
			}
		}
	case reflect.Struct:
		for i := 0; i < x.NumField(); i++ {
			name := x.Type().Field(i).Name
			if path != "" {
				name = path + "." + name
			}
			walkShared(name, x.Field(i), y.Field(i), found)
		}
	case reflect.Interface:
		if !x.IsNil() && !y.IsNil() {
			walkShared(path, x.Elem(), y.Elem(), found)
		}
	}
}
