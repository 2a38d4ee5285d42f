package webhook

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	k8score "k8s.io/kubernetes/pkg/apis/core"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	k8scorevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	kubefeatures "k8s.io/kubernetes/pkg/features"

	"github.com/vcplugins/framework-plugins/pkg/jobs"

	"volcano.sh/volcano/pkg/webhooks/router"
	"volcano.sh/volcano/pkg/webhooks/schema"
)

// VolcanoMutatePath is the path of Volcano's own job mutation
// (volcano.sh/volcano/pkg/webhooks/admission/jobs/mutate).
const VolcanoMutatePath = "/jobs/mutate"

// BoundsDenialPrefix starts the denial of a Job that is over bounds.Check
// on Volcano's job validation path.
const BoundsDenialPrefix = "the job is over the bounds vc-webhook-manager admits: "

// The Job bounds (bounds.Check, read from the review's JSON before
// anything decodes the Job) on Volcano's own job admissions, with a framework
// plugin or not: its mutation (VolcanoMutatePath) leaves a Job over the
// bounds unchanged, and its validation (VolcanoValidatePath) denies it with
// the bounds it exceeds (BoundVolcanoAdmissions puts them there).
//
// Volcano's admissions decode every Job, and loop over its tasks, dependsOn
// names and plugins; the mutation replaces spec.tasks whole and the
// validation builds its message by appending to a string, pod-template errors
// included. Unbounded, one Job of up to 3 MiB (30,000 tasks, 500,000 plugin
// arguments, or 20,000 invalid env names) costs this process hundreds of MB
// to GBs and seconds, and the process also answers Volcano's fail-closed Pod
// admissions for the whole cluster.

// UnchangedOverBounds wraps a job mutation: a Job review whose object or
// oldObject is over bounds.Check is allowed unchanged (the validation denies it); every
// other review goes to admit.
func UnchangedOverBounds(admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if volcanoOverBounds(ar) != nil {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		return admit(ar)
	}
}

// DeniedOverBounds wraps a job validation: a Job review (any operation) whose
// object or oldObject is over bounds.Check is denied with the bounds it exceeds, after
// BoundsDenialPrefix; a Job CREATE within them whose pod templates have more
// than MaxErrors errors, or errors quoting long values, is denied with the
// first MaxErrors, abbreviated, after TemplateErrorsDenialPrefix
// (volcanoTemplateErrors); every other review goes to admit.
func DeniedOverBounds(admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if errs := volcanoOverBounds(ar); errs != nil {
			return denial(BoundsDenialPrefix + errs.Error())
		}
		if msg := volcanoTemplateErrors(ar); msg != "" {
			return denial(msg)
		}
		return admit(ar)
	}
}

// TemplateErrorsDenialPrefix starts the denial of a Job CREATE whose pod
// templates have more than MaxErrors errors, or errors of more than
// maxTemplateErrorBytes in all, on Volcano's job validation path
// (volcanoTemplateErrors).
const TemplateErrorsDenialPrefix = "the job's pod templates have "

// maxTemplateErrorBytes bounds the template errors Volcano's job validation
// lists, their values whole, in bytes: it copies its message once per error.
const maxTemplateErrorBytes = 64 << 10

// volcanoTemplateErrors returns the denial of a Job CREATE whose tasks' pod
// templates have more than MaxErrors errors in all, or errors that would make
// more than maxTemplateErrorBytes of message; "" for any other review (and
// for a panic, which is logged: Volcano then answers).
//
// Volcano's job validation checks every task's template with Kubernetes's
// pod template validation and appends each error, its value quoted whole,
// to one string: n errors of about 250 bytes cost it n² × 125 bytes of
// copying, and within bounds.Check a Job's templates can make 100,000
// errors (up to 8 per env entry), TBs. The templates are checked here as
// Volcano checks them (defaulted, converted to the internal types, validated
// with the same options), task by task, at a cost linear in the Job; a Job
// with few short errors gets Volcano's own answer. Once there are more than
// MaxErrors, the remaining tasks are not checked (building one error costs
// Kubernetes 1 to 2 KB; bounds.MaxTemplateEntries bounds what one template
// makes). The denial lists the first MaxErrors, values abbreviated
// (jobs.Abbrev), paths under spec.tasks[i]:
//
//	the job's pod templates have more than 50 errors; the first 50: spec.tasks[0].template.spec.containers[0].env[0].name: Invalid value: "1": ...; ...
//	the job's pod templates have 2 errors of 2097664 bytes in all (more than 65536); abbreviated: spec.tasks[0].template...: Invalid value: "1xxx... (1048576 bytes)": ...; ...
func volcanoTemplateErrors(ar admissionv1.AdmissionReview) (msg string) {
	if ar.Request == nil || ar.Request.Resource != volcanoJobs || ar.Request.Operation != admissionv1.Create {
		return ""
	}
	err := protect("checking the pod templates of "+ar.Request.Namespace+"/"+ar.Request.Name, func() {
		job, err := schema.DecodeJob(ar.Request.Object, ar.Request.Resource)
		if err != nil {
			return // Volcano's decoder says so
		}
		// Volcano v1.15's options (v1.14 sets none: it may count fewer
		// errors for pod-level resources, never more of the others).
		opts := k8scorevalidation.PodValidationOptions{
			PodLevelResourcesEnabled: utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodLevelResources),
		}
		var listed []string
		total, quoted := 0, 0
		for i := 0; i < len(job.Spec.Tasks) && total <= MaxErrors; i++ {
			task := &job.Spec.Tasks[i]
			errs := templateErrors(task.Name, job.Namespace, &task.Template, opts)
			total += len(errs)
			for _, e := range errs[:min(len(errs), MaxErrors-len(listed))] {
				// About what Volcano's message takes for it.
				quoted += len(e.Field) + len(e.Detail) + 64
				if s, ok := e.BadValue.(string); ok {
					quoted += len(s)
					e.BadValue = jobs.Abbrev(s)
				}
				e.Field = fmt.Sprintf("spec.tasks[%d].%s", i, e.Field)
				listed = append(listed, e.Error())
			}
		}
		switch {
		case total > MaxErrors:
			msg = fmt.Sprintf("%smore than %d errors; the first %d: %s", TemplateErrorsDenialPrefix, MaxErrors, MaxErrors, strings.Join(listed, "; "))
		case quoted > maxTemplateErrorBytes:
			msg = fmt.Sprintf("%s%d errors of %d bytes in all (more than %d); abbreviated: %s", TemplateErrorsDenialPrefix, total, quoted, maxTemplateErrorBytes, strings.Join(listed, "; "))
		}
	})
	if err != nil {
		return ""
	}
	return msg
}

// templateErrors returns the errors of a task's pod template as Kubernetes's
// pod template validation reports them for a PodTemplate named after the
// task, in the Job's namespace, after the API's defaults: what Volcano's job
// validation checks.
func templateErrors(task, namespace string, template *v1.PodTemplateSpec, opts k8scorevalidation.PodValidationOptions) field.ErrorList {
	external := &v1.PodTemplate{Template: *template.DeepCopy()}
	k8scorev1.SetObjectDefaults_PodTemplate(external)
	internal := &k8score.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: task, Namespace: namespace}}
	if err := k8scorev1.Convert_v1_PodTemplateSpec_To_core_PodTemplateSpec(&external.Template, &internal.Template, nil); err != nil {
		return nil
	}
	return k8scorevalidation.ValidatePodTemplate(internal, opts)
}

// volcanoOverBounds returns the bounds a Job review is over, as one error, or
// nil (also for reviews of another resource, objects that do not read as a
// Job, and a panic, which is logged: Volcano then answers). It reads the
// review's object and its oldObject, whatever the operation: Volcano's job
// admissions decode the object before they look at the operation, and the
// validation decodes the oldObject of an UPDATE, so a direct caller's DELETE,
// CONNECT or UPDATE costs what a CREATE does.
func volcanoOverBounds(ar admissionv1.AdmissionReview) (over error) {
	if ar.Request == nil || ar.Request.Resource != volcanoJobs {
		return nil
	}
	err := protect("bounding "+ar.Request.Namespace+"/"+ar.Request.Name, func() {
		over = objectsOverBounds(ar.Request, "", func(raw []byte) field.ErrorList {
			errs, _ := overBounds(raw)
			return errs
		})
	})
	if err != nil {
		return nil
	}
	return over
}

// objectsOverBounds returns check's errors for the request's object and then
// its oldObject (their paths prefixed with "oldObject: " for the latter, and
// with prefix for both), as one error, or nil when there are none.
func objectsOverBounds(req *admissionv1.AdmissionRequest, prefix string, check func(raw []byte) field.ErrorList) error {
	var all field.ErrorList
	for _, o := range []struct {
		what string
		raw  []byte
	}{{"", req.Object.Raw}, {"oldObject: ", req.OldObject.Raw}} {
		if len(o.raw) == 0 {
			continue
		}
		for _, e := range check(o.raw) {
			e.Field = o.what + prefix + e.Field
			all = append(all, e)
		}
	}
	if len(all) == 0 {
		return nil
	}
	return all.ToAggregate()
}
