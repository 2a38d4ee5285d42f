package installer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	admv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/vcplugins/framework-plugins/internal/kubeline"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// The policy on Volcano CronJobs and flow JobTemplates (security round 4, M3).
const templateBoundsPolicy = "framework-plugins-job-template-bounds"

// boundsTask is a task named name whose pod template has the given numbers
// of entries (containers, with env etc. in the first container only).
type boundsTask struct {
	name                                           string
	containers, initContainers, ephemeral, volumes int
	env, envFrom, args, command, ports, mounts     int
	initEnv                                        int  // env of the first init container
	every                                          bool // the lists in every container, not only the first
}

func entries(n int, entry func(i int) any) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = entry(i)
	}
	return l
}

func (b boundsTask) object() map[string]any {
	named := func(prefix string) func(int) any {
		return func(i int) any { return map[string]any{"name": fmt.Sprintf("%s%d", prefix, i)} }
	}
	container := func(i int) any {
		c := map[string]any{"name": fmt.Sprintf("c%d", i), "image": "busybox"}
		if i == 0 || b.every {
			c["env"] = entries(b.env, func(j int) any { return map[string]any{"name": fmt.Sprintf("E%d", j), "value": "v"} })
			c["envFrom"] = entries(b.envFrom, func(int) any { return map[string]any{"configMapRef": map[string]any{"name": "cm"}} })
			c["args"] = entries(b.args, func(int) any { return "a" })
			c["command"] = entries(b.command, func(int) any { return "sh" })
			c["ports"] = entries(b.ports, func(j int) any { return map[string]any{"containerPort": int64(1000 + j)} })
			c["volumeMounts"] = entries(b.mounts, func(j int) any { return map[string]any{"name": "v0", "mountPath": fmt.Sprintf("/m%d", j)} })
		}
		return c
	}
	spec := map[string]any{"containers": entries(b.containers, container)}
	if b.initContainers > 0 {
		spec["initContainers"] = entries(b.initContainers, func(i int) any {
			c := container(i + 1).(map[string]any)
			c["env"] = entries(b.initEnv*boolInt(i == 0), func(j int) any { return map[string]any{"name": fmt.Sprintf("E%d", j)} })
			return c
		})
	}
	if b.ephemeral > 0 {
		spec["ephemeralContainers"] = entries(b.ephemeral, named("e"))
	}
	if b.volumes > 0 {
		spec["volumes"] = entries(b.volumes, func(i int) any {
			return map[string]any{"name": fmt.Sprintf("v%d", i), "emptyDir": map[string]any{}}
		})
	}
	return map[string]any{"name": b.name, "replicas": int64(1), "template": map[string]any{"spec": spec}}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tasksOf returns n tasks worker0... of one container each, and the tasks
// given after them.
func tasksOf(n int, more ...boundsTask) []any {
	var l []any
	for i := range n {
		l = append(l, boundsTask{name: fmt.Sprintf("worker%d", i), containers: 1, env: 2}.object())
	}
	for _, b := range more {
		l = append(l, b.object())
	}
	return l
}

// boundsObject is a CronJob (batch.volcano.sh) or JobTemplate
// (flow.volcano.sh) "train" in namespace "team" whose Job spec has tasks and
// plugins, as the API server hands it to admission (unstructured).
func boundsObject(kind string, tasks []any, plugins int) *unstructured.Unstructured {
	jobSpec := map[string]any{"minAvailable": int64(1), "schedulerName": "volcano"}
	if tasks != nil {
		jobSpec["tasks"] = tasks
	}
	if plugins > 0 {
		p := map[string]any{}
		for i := range plugins {
			p[fmt.Sprintf("plugin%d", i)] = []any{"--flag"}
		}
		jobSpec["plugins"] = p
	}
	obj := map[string]any{"metadata": map[string]any{"name": "train", "namespace": "team"}}
	switch kind {
	case "CronJob":
		obj["apiVersion"], obj["kind"] = "batch.volcano.sh/v1alpha1", kind
		obj["spec"] = map[string]any{"schedule": "@daily", "jobTemplate": map[string]any{"spec": jobSpec}}
	case "JobTemplate":
		obj["apiVersion"], obj["kind"] = "flow.volcano.sh/v1alpha1", kind
		obj["spec"] = jobSpec
	default:
		panic(kind)
	}
	return &unstructured.Unstructured{Object: obj}
}

// evaluateBounds runs validator on a user's op of obj over old with budget
// (the runtime CEL cost budget) and returns whether it was denied and the
// messages; an evaluation error (a cost limit among them) fails the test.
func evaluateBounds(t *testing.T, validator validating.Validator, op admission.Operation, obj, old *unstructured.Unstructured, budget int64) (bool, []string) {
	t.Helper()
	gvk := obj.GroupVersionKind()
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"}
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	attr := admission.NewAttributesRecord(obj, oldObj, gvk, obj.GetNamespace(), obj.GetName(), gvr, "", op, nil, false, &user.DefaultInfo{Name: "system:serviceaccount:team:app"})
	va := &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk, VersionedObject: obj, VersionedOldObject: oldObj}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetNamespace()}}
	res := validator.Validate(context.Background(), gvr, va, nil, ns, budget, nil)
	return denials(t, res)
}

// The policy matches creates and updates of Volcano CronJobs and flow
// JobTemplates, and nothing else: no Job, no delete.
func TestManifestTemplateBoundsPolicyMatches(t *testing.T) {
	policy := manifestPolicy(t, templateBoundsPolicy)
	want := []admv1.NamedRuleWithOperations{
		{RuleWithOperations: admv1.RuleWithOperations{Operations: []admv1.OperationType{admv1.Create, admv1.Update},
			Rule: admv1.Rule{APIGroups: []string{"batch.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"cronjobs"}}}},
		{RuleWithOperations: admv1.RuleWithOperations{Operations: []admv1.OperationType{admv1.Create, admv1.Update},
			Rule: admv1.Rule{APIGroups: []string{"flow.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"jobtemplates"}}}},
	}
	if mc := policy.Spec.MatchConstraints; mc == nil || !slices.EqualFunc(want, mc.ResourceRules, func(a, b admv1.NamedRuleWithOperations) bool {
		return slices.Equal(a.Operations, b.Operations) && slices.Equal(a.APIGroups, b.APIGroups) &&
			slices.Equal(a.APIVersions, b.APIVersions) && slices.Equal(a.Resources, b.Resources) && len(b.ResourceNames) == 0 && b.Scope == nil
	}) {
		t.Errorf("matchConstraints %+v, want %+v", mc, want)
	}
	if len(policy.Spec.MatchConditions) != 0 || policy.Spec.ParamKind != nil {
		t.Errorf("matchConditions %v, paramKind %v: want every user's objects checked", policy.Spec.MatchConditions, policy.Spec.ParamKind)
	}
}

// CronJobs and JobTemplates over the Job bounds of pkg/jobs are denied, each
// message naming the bound; at the bound they are admitted. The bounds are
// the constants' (a change of one fails here until the chart follows).
func TestManifestTemplateBoundsPolicy(t *testing.T) {
	policy := manifestPolicy(t, templateBoundsPolicy)
	validator := compilePolicy(t, policy)
	// kube-apiserver compiles a policy it is sent with the environment of
	// new expressions (compilePolicy: that of stored ones).
	compiler, err := cel.NewCompositedCompiler(kubeline.BaseEnvSet())
	if err != nil {
		t.Fatal(err)
	}
	opts := cel.OptionalVariableDeclarations{HasAuthorizer: true}
	for _, v := range policy.Spec.Variables {
		if r := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.NewExpressions); r.Error != nil {
			t.Fatalf("variable %s: %v", v.Name, r.Error)
		}
	}
	for _, v := range policy.Spec.Validations {
		for _, a := range []cel.ExpressionAccessor{&validating.ValidationCondition{Expression: v.Expression}, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}} {
			if r := compiler.CompileCELExpression(a, opts, environment.NewExpressions); r.Error != nil {
				t.Fatalf("%q: %v", a.GetExpression(), r.Error)
			}
		}
	}
	normal := boundsTask{name: "ps", containers: 2, initContainers: 1, volumes: 2, env: 10, envFrom: 1, args: 3, command: 1, ports: 1, mounts: 2, initEnv: 1}
	type tc struct {
		name    string
		tasks   []any
		plugins int
		want    string // "": admitted; else a part of the message
	}
	bound := func(what string, n int, const_ string) string {
		return fmt.Sprintf("over the bound of %d %s(%s", n, what, const_)
	}
	cases := []tc{
		{"a normal one", tasksOf(2, normal), 3, ""},
		{"no tasks", nil, 0, ""},
		{"MaxTasks tasks", tasksOf(bounds.MaxTasks), 0, ""},
		{"MaxTasks+1 tasks", tasksOf(bounds.MaxTasks + 1), 0, fmt.Sprintf("tasks has %d entries, ", bounds.MaxTasks+1) + bound("tasks ", bounds.MaxTasks, "MaxTasks")},
		{"MaxPlugins plugins", tasksOf(1), bounds.MaxPlugins, ""},
		{"MaxPlugins+1 plugins", tasksOf(1), bounds.MaxPlugins + 1, fmt.Sprintf("plugins has %d entries, ", bounds.MaxPlugins+1) + bound("plugins ", bounds.MaxPlugins, "MaxPlugins")},
		{"MaxContainers containers", tasksOf(1, boundsTask{name: "big", containers: bounds.MaxContainers, initContainers: bounds.MaxContainers, ephemeral: bounds.MaxContainers}), 0, ""},
		{"MaxContainers+1 containers", tasksOf(1, boundsTask{name: "big", containers: bounds.MaxContainers + 1}), 0, "of task big " + bound("entries each ", bounds.MaxContainers, "MaxContainers")},
		{"MaxContainers+1 initContainers", tasksOf(1, boundsTask{name: "big", containers: 1, initContainers: bounds.MaxContainers + 1}), 0, "of task big " + bound("entries each ", bounds.MaxContainers, "MaxContainers")},
		{"MaxContainers+1 ephemeralContainers", tasksOf(1, boundsTask{name: "big", containers: 1, ephemeral: bounds.MaxContainers + 1}), 0, "of task big " + bound("entries each ", bounds.MaxContainers, "MaxContainers")},
		{"MaxVolumes volumes", tasksOf(1, boundsTask{name: "big", containers: 1, volumes: bounds.MaxVolumes}), 0, ""},
		{"MaxVolumes+1 volumes", tasksOf(1, boundsTask{name: "big", containers: 1, volumes: bounds.MaxVolumes + 1}), 0, "volumes of task big " + bound("entries ", bounds.MaxVolumes, "MaxVolumes")},
		{"MaxEnv env", tasksOf(1, boundsTask{name: "big", containers: 1, env: bounds.MaxEnv, initContainers: 1, initEnv: bounds.MaxEnv}), 0, ""},
		{"MaxEnv+1 env", tasksOf(1, boundsTask{name: "big", containers: 1, env: bounds.MaxEnv + 1}), 0, "env in task big " + bound("entries ", bounds.MaxEnv, "MaxEnv")},
		{"MaxEnv+1 env of an init container", tasksOf(1, boundsTask{name: "big", containers: 1, initContainers: 1, initEnv: bounds.MaxEnv + 1}), 0, "env in task big " + bound("entries ", bounds.MaxEnv, "MaxEnv")},
		{"the container list bounds", tasksOf(1, boundsTask{name: "big", containers: 1, envFrom: bounds.MaxEnvFrom, args: bounds.MaxArgs, command: bounds.MaxArgs, ports: bounds.MaxPorts, mounts: bounds.MaxVolumeMounts}), 0, ""},
	}
	containerLists := fmt.Sprintf("over the bound of %d envFrom (MaxEnvFrom), %d args or command (MaxArgs), %d ports (MaxPorts) or %d volumeMounts (MaxVolumeMounts)",
		bounds.MaxEnvFrom, bounds.MaxArgs, bounds.MaxPorts, bounds.MaxVolumeMounts)
	for name, b := range map[string]boundsTask{
		"MaxEnvFrom+1 envFrom":           {envFrom: bounds.MaxEnvFrom + 1},
		"MaxArgs+1 args":                 {args: bounds.MaxArgs + 1},
		"MaxArgs+1 command":              {command: bounds.MaxArgs + 1},
		"MaxPorts+1 ports":               {ports: bounds.MaxPorts + 1},
		"MaxVolumeMounts+1 volumeMounts": {mounts: bounds.MaxVolumeMounts + 1},
	} {
		b.name, b.containers = "big", 1
		cases = append(cases, tc{name, tasksOf(1, b), 0, "a container in task big " + containerLists})
	}
	for _, kind := range []string{"JobTemplate", "CronJob"} {
		path := map[string]string{"JobTemplate": "spec", "CronJob": "spec.jobTemplate.spec"}[kind]
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				obj := boundsObject(kind, c.tasks, c.plugins)
				for _, op := range []admission.Operation{admission.Create, admission.Update} {
					var old *unstructured.Unstructured
					if op == admission.Update {
						old = boundsObject(kind, tasksOf(1), 0)
					}
					denied, messages := evaluateBounds(t, validator, op, obj, old, celconfig.RuntimeCELCostBudget)
					if denied != (c.want != "") {
						t.Errorf("%s: denied %v, want %v (messages %q)", op, denied, c.want != "", messages)
					}
					for _, m := range messages {
						if !strings.HasPrefix(m, kind+" team/train: "+path+".") || !strings.Contains(m, c.want) || !strings.HasSuffix(m, "as for a Volcano Job)") && !strings.HasSuffix(m, "as for a Volcano Job") {
							t.Errorf("%s: message %q, want %q in it", op, m, c.want)
						}
					}
				}
			})
		}
	}
}

// The policy's cost stays within kube-apiserver's CEL limits (1,000,000 per
// expression, 10,000,000 per policy evaluation) for the largest shapes: a
// 3 MiB object of 1,000,000 empty tasks, and MaxTasks tasks of MaxContainers
// containers and init containers each, where every loop runs to the end. It
// is checked with a tenth of the runtime budget, to keep a margin.
func TestManifestTemplateBoundsPolicyCost(t *testing.T) {
	validator := compilePolicy(t, manifestPolicy(t, templateBoundsPolicy))
	budget := int64(celconfig.RuntimeCELCostBudget / 10)

	empty := make([]any, 1_000_000)
	for i := range empty {
		empty[i] = map[string]any{}
	}
	full := boundsTask{containers: bounds.MaxContainers, initContainers: bounds.MaxContainers, ephemeral: bounds.MaxContainers, volumes: 4,
		env: 2, envFrom: 1, args: 1, command: 1, ports: 1, mounts: 1, initEnv: 1, every: true}
	var widest []any
	for i := range bounds.MaxTasks {
		b := full
		b.name = fmt.Sprintf("t%d", i)
		if i == bounds.MaxTasks-1 {
			b.every, b.ports = false, bounds.MaxPorts+1 // in its first container
		}
		widest = append(widest, b.object())
	}
	for _, c := range []struct {
		name  string
		tasks []any
		want  string
	}{
		{"a million empty tasks", empty, "tasks has 1000000 entries"},
		{"MaxTasks tasks of MaxContainers containers", widest, "a container in task t63 "},
	} {
		for _, kind := range []string{"JobTemplate", "CronJob"} {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				denied, messages := evaluateBounds(t, validator, admission.Create, boundsObject(kind, c.tasks, 0), nil, budget)
				if !denied || len(messages) != 1 || !strings.Contains(messages[0], c.want) {
					t.Errorf("denied %v, messages %q; want one containing %q", denied, messages, c.want)
				}
			})
		}
	}
}
