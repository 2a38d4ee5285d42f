// Package guard wraps Volcano's in-tree job plugins that write objects for a
// Job (svc: the hosts ConfigMap <job>-svc, the headless Service <job> and the
// NetworkPolicy <job>; ssh: the Secret <job>-ssh; ray: the Service
// <job>-head-svc) so that they only ever read, update or delete objects the Job
// controls.
//
// Volcano's plugins look objects up by name alone: svc and ray keep a Service or
// NetworkPolicy of the Job's name that somebody else made (and delete it with the
// Job), svc and ssh overwrite a ConfigMap or Secret of their name, and ssh adopts
// a Secret whose "config" matches, mounting another user's keys into the Job's
// pods. A user allowed only to create and delete Volcano Jobs could so delete any
// NetworkPolicy of the namespace by naming a Job after it (issue #38, M2).
//
// The wrapper does not copy Volcano's plugins: for each hook it builds Volcano's
// own plugin with a client bound to the Job, through which Get of a ConfigMap,
// Secret, Service or NetworkPolicy the Job does not control fails with a
// *ConflictError and Delete of one is skipped. Objects the plugin creates carry
// the Job as controller (Volcano's NewControllerRef), so its own are found again.
package guard

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	networkingv1client "k8s.io/client-go/kubernetes/typed/networking/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vcplugins "volcano.sh/volcano/pkg/controllers/job/plugins"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// InTree names Volcano's in-tree job plugins that write objects for a Job; Register
// wraps each that the factory knows.
var InTree = []string{"ray", "ssh", "svc"}

var registerOnce sync.Once

// Register replaces the builders of the InTree plugins in Volcano's plugin
// factory with Wrap of them. Safe to call more than once: they are wrapped once.
func Register() {
	registerOnce.Do(func() {
		for _, name := range InTree {
			if b, ok := vcplugins.GetPluginBuilder(name); ok {
				vcplugins.RegisterPluginBuilder(name, Wrap(name, b))
			}
		}
	})
}

// Wrap returns a builder of plugin name whose hooks run build's plugin through
// a client on which the objects the Job does not control are out of reach:
// OnJobAdd and OnJobUpdate fail with a *ConflictError (after a
// PluginObjectConflict Warning event on the Job) when the plugin reads one, and
// OnJobDelete leaves them in place (with the same event). Errors of build's
// plugin are returned as they are.
func Wrap(name string, build vcplugins.PluginBuilder) vcplugins.PluginBuilder {
	return func(c pluginsinterface.PluginClientset, args []string) pluginsinterface.PluginInterface {
		return &plugin{name: name, build: build, client: c.KubeClients, args: args}
	}
}

type plugin struct {
	name   string
	build  vcplugins.PluginBuilder
	client kubernetes.Interface
	args   []string
}

func (p *plugin) Name() string { return p.name }

// bound builds Volcano's plugin with a client guarded for job.
func (p *plugin) bound(job *batch.Job) (pluginsinterface.PluginInterface, *guard) {
	g := &guard{plugin: p.name, job: job}
	c := p.client
	if c != nil {
		c = &guardedClient{Interface: c, g: g}
	}
	return p.build(pluginsinterface.PluginClientset{KubeClients: c}, p.args), g
}

func (p *plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	inner, _ := p.bound(job)
	if err := inner.OnPodCreate(pod, job); err != nil {
		return err
	}
	if p.name == "svc" {
		DropOversizedHostVariables(pod, job)
		if bounds.SvcHostsAsRanges(job) {
			return ExpandHostsInPod(pod, job)
		}
	}
	return nil
}

// DropOversizedHostVariables removes from the pod's containers and init
// containers every VC_<TASK>_HOSTS variable the svc plugin gives them
// (every host of a task, from its ConfigMap <job>-svc: O(hosts) in every
// pod) that would be over bounds.MaxArgStrlen once the kubelet expands it
// (bounds.SvcSizes): with it no container could start (execve fails with
// E2BIG). Volcano v1.16's svc has --inject-hosts-env=false for the same
// reason; the <task>.host files of /etc/volcano keep the hosts. The
// ConfigMap gets no such key either (guard.written). Admission warns of each
// (webhook.SvcHostsWarnings).
func DropOversizedHostVariables(pod *v1.Pod, job *batch.Job) {
	sizes := bounds.SvcSizes(job)
	drop := func(cs []v1.Container) {
		for i := range cs {
			cs[i].Env = slices.DeleteFunc(cs[i].Env, func(e v1.EnvVar) bool {
				r := e.ValueFrom
				if !strings.HasPrefix(e.Name, "VC_") || !strings.HasSuffix(e.Name, "_HOSTS") ||
					r == nil || r.ConfigMapKeyRef == nil || r.ConfigMapKeyRef.Name != job.Name+"-svc" {
					return false // not svc's
				}
				return bounds.SvcHostsEnvDropped(r.ConfigMapKeyRef.Key, sizes[r.ConfigMapKeyRef.Key])
			})
		}
	}
	drop(pod.Spec.InitContainers)
	drop(pod.Spec.Containers)
}

func (p *plugin) OnJobAdd(job *batch.Job) error {
	inner, g := p.bound(job)
	var err error
	built := job
	if job.Status.ControlledResources["plugin-"+p.name] != p.name {
		built = p.compactSSHConfig(job, g)
		// Read every object the plugin will write first, so that one
		// sync reports all that are in the way, not the first the
		// plugin meets.
		err = p.precheck(job, g)
	}
	if err == nil {
		err = inner.OnJobAdd(built)
	}
	err = p.report(job, g, err)
	if refused, _ := g.result(); len(refused) > 0 {
		// svc marks the Job once its Service exists, before it reads the
		// NetworkPolicy: without the mark the next sync sets up again.
		framework.UnmarkControlled(job, p.name)
	}
	return err
}

// compactSSHConfig returns the Job Volcano's plugin is to set up: job
// itself, but for the ssh plugin when its config for job would be over
// bounds.MaxSSHConfigBytes (bounds.SSHConfigCompact). Volcano's plugin builds
// the config host by host in a time that grows with the square of the hosts
// (20,000: 6.7 s of a job worker) and then fails to store it in a Secret;
// it gets a copy of job whose tasks have no replicas (the same name, UID,
// namespace and status map, which it marks), and g writes
// bounds.CompactSSHConfig of job in the Secret instead (guard.writtenSecret),
// with a Normal event on the Job that says so.
func (p *plugin) compactSSHConfig(job *batch.Job, g *guard) *batch.Job {
	if p.name != "ssh" || !bounds.SSHConfigCompact(job, p.args) {
		return job
	}
	hosts, b := bounds.SSHConfigBytes(job, p.args)
	g.sshConfig = bounds.CompactSSHConfig(job, bounds.SSHPort(p.args))
	ctx, cancel := framework.Context()
	defer cancel()
	events.Normal(ctx, p.client, job, events.ReasonCompactSSHConfig, fmt.Sprintf(
		"plugin ssh: the config for the job's %d hosts would be %d bytes, over %d (MaxSSHConfigBytes); Secret %s gets one entry per task instead (%d bytes), which resolves every pod's short name as the per-host entries would",
		hosts, b, bounds.MaxSSHConfigBytes, job.Name+"-ssh", len(g.sshConfig)))
	built := *job
	built.Spec.Tasks = make([]batch.TaskSpec, len(job.Spec.Tasks))
	for i, t := range job.Spec.Tasks {
		t.Replicas = 0
		built.Spec.Tasks[i] = t
	}
	return &built
}

// precheck reads, through g's client, the objects Volcano's plugin writes in
// OnJobAdd (Objects); a missing one is fine. It returns the API's other
// errors; conflicts are in g.
func (p *plugin) precheck(job *batch.Job, g *guard) error {
	if p.client == nil {
		return nil
	}
	ctx, cancel := framework.Context()
	defer cancel()
	c := &guardedClient{Interface: p.client, g: g}
	for _, o := range Objects(p.name, p.args, job) {
		var err error
		switch o.Kind {
		case "ConfigMap":
			_, err = c.CoreV1().ConfigMaps(job.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		case "Secret":
			_, err = c.CoreV1().Secrets(job.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		case "Service":
			_, err = c.CoreV1().Services(job.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		case "NetworkPolicy":
			_, err = c.NetworkingV1().NetworkPolicies(job.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) && !IsConflict(err) {
			return err
		}
	}
	return nil
}

// Object names one object an in-tree plugin writes for a Job.
type Object struct {
	// Kind is ConfigMap, Secret, Service or NetworkPolicy.
	Kind string
	// Name is the object's name in the Job's namespace.
	Name string
}

// Objects returns what Volcano's plugin name, with arguments args, creates for
// job in OnJobAdd (volcano.sh/volcano pkg/controllers/job/plugins: svc's
// hosts ConfigMap <job>-svc, Service <job> and, unless
// --disable-network-policy, NetworkPolicy <job>; ssh's Secret <job>-ssh;
// ray's Service <job>-head-svc), in that order; nil for other plugins.
func Objects(name string, args []string, job *batch.Job) []Object {
	switch name {
	case "svc":
		objs := []Object{{"ConfigMap", job.Name + "-svc"}, {"Service", job.Name}}
		if !svcNetworkPolicyDisabled(args) {
			objs = append(objs, Object{"NetworkPolicy", job.Name})
		}
		return objs
	case "ssh":
		return []Object{{"Secret", job.Name + "-ssh"}}
	case "ray":
		return []Object{{"Service", job.Name + "-head-svc"}}
	}
	return nil
}

// svcNetworkPolicyDisabled parses svc's arguments as svc does (Go flags;
// its two flags): on an error svc logs it and keeps the flags parsed before
// it, and so does this.
func svcNetworkPolicyDisabled(args []string) bool {
	fs := flag.NewFlagSet("svc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("publish-not-ready-addresses", false, "")
	disabled := fs.Bool("disable-network-policy", false, "")
	_ = fs.Parse(args)
	return *disabled
}

func (p *plugin) OnJobUpdate(job *batch.Job) error {
	inner, g := p.bound(job)
	return p.report(job, g, inner.OnJobUpdate(job))
}

func (p *plugin) OnJobDelete(job *batch.Job) error {
	inner, g := p.bound(job)
	return p.report(job, g, inner.OnJobDelete(job))
}

// report records what g refused or left alone as Warning events on the Job,
// one per object, and returns err. Volcano's plugins wrap or log the errors of
// their reads, so the refusal is told from g, not from err.
func (p *plugin) report(job *batch.Job, g *guard, err error) error {
	refused, kept := g.result()
	if len(refused) == 0 && len(kept) == 0 {
		return err
	}
	ctx, cancel := framework.Context()
	defer cancel()
	for _, c := range refused {
		events.Warn(ctx, p.client, job, events.ReasonObjectConflict, c.Error())
	}
	for _, c := range kept {
		events.Warn(ctx, p.client, job, events.ReasonObjectConflict, c.leftAlone())
	}
	if err == nil && len(refused) > 0 {
		// A plugin that logged and swallowed the read's error: the Job must
		// still not start on somebody else's object.
		err = refused[0]
	}
	return err
}

// ConflictError is the error a guarded read returns for an object of the
// plugin's name that the Job does not control. It is permanent while the
// object is there: Volcano retries the Job's sync (--max-requeue-num times)
// and then terminates the Job, creating none of its pods.
type ConflictError struct {
	Plugin, Kind, Namespace, Name, Job string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("plugin %s: %s %s/%s exists and is not controlled by Job %s; the plugin does not adopt, overwrite or delete it, and the Job's pods are not created while it is there (rename the Job or remove the %s)",
		e.Plugin, e.Kind, e.Namespace, e.Name, e.Job, e.Kind)
}

func (e *ConflictError) leftAlone() string {
	return fmt.Sprintf("plugin %s: %s %s/%s is not controlled by Job %s and was left in place when the Job's objects were deleted",
		e.Plugin, e.Kind, e.Namespace, e.Name, e.Job)
}

// IsConflict reports whether err is or wraps a *ConflictError.
func IsConflict(err error) bool {
	var c *ConflictError
	return errors.As(err, &c)
}

// guard is one hook call's view: the Job, and the objects it refused to read
// or left in place.
type guard struct {
	plugin string
	job    *batch.Job
	// sshConfig, when set, replaces the config of the ssh plugin's Secret.
	sshConfig string

	mu      sync.Mutex
	refused map[string]*ConflictError
	kept    map[string]*ConflictError
}

func (g *guard) conflict(kind, namespace, name string, deleting bool) *ConflictError {
	c := &ConflictError{Plugin: g.plugin, Kind: kind, Namespace: namespace, Name: name, Job: g.job.Name}
	g.mu.Lock()
	defer g.mu.Unlock()
	m := &g.refused
	if deleting {
		m = &g.kept
	}
	if *m == nil {
		*m = map[string]*ConflictError{}
	}
	(*m)[kind+"/"+namespace+"/"+name] = c
	return c
}

func (g *guard) result() (refused, kept []*ConflictError) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return sorted(g.refused), sorted(g.kept)
}

func sorted(m map[string]*ConflictError) []*ConflictError {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*ConflictError, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// get returns obj when the Job controls it (events.ControlledBy: the controller
// reference names the Job by apiVersion, kind, name and UID), and a
// *ConflictError when it does not.
func get[T metav1.Object](g *guard, kind, namespace string, obj T, err error) (T, error) {
	if err != nil || events.ControlledBy(obj, g.job) {
		return obj, err
	}
	var zero T
	return zero, g.conflict(kind, namespace, obj.GetName(), false)
}

// del deletes object name when the Job controls it, on the condition that it is
// still the object read (its UID), and leaves it in place otherwise. A missing
// object is the API's NotFound, as without the guard.
func del[T metav1.Object](ctx context.Context, g *guard, kind, namespace, name string, opts metav1.DeleteOptions,
	read func(context.Context, string, metav1.GetOptions) (T, error), remove func(context.Context, string, metav1.DeleteOptions) error) error {
	obj, err := read(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !events.ControlledBy(obj, g.job) {
		g.conflict(kind, namespace, name, true)
		return nil
	}
	uid := obj.GetUID()
	opts.Preconditions = &metav1.Preconditions{UID: &uid}
	return remove(ctx, name, opts)
}

// The guarded client: kubernetes.Interface with ConfigMaps, Secrets, Services
// and NetworkPolicies whose Get and Delete go through the guard. Everything
// else is the client's own.

type guardedClient struct {
	kubernetes.Interface
	g *guard
}

func (c *guardedClient) CoreV1() corev1client.CoreV1Interface {
	return &coreV1{CoreV1Interface: c.Interface.CoreV1(), g: c.g}
}

func (c *guardedClient) NetworkingV1() networkingv1client.NetworkingV1Interface {
	return &networkingV1{NetworkingV1Interface: c.Interface.NetworkingV1(), g: c.g}
}

type coreV1 struct {
	corev1client.CoreV1Interface
	g *guard
}

func (c *coreV1) ConfigMaps(ns string) corev1client.ConfigMapInterface {
	return &configMaps{ConfigMapInterface: c.CoreV1Interface.ConfigMaps(ns), ns: ns, g: c.g}
}

func (c *coreV1) Secrets(ns string) corev1client.SecretInterface {
	return &secrets{SecretInterface: c.CoreV1Interface.Secrets(ns), ns: ns, g: c.g}
}

func (c *coreV1) Services(ns string) corev1client.ServiceInterface {
	return &services{ServiceInterface: c.CoreV1Interface.Services(ns), ns: ns, g: c.g}
}

type networkingV1 struct {
	networkingv1client.NetworkingV1Interface
	g *guard
}

func (c *networkingV1) NetworkPolicies(ns string) networkingv1client.NetworkPolicyInterface {
	return &networkPolicies{NetworkPolicyInterface: c.NetworkingV1Interface.NetworkPolicies(ns), ns: ns, g: c.g}
}

type configMaps struct {
	corev1client.ConfigMapInterface
	ns string
	g  *guard
}

func (c *configMaps) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.ConfigMap, error) {
	o, err := c.ConfigMapInterface.Get(ctx, name, opts)
	return get(c.g, "ConfigMap", c.ns, o, err)
}

func (c *configMaps) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return del(ctx, c.g, "ConfigMap", c.ns, name, opts, c.ConfigMapInterface.Get, c.ConfigMapInterface.Delete)
}

func (c *configMaps) Create(ctx context.Context, cm *v1.ConfigMap, opts metav1.CreateOptions) (*v1.ConfigMap, error) {
	return c.ConfigMapInterface.Create(ctx, c.g.written(cm), opts)
}

func (c *configMaps) Update(ctx context.Context, cm *v1.ConfigMap, opts metav1.UpdateOptions) (*v1.ConfigMap, error) {
	return c.ConfigMapInterface.Update(ctx, c.g.written(cm), opts)
}

// written returns cm as the plugin may write it: for svc's ConfigMap of
// hosts (<job>-svc), a copy without the VC_<TASK>_HOSTS keys that
// DropOversizedHostVariables leaves out of the pods (bounds.SvcHostsEnvDropped):
// they would only take room, and with them the ConfigMap of a Job with some
// 5,000 to 13,000 hosts would pass the 1 MiB a ConfigMap may hold. When the
// <task>.host values alone pass it (bounds.SvcHostsAsRanges), each is
// written as its ranges (bounds.SvcHostRanges, wait.RangesFile), which
// ExpandHostsInPod's init container turns back into the file; a value that
// is not its ranges' lines is left as it is (the API server then refuses
// the ConfigMap, and the Job's sync reports it). Other ConfigMaps as they
// are.
func (g *guard) written(cm *v1.ConfigMap) *v1.ConfigMap {
	if g.plugin != "svc" || cm == nil || cm.Name != g.job.Name+"-svc" {
		return cm
	}
	var ranges map[string][]wait.Range
	if bounds.SvcHostsAsRanges(g.job) {
		ranges = bounds.SvcHostRanges(g.job)
	}
	var out *v1.ConfigMap
	for k, v := range cm.Data {
		r, isHost := ranges[k]
		switch {
		case bounds.SvcHostsEnvDropped(k, len(v)):
			if out == nil {
				out = cm.DeepCopy()
			}
			delete(out.Data, k)
		case isHost && hostLines(v) == wait.ExpandRanges(r):
			if out == nil {
				out = cm.DeepCopy()
			}
			out.Data[k] = wait.RangesFile(r)
		}
	}
	if out == nil {
		return cm
	}
	return out
}

// hostLines returns a host file as Volcano's svc writes it (hosts joined by
// newlines) with each line ending in a newline, as wait.ExpandRanges writes
// lines.
func hostLines(v string) string {
	if v == "" {
		return ""
	}
	return v + "\n"
}

type secrets struct {
	corev1client.SecretInterface
	ns string
	g  *guard
}

func (c *secrets) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Secret, error) {
	o, err := c.SecretInterface.Get(ctx, name, opts)
	return get(c.g, "Secret", c.ns, o, err)
}

func (c *secrets) Create(ctx context.Context, s *v1.Secret, opts metav1.CreateOptions) (*v1.Secret, error) {
	return c.SecretInterface.Create(ctx, c.g.writtenSecret(s), opts)
}

func (c *secrets) Update(ctx context.Context, s *v1.Secret, opts metav1.UpdateOptions) (*v1.Secret, error) {
	return c.SecretInterface.Update(ctx, c.g.writtenSecret(s), opts)
}

// writtenSecret returns s as the plugin may write it: the ssh plugin's
// Secret (<job>-ssh) with g.sshConfig as its config when set; other
// Secrets as they are.
func (g *guard) writtenSecret(s *v1.Secret) *v1.Secret {
	if g.plugin != "ssh" || g.sshConfig == "" || s == nil || s.Name != g.job.Name+"-ssh" {
		return s
	}
	out := s.DeepCopy()
	if out.Data == nil {
		out.Data = map[string][]byte{}
	}
	out.Data["config"] = []byte(g.sshConfig)
	return out
}

func (c *secrets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return del(ctx, c.g, "Secret", c.ns, name, opts, c.SecretInterface.Get, c.SecretInterface.Delete)
}

type services struct {
	corev1client.ServiceInterface
	ns string
	g  *guard
}

func (c *services) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Service, error) {
	o, err := c.ServiceInterface.Get(ctx, name, opts)
	return get(c.g, "Service", c.ns, o, err)
}

func (c *services) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return del(ctx, c.g, "Service", c.ns, name, opts, c.ServiceInterface.Get, c.ServiceInterface.Delete)
}

type networkPolicies struct {
	networkingv1client.NetworkPolicyInterface
	ns string
	g  *guard
}

func (c *networkPolicies) Get(ctx context.Context, name string, opts metav1.GetOptions) (*networkingv1.NetworkPolicy, error) {
	o, err := c.NetworkPolicyInterface.Get(ctx, name, opts)
	return get(c.g, "NetworkPolicy", c.ns, o, err)
}

func (c *networkPolicies) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return del(ctx, c.g, "NetworkPolicy", c.ns, name, opts, c.NetworkPolicyInterface.Get, c.NetworkPolicyInterface.Delete)
}
