package installer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	admv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	vchelpers "volcano.sh/apis/pkg/apis/helpers"

	"github.com/vcplugins/framework-plugins/internal/kubeline"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// The rendered ValidatingAdmissionPolicies, by name.
const (
	// On the controllers' writes of the objects kept per Job.
	controllerPolicy = "framework-plugins-controller-configmaps"
	// On everybody else's claims of those objects.
	claimsPolicy = "framework-plugins-job-object-claims"
)

// manifestPolicy returns the rendered ValidatingAdmissionPolicy name and
// checks its binding.
func manifestPolicy(t *testing.T, name string) *admv1.ValidatingAdmissionPolicy {
	t.Helper()
	var policy *admv1.ValidatingAdmissionPolicy
	var binding *admv1.ValidatingAdmissionPolicyBinding
	for _, obj := range decodeManifest(t) {
		switch o := obj.(type) {
		case *admv1.ValidatingAdmissionPolicy:
			if o.Name == name {
				policy = o
			}
		case *admv1.ValidatingAdmissionPolicyBinding:
			if o.Name == name {
				binding = o
			}
		}
	}
	if policy == nil || binding == nil {
		t.Fatalf("%s lacks the ValidatingAdmissionPolicy %s or its binding", manifestFile, name)
	}
	if binding.Spec.PolicyName != policy.Name || len(binding.Spec.ValidationActions) != 1 || binding.Spec.ValidationActions[0] != admv1.Deny ||
		binding.Spec.ParamRef != nil || binding.Spec.MatchResources != nil {
		t.Errorf("binding %+v, want policy %s with Deny, no params, no narrowing", binding.Spec, policy.Name)
	}
	if p := policy.Spec.FailurePolicy; p == nil || *p != admv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", p)
	}
	return policy
}

// compilePolicy compiles policy as kube-apiserver v1.35's
// ValidatingAdmissionPolicy plugin does (k8s.io/apiserver
// pkg/admission/plugin/policy/validating, compilePolicy): the same CEL
// environment (strict cost), variables, match conditions and message
// expressions.
func compilePolicy(t *testing.T, policy *admv1.ValidatingAdmissionPolicy) validating.Validator {
	t.Helper()
	compiler, err := cel.NewCompositedCompiler(kubeline.BaseEnvSet())
	if err != nil {
		t.Fatal(err)
	}
	opts := cel.OptionalVariableDeclarations{HasAuthorizer: true}
	for _, v := range policy.Spec.Variables {
		if r := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.StoredExpressions); r.Error != nil {
			t.Fatalf("variable %s: %v", v.Name, r.Error)
		}
	}
	var conditions, validations, messages []cel.ExpressionAccessor
	for i := range policy.Spec.MatchConditions {
		conditions = append(conditions, (*matchconditions.MatchCondition)(&policy.Spec.MatchConditions[i]))
	}
	for _, v := range policy.Spec.Validations {
		validations = append(validations, &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason})
		messages = append(messages, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
	}
	// Compile errors only show at evaluation; check every expression here.
	for _, a := range slices.Concat(conditions, validations, messages) {
		if r := compiler.CompileCELExpression(a, opts, environment.StoredExpressions); r.Error != nil {
			t.Fatalf("%q: %v", a.GetExpression(), r.Error)
		}
	}
	matcher := matchconditions.NewMatcher(compiler.CompileCondition(conditions, opts, environment.StoredExpressions), policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
	return validating.NewValidator(
		compiler.CompileCondition(validations, opts, environment.StoredExpressions),
		matcher,
		compiler.CompileCondition(nil, opts, environment.StoredExpressions),
		compiler.CompileCondition(messages, cel.OptionalVariableDeclarations{}, environment.StoredExpressions),
		policy.Spec.FailurePolicy,
	)
}

// configMap is a ConfigMap in namespace "team" with the owner references refs.
func configMap(name string, refs ...metav1.OwnerReference) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", OwnerReferences: refs},
		Data:       map[string]string{"k": "v"},
	}
}

// jobObject is an object of Volcano's in-tree plugins (kind Secret, Service or
// NetworkPolicy) in namespace "team" with the owner references refs.
func jobObject(kind, name string, refs ...metav1.OwnerReference) runtime.Object {
	meta := metav1.ObjectMeta{Name: name, Namespace: "team", OwnerReferences: refs}
	switch kind {
	case "Secret":
		return &corev1.Secret{ObjectMeta: meta}
	case "Service":
		return &corev1.Service{ObjectMeta: meta}
	case "NetworkPolicy":
		return &networkingv1.NetworkPolicy{ObjectMeta: meta}
	}
	panic(kind)
}

// policyCase is a request to a policy: user's op of obj over old (nil for a
// create's old and a delete's obj), and whether it is denied.
type policyCase struct {
	name       string
	user       string
	op         admission.Operation
	obj, old   runtime.Object
	wantDenied bool
}

// policyOwners returns the Volcano Job "train" of namespace "team" and owner
// references to it: as the writers set them (ours: pkg/ownedcm; volcanos:
// Volcano's helpers.CreateOrUpdateConfigMap for the svc plugin's), ours
// without controller=true, and a Kubernetes Job's of the same name and UID.
func policyOwners() (job *batch.Job, ours, volcanos, notController, batchJob metav1.OwnerReference) {
	job = &batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "team", UID: types.UID("uid-1")}}
	ours = ownedcm.ControllerRef(job)
	volcanos = *metav1.NewControllerRef(job, vchelpers.JobKind)
	notController = ours
	notController.Controller = nil
	batchJob = metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptrTo(true)}
	return job, ours, volcanos, notController, batchJob
}

// The policy lets Volcano's controllers write the ConfigMaps the plugins keep
// per Job (this project's tensorflow and mpi ones, Volcano's svc one) and the
// Secret, Services and NetworkPolicy of Volcano's ssh, svc and ray plugins,
// each named after and controlled by its Volcano Job, and no other object of
// those kinds; other users are not its business.
func TestManifestConfigMapPolicy(t *testing.T) {
	validator := compilePolicy(t, manifestPolicy(t, controllerPolicy))
	job, ours, volcanos, notController, batchJob := policyOwners()
	other := *metav1.NewControllerRef(&batch.Job{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "uid-2"}}, vchelpers.JobKind)
	svcName := job.Name + "-svc" // Volcano v1.15.1 pkg/controllers/job/plugins/svc: cmName

	const controllers = "system:serviceaccount:" + volcanoNamespace + ":" + controllerSA
	wantNames := map[string]string{
		"configmaps":      "<job>-tf-cluster or <job>-mpi-hostfile or <job>-svc",
		"secrets":         "<job>-ssh",
		"services":        "<job> or <job>-head-svc",
		"networkpolicies": "<job>",
	}
	for _, tc := range []policyCase{
		{"tensorflow cluster created", controllers, admission.Create, configMap(tensorflow.ConfigMapName(job), ours), nil, false},
		{"mpi hostfile created", controllers, admission.Create, configMap(mpi.ConfigMapName(job), ours), nil, false},
		{"Volcano's svc hosts created", controllers, admission.Create, configMap(svcName, volcanos), nil, false},
		{"tensorflow cluster updated", controllers, admission.Update, configMap(tensorflow.ConfigMapName(job), ours), configMap(tensorflow.ConfigMapName(job), ours), false},
		{"Volcano's svc hosts updated", controllers, admission.Update, configMap(svcName, volcanos), configMap(svcName, volcanos), false},
		{"mpi hostfile deleted", controllers, admission.Delete, nil, configMap(mpi.ConfigMapName(job), ours), false},
		{"Volcano's svc hosts deleted", controllers, admission.Delete, nil, configMap(svcName, volcanos), false},

		{"any other name", controllers, admission.Create, configMap("app-config", ours), nil, true},
		{"another suffix", controllers, admission.Create, configMap(job.Name+"-config", ours), nil, true},
		{"no owner", controllers, admission.Create, configMap(tensorflow.ConfigMapName(job)), nil, true},
		{"owner not controller", controllers, admission.Create, configMap(tensorflow.ConfigMapName(job), notController), nil, true},
		{"Kubernetes Job as owner", controllers, admission.Create, configMap(tensorflow.ConfigMapName(job), batchJob), nil, true},
		{"another Job's name", controllers, admission.Create, configMap(tensorflow.ConfigMapName(job), other), nil, true},
		{"update of somebody else's ConfigMap", controllers, admission.Update, configMap("app-config", ours), configMap("app-config"), true},
		{"takeover by adding the reference", controllers, admission.Update, configMap(svcName, volcanos), configMap(svcName), true},
		{"reference removed", controllers, admission.Update, configMap(svcName), configMap(svcName, volcanos), true},
		{"delete of somebody else's ConfigMap", controllers, admission.Delete, nil, configMap("app-config"), true},
		{"delete of an unowned ConfigMap with our name", controllers, admission.Delete, nil, configMap(mpi.ConfigMapName(job)), true},

		{"Volcano's ssh Secret created", controllers, admission.Create, jobObject("Secret", job.Name+"-ssh", volcanos), nil, false},
		{"Volcano's svc Service created", controllers, admission.Create, jobObject("Service", job.Name, volcanos), nil, false},
		{"Volcano's ray head Service created", controllers, admission.Create, jobObject("Service", job.Name+"-head-svc", volcanos), nil, false},
		{"Volcano's svc NetworkPolicy deleted", controllers, admission.Delete, nil, jobObject("NetworkPolicy", job.Name, volcanos), false},
		{"Volcano's ssh Secret deleted", controllers, admission.Delete, nil, jobObject("Secret", job.Name+"-ssh", volcanos), false},
		{"a Secret of a ConfigMap's name", controllers, admission.Create, jobObject("Secret", svcName, volcanos), nil, true},
		{"a Service of another name", controllers, admission.Create, jobObject("Service", "db", volcanos), nil, true},
		{"a NetworkPolicy with a suffix", controllers, admission.Create, jobObject("NetworkPolicy", job.Name+"-svc", volcanos), nil, true},
		{"delete of somebody else's NetworkPolicy of the Job's name", controllers, admission.Delete, nil, jobObject("NetworkPolicy", job.Name), true},
		{"delete of another Job's Service", controllers, admission.Delete, nil, jobObject("Service", job.Name, other), true},
		{"Secret taken over by adding the reference", controllers, admission.Update, jobObject("Secret", job.Name+"-ssh", volcanos), jobObject("Secret", job.Name+"-ssh"), true},

		{"another user", "system:serviceaccount:team:app", admission.Create, configMap("app-config"), nil, false},
		{"another user's NetworkPolicy", "system:serviceaccount:team:app", admission.Delete, nil, jobObject("NetworkPolicy", "db"), false},
		{"the webhook manager", "system:serviceaccount:" + volcanoNamespace + ":volcano-admission", admission.Delete, nil, configMap("app-config"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			denied, messages := evaluate(t, validator, tc.user, tc.op, tc.obj, tc.old)
			for _, m := range messages {
				kind, resource, name := kindOf(tc.obj, tc.old)
				if !strings.Contains(m, controllers+" may only write "+kind+"s named "+wantNames[resource]+" whose controller is that Volcano Job") || !strings.Contains(m, "team/"+name) {
					t.Errorf("message %q", m)
				}
			}
			if denied != tc.wantDenied {
				t.Errorf("denied %v, want %v (messages %q)", denied, tc.wantDenied, messages)
			}
		})
	}
}

// Nobody but the controllers may create an object the plugins keep for a Job,
// controlled by that Job, or add that control to one: the plugins adopt such
// an object (L1 of security round 3). Everything else stays with RBAC.
func TestManifestJobObjectClaimsPolicy(t *testing.T) {
	validator := compilePolicy(t, manifestPolicy(t, claimsPolicy))
	job, ours, volcanos, notController, batchJob := policyOwners()
	const (
		controllers = "system:serviceaccount:" + volcanoNamespace + ":" + controllerSA
		app         = "system:serviceaccount:team:app"
		admin       = "kubernetes-admin" // system:masters passes RBAC, not this policy
		gc          = "system:serviceaccount:kube-system:generic-garbage-collector"
	)
	tfCluster, hostfile := tensorflow.ConfigMapName(job), mpi.ConfigMapName(job)
	for _, tc := range []policyCase{
		{"forged tensorflow cluster", app, admission.Create, configMap(tfCluster, ours), nil, true},
		{"forged mpi hostfile, by an admin", admin, admission.Create, configMap(hostfile, ours), nil, true},
		{"forged svc hosts", app, admission.Create, configMap(job.Name+"-svc", volcanos), nil, true},
		{"forged ssh Secret", app, admission.Create, jobObject("Secret", job.Name+"-ssh", volcanos), nil, true},
		{"forged svc Service", app, admission.Create, jobObject("Service", job.Name, volcanos), nil, true},
		{"forged svc NetworkPolicy", app, admission.Create, jobObject("NetworkPolicy", job.Name, volcanos), nil, true},
		{"control added later", app, admission.Update, configMap(tfCluster, ours), configMap(tfCluster), true},
		{"the Secret's control added later", app, admission.Update, jobObject("Secret", job.Name+"-ssh", volcanos), jobObject("Secret", job.Name+"-ssh"), true},

		{"the controllers create it", controllers, admission.Create, configMap(tfCluster, ours), nil, false},
		{"the same name without the reference", app, admission.Create, configMap(tfCluster), nil, false},
		{"the reference on another name", app, admission.Create, configMap("app-config", ours), nil, false},
		{"a reference that is not the controller", app, admission.Create, configMap(tfCluster, notController), nil, false},
		{"a Kubernetes Job as controller", app, admission.Create, configMap(tfCluster, batchJob), nil, false},
		{"a Secret of a ConfigMap's name", app, admission.Create, jobObject("Secret", tfCluster, volcanos), nil, false},
		{"an edit of the Job's own ConfigMap", admin, admission.Update, configMap(tfCluster, ours), configMap(tfCluster, ours), false},
		{"the reference removed (orphaned)", gc, admission.Update, configMap(tfCluster), configMap(tfCluster, ours), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			denied, messages := evaluate(t, validator, tc.user, tc.op, tc.obj, tc.old)
			for _, m := range messages {
				kind, _, name := kindOf(tc.obj, tc.old)
				want := kind + " team/" + name + " names Volcano Job train as its controller: only " + controllers + " creates the objects a Job's plugins keep ("
				if !strings.HasPrefix(m, want) || !strings.HasSuffix(m, string(tc.op)+" denied. Drop the controller reference, or pick another name.") {
					t.Errorf("message %q, want it to start with %q", m, want)
				}
			}
			if denied != tc.wantDenied {
				t.Errorf("denied %v, want %v (messages %q)", denied, tc.wantDenied, messages)
			}
		})
	}
}

// kindOf returns the kind, resource and name of obj, else of old.
func kindOf(obj, old runtime.Object) (kind, resource, name string) {
	some := obj
	if some == nil {
		some = old
	}
	gvk, gvr := gvkOf(some)
	return gvk.Kind, gvr.Resource, some.(metav1.Object).GetName()
}

func gvkOf(obj runtime.Object) (schema.GroupVersionKind, schema.GroupVersionResource) {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithResource("configmaps")
	case *corev1.Secret:
		return corev1.SchemeGroupVersion.WithKind("Secret"), corev1.SchemeGroupVersion.WithResource("secrets")
	case *corev1.Service:
		return corev1.SchemeGroupVersion.WithKind("Service"), corev1.SchemeGroupVersion.WithResource("services")
	case *networkingv1.NetworkPolicy:
		return networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"), networkingv1.SchemeGroupVersion.WithResource("networkpolicies")
	}
	panic(fmt.Sprintf("%T", obj))
}

// evaluate runs validator on a request of user (op of obj over old, in
// namespace "team") and returns whether it was denied and the denials'
// messages; an evaluation error fails the test.
func evaluate(t *testing.T, validator validating.Validator, userName string, op admission.Operation, obj, old runtime.Object) (bool, []string) {
	t.Helper()
	_, _, name := kindOf(obj, old)
	some := obj
	if some == nil {
		some = old
	}
	gvk, gvr := gvkOf(some)
	attr := admission.NewAttributesRecord(obj, old, gvk, "team", name, gvr, "", op, nil, false, &user.DefaultInfo{Name: userName})
	va := &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk, VersionedObject: obj, VersionedOldObject: old}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	res := validator.Validate(context.Background(), gvr, va, nil, ns, celconfig.RuntimeCELCostBudget, nil)
	return denials(t, res)
}

// denials returns whether a policy's validation denied, and the messages of
// its denials; an evaluation error or a decision other than deny or admit
// fails the test.
func denials(t *testing.T, res validating.ValidateResult) (bool, []string) {
	t.Helper()
	denied := false
	var messages []string
	for _, d := range res.Decisions {
		switch d.Action {
		case validating.ActionDeny:
			denied = true
			if d.Evaluation == validating.EvalError {
				t.Errorf("evaluation error: %s", d.Message)
			} else {
				messages = append(messages, d.Message)
			}
		case validating.ActionAdmit:
		default:
			t.Errorf("decision %+v", d)
		}
	}
	return denied, messages
}

func ptrTo[T any](v T) *T { return &v }
