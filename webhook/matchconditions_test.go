package webhook

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	whv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	apiwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	admregv1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1"
	"k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeline"
	"github.com/vcplugins/framework-plugins/plugins"
)

var (
	jobGVK = batch.SchemeGroupVersion.WithKind("Job")
	jobGVR = batch.SchemeGroupVersion.WithResource("jobs")
)

// job returns a Volcano Job as the API server hands a custom resource to the
// match conditions: unstructured JSON. spec is the value of "spec"; absent
// when it is the string "<absent>".
func job(spec any) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": jobGVK.GroupVersion().String(),
		"kind":       jobGVK.Kind,
		"metadata":   map[string]any{"name": "j", "namespace": "ns"},
	}
	if spec != "<absent>" {
		obj["spec"] = spec
	}
	return &unstructured.Unstructured{Object: obj}
}

// specWith returns a Job spec with one task and the given plugins member
// (absent when nil).
func specWith(plugins any) map[string]any {
	spec := map[string]any{
		"queue": "default",
		"tasks": []any{map[string]any{"name": "worker", "replicas": int64(2)}},
	}
	if plugins != nil {
		spec["plugins"] = plugins
	}
	return spec
}

// labelled returns a deep copy of j with a label added (a metadata-only update).
func labelled(j *unstructured.Unstructured) *unstructured.Unstructured {
	out := j.DeepCopy()
	out.SetLabels(map[string]string{"team": "a"})
	return out
}

// withReplicas returns a deep copy of j whose first task has n replicas.
func withReplicas(j *unstructured.Unstructured, n int64) *unstructured.Unstructured {
	out := j.DeepCopy()
	tasks, _, _ := unstructured.NestedSlice(out.Object, "spec", "tasks")
	tasks[0].(map[string]any)["replicas"] = n
	if err := unstructured.SetNestedSlice(out.Object, tasks, "spec", "tasks"); err != nil {
		panic(err)
	}
	return out
}

// matchResult is what the API server decides for one webhook and request:
// call it (match), skip it (the first false condition), or fail the request
// (an evaluation error under failurePolicy Fail).
type matchResult struct {
	Match      bool
	SkippedBy  string
	EvalFailed bool
}

// match evaluates the match conditions of a webhook as kube-apiserver
// does: the same accessor, CEL environment and cost budget (v1.35)
// (k8s.io/apiserver's generic webhook dispatcher).
func match(t *testing.T, hook apiwebhook.WebhookAccessor, op admission.Operation, obj, old runtime.Object) matchResult {
	t.Helper()
	compiler := cel.NewConditionCompiler(kubeline.BaseEnvSet())
	attrs := admission.NewAttributesRecord(obj, old, jobGVK, "ns", "j", jobGVR, "", op, nil, false, &user.DefaultInfo{Name: "alice"})
	versioned := &admission.VersionedAttributes{Attributes: attrs, VersionedObject: obj, VersionedOldObject: old, VersionedKind: jobGVK}
	r := hook.GetCompiledMatcher(compiler).Match(context.Background(), versioned, nil, nil)
	if r.Error != nil {
		t.Logf("evaluation error: %v", r.Error)
	}
	return matchResult{Match: r.Matches, SkippedBy: r.FailedConditionName, EvalFailed: r.Error != nil}
}

func TestMatchConditions(t *testing.T) {
	ep := Endpoint{ServiceNamespace: testNS, ServiceName: testSvc}
	mutating := apiwebhook.NewMutatingWebhookAccessor("m", "m", &MutatingConfiguration(ep).Webhooks[0])
	validating := apiwebhook.NewValidatingWebhookAccessor("v", "v", &ValidatingConfiguration(ep).Webhooks[0])

	tf := job(specWith(map[string]any{"tensorflow": []any{}, "svc": []any{}}))
	stock := job(specWith(map[string]any{"svc": []any{}, "env": []any{}}))
	call := matchResult{Match: true}
	skipFrameworks := matchResult{SkippedBy: UsesFrameworksCondition}
	skipUnchanged := matchResult{SkippedBy: SpecChangedCondition}

	cases := []struct {
		name           string
		op             admission.Operation
		obj, old       runtime.Object
		wantMutating   matchResult
		wantValidating matchResult
	}{
		{
			name: "create with tensorflow", op: admission.Create, obj: tf,
			wantMutating: call, wantValidating: call,
		},
		{
			name: "create with arguments to mpi", op: admission.Create,
			obj:          job(specWith(map[string]any{"mpi": []any{"--master=m", "--worker=w"}})),
			wantMutating: call, wantValidating: call,
		},
		{
			name: "create with Volcano's plugins only", op: admission.Create, obj: stock,
			wantMutating: skipFrameworks, wantValidating: skipFrameworks,
		},
		{
			name: "create with empty plugins", op: admission.Create, obj: job(specWith(map[string]any{})),
			wantMutating: skipFrameworks, wantValidating: skipFrameworks,
		},
		{
			name: "create without plugins", op: admission.Create, obj: job(specWith(nil)),
			wantMutating: skipFrameworks, wantValidating: skipFrameworks,
		},
		{
			name: "create without spec", op: admission.Create, obj: job("<absent>"),
			wantMutating: skipFrameworks, wantValidating: skipFrameworks,
		},
		{
			// Plugin names are map keys: case matters, as in UsesFrameworks.
			name: "create with TensorFlow capitalized", op: admission.Create,
			obj:          job(specWith(map[string]any{"TensorFlow": []any{}})),
			wantMutating: skipFrameworks, wantValidating: skipFrameworks,
		},
		{
			name: "update of metadata only", op: admission.Update, obj: labelled(tf), old: tf,
			wantMutating: call, wantValidating: skipUnchanged,
		},
		{
			name: "update of the spec", op: admission.Update, obj: withReplicas(tf, 3), old: tf,
			wantMutating: call, wantValidating: call,
		},
		{
			name: "update that adds pytorch", op: admission.Update,
			obj: job(specWith(map[string]any{"svc": []any{}, "env": []any{}, "pytorch": []any{}})), old: stock,
			wantMutating: call, wantValidating: call,
		},
		{
			name: "update of the spec of a stock Job", op: admission.Update, obj: withReplicas(stock, 3), old: stock,
			wantMutating: skipFrameworks, wantValidating: skipFrameworks,
		},
		{
			name: "update of a stored Job without spec", op: admission.Update, obj: tf, old: job("<absent>"),
			wantMutating: call, wantValidating: call,
		},
	}
	for _, f := range plugins.ByName() {
		cases = append(cases, struct {
			name           string
			op             admission.Operation
			obj, old       runtime.Object
			wantMutating   matchResult
			wantValidating matchResult
		}{
			name: "create with " + f.Name + " only", op: admission.Create,
			obj:          job(specWith(map[string]any{f.Name: []any{}})),
			wantMutating: call, wantValidating: call,
		})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The mutating webhook is registered for CREATE only; its
			// conditions must still hold on an UPDATE should an installer add it.
			if diff := cmp.Diff(tc.wantMutating, match(t, mutating, tc.op, tc.obj, tc.old)); diff != "" {
				t.Errorf("mutating webhook (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantValidating, match(t, validating, tc.op, tc.obj, tc.old)); diff != "" {
				t.Errorf("validating webhook (-want +got):\n%s", diff)
			}
		})
	}
}

// Malformed objects fail the API server's schema validation anyway; the
// conditions must not turn them into a match-condition error instead (nor
// call the webhook).
func TestMatchConditionsOfMalformedJobs(t *testing.T) {
	ep := Endpoint{ServiceNamespace: testNS, ServiceName: testSvc}
	hooks := map[string]apiwebhook.WebhookAccessor{
		"mutating":   apiwebhook.NewMutatingWebhookAccessor("m", "m", &MutatingConfiguration(ep).Webhooks[0]),
		"validating": apiwebhook.NewValidatingWebhookAccessor("v", "v", &ValidatingConfiguration(ep).Webhooks[0]),
	}
	for name, obj := range map[string]*unstructured.Unstructured{
		"spec null":         job(nil),
		"spec a string":     job("tensorflow"),
		"spec a list":       job([]any{"tensorflow"}),
		"plugins null":      job(map[string]any{"plugins": nil}),
		"plugins a string":  job(specWith("tensorflow")),
		"plugins a list":    job(specWith([]any{"tensorflow"})),
		"plugins a number":  job(specWith(int64(3))),
		"plugins a boolean": job(specWith(true)),
	} {
		for hook, h := range hooks {
			t.Run(name+"/"+hook, func(t *testing.T) {
				got := match(t, h, admission.Create, obj, nil)
				if diff := cmp.Diff(matchResult{SkippedBy: UsesFrameworksCondition}, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

// The API server's own validation of the two configurations: names,
// expressions that compile in its CEL environment, and a cost within its
// limit.
func TestConfigurationsPassAPIServerValidation(t *testing.T) {
	for _, ep := range []Endpoint{
		{ServiceNamespace: testNS, ServiceName: testSvc},
		{URL: "https://127.0.0.1:8443"},
	} {
		m := &admissionregistration.MutatingWebhookConfiguration{}
		if err := admregv1.Convert_v1_MutatingWebhookConfiguration_To_admissionregistration_MutatingWebhookConfiguration(MutatingConfiguration(ep), m, nil); err != nil {
			t.Fatal(err)
		}
		if errs := validation.ValidateMutatingWebhookConfiguration(m); len(errs) > 0 {
			t.Errorf("mutating configuration for %+v: %v", ep, errs.ToAggregate())
		}
		v := &admissionregistration.ValidatingWebhookConfiguration{}
		if err := admregv1.Convert_v1_ValidatingWebhookConfiguration_To_admissionregistration_ValidatingWebhookConfiguration(ValidatingConfiguration(ep), v, nil); err != nil {
			t.Fatal(err)
		}
		if errs := validation.ValidateValidatingWebhookConfiguration(v); len(errs) > 0 {
			t.Errorf("validating configuration for %+v: %v", ep, errs.ToAggregate())
		}
	}
}

func TestFrameworksExpression(t *testing.T) {
	want := `has(object.spec) && type(object.spec) == map && has(object.spec.plugins) && type(object.spec.plugins) == map && ` +
		`["dask", "jax", "mpi", "mxnet", "paddle", "pytorch", "tensorflow", "xgboost"].exists(p, p in object.spec.plugins)`
	if diff := cmp.Diff(want, FrameworksExpression()); diff != "" {
		t.Errorf("FrameworksExpression (-want +got):\n%s", diff)
	}
}

// Configurations made by a version without match conditions (or with an older
// frameworks list) get this binary's conditions from EnsureConfigurations;
// conditions an installer added are kept, and nothing is updated once they
// are in place.
func TestEnsureConfigurationsSetsMatchConditions(t *testing.T) {
	ep := Endpoint{ServiceNamespace: testNS, ServiceName: testSvc}
	installers := whv1.MatchCondition{Name: "not-dry-run", Expression: "!request.dryRun"}
	stale := whv1.MatchCondition{Name: UsesFrameworksCondition, Expression: `has(object.spec.plugins) && "mpi" in object.spec.plugins`}
	for _, tc := range []struct {
		name           string
		existing       []whv1.MatchCondition // of both existing webhooks
		wantMutating   []whv1.MatchCondition
		wantValidating []whv1.MatchCondition
	}{
		{
			name:           "none: an upgrade from a version without them",
			wantMutating:   mutatingConditions(),
			wantValidating: validatingConditions(),
		},
		{
			name:           "an older frameworks list",
			existing:       []whv1.MatchCondition{stale},
			wantMutating:   mutatingConditions(),
			wantValidating: validatingConditions(),
		},
		{
			name:           "an installer's own condition is kept first",
			existing:       []whv1.MatchCondition{installers},
			wantMutating:   append([]whv1.MatchCondition{installers}, mutatingConditions()...),
			wantValidating: append([]whv1.MatchCondition{installers}, validatingConditions()...),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			m, v := MutatingConfiguration(ep), ValidatingConfiguration(ep)
			m.Webhooks[0].MatchConditions = slices.Clone(tc.existing)
			v.Webhooks[0].MatchConditions = slices.Clone(tc.existing)
			client := fake.NewSimpleClientset(m, v)
			if err := EnsureConfigurations(ctx, client, ep); err != nil {
				t.Fatal(err)
			}
			api := client.AdmissionregistrationV1()
			gotM, err := api.MutatingWebhookConfigurations().Get(ctx, m.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			gotV, err := api.ValidatingWebhookConfigurations().Get(ctx, v.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantMutating, gotM.Webhooks[0].MatchConditions); diff != "" {
				t.Errorf("mutating match conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantValidating, gotV.Webhooks[0].MatchConditions); diff != "" {
				t.Errorf("validating match conditions (-want +got):\n%s", diff)
			}

			client.ClearActions()
			if err := EnsureConfigurations(ctx, client, ep); err != nil {
				t.Fatal(err)
			}
			for _, a := range client.Actions() {
				if a.GetVerb() != "get" {
					t.Errorf("second EnsureConfigurations: %s %s, want only gets", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}
