package webhook

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	whv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/metrics"

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
	admit := guard("mutating", func(ar admissionv1.AdmissionReview, v *verdict) *admissionv1.AdmissionResponse {
		return mutate(ar, opts, cfg, v)
	})
	return &router.AdmissionService{
		Path:    MutatePath,
		Func:    admit.routerFunc(),
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
// InternalErrorPrefix; Handler replaces Volcano's router.Serve (see handler)
// and records each request in the metrics (pkg/metrics), Func does not.
func ValidateService() *router.AdmissionService {
	admit := guard("validating", admitJob)
	return &router.AdmissionService{
		Path:    ValidatePath,
		Func:    admit.routerFunc(),
		Handler: handler(ValidatePath, admit),
		Config:  &router.AdmissionServiceConfig{},
		ValidatingConfig: &whv1.ValidatingWebhookConfiguration{
			Webhooks: []whv1.ValidatingWebhook{{Name: ValidateWebhookName, Rules: jobRule(whv1.Create, whv1.Update), MatchConditions: validatingConditions()}},
		},
	}
}

// verdict is what an admission found, for the metrics: the Job's framework
// label and, for a response that is not allowed, the reason label
// (pkg/metrics). An admission sets what it learns; the handler fills in the
// rest.
type verdict struct {
	framework, reason string
}

// admitFunc is an admission that reports its verdict in v (never nil).
type admitFunc func(ar admissionv1.AdmissionReview, v *verdict) *admissionv1.AdmissionResponse

// routerFunc returns a as a router.AdmitFunc, its verdict dropped.
func (a admitFunc) routerFunc() router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse { return a(ar, &verdict{}) }
}

// badRequest is the response to a review or Job that does not decode.
func badRequest(v *verdict, err error) *admissionv1.AdmissionResponse {
	v.reason = metrics.ReasonBadRequest
	return util.ToAdmissionResponse(err)
}

func mutate(ar admissionv1.AdmissionReview, opts Options, cfg *router.AdmissionServiceConfig, v *verdict) *admissionv1.AdmissionResponse {
	if ar.Request == nil {
		return badRequest(v, fmt.Errorf("admission review without a request"))
	}
	if ar.Request.Operation != admissionv1.Create {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	// A Job over the bounds is the validation's to deny; it is not decoded
	// here (see overBounds).
	if errs, framework := overBounds(ar.Request.Object.Raw); len(errs) > 0 {
		v.framework = boundsFramework(framework)
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	job, err := schema.DecodeJob(ar.Request.Object, ar.Request.Resource)
	if err != nil {
		return badRequest(v, err)
	}
	v.framework = metrics.FrameworkOf(job.Spec.Plugins)
	if opts.SchedulerName == "" {
		opts.SchedulerName = commonutil.GenerateSchedulerName(cfg.SchedulerNames)
	}
	patch, warnings, err := MutatePatch(ar.Request.Object.Raw, job, opts)
	if err != nil {
		v.reason = metrics.ReasonInternal
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
// is the list of field errors. A Job whose only problems are in the arguments
// and roles of framework plugins Volcano's own admission accepts (asStock) is
// allowed instead, with those problems as warnings (argumentWarnings), unless
// strict mode is on (SetStrictArguments): then it is denied with them.
func AdmitJob(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	return admitJob(ar, &verdict{})
}

// admitJob is AdmitJob, reporting its verdict in v.
func admitJob(ar admissionv1.AdmissionReview, v *verdict) *admissionv1.AdmissionResponse {
	if ar.Request == nil {
		return badRequest(v, fmt.Errorf("admission review without a request"))
	}
	switch ar.Request.Operation {
	case admissionv1.Create, admissionv1.Update:
	default:
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	if errs, framework := overBounds(ar.Request.Object.Raw); len(errs) > 0 {
		v.framework = boundsFramework(framework)
		if framework == "" {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		// With too many plugins to read, which framework it names is not
		// known: the denial names the admission.
		prefix := "plugin " + framework + ": "
		if framework == "?" {
			prefix = "plugin admission: "
		}
		for _, e := range errs {
			e.Detail = prefix + e.Detail
		}
		v.reason = metrics.ReasonBounds
		return denial(errs.ToAggregate().Error())
	}
	job, err := schema.DecodeJob(ar.Request.Object, ar.Request.Resource)
	if err != nil {
		return badRequest(v, err)
	}
	v.framework = metrics.FrameworkOf(job.Spec.Plugins)
	// An old object over the bounds (stored before they existed) is not
	// decoded: the new one, within them, has another spec.
	if oldErrs, _ := overBounds(ar.Request.OldObject.Raw); ar.Request.Operation == admissionv1.Update && len(oldErrs) == 0 {
		old, err := schema.DecodeJob(ar.Request.OldObject, ar.Request.Resource)
		if err != nil {
			return badRequest(v, err)
		}
		// Metadata-only updates (labels, finalizers) are not the user's to fix.
		if apiequality.Semantic.DeepEqual(old.Spec, job.Spec) {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
	}
	errs, reason, warned := validateJob(job, true)
	if len(warned) > 0 && strict() {
		// The messages the warnings would have given (capErrors: a
		// warned Job has no unlisted problems).
		v.reason = metrics.ReasonArguments
		return denial(capErrors(warned, 0).ToAggregate().Error())
	}
	if len(errs) == 0 {
		if len(warned) > 0 {
			v.reason = metrics.ReasonArguments // counted as allowed for that reason
		}
		warnings := append(argumentWarnings(warned), droppedEnvWarnings(job)...)
		return &admissionv1.AdmissionResponse{Allowed: true, Warnings: append(warnings, SvcHostsWarnings(job)...)}
	}
	v.reason = reason
	return denial(errs.ToAggregate().Error())
}

// argumentWarnings are the admission warnings for the argument problems of a
// Job admitted as Volcano admits it (asStock): ArgumentsWarning first, then
// one per problem, each cut to maxWarningRunes, while all of them fit in
// maxWarningsRunes and at most maxWarnings, then a count of the rest. The API
// server keeps 4,096 runes of warnings per request whole and past that cuts
// every one to 256 (k8s.io/apiserver/pkg/endpoints/filters, warning.go), so
// these arrive whole.
func argumentWarnings(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	out := []string{ArgumentsWarning}
	total := utf8.RuneCountInString(ArgumentsWarning)
	for i, e := range errs {
		w := cut(printable(e.Error()), maxWarningRunes)
		n := utf8.RuneCountInString(w)
		if i == maxWarnings || total+n > maxWarningsRunes {
			out = append(out, fmt.Sprintf("and %d more problems", len(errs)-i))
			break
		}
		out = append(out, w)
		total += n
	}
	return out
}

// printable returns s with its control characters (a tab or newline in an
// argument) written as Go escapes: the API server drops a warning that has
// any (k8s.io/apimachinery/pkg/util/net, NewWarningHeader).
func printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ArgumentsWarning is the first admission warning of a Job whose framework
// arguments this project's plugins reject but Volcano's admission accepts.
const ArgumentsWarning = "the job is admitted as Volcano admits it, with the problems below in its framework plugins' arguments: Volcano's in-tree plugin of the same name configures its pods instead, with what it parses of them, as on stock Volcano (an InvalidPluginArguments event on the job says so)"

const (
	// maxWarnings is the most argument problems listed as warnings.
	maxWarnings = 12
	// maxWarningRunes is the longest warning, in runes: an unknown flag's
	// problem lists the plugin's flags and takes about 300.
	maxWarningRunes = 1024
	// maxWarningsRunes is the most runes of warnings of one admission, with
	// room under the API server's 4,096 for a count and the mutation's.
	maxWarningsRunes = 3500
)

// cut returns s cut to at most n runes, ending in "..." when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-3]) + "..."
}

// boundsFramework is the framework label of a Job over the bounds, from
// overBounds' framework: "" is none, "?" unknown.
func boundsFramework(framework string) string {
	switch framework {
	case "":
		return metrics.FrameworkNone
	case "?":
		return metrics.FrameworkUnknown
	}
	return metrics.Framework(framework)
}

// overBounds reads the shape of a Job's JSON (bounds.ReadShape) and returns the
// bounds it is over, and the first framework plugin it names (in the order of
// frameworks; "?" when it has too many plugins to tell), "" when none. JSON
// that does not read as a Job is left to the decoder: nil. JSON that names a
// member of the shape twice (bounds.DuplicateFieldError; the API server never
// sends it) is over the bounds as malformed, of an unknown framework ("?"),
// so that every admission denies it.
//
// Both admissions call it before they decode the Job: decoding a Job of many
// tasks allocates about 60 times its JSON, and the API server sends up to
// 3 MiB.
func overBounds(raw []byte) (field.ErrorList, string) {
	if len(raw) == 0 {
		return nil, ""
	}
	shape, err := bounds.ReadShape(raw)
	var dup *bounds.DuplicateFieldError
	if errors.As(err, &dup) {
		return field.ErrorList{field.Forbidden(field.NewPath("object"), dup.Error())}, "?"
	}
	if err != nil {
		return nil, ""
	}
	errs := shape.Check()
	if len(errs) == 0 {
		return nil, ""
	}
	if shape.Plugins > bounds.MaxPlugins {
		return errs, "?"
	}
	for _, f := range frameworks() {
		for _, p := range shape.Args {
			if p.Name == f.Name {
				return errs, f.Name
			}
		}
	}
	return errs, ""
}
