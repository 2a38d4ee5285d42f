package guard

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/events"
)

// object is one object an in-tree plugin writes for Job "db" in "default".
type object struct {
	plugin, kind, name string
}

// objects are what Volcano's svc, ssh and ray plugins write for Job "db".
var objects = []object{
	{"svc", "ConfigMap", "db-svc"},
	{"svc", "Service", "db"},
	{"svc", "NetworkPolicy", "db"},
	{"ssh", "Secret", "db-ssh"},
	{"ray", "Service", "db-head-svc"},
}

// make returns o as an API object with refs as its ownerReferences and a
// marker in its content, so that an overwrite shows.
func (o object) make(refs ...metav1.OwnerReference) runtime.Object {
	meta := metav1.ObjectMeta{Name: o.name, Namespace: "default", UID: types.UID("uid-" + o.kind + "-" + o.name), OwnerReferences: refs,
		Labels: map[string]string{"owner": "another-team"}}
	switch o.kind {
	case "ConfigMap":
		return &v1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"hosts": "10.0.0.1 db"}}
	case "Secret":
		return &v1.Secret{ObjectMeta: meta, Data: map[string][]byte{"config": []byte("StrictHostKeyChecking no\n"), "id_rsa": []byte("another team's key")}}
	case "Service":
		return &v1.Service{ObjectMeta: meta, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "db"}}}
	case "NetworkPolicy":
		return &networkingv1.NetworkPolicy{ObjectMeta: meta, Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	}
	panic(o.kind)
}

// read returns o from client, or nil when it is not there.
func (o object) read(t *testing.T, client kubernetes.Interface) runtime.Object {
	t.Helper()
	ctx := context.Background()
	var obj runtime.Object
	var err error
	switch o.kind {
	case "ConfigMap":
		obj, err = client.CoreV1().ConfigMaps("default").Get(ctx, o.name, metav1.GetOptions{})
	case "Secret":
		obj, err = client.CoreV1().Secrets("default").Get(ctx, o.name, metav1.GetOptions{})
	case "Service":
		obj, err = client.CoreV1().Services("default").Get(ctx, o.name, metav1.GetOptions{})
	case "NetworkPolicy":
		obj, err = client.NetworkingV1().NetworkPolicies("default").Get(ctx, o.name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s %s: %v", o.kind, o.name, err)
	}
	return obj
}

// volcano returns Volcano's own builder of plugin name: this test binary never
// calls Register, so the factory holds the unwrapped ones.
func volcano(t *testing.T, name string) vcplugins.PluginBuilder {
	t.Helper()
	b, ok := vcplugins.GetPluginBuilder(name)
	if !ok {
		t.Fatalf("Volcano's factory has no %s plugin", name)
	}
	return b
}

func conflictEvents(t *testing.T, client kubernetes.Interface) []string {
	t.Helper()
	list, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Reason == events.ReasonObjectConflict && e.Type == v1.EventTypeWarning && e.InvolvedObject.Name == "db" {
			out = append(out, e.Message)
		}
	}
	return out
}

func newJob() *batch.Job {
	job := jobtest.MakeJob("db").Obj()
	job.Status.ControlledResources = map[string]string{}
	return job
}

// TestForeignObjectsUntouched: for each object an in-tree plugin writes, one of
// that name that the Job does not control (no owner; another Job's, even one
// named "db": ownership is by UID) makes OnJobAdd fail with an event naming it,
// is neither adopted nor changed, and survives OnJobDelete, which says so on
// the Job. The same plugins through Volcano's own builders (the control) do
// overwrite or delete it, so the test can fail.
func TestForeignObjectsUntouched(t *testing.T) {
	owners := map[string][]metav1.OwnerReference{
		"no owner":                 nil,
		"another Job of that name": {*metav1.NewControllerRef(jobtest.MakeJob("db").UID("uid-older-db").Obj(), batch.SchemeGroupVersion.WithKind("Job"))},
	}
	for _, o := range objects {
		for ownerCase, refs := range owners {
			t.Run(o.kind+" "+o.name+" with "+ownerCase, func(t *testing.T) {
				foreign := o.make(refs...)
				client := fake.NewSimpleClientset(foreign)
				p := Wrap(o.plugin, volcano(t, o.plugin))(pluginsinterface.PluginClientset{KubeClients: client}, nil)
				job := newJob()
				err := p.OnJobAdd(job)
				if err == nil {
					t.Fatalf("OnJobAdd: nil error with a foreign %s %s", o.kind, o.name)
				}
				if !strings.Contains(err.Error(), o.kind+" default/"+o.name+" exists and is not controlled by Job db") {
					t.Errorf("OnJobAdd error %q does not name the %s", err, o.kind)
				}
				if job.Status.ControlledResources["plugin-"+o.plugin] != "" {
					t.Errorf("plugin %s marked the Job as set up: %v", o.plugin, job.Status.ControlledResources)
				}
				if diff := cmp.Diff(foreign, o.read(t, client)); diff != "" {
					t.Errorf("after OnJobAdd the foreign %s changed (-before +after):\n%s", o.kind, diff)
				}
				evs := conflictEvents(t, client)
				if len(evs) != 1 || !strings.Contains(evs[0], o.kind+" default/"+o.name) {
					t.Errorf("events after OnJobAdd %q, want one PluginObjectConflict naming %s %s", evs, o.kind, o.name)
				}

				// The Job ends (Volcano kills it after its retries) as
				// one that had been set up: OnJobDelete runs.
				job.Status.ControlledResources["plugin-"+o.plugin] = o.plugin
				if err := p.OnJobDelete(job); err != nil {
					t.Fatalf("OnJobDelete: %v", err)
				}
				if diff := cmp.Diff(foreign, o.read(t, client)); diff != "" {
					t.Errorf("after OnJobDelete the foreign %s changed or went (-before +after):\n%s", o.kind, diff)
				}
				if evs := conflictEvents(t, client); len(evs) != 2 || !strings.Contains(strings.Join(evs, "\n"), "was left in place") {
					t.Errorf("events after OnJobDelete %q, want a second saying the %s was left in place", evs, o.kind)
				}

				// Control: Volcano's own plugin deletes it.
				stock := volcano(t, o.plugin)(pluginsinterface.PluginClientset{KubeClients: client}, nil)
				job.Status.ControlledResources["plugin-"+o.plugin] = o.plugin
				if err := stock.OnJobDelete(job); err != nil {
					t.Fatalf("Volcano's OnJobDelete: %v", err)
				}
				if o.read(t, client) != nil {
					t.Errorf("control: Volcano's own %s plugin left %s %s in place", o.plugin, o.kind, o.name)
				}
			})
		}
	}
}

// TestOwnObjectsKept: with nothing in the way the wrapped plugins create their
// objects with the Job as controller, find them again on the next OnJobAdd
// and OnJobUpdate, and delete them on OnJobDelete, recording no event.
func TestOwnObjectsKept(t *testing.T) {
	for _, plugin := range InTree {
		t.Run(plugin, func(t *testing.T) {
			client := fake.NewSimpleClientset()
			p := Wrap(plugin, volcano(t, plugin))(pluginsinterface.PluginClientset{KubeClients: client}, nil)
			job := newJob()
			for i := 0; i < 2; i++ {
				if err := p.OnJobAdd(job); err != nil {
					t.Fatalf("OnJobAdd %d: %v", i, err)
				}
				delete(job.Status.ControlledResources, "plugin-"+plugin) // set up again, as after a restart
			}
			if err := p.OnJobUpdate(job); err != nil {
				t.Fatalf("OnJobUpdate: %v", err)
			}
			var mine []object
			for _, o := range objects {
				if o.plugin != plugin {
					continue
				}
				mine = append(mine, o)
				obj := o.read(t, client)
				if obj == nil {
					t.Fatalf("%s %s not created", o.kind, o.name)
				}
				if !metav1.IsControlledBy(obj.(metav1.Object), job) {
					t.Errorf("%s %s is not controlled by the Job: %v", o.kind, o.name, obj.(metav1.Object).GetOwnerReferences())
				}
			}
			job.Status.ControlledResources["plugin-"+plugin] = plugin
			if err := p.OnJobDelete(job); err != nil {
				t.Fatalf("OnJobDelete: %v", err)
			}
			for _, o := range mine {
				if o.read(t, client) != nil {
					t.Errorf("%s %s not deleted", o.kind, o.name)
				}
			}
			if job.Status.ControlledResources["plugin-"+plugin] != "" {
				t.Errorf("mark not removed: %v", job.Status.ControlledResources)
			}
			if evs := conflictEvents(t, client); len(evs) != 0 {
				t.Errorf("events %q, want none", evs)
			}
		})
	}
}

// TestRegisterWrapsOnce: Register replaces each in-tree builder with a wrapped
// one, once however often it is called.
func TestRegisterWrapsOnce(t *testing.T) {
	Register()
	Register()
	for _, name := range InTree {
		b := volcano(t, name)
		p := b(pluginsinterface.PluginClientset{}, nil).(*plugin)
		if _, twice := p.build(pluginsinterface.PluginClientset{}, nil).(*plugin); twice {
			t.Errorf("%s wrapped twice", name)
		}
	}
}

// TestAllConflictsInOneSync: svc's three objects all in the way are reported
// by one OnJobAdd, each in its own event; with --disable-network-policy svc
// never writes the NetworkPolicy, so a foreign one of the Job's name is no
// conflict, and stays.
func TestAllConflictsInOneSync(t *testing.T) {
	var svc []runtime.Object
	for _, o := range objects[:3] {
		svc = append(svc, o.make())
	}
	client := fake.NewSimpleClientset(svc...)
	p := Wrap("svc", volcano(t, "svc"))(pluginsinterface.PluginClientset{KubeClients: client}, nil)
	if err := p.OnJobAdd(newJob()); err == nil {
		t.Fatal("OnJobAdd: nil error")
	}
	if evs := conflictEvents(t, client); len(evs) != 3 {
		t.Errorf("events %q, want one for each of the ConfigMap, Service and NetworkPolicy", evs)
	}

	np := objects[2].make()
	client = fake.NewSimpleClientset(np)
	p = Wrap("svc", volcano(t, "svc"))(pluginsinterface.PluginClientset{KubeClients: client}, []string{"--disable-network-policy=true"})
	job := newJob()
	if err := p.OnJobAdd(job); err != nil {
		t.Fatalf("OnJobAdd with --disable-network-policy: %v", err)
	}
	if diff := cmp.Diff(np, objects[2].read(t, client)); diff != "" {
		t.Errorf("NetworkPolicy changed (-before +after):\n%s", diff)
	}
	if evs := conflictEvents(t, client); len(evs) != 0 {
		t.Errorf("events %q, want none", evs)
	}
}

func TestObjects(t *testing.T) {
	job := newJob()
	for _, tc := range []struct {
		plugin string
		args   []string
		want   []Object
	}{
		{"svc", nil, []Object{{"ConfigMap", "db-svc"}, {"Service", "db"}, {"NetworkPolicy", "db"}}},
		{"svc", []string{"--disable-network-policy"}, []Object{{"ConfigMap", "db-svc"}, {"Service", "db"}}},
		{"svc", []string{"--publish-not-ready-addresses", "-disable-network-policy=false"}, []Object{{"ConfigMap", "db-svc"}, {"Service", "db"}, {"NetworkPolicy", "db"}}},
		// svc keeps what parsed before the bad flag.
		{"svc", []string{"--disable-network-policy", "--unknown"}, []Object{{"ConfigMap", "db-svc"}, {"Service", "db"}}},
		{"svc", []string{"--unknown", "--disable-network-policy"}, []Object{{"ConfigMap", "db-svc"}, {"Service", "db"}, {"NetworkPolicy", "db"}}},
		{"ssh", nil, []Object{{"Secret", "db-ssh"}}},
		{"ray", nil, []Object{{"Service", "db-head-svc"}}},
		{"env", nil, nil},
	} {
		if diff := cmp.Diff(tc.want, Objects(tc.plugin, tc.args, job)); diff != "" {
			t.Errorf("Objects(%s, %q) (-want +got):\n%s", tc.plugin, tc.args, diff)
		}
	}
}

// stockBuilders are Volcano's own builders of the InTree plugins, taken when
// the package initialises: TestRegisterWrapsOnce replaces them in Volcano's
// factory, so volcano() returns wrapped ones in tests that run after it.
var stockBuilders = func() map[string]vcplugins.PluginBuilder {
	m := map[string]vcplugins.PluginBuilder{}
	for _, name := range InTree {
		if b, ok := vcplugins.GetPluginBuilder(name); ok {
			m[name] = b
		}
	}
	return m
}()

// TestForgedControllerRef: an object whose controller reference has the Job's
// UID under another apiVersion, kind or name (which the chart's
// job-object-claims policy lets through) is not the Job's: OnJobAdd fails with
// a *ConflictError and a PluginObjectConflict event, the object (with its
// Secret data) is neither adopted nor changed, and OnJobDelete leaves it in
// place. With the Job's own reference it is adopted and deleted with the Job.
func TestForgedControllerRef(t *testing.T) {
	job := newJob()
	real := *metav1.NewControllerRef(job, batch.SchemeGroupVersion.WithKind("Job"))
	forged := func(f func(*metav1.OwnerReference)) metav1.OwnerReference { r := real; f(&r); return r }
	for _, tc := range []struct {
		name    string
		ref     metav1.OwnerReference
		adopted bool
	}{
		{"the Job's reference", real, true},
		{"a Decoy with the Job's UID", metav1.OwnerReference{
			APIVersion: "example.invalid/v1", Kind: "Decoy", Name: "x", UID: job.UID, Controller: ptr.To(true)}, false},
		{"another kind with the Job's UID", forged(func(r *metav1.OwnerReference) { r.Kind = "Decoy" }), false},
		{"another apiVersion with the Job's UID", forged(func(r *metav1.OwnerReference) { r.APIVersion = "example.invalid/v1" }), false},
		{"another name with the Job's UID", forged(func(r *metav1.OwnerReference) { r.Name = "x" }), false},
	} {
		for _, o := range objects {
			t.Run(tc.name+"/"+o.kind+" "+o.name, func(t *testing.T) {
				existing := o.make(tc.ref)
				client := fake.NewSimpleClientset(existing)
				p := Wrap(o.plugin, stockBuilders[o.plugin])(pluginsinterface.PluginClientset{KubeClients: client}, nil)
				job := newJob()
				err := p.OnJobAdd(job)
				// ssh wraps the *ConflictError's text (%v), so match the text.
				conflict := (&ConflictError{Plugin: o.plugin, Kind: o.kind, Namespace: "default", Name: o.name, Job: "db"}).Error()
				if tc.adopted && err != nil || !tc.adopted && (err == nil || !strings.Contains(err.Error(), conflict)) {
					t.Fatalf("OnJobAdd: %v; want a conflict: %v", err, !tc.adopted)
				}
				var wantEvents []string
				if !tc.adopted {
					wantEvents = []string{conflict}
					if diff := cmp.Diff(existing, o.read(t, client)); diff != "" {
						t.Errorf("after OnJobAdd the %s changed (-before +after):\n%s", o.kind, diff)
					}
				}
				if diff := cmp.Diff(wantEvents, conflictEvents(t, client)); diff != "" {
					t.Errorf("events after OnJobAdd (-want +got):\n%s", diff)
				}

				job.Status.ControlledResources["plugin-"+o.plugin] = o.plugin
				if err := p.OnJobDelete(job); err != nil {
					t.Fatalf("OnJobDelete: %v", err)
				}
				after := o.read(t, client)
				if tc.adopted {
					if after != nil {
						t.Errorf("OnJobDelete left the Job's %s %s in place", o.kind, o.name)
					}
					return
				}
				if diff := cmp.Diff(existing, after); diff != "" {
					t.Errorf("after OnJobDelete the %s changed or went (-before +after):\n%s", o.kind, diff)
				}
			})
		}
	}
}
