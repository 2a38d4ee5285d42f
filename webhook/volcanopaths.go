package webhook

import (
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"volcano.sh/volcano/cmd/webhook-manager/app/options"
	jobflowvalidate "volcano.sh/volcano/pkg/webhooks/admission/jobflows/validate"
	"volcano.sh/volcano/pkg/webhooks/router"

	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
)

// Paths of Volcano's admissions beyond the Job's (VolcanoMutatePath,
// VolcanoValidatePath), as its router registers them (v1.14 and v1.15 alike).
const (
	VolcanoCronJobsValidatePath   = "/cronjobs/validate"
	VolcanoHyperNodesValidatePath = "/hypernodes/validate"
	VolcanoJobFlowsValidatePath   = "/jobflows/validate"
)

// VolcanoPaths is every admission path of Volcano's webhook manager (each
// line registers all of them; --enabled-admission chooses which are served),
// with the bounds BoundVolcanoAdmissions puts before each. Every path is also
// served behind BoundStructure (ServeVolcano).
var VolcanoPaths = []string{
	VolcanoMutatePath, VolcanoValidatePath,
	"/podgroups/mutate", "/podgroups/validate",
	"/queues/mutate", "/queues/validate",
	"/pods/mutate", "/pods/validate",
	VolcanoHyperNodesValidatePath, VolcanoCronJobsValidatePath, VolcanoJobFlowsValidatePath,
}

// volcanoBounds are the bounds of a path beyond BoundStructure's, by path.
var volcanoBounds = map[string]func(router.AdmitFunc) router.AdmitFunc{
	VolcanoMutatePath:             UnchangedOverBounds,
	VolcanoValidatePath:           DeniedOverBounds,
	VolcanoCronJobsValidatePath:   CronJobsOverBounds,
	VolcanoHyperNodesValidatePath: HyperNodesOverBounds,
	VolcanoJobFlowsValidatePath:   JobFlowsAnswered,
}

// ServeVolcano is how the webhook manager serves the handler of Volcano's
// admission at path: its body capped at VolcanoMaxBody (413 beyond,
// CapBody), then held to the structure bounds before anything decodes it
// (BoundStructure). On the job paths a Job over the structure bounds gets the
// Job bounds' answer where it is over them too (UnchangedOverBounds,
// DeniedOverBounds), which names the bound in the Job's own terms.
func ServeVolcano(path string, handler http.HandlerFunc) http.Handler {
	return CapBody(VolcanoMaxBody, BoundStructure(VolcanoMaxBody, handler, structureAnswers[path]))
}

// structureAnswers answer a Job review over the structure bounds on the job
// paths, Volcano's and ours: the mutations leave a Job over the Job bounds
// unchanged, the validations deny it naming them; other reviews over the
// structure bounds get BoundStructure's denial.
var structureAnswers = map[string]func(*admissionv1.AdmissionRequest, string) *admissionv1.AdmissionResponse{
	VolcanoMutatePath: unchangedOverStructure, MutatePath: unchangedOverStructure,
	VolcanoValidatePath: deniedOverStructure, ValidatePath: deniedOverStructure,
}

func unchangedOverStructure(req *admissionv1.AdmissionRequest, over string) *admissionv1.AdmissionResponse {
	if jobStructureOverBounds(req, over) != nil {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	return nil
}

func deniedOverStructure(req *admissionv1.AdmissionRequest, over string) *admissionv1.AdmissionResponse {
	if errs := jobStructureOverBounds(req, over); errs != nil {
		return denial(BoundsDenialPrefix + errs.Error())
	}
	return nil
}

// jobStructureOverBounds returns the Job bounds a Job review over the
// structure bounds (over says where) is over, or nil. A tasks list over
// MaxJSONEntries is over bounds.MaxTasks, said without reading the Job: that
// read is what costs (a 3 MiB list of empty tasks: 150 MB).
func jobStructureOverBounds(req *admissionv1.AdmissionRequest, over string) error {
	if req.Resource != volcanoJobs {
		return nil
	}
	for _, o := range []struct{ spot, what string }{{"request.object.spec.tasks has ", ""}, {"request.oldObject.spec.tasks has ", "oldObject: "}} {
		if strings.HasPrefix(over, o.spot) {
			e := field.TooMany(field.NewPath("spec", "tasks"), -1, bounds.MaxTasks)
			e.Field = o.what + e.Field
			return field.ErrorList{e}.ToAggregate()
		}
	}
	return objectsOverBounds(req, "", func(raw []byte) field.ErrorList {
		errs, _ := overBounds(raw)
		return errs
	})
}

// BoundVolcanoAdmissions puts the bounds of each of VolcanoPaths that has
// any (volcanoBounds) before the admission Volcano's router registered for
// it: the Job bounds on both job paths (UnchangedOverBounds, DeniedOverBounds), the
// jobTemplate's Job bounds on /cronjobs/validate (CronJobsOverBounds), the
// member patterns' length on /hypernodes/validate (HyperNodesOverBounds), and
// a linear-time flow check on /jobflows/validate (JobFlowsAnswered). Each
// reads the object and the oldObject of every operation. Call it once, before
// the manager serves, after WrapVolcanoValidation when both are used. A path
// whose admission is not registered is skipped (it cannot be served), but for
// the job paths: the error names one not registered (its package is not
// imported).
func BoundVolcanoAdmissions() error {
	for _, path := range VolcanoPaths {
		bound, ok := volcanoBounds[path]
		if !ok {
			continue
		}
		wrapped := false
		err := router.ForEachAdmission(&options.Config{EnabledAdmission: path}, func(s *router.AdmissionService) error {
			s.Func = bound(s.Func)
			wrapped = true
			return nil
		})
		switch {
		case wrapped:
		case path == VolcanoMutatePath || path == VolcanoValidatePath:
			return errNotRegistered(path)
		default:
			// Not registered, so never served (Volcano's router refuses to
			// start with an enabled path it does not have).
			_ = err
		}
	}
	return nil
}

// CronJobDenialPrefix starts the denial of a CronJob whose jobTemplate is
// over the Job bounds.
const CronJobDenialPrefix = "the cronjob's jobTemplate is over the bounds vc-webhook-manager admits: "

// CronJobsOverBounds wraps Volcano's CronJob validation: a review whose
// object or oldObject (any operation) has a spec.jobTemplate.spec over the
// Job bounds (bounds.ReadShape(...).Check(), as a Job's) is denied with them,
// after CronJobDenialPrefix, their paths under spec.jobTemplate; every other
// review goes to admit. Volcano decodes the whole CronJob, jobTemplate
// included, at about 900 bytes per empty task: 3 MiB of them cost it 1.8 GB
// (security review round 4, H1); each Job the CronJob makes would be denied
// by the Job bounds anyway.
func CronJobsOverBounds(admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if ar.Request == nil {
			return admit(ar)
		}
		var over error
		if err := protect("bounding the cronjob "+ar.Request.Namespace+"/"+ar.Request.Name, func() {
			over = objectsOverBounds(ar.Request, "jobTemplate.", cronJobTemplateOverBounds)
		}); err == nil && over != nil {
			return denial(CronJobDenialPrefix + over.Error())
		}
		return admit(ar)
	}
}

// cronJobTemplateOverBounds returns the Job bounds that a CronJob's
// spec.jobTemplate.spec is over (paths from spec), or nil, also when raw does
// not read as a CronJob (Volcano's decoder says so).
func cronJobTemplateOverBounds(raw []byte) field.ErrorList {
	var view struct {
		Spec struct {
			JobTemplate struct {
				Spec jsonRaw `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &view); err != nil || len(view.Spec.JobTemplate.Spec) == 0 {
		return nil
	}
	// A Job of that spec: its name is not known (the CronJob's plus a
	// suffix), and the bounds take the longest where they need one.
	job := make([]byte, 0, len(view.Spec.JobTemplate.Spec)+9)
	job = append(append(append(job, `{"spec":`...), view.Spec.JobTemplate.Spec...), '}')
	errs, _ := overBounds(job)
	return errs
}

// jsonRaw keeps a JSON value as its bytes (json.RawMessage, for the
// decoders of sigs.k8s.io/json).
type jsonRaw []byte

func (r *jsonRaw) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// MaxHyperNodePatternBytes is the longest member regexMatch pattern of a
// HyperNode that Volcano's validation is given to compile: Go's regexp
// compiles about 130 bytes per byte of pattern (a 3 MiB pattern: 400 MB,
// 0.9 s); a pattern matching node names is tens of bytes.
const MaxHyperNodePatternBytes = 4096

// HyperNodesOverBounds wraps Volcano's HyperNode validation: a review whose
// object or oldObject (any operation) has a member pattern of more than
// MaxHyperNodePatternBytes is denied, naming it; every other review goes to
// admit.
func HyperNodesOverBounds(admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if ar.Request == nil {
			return admit(ar)
		}
		var over error
		if err := protect("bounding the hypernode "+ar.Request.Name, func() {
			over = objectsOverBounds(ar.Request, "", hyperNodeOverBounds)
		}); err == nil && over != nil {
			return denial("the hypernode is over the bounds vc-webhook-manager admits: " + over.Error())
		}
		return admit(ar)
	}
}

func hyperNodeOverBounds(raw []byte) field.ErrorList {
	var view struct {
		Spec struct {
			Members []struct {
				Selector struct {
					RegexMatch *struct {
						Pattern patternLength `json:"pattern"`
					} `json:"regexMatch"`
				} `json:"selector"`
			} `json:"members"`
		} `json:"spec"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &view); err != nil {
		return nil
	}
	var errs field.ErrorList
	for i, m := range view.Spec.Members {
		if r := m.Selector.RegexMatch; r != nil && r.Pattern > MaxHyperNodePatternBytes {
			errs = append(errs, field.TooLong(field.NewPath("spec", "members").Index(i).Child("selector", "regexMatch", "pattern"),
				fmt.Sprintf("%d bytes", int(r.Pattern)), MaxHyperNodePatternBytes))
		}
	}
	return errs
}

// patternLength reads a JSON string for its length in bytes as written (an
// escape counts its bytes: never less than the string's), without copying it.
type patternLength int

func (p *patternLength) UnmarshalJSON(b []byte) error {
	*p = patternLength(max(len(b)-2, 0))
	return nil
}

// MaxJobFlowPaths bounds the work of Volcano's JobFlow check that
// JobFlowsAnswered lets it do: its cycle check walks every path of the flows'
// dependency graph from every flow (exponential: layers of 2 flows, each
// depending on both of the next layer, double the paths with each layer;
// 48 flows took 2.3 s, 80 would take days).
const MaxJobFlowPaths = 100_000

// JobFlowsAnswered wraps Volcano's JobFlow validation so that its answer
// comes in time linear in the flows: a JobFlow whose dependency graph has a
// cycle is denied with Volcano's own message (jobflow Flow is not DAG), and
// one without a cycle but with more than MaxJobFlowPaths paths (what
// Volcano's check would walk) is allowed, as Volcano would allow it once done
// walking; every other review (among them a flow depending on a flow that is
// not defined, which Volcano reports first) goes to admit.
func JobFlowsAnswered(admit router.AdmitFunc) router.AdmitFunc {
	return func(ar admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
		if ar.Request == nil {
			return admit(ar)
		}
		if op := ar.Request.Operation; op != admissionv1.Create && op != admissionv1.Update {
			return admit(ar) // Volcano denies them after decoding (bounded)
		}
		var resp *admissionv1.AdmissionResponse
		if err := protect("checking the jobflow "+ar.Request.Namespace+"/"+ar.Request.Name, func() {
			graph, ok := jobFlowGraph(ar.Request.Object.Raw)
			if !ok {
				return
			}
			paths, acyclic := countPaths(graph)
			switch {
			case !acyclic:
				resp = &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: jobflowvalidate.FlowNotDAGError.Error()}}
			case paths > MaxJobFlowPaths:
				resp = &admissionv1.AdmissionResponse{Allowed: true}
			}
		}); err != nil || resp == nil {
			return admit(ar)
		}
		return resp
	}
}

// jobFlowGraph returns the dependency graph of a JobFlow's flows as
// Volcano's validation builds it (a later flow of the same name replaces an
// earlier one), and false when raw does not read as a JobFlow or a target is
// not a flow's name (Volcano's validation then answers, at no great cost).
func jobFlowGraph(raw []byte) (map[string][]string, bool) {
	var view struct {
		Spec struct {
			Flows []struct {
				Name      string `json:"name"`
				DependsOn *struct {
					Targets []string `json:"targets"`
				} `json:"dependsOn"`
			} `json:"flows"`
		} `json:"spec"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &view); err != nil {
		return nil, false
	}
	graph := make(map[string][]string, len(view.Spec.Flows))
	for _, f := range view.Spec.Flows {
		graph[f.Name] = nil
		if f.DependsOn != nil {
			graph[f.Name] = f.DependsOn.Targets
		}
	}
	for _, targets := range graph {
		for _, t := range targets {
			if _, ok := graph[t]; !ok {
				return nil, false
			}
		}
	}
	return graph, true
}

// countPaths returns the number of paths that Volcano's cycle check walks in
// an acyclic graph (from every vertex, every path along its edges, counted
// with their multiplicity; at most MaxJobFlowPaths+1: it stops counting
// there), and whether the graph is acyclic, in time linear in its vertices
// and edges.
func countPaths(graph map[string][]string) (paths int, acyclic bool) {
	const (
		unseen = iota
		open
		done
	)
	state := make(map[string]int, len(graph))
	// from[v] is the number of paths starting at v (v alone included),
	// capped.
	from := make(map[string]int, len(graph))
	capped := func(n int) int { return min(n, MaxJobFlowPaths+1) }
	// An explicit stack: a chain of 16,384 flows would go as deep.
	type frame struct {
		v    string
		next int
	}
	for root := range graph {
		if state[root] != unseen {
			continue
		}
		stack := []frame{{v: root}}
		state[root] = open
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			edges := graph[top.v]
			if top.next < len(edges) {
				w := edges[top.next]
				top.next++
				switch state[w] {
				case open:
					return 0, false
				case unseen:
					state[w] = open
					stack = append(stack, frame{v: w})
				}
				continue
			}
			n := 1
			for _, w := range edges {
				n = capped(n + from[w])
			}
			from[top.v] = n
			state[top.v] = done
			stack = stack[:len(stack)-1]
		}
	}
	for _, n := range from {
		paths = capped(paths + n)
	}
	return paths, true
}
