package webhook

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	whv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"

	commonutil "volcano.sh/volcano/pkg/util"
	"volcano.sh/volcano/pkg/webhooks/router"
	"volcano.sh/volcano/pkg/webhooks/schema"
	"volcano.sh/volcano/pkg/webhooks/util"
)

// Paths of the two admissions, under which vc-webhook-manager serves them.
//
// The configurations are named after the paths (ConfigurationName), as
// Volcano's manager names those of its own admissions. The API server calls mutating webhook
// configurations sorted by name, and
// "volcano-admission-service-jobs-frameworks-mutate" sorts before Volcano's
// "volcano-admission-service-jobs-mutate" ('f' < 'm'): MutateJob sees the Job as
// the user wrote it, before Volcano's job mutation fills in its defaults.
const (
	MutatePath   = "/jobs/frameworks/mutate"
	ValidatePath = "/jobs/frameworks/validate"
)

// Names of the webhooks inside the two configurations; the API server quotes
// them in denials ("admission webhook %q denied the request: ...").
const (
	MutateWebhookName   = "mutatejob.frameworks.vcplugins.io"
	ValidateWebhookName = "validatejob.frameworks.vcplugins.io"
)

// ConfigurationPrefix starts the name of every webhook configuration of
// Volcano's webhook manager (cmd/webhook-manager/app/util.go).
const ConfigurationPrefix = "volcano-admission-service"

// ConfigurationName returns the name of the webhook configuration of the
// admission served at path, as Volcano's webhook manager derives it: the prefix
// followed by the path with every "/" replaced by "-"
// (/jobs/frameworks/mutate: volcano-admission-service-jobs-frameworks-mutate).
func ConfigurationName(path string) string {
	return ConfigurationPrefix + strings.ReplaceAll(path, "/", "-")
}

// Paths returns the paths of the two admissions.
func Paths() []string { return []string{MutatePath, ValidatePath} }

// jobRule matches Volcano Jobs for the given operations.
func jobRule(ops ...whv1.OperationType) []whv1.RuleWithOperations {
	return []whv1.RuleWithOperations{{
		Operations: ops,
		Rule: whv1.Rule{
			APIGroups:   []string{"batch.volcano.sh"},
			APIVersions: []string{"v1alpha1"},
			Resources:   []string{"jobs"},
		},
	}}
}

// MutateService returns the mutating admission (MutatePath, Job CREATE of
// Jobs that use a framework plugin: MutatingConfiguration's rules and match
// conditions). When
// opts.SchedulerName is empty, GPU jobs get the first of the service's
// Config.SchedulerNames, which Volcano's router fills in for the admissions it
// starts, else DefaultSchedulerName. vc-webhook-manager serves it with Handle
// and passes its first --scheduler-name in opts, the scheduler Volcano's own
// job mutation gives jobs.
func MutateService(opts Options) *router.AdmissionService {
	cfg := &router.AdmissionServiceConfig{}
	admit := guard("mutating", func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse { return mutate(ar, opts, cfg) })
	return &router.AdmissionService{
		Path:    MutatePath,
		Func:    admit,
		Handler: handler(MutatePath, admit),
		Config:  cfg,
		MutatingConfig: &whv1.MutatingWebhookConfiguration{
			Webhooks: []whv1.MutatingWebhook{{Name: MutateWebhookName, Rules: jobRule(whv1.Create), MatchConditions: mutatingConditions()}},
		},
	}
}

// ValidateService returns the validating admission (ValidatePath, Job CREATE
// and spec UPDATE of Jobs that use a framework plugin: ValidatingConfiguration's
// rules and match conditions).
//
// Both services' Func and Handler turn a panic into a denial that starts with
// InternalErrorPrefix; Handler replaces Volcano's router.Serve (see handler).
func ValidateService() *router.AdmissionService {
	admit := guard("validating", AdmitJob)
	return &router.AdmissionService{
		Path:    ValidatePath,
		Func:    admit,
		Handler: handler(ValidatePath, admit),
		Config:  &router.AdmissionServiceConfig{},
		ValidatingConfig: &whv1.ValidatingWebhookConfiguration{
			Webhooks: []whv1.ValidatingWebhook{{Name: ValidateWebhookName, Rules: jobRule(whv1.Create, whv1.Update), MatchConditions: validatingConditions()}},
		},
	}
}

func mutate(ar admissionv1.AdmissionReview, opts Options, cfg *router.AdmissionServiceConfig) *admissionv1.AdmissionResponse {
	if ar.Request == nil {
		return util.ToAdmissionResponse(fmt.Errorf("admission review without a request"))
	}
	if ar.Request.Operation != admissionv1.Create {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	job, err := schema.DecodeJob(ar.Request.Object, ar.Request.Resource)
	if err != nil {
		return util.ToAdmissionResponse(err)
	}
	if opts.SchedulerName == "" {
		opts.SchedulerName = commonutil.GenerateSchedulerName(cfg.SchedulerNames)
	}
	patch, warnings, err := MutatePatch(ar.Request.Object.Raw, job, opts)
	if err != nil {
		return util.ToAdmissionResponse(fmt.Errorf("computing the patch of job %s/%s: %v", job.Namespace, job.Name, err))
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true, Warnings: warnings}
	if len(patch) > 0 {
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = patch, &pt
		klog.V(3).Infof("job %s/%s: patch %s", job.Namespace, job.Name, patch)
	}
	return resp
}

// AdmitJob is the validating admission: it denies a Job on CREATE, or on an
// UPDATE that changes its spec, when ValidateJob reports problems; the message
// is the list of field errors.
func AdmitJob(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	if ar.Request == nil {
		return util.ToAdmissionResponse(fmt.Errorf("admission review without a request"))
	}
	switch ar.Request.Operation {
	case admissionv1.Create, admissionv1.Update:
	default:
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	job, err := schema.DecodeJob(ar.Request.Object, ar.Request.Resource)
	if err != nil {
		return util.ToAdmissionResponse(err)
	}
	if ar.Request.Operation == admissionv1.Update {
		old, err := schema.DecodeJob(ar.Request.OldObject, ar.Request.Resource)
		if err != nil {
			return util.ToAdmissionResponse(err)
		}
		// Metadata-only updates (labels, finalizers) are not the user's to fix.
		if apiequality.Semantic.DeepEqual(old.Spec, job.Spec) {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
	}
	errs := ValidateJob(job)
	if len(errs) == 0 {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	return denial(errs.ToAggregate().Error())
}
