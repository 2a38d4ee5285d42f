package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime/debug"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	"volcano.sh/volcano/pkg/webhooks/router"
	"volcano.sh/volcano/pkg/webhooks/schema"
)

// VolcanoValidatePath is the path of Volcano's own job validation
// (volcano.sh/volcano/pkg/webhooks/admission/jobs/validate).
const VolcanoValidatePath = "/jobs/validate"

// volcanoJobs is the only resource Volcano's job validation decodes.
var volcanoJobs = metav1.GroupVersionResource{Group: batch.SchemeGroupVersion.Group, Version: batch.SchemeGroupVersion.Version, Resource: "jobs"}

// WrapVolcanoValidation makes Volcano's registered job validation
// (VolcanoValidatePath) answer through WithoutFrameworkPlugins. Volcano's
// package must be imported (its init registers the admission); the error says
// when it is not. Call it once, before the manager starts serving: Volcano's
// handler reads the service's Func on every request, so replacing Func is
// enough.
//
// Only call it when this project's plugins are registered in Volcano's plugin
// factory (plugins.Register) and our validation is served: Volcano's name check
// then accepts the eight names anyway, and ours checks what Volcano no longer
// sees.
func WrapVolcanoValidation() error {
	found := false
	err := router.ForEachAdmission(&options.Config{EnabledAdmission: VolcanoValidatePath}, func(s *router.AdmissionService) error {
		s.Func = WithoutFrameworkPlugins(s.Func)
		found = true
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return errNotRegistered(VolcanoValidatePath)
	}
	return nil
}

// WithoutFrameworkPlugins wraps Volcano's job validation (the Func of
// VolcanoValidatePath) so that, on CREATE of a Job that uses a framework
// plugin, it validates the Job with the framework plugins' entries removed from
// spec.plugins.
//
// Volcano's validateJobCreate (pkg/webhooks/admission/jobs/validate) reads
// spec.plugins twice: the keys, to deny plugins its factory does not know
// (ours are registered, so this check never fires for them), and the mpi
// arguments, with its in-tree mpi parser, to deny a Job whose --master task
// is missing (v1.15.1), or whose --master or --worker task is (v1.14.1). That
// parser stops at the first flag it does not know, leaving "master" and
// "worker" for the flags it did not reach, and its check returns before every
// other one. Without the framework entries,
// Volcano makes every other check (replicas, minAvailable, policies, task
// names and templates, volumes, the queue, dependsOn) and ours alone judges
// the arguments and roles: one message for each problem, no false denials.
//
// Everything else goes to Volcano's Func as it came: UPDATEs (Volcano's update
// check compares specs and reads no arguments), other operations, Jobs without
// a framework plugin, and reviews whose object does not decode as JSON (the
// API server always sends JSON), so that Volcano gives its own answer, byte
// for byte. A panic while removing the entries is logged and the review goes
// to Volcano unchanged.
func WithoutFrameworkPlugins(volcano router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if stripped := safeStrip(ar); stripped != nil {
			return volcano(*stripped)
		}
		return volcano(ar)
	}
}

// safeStrip is stripFrameworks with a panic logged and turned into nil: a
// panic in Volcano's handler would drop the connection, and the API server
// would then deny the Job for a failed call instead of Volcano's answer.
func safeStrip(ar admissionv1.AdmissionReview) (out *admissionv1.AdmissionReview) {
	defer func() {
		if v := recover(); v != nil {
			klog.ErrorS(nil, "Recovered from a panic while removing the framework plugins; Volcano validates the Job as it came",
				"path", VolcanoValidatePath, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out = nil
		}
	}()
	return stripFrameworks(ar)
}

// stripFrameworks returns a copy of a Job CREATE review whose object has the
// framework plugins' members removed from spec.plugins and is otherwise as
// the API server sent it, or nil when the review is to go to Volcano as it is
// (see WithoutFrameworkPlugins). ar is not modified.
func stripFrameworks(ar admissionv1.AdmissionReview) *admissionv1.AdmissionReview {
	if ar.Request == nil || ar.Request.Operation != admissionv1.Create || ar.Request.Resource != volcanoJobs {
		return nil
	}
	// Decoded as Volcano decodes it, so that "uses a framework" means what
	// Volcano's validation would see.
	job := &batch.Job{}
	if _, _, err := schema.Codecs.UniversalDeserializer().Decode(ar.Request.Object.Raw, nil, job); err != nil || !UsesFrameworks(job) {
		return nil
	}
	// Edit the JSON rather than re-encode the typed Job, so that the object
	// Volcano decodes differs in spec.plugins only. UseNumber keeps numbers as
	// written; the decoder is case-sensitive like Volcano's, so "spec" and
	// "plugins" are the members it read.
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(ar.Request.Object.Raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil
	}
	spec, _ := obj["spec"].(map[string]any)
	plugins, _ := spec["plugins"].(map[string]any)
	removed := false
	for _, f := range frameworks() {
		if _, ok := plugins[f.Name]; ok {
			delete(plugins, f.Name)
			removed = true
		}
	}
	if !removed {
		return nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	req := *ar.Request
	req.Object = runtime.RawExtension{Raw: raw}
	out := ar
	out.Request = &req
	return &out
}

func errNotRegistered(path string) error {
	return fmt.Errorf("volcano's job admission %s is not registered", path)
}
