package webhook

import (
	admissionv1 "k8s.io/api/admission/v1"

	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	"volcano.sh/volcano/pkg/webhooks/router"
)

// VolcanoMutatePath is the path of Volcano's own job mutation
// (volcano.sh/volcano/pkg/webhooks/admission/jobs/mutate).
const VolcanoMutatePath = "/jobs/mutate"

// BoundsDenialPrefix starts the denial of a Job that is over jobs.CheckBounds
// on Volcano's job validation path.
const BoundsDenialPrefix = "the job is over the bounds vc-webhook-manager admits: "

// BoundVolcanoJobAdmissions holds every Job that Volcano's own job admissions
// see, with a framework plugin or not, to jobs.CheckBounds (read from the
// review's JSON, before anything decodes the Job): its mutation
// (VolcanoMutatePath) leaves a Job over the bounds unchanged, and its
// validation (VolcanoValidatePath) denies it with the bounds it exceeds.
//
// Volcano's admissions decode every Job, and loop over its tasks, dependsOn
// names and plugins; the mutation replaces spec.tasks whole and the
// validation builds its message by appending to a string. Unbounded, one Job
// of up to 3 MiB (30,000 tasks, or 500,000 plugin arguments) costs this
// process hundreds of MB and seconds, and the process also answers Volcano's
// fail-closed Pod admissions for the whole cluster.
//
// Volcano's packages must be imported (their init registers the admissions);
// the error says when one is not. Call it once, before the manager serves,
// after WrapVolcanoValidation when both are used, so that the bounds come
// first.
func BoundVolcanoJobAdmissions() error {
	wrapped := map[string]bool{}
	for _, path := range []string{VolcanoMutatePath, VolcanoValidatePath} {
		err := router.ForEachAdmission(&options.Config{EnabledAdmission: path}, func(s *router.AdmissionService) error {
			if path == VolcanoMutatePath {
				s.Func = UnchangedOverBounds(s.Func)
			} else {
				s.Func = DeniedOverBounds(s.Func)
			}
			wrapped[path] = true
			return nil
		})
		if err != nil {
			return err
		}
		if !wrapped[path] {
			return errNotRegistered(path)
		}
	}
	return nil
}

// UnchangedOverBounds wraps a job mutation: a Job CREATE or UPDATE over
// jobs.CheckBounds is allowed unchanged (the validation denies it); every
// other review goes to admit.
func UnchangedOverBounds(admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if volcanoOverBounds(ar) != nil {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		return admit(ar)
	}
}

// DeniedOverBounds wraps a job validation: a Job CREATE or UPDATE over
// jobs.CheckBounds is denied with the bounds it exceeds, after
// BoundsDenialPrefix; every other review goes to admit.
func DeniedOverBounds(admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if errs := volcanoOverBounds(ar); errs != nil {
			return denial(BoundsDenialPrefix + errs.Error())
		}
		return admit(ar)
	}
}

// volcanoOverBounds returns the bounds a Job CREATE or UPDATE of a review is
// over, as one error, or nil (also for other reviews, objects that do not
// read as a Job, and a panic, which is logged: Volcano then answers).
func volcanoOverBounds(ar admissionv1.AdmissionReview) (over error) {
	if ar.Request == nil || ar.Request.Resource != volcanoJobs {
		return nil
	}
	if op := ar.Request.Operation; op != admissionv1.Create && op != admissionv1.Update {
		return nil
	}
	err := protect("bounding "+ar.Request.Namespace+"/"+ar.Request.Name, func() {
		if errs, _ := overBounds(ar.Request.Object.Raw); len(errs) > 0 {
			over = errs.ToAggregate()
		}
	})
	if err != nil {
		return nil
	}
	return over
}
