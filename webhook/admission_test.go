package webhook

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	whv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	webhookerrors "k8s.io/apiserver/pkg/admission/plugin/webhook/errors"
	"k8s.io/client-go/kubernetes/fake"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

func TestMutateAdmission(t *testing.T) {
	gpuJob := mkJob("tf").SchedulerName("").Task(jobtest.MakeTask("worker", 4).GPU(1).MinAvailable(3).Obj()).Plugin("tensorflow").Obj()

	t.Run("create: JSON patch and warnings", func(t *testing.T) {
		svc := MutateService(Options{})
		svc.Config.SchedulerNames = []string{"custom-volcano", "other"}
		resp := svc.Func(review(t, admissionv1.Create, gpuJob, nil))
		if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
			t.Fatalf("response %+v; want allowed with a JSON patch", resp)
		}
		want, wantWarnings := MutateJob(gpuJob, Options{SchedulerName: "custom-volcano"})
		if diff := cmp.Diff(want, applyPatch(t, gpuJob, resp.Patch)); diff != "" {
			t.Errorf("patched job (-want +got):\n%s", diff)
		}
		if want.Spec.SchedulerName != "custom-volcano" {
			t.Errorf("schedulerName %q; want the first --scheduler-name", want.Spec.SchedulerName)
		}
		if diff := cmp.Diff(wantWarnings, resp.Warnings); diff != "" || len(resp.Warnings) != 1 {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
	})
	t.Run("the scheduler name of the options wins", func(t *testing.T) {
		svc := MutateService(Options{SchedulerName: "fixed"})
		svc.Config.SchedulerNames = []string{"custom-volcano"}
		resp := svc.Func(review(t, admissionv1.Create, gpuJob, nil))
		if got := applyPatch(t, gpuJob, resp.Patch).Spec.SchedulerName; got != "fixed" {
			t.Errorf("schedulerName %q, want fixed", got)
		}
	})
	t.Run("other operations pass", func(t *testing.T) {
		resp := MutateService(Options{}).Func(review(t, admissionv1.Update, gpuJob, gpuJob))
		if !resp.Allowed || resp.Patch != nil {
			t.Errorf("response %+v; want allowed without patch", resp)
		}
	})
	t.Run("another resource is an error", func(t *testing.T) {
		ar := review(t, admissionv1.Create, gpuJob, nil)
		ar.Request.Resource.Resource = "pods"
		resp := MutateService(Options{}).Func(ar)
		if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, "expect resource to be") {
			t.Errorf("response %+v; want a denial", resp)
		}
	})
	t.Run("no request", func(t *testing.T) {
		if resp := MutateService(Options{}).Func(admissionv1.AdmissionReview{}); resp.Allowed {
			t.Errorf("response %+v; want a denial", resp)
		}
	})
}

func TestValidateAdmission(t *testing.T) {
	// Volcano's admission reads no tensorflow or pytorch arguments: ours
	// admits such a Job with warnings. mxnet has no in-tree plugin, so its
	// argument problems are denials.
	tfInvalid := mkJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow", "--port=70000").Plugin("svc").Obj()
	invalid := mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet", "--port=70000").Plugin("svc").Obj()
	valid := mkJob("pt").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("pytorch").Plugin("svc").Obj()
	scaled := valid.DeepCopy()
	scaled.Spec.Tasks[0].Replicas = 2
	mxValid := mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet").Plugin("svc").Obj()
	mxScaled := mxValid.DeepCopy()
	mxScaled.Spec.Tasks[0].Replicas = 2
	relabelled := invalid.DeepCopy()
	relabelled.Labels = map[string]string{"team": "a"}
	const (
		tfPort = `spec.plugins[tensorflow][0]: Invalid value: "--port=70000": plugin tensorflow: --port=70000: must be between 1 and 65535`
		mxPort = `spec.plugins[mxnet][0]: Invalid value: "--port=70000": plugin mxnet: --port=70000: must be between 1 and 65535`
	)

	tests := []struct {
		name     string
		op       admissionv1.Operation
		job, old *batch.Job
		denial   string
		// warnings are those of an allowed Job.
		warnings []string
	}{
		{name: "valid create", op: admissionv1.Create, job: valid},
		{
			name: "invalid create", op: admissionv1.Create, job: invalid,
			denial: `admission webhook "validatejob.frameworks.vcplugins.io" denied the request: ` + mxPort,
		},
		{
			name: "invalid create that Volcano admits: allowed with warnings", op: admissionv1.Create, job: tfInvalid,
			warnings: []string{ArgumentsWarning, tfPort},
		},
		{
			name: "two problems are listed", op: admissionv1.Create,
			job: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet", "--port=70000", "--bogus").Obj(),
			denial: `admission webhook "validatejob.frameworks.vcplugins.io" denied the request: [` + mxPort + `, ` +
				`spec.plugins[mxnet][1]: Invalid value: "--bogus": plugin mxnet: unknown flag --bogus for plugin mxnet; accepted flags: --port, --scheduler, --server, --wait, --wait-image, --wait-timeout, --worker]`,
		},
		{
			name: "two problems Volcano admits are two warnings", op: admissionv1.Create,
			job: mkJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow", "--port=70000", "--bogus").Obj(),
			warnings: []string{ArgumentsWarning, tfPort,
				`spec.plugins[tensorflow][1]: Invalid value: "--bogus": plugin tensorflow: unknown flag --bogus for plugin tensorflow; accepted flags: --chief, --evaluator, --port, --ps, --tf-config, --wait, --wait-image, --wait-timeout, --worker`},
		},
		{name: "valid update", op: admissionv1.Update, job: valid, old: valid},
		{
			name: "an update that makes the job invalid", op: admissionv1.Update, job: mxScaled, old: mxValid,
			denial: `admission webhook "validatejob.frameworks.vcplugins.io" denied the request: spec.plugins[mxnet]: Invalid value: "--scheduler=scheduler (default)": plugin mxnet: task "scheduler" (--scheduler) must have at most 1 replica, has 2`,
		},
		{
			name: "an update that makes the job invalid as Volcano admits it: allowed with warnings", op: admissionv1.Update, job: scaled, old: valid,
			warnings: []string{ArgumentsWarning,
				`spec.plugins[pytorch]: Invalid value: "--master=master (default)": plugin pytorch: task "master" (--master) must have at most 1 replica, has 2`},
		},
		{name: "a metadata-only update of an invalid job passes", op: admissionv1.Update, job: relabelled, old: invalid},
		{name: "delete passes", op: admissionv1.Delete, job: invalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := ValidateService().Func(review(t, tc.op, tc.job, tc.old))
			if tc.denial == "" {
				if !resp.Allowed {
					t.Fatalf("denied: %v", resp.Result)
				}
				if diff := cmp.Diff(tc.warnings, resp.Warnings); diff != "" {
					t.Errorf("warnings (-want +got):\n%s", diff)
				}
				return
			}
			if resp.Allowed || resp.Result == nil {
				t.Fatalf("response %+v; want a denial", resp)
			}
			if resp.Result.Code != http.StatusUnprocessableEntity || resp.Result.Reason != metav1.StatusReasonInvalid {
				t.Errorf("status %d %s; want 422 Invalid", resp.Result.Code, resp.Result.Reason)
			}
			// What the client sees, as the API server words it.
			if got := webhookerrors.ToStatusErr(ValidateWebhookName, resp.Result).Error(); got != tc.denial {
				t.Errorf("denial\n got %s\nwant %s", got, tc.denial)
			}
		})
	}
}

// The API server calls mutating webhook configurations sorted by name
// (k8s.io/apiserver/pkg/admission/configuration/mutating_webhook_manager.go);
// ours must come before Volcano's job mutation.
func TestConfigurationOrder(t *testing.T) {
	volcano := []string{"/jobs/mutate", "/podgroups/mutate", "/pods/mutate", "/queues/mutate"}
	names := []string{ConfigurationName(MutatePath)}
	for _, p := range volcano {
		names = append(names, ConfigurationName(p))
	}
	if names[1] != "volcano-admission-service-jobs-mutate" {
		t.Fatalf("ConfigurationName(/jobs/mutate) = %s; want the name Volcano's installer uses", names[1])
	}
	sort.Strings(names)
	if names[0] != "volcano-admission-service-jobs-frameworks-mutate" || names[1] != "volcano-admission-service-jobs-mutate" {
		t.Errorf("sorted configurations %v; want ours first, then Volcano's job mutation", names)
	}
	if got := ConfigurationName(ValidatePath); got != "volcano-admission-service-jobs-frameworks-validate" {
		t.Errorf("validating configuration %s", got)
	}
}

func TestConfigurations(t *testing.T) {
	ep := Endpoint{ServiceNamespace: "volcano-system", ServiceName: "volcano-admission-service", CABundle: []byte("ca")}
	m := MutatingConfiguration(ep)
	w := m.Webhooks[0]
	if m.Name != ConfigurationName(MutatePath) || w.Name != MutateWebhookName || *w.ClientConfig.Service.Path != MutatePath ||
		*w.ReinvocationPolicy != whv1.NeverReinvocationPolicy || *w.FailurePolicy != whv1.Fail ||
		string(w.ClientConfig.CABundle) != "ca" || *w.ClientConfig.Service.Port != 443 {
		t.Errorf("mutating configuration %+v", m)
	}
	if diff := cmp.Diff([]whv1.OperationType{whv1.Create}, w.Rules[0].Operations); diff != "" {
		t.Errorf("mutating operations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"volcano-system", "kube-system"}, w.NamespaceSelector.MatchExpressions[0].Values); diff != "" {
		t.Errorf("namespaces left out (-want +got):\n%s", diff)
	}
	v := ValidatingConfiguration(Endpoint{URL: "https://hook.example:8443/"})
	if v.Name != ConfigurationName(ValidatePath) || v.Webhooks[0].Name != ValidateWebhookName ||
		*v.Webhooks[0].ClientConfig.URL != "https://hook.example:8443/jobs/frameworks/validate" {
		t.Errorf("validating configuration %+v", v)
	}
	if diff := cmp.Diff([]whv1.OperationType{whv1.Create, whv1.Update}, v.Webhooks[0].Rules[0].Operations); diff != "" {
		t.Errorf("validating operations (-want +got):\n%s", diff)
	}
}

func TestEnsureConfigurations(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	ep := Endpoint{ServiceNamespace: "volcano-system", ServiceName: "volcano-admission-service"}
	if err := EnsureConfigurations(ctx, client, ep); err != nil {
		t.Fatal(err)
	}
	api := client.AdmissionregistrationV1()
	m, err := api.MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(MutatingConfiguration(ep), m); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	// Existing configurations keep what an installer set, and the service
	// port, but point at the current endpoint.
	m.Webhooks[0].TimeoutSeconds = nil
	port := int32(8443)
	m.Webhooks[0].ClientConfig.Service.Port = &port
	m.Webhooks[0].ClientConfig.Service.Name = "old-name"
	if _, err := api.MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureConfigurations(ctx, client, ep); err != nil {
		t.Fatal(err)
	}
	m, _ = api.MutatingWebhookConfigurations().Get(ctx, ConfigurationName(MutatePath), metav1.GetOptions{})
	if svc := m.Webhooks[0].ClientConfig.Service; m.Webhooks[0].TimeoutSeconds != nil || *svc.Port != 8443 || svc.Name != ep.ServiceName {
		t.Errorf("existing configuration after EnsureConfigurations: %+v", m.Webhooks[0])
	}
	// A manager moved to a URL repoints its configurations.
	moved := Endpoint{URL: "https://127.0.0.1:9443", CABundle: []byte("ca2")}
	if err := EnsureConfigurations(ctx, client, moved); err != nil {
		t.Fatal(err)
	}
	v, _ := api.ValidatingWebhookConfigurations().Get(ctx, ConfigurationName(ValidatePath), metav1.GetOptions{})
	if cc := v.Webhooks[0].ClientConfig; cc.Service != nil || *cc.URL != "https://127.0.0.1:9443/jobs/frameworks/validate" || string(cc.CABundle) != "ca2" {
		t.Errorf("validating client config after the move: %+v", cc)
	}
	if _, err := api.ValidatingWebhookConfigurations().Get(ctx, ConfigurationName(ValidatePath), metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	if err := EnsureConfigurations(ctx, client, Endpoint{}); err == nil {
		t.Error("no endpoint: want an error")
	}
}
