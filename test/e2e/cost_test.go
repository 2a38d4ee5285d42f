package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/events"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/webhook"
)

// The cost of one review (security review round 4: H1 to H4, M1, M2). The
// admission pods have a 1 GiB limit and every Volcano admission fails closed,
// so a review whose cost grows with the object's JSON takes the cluster's
// admissions down: each object below must be answered quickly and leave
// vc-webhook-manager small.
const (
	// costAnswerWithin bounds the answer to each object over a bound,
	// through the API server or straight to the manager.
	costAnswerWithin = 2 * time.Second
	// jobFlowAnswerWithin bounds the answer to the layered JobFlow (M2).
	jobFlowAnswerWithin = time.Second
	// costRSSGrowth bounds how much vc-webhook-manager's resident memory may
	// grow over a spec (VmRSS sampled every 10 ms, and VmHWM).
	costRSSGrowth = 200 << 20
	// costRequestTimeout ends a request whose answer is already far too late.
	costRequestTimeout = 15 * time.Second
	// directBudget bounds the sending of the direct reviews: a manager
	// without the bounds takes seconds per review, and the spec must end.
	directBudget = 5 * time.Minute
	// managerBackTimeout bounds waiting for a restarted manager to admit.
	managerBackTimeout = 90 * time.Second
)

// webhookManagerPID is the pid of the local cluster's vc-webhook-manager
// (0 on a KUBECONFIG cluster, where memory is not measured).
func webhookManagerPID() int {
	GinkgoHelper()
	return managerPID(localcluster.WebhookManager)
}

// managerPID is the pid of the local cluster's component name (0 on a
// KUBECONFIG cluster).
func managerPID(name string) int {
	GinkgoHelper()
	tc := framework.Cluster()
	if tc.Local == nil {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join(tc.Local.RootDir, "pids", name+".pid"))
	Expect(err).NotTo(HaveOccurred())
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	Expect(err).NotTo(HaveOccurred())
	return pid
}

// procStatus returns the field (VmRSS, VmHWM) of /proc/<pid>/status in bytes.
func procStatus(pid int, field string) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// rssWatch samples a process's VmRSS every 10 ms: VmHWM alone is the peak
// since the process began, which an earlier spec may have set.
type rssWatch struct {
	pid           int
	base, baseHWM int64
	peak          atomic.Int64
	// window is the peak since the last mark: which request raised it.
	window         atomic.Int64
	stop, finished chan struct{}
	once, printed  sync.Once
}

// watchRSS starts sampling pid (nothing for pid 0) until check.
func watchRSS(pid int) *rssWatch {
	GinkgoHelper()
	w := &rssWatch{pid: pid, stop: make(chan struct{}), finished: make(chan struct{})}
	if pid == 0 {
		close(w.finished)
		return w
	}
	var err error
	w.base, err = procStatus(pid, "VmRSS")
	Expect(err).NotTo(HaveOccurred(), "vc-webhook-manager (pid %d)", pid)
	w.baseHWM, err = procStatus(pid, "VmHWM")
	Expect(err).NotTo(HaveOccurred(), "vc-webhook-manager (pid %d)", pid)
	w.peak.Store(w.base)
	go func() {
		defer close(w.finished)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				if v, err := procStatus(pid, "VmRSS"); err == nil {
					if v > w.peak.Load() {
						w.peak.Store(v)
					}
					if v > w.window.Load() {
						w.window.Store(v)
					}
				}
			}
		}
	}()
	DeferCleanup(w.halt)
	return w
}

// mark starts a window: windowPeak then returns the peak VmRSS since.
func (w *rssWatch) mark() (rss int64) {
	if w.pid == 0 {
		return 0
	}
	if v, err := procStatus(w.pid, "VmRSS"); err == nil {
		w.window.Store(v)
		rss = v
	}
	return rss
}

func (w *rssWatch) windowPeak() int64 { return w.window.Load() }

func (w *rssWatch) halt() {
	w.once.Do(func() {
		if w.pid != 0 {
			close(w.stop)
		}
	})
	<-w.finished
}

// report stops sampling and prints the manager's memory, once; it returns
// the growths of the sampled peak VmRSS and of VmHWM, or an error when the
// manager is gone.
func (w *rssWatch) report() (rssGrowth, hwmGrowth int64, err error) {
	w.halt()
	if w.pid == 0 {
		return 0, 0, nil
	}
	rss, err := procStatus(w.pid, "VmRSS")
	if err != nil {
		return 0, 0, fmt.Errorf("vc-webhook-manager (pid %d) after the requests: did it die? %w", w.pid, err)
	}
	hwm, err := procStatus(w.pid, "VmHWM")
	if err != nil {
		return 0, 0, err
	}
	peak := max(w.peak.Load(), rss)
	w.printed.Do(func() {
		GinkgoWriter.Printf("vc-webhook-manager (pid %d): VmRSS %d MiB before, peak %d MiB, %d MiB after; VmHWM %d MiB before, %d MiB after\n",
			w.pid, w.base>>20, peak>>20, rss>>20, w.baseHWM>>20, hwm>>20)
	})
	return peak - w.base, hwm - w.baseHWM, nil
}

// check fails the spec when the manager is gone or its resident memory grew
// by costRSSGrowth or more since watchRSS.
func (w *rssWatch) check() {
	GinkgoHelper()
	if w.pid == 0 {
		GinkgoWriter.Printf("not a local cluster: vc-webhook-manager's memory is not measured\n")
		return
	}
	rss, hwm, err := w.report()
	Expect(err).NotTo(HaveOccurred())
	Expect(rss).To(BeNumerically("<", costRSSGrowth), "growth of vc-webhook-manager's VmRSS (peak of 10 ms samples) in MiB: %d", rss>>20)
	Expect(hwm).To(BeNumerically("<", costRSSGrowth), "growth of vc-webhook-manager's VmHWM in MiB: %d", hwm>>20)
}

// restartManagerIfFailed restarts vc-webhook-manager after a failed spec: a
// manager without the bounds may still be decoding (M2: for ever, on a
// core) or hold a grown heap, which would slow or fail the specs after it.
func restartManagerIfFailed(f *framework.Framework) {
	DeferCleanup(func(ctx SpecContext) {
		if !CurrentSpecReport().Failed() || framework.Cluster().Local == nil {
			return
		}
		framework.RestartComponent(localcluster.WebhookManager)
		probe := &batch.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: f.Namespace},
			Spec: batch.JobSpec{SchedulerName: "volcano", Queue: "default", MinAvailable: 1,
				Tasks: []batch.TaskSpec{kwokTask("t", "a", 1)}},
		}
		framework.Eventually(ctx, func(ctx context.Context) error {
			_, err := f.Volcano.BatchV1alpha1().Jobs(f.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}, managerBackTimeout).Should(Succeed(), "a Job admitted by the restarted vc-webhook-manager")
	}, NodeTimeout(managerBackTimeout+30*time.Second))
}

// emptyObjects returns a JSON array of empty objects of at most n bytes.
func emptyObjects(n int) []byte {
	k := max((n-4)/3, 0)
	b := make([]byte, 0, 3*k+4)
	b = append(b, '[')
	b = append(b, bytes.Repeat([]byte("{},"), k)...)
	return append(b, "{}]"...)
}

// longString returns a JSON string of n bytes.
func longString(n int) []byte {
	return append(append([]byte{'"'}, bytes.Repeat([]byte{'a'}, max(n-2, 0))...), '"')
}

// deepArrays returns arrays nested n/2 deep.
func deepArrays(n int) []byte {
	k := max(n/2, 1)
	return append(bytes.Repeat([]byte{'['}, k), bytes.Repeat([]byte{']'}, k)...)
}

// deepObjects returns objects {"a":{"a":...}} nested about n/6 deep.
func deepObjects(n int) []byte {
	k := max((n-2)/6, 0)
	b := bytes.Repeat([]byte(`{"a":`), k)
	b = append(b, "{}"...)
	return append(b, bytes.Repeat([]byte{'}'}, k)...)
}

// rawPost posts body to resource with dryRun=All (nothing is stored, also
// when it is admitted) and returns the answer and how long it took.
func rawPost(ctx context.Context, rc rest.Interface, namespace, resource string, body []byte) (time.Duration, error) {
	rctx, cancel := context.WithTimeout(ctx, costRequestTimeout)
	defer cancel()
	start := time.Now()
	err := rc.Post().Namespace(namespace).Resource(resource).Param("dryRun", metav1.DryRunAll).
		SetHeader("Content-Type", "application/json").Body(body).Do(rctx).Error()
	return time.Since(start), err
}

// costCase is an object sent through the API server.
type costCase struct {
	what     string
	flow     bool // a flow.volcano.sh object, else batch.volcano.sh
	resource string
	body     func(namespace string) []byte
	within   time.Duration
	// bound must match the denial; nil: allowed and cleanly denied both do.
	bound *regexp.Regexp
}

// cronJobOfEmptyTasks is H1's CronJob: 1.5 MiB, spec.jobTemplate.spec.tasks
// about 500,000 empty objects, which the CRD allows (no task field is
// required, tasks has no maxItems).
func cronJobOfEmptyTasks(namespace string) []byte {
	head := fmt.Sprintf(`{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"CronJob","metadata":{"name":"wide","namespace":%q},"spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"tasks":`, namespace)
	tail := `}}}}`
	return append(append([]byte(head), emptyObjects(1536<<10-len(head)-len(tail))...), tail...)
}

// cronJobOfTasks is a CronJob whose jobTemplate has n valid tasks.
func cronJobOfTasks(n int) func(string) []byte {
	return func(namespace string) []byte {
		tasks := make([]string, n)
		for i := range tasks {
			tasks[i] = fmt.Sprintf(`{"name":"t%d","replicas":1,"template":{"spec":{"containers":[{"name":"a","image":"b"}]}}}`, i)
		}
		return fmt.Appendf(nil, `{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"CronJob","metadata":{"name":"tasks","namespace":%q},`+
			`"spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"minAvailable":1,"tasks":[%s]}}}}`, namespace, strings.Join(tasks, ","))
	}
}

// replicasJob is H3's and H4's Job: one task of a minimal template.
func replicasJob(name string, plugins string, replicas int) func(string) []byte {
	return func(namespace string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":%q,"namespace":%q},`+
			`"spec":{"plugins":%s,"minAvailable":1,"tasks":[{"name":"t","replicas":%d,"minAvailable":1,`+
			`"template":{"spec":{"containers":[{"name":"a","image":"b"}]}}}]}}`, name, namespace, plugins, replicas)
	}
}

// layeredJobFlow is M2's JobFlow: layers of 2 flows, each depending on both
// flows of the next layer, so that a search of every path from a flow takes
// 2^(layers) steps.
func layeredJobFlow(flows int) func(string) []byte {
	return func(namespace string) []byte {
		name := func(i int) string { return fmt.Sprintf("f%02d", i) }
		list := make([]map[string]any, flows)
		for i := range list {
			list[i] = map[string]any{"name": name(i)}
			if next := (i/2 + 1) * 2; next+1 < flows {
				list[i]["dependsOn"] = map[string]any{"targets": []string{name(next), name(next + 1)}}
			}
		}
		b, err := json.Marshal(map[string]any{
			"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
			"metadata": map[string]any{"name": "layered", "namespace": namespace},
			"spec":     map[string]any{"flows": list},
		})
		Expect(err).NotTo(HaveOccurred())
		return b
	}
}

// namesBound matches a message that gives the limit: the number, as
// "at most N" or "more than N" and the like do.
func namesBound(numbers ...int) *regexp.Regexp {
	alts := make([]string, len(numbers))
	for i, n := range numbers {
		alts[i] = strconv.Itoa(n)
	}
	return regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\b`)
}

var _ = Describe("The cost of objects over the bounds, through the real kube-apiserver", Serial, func() {
	f := framework.New("cost")

	cases := []costCase{{
		what:     "(a) a 1.5 MiB CronJob whose jobTemplate has ~500,000 empty tasks (H1) is denied within 2 s, naming the tasks bound",
		resource: "cronjobs", body: cronJobOfEmptyTasks, within: costAnswerWithin,
		// The first bound over may be the Job's tasks bound or a list
		// bound of any object; either is named with its limit.
		bound: regexp.MustCompile(`(?s)tasks.*\b(at most|more than) [0-9]`),
	}, {
		// Not in the review's list: H1's fix holds a CronJob's jobTemplate to
		// the Job bounds, which (a), over every bound, cannot tell apart.
		what:     "(a') a CronJob whose jobTemplate has one task more than a Job may (H1's fix: the Job bounds) is denied within 2 s, naming the tasks bound",
		resource: "cronjobs", body: cronJobOfTasks(bounds.MaxTasks + 1), within: costAnswerWithin,
		bound: regexp.MustCompile(`(?s)tasks.*\b` + strconv.Itoa(bounds.MaxTasks) + `\b`),
	}, {
		what:     "(b) a Job of 3,000,000 replicas with svc and ssh (H3) is denied within 2 s, naming the replicas or pod-template bound",
		resource: "jobs", body: replicasJob("replicas-3m", `{"svc":[],"ssh":[]}`, 3_000_000), within: costAnswerWithin,
		bound: namesBound(bounds.MaxReplicas, bounds.MaxPodTemplateBytes),
	}, {
		// H3 without the plugins, whose own size checks could deny it
		// instead: only the Job-wide bound can.
		what:     "(b') a Job of 3,000,000 replicas and no plugin (H3) is denied within 2 s, naming the replicas or pod-template bound",
		resource: "jobs", body: replicasJob("replicas-3m-plain", `{}`, 3_000_000), within: costAnswerWithin,
		bound: namesBound(bounds.MaxReplicas, bounds.MaxPodTemplateBytes),
	}, {
		// 40,000 hosts would make a ~3 MB ssh config, over the 1 MiB of a
		// Secret: no longer a denial, as the controller writes one entry
		// per task past MaxSSHConfigBytes (pkg/guard); a dry run.
		what:     "(c) a Job of 40,000 replicas with ssh (H4) is answered within 2 s",
		resource: "jobs", body: replicasJob("ssh-40k", `{"ssh":[]}`, 40_000), within: costAnswerWithin,
	}, {
		what: "(d) a JobFlow of 60 flows in layers of 2, each depending on both of the next layer (M2), is answered within 1 s",
		flow: true, resource: "jobflows", body: layeredJobFlow(60), within: jobFlowAnswerWithin,
	}}
	for _, c := range cases {
		It(c.what+", and vc-webhook-manager's memory grows by less than 200 MiB", func(ctx SpecContext) {
			restartManagerIfFailed(f)
			rc := f.Volcano.BatchV1alpha1().RESTClient()
			if c.flow {
				rc = f.Volcano.FlowV1alpha1().RESTClient()
			}
			body := c.body(f.Namespace)
			// The API server's own part (decoding, schema, managed fields),
			// for the record: the webhooks skip kube-system.
			ctrlTook, ctrl := rawPost(ctx, rc, "kube-system", c.resource, c.body("kube-system"))
			GinkgoWriter.Printf("control: the same object in kube-system (no Volcano webhook) answered in %v: %.200v\n", ctrlTook.Round(time.Millisecond), ctrl)

			w := watchRSS(webhookManagerPID())
			took, err := rawPost(ctx, rc, f.Namespace, c.resource, body)
			GinkgoWriter.Printf("%d bytes answered in %v (%v more than the control): %.600v\n", len(body), took.Round(time.Millisecond),
				(took - ctrlTook).Round(time.Millisecond), err)
			_, _, _ = w.report() // printed before any assertion fails
			if c.bound != nil {
				Expect(err).To(HaveOccurred(), "the object was admitted")
			}
			if err != nil {
				problem, deniedBy := cleanDenial(err)
				Expect(problem).To(BeEmpty(), "the answer is a clean denial, not a failed call")
				GinkgoWriter.Printf("denied by %s\n", deniedBy)
				if c.bound != nil {
					Expect(err.Error()).To(MatchRegexp(c.bound.String()), "the denial names the bound")
				}
			}
			// The webhooks' part: the API server alone (decoding, schema
			// and managed fields of the same object, in kube-system, which
			// the webhooks skip) took 3.6 to 6.2 s for (a)'s 524,000 empty
			// tasks on the 2-core CI machine, more than the whole budget.
			Expect(took-ctrlTook).To(BeNumerically("<", c.within), "time to the API server's answer beyond the API server's own (%v in all, %v without the webhooks)", took, ctrlTook)
			w.check()
		}, SpecTimeout(framework.SpecTimeout))
	}
})

// costKind is what the direct reviews send for the resource of a path.
type costKind struct {
	group, version, kind, resource string
	namespaced                     bool
	// array and str are the object's fields (JSON after the metadata, with
	// FILL for the adversarial value): a list of structs the handler
	// decodes, and a string it reads.
	array, str string
}

// costKinds are the resources of Volcano's admissions by the path's first
// segment; a path of another resource fails the spec until it is added.
var costKinds = map[string]costKind{
	"jobs": {"batch.volcano.sh", "v1alpha1", "Job", "jobs", true,
		`"spec":{"minAvailable":1,"tasks":FILL}`,
		`"spec":{"minAvailable":1,"tasks":[{"name":FILL,"replicas":1,"template":{"spec":{"containers":[{"name":"a","image":"b"}]}}}]}`},
	"cronjobs": {"batch.volcano.sh", "v1alpha1", "CronJob", "cronjobs", true,
		`"spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"tasks":FILL}}}`,
		`"spec":{"schedule":FILL,"jobTemplate":{"spec":{"tasks":[{"name":"t","replicas":1}]}}}`},
	"podgroups": {"scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups", true,
		`"spec":{"minMember":1},"status":{"conditions":FILL}`,
		`"spec":{"minMember":1,"queue":FILL}`},
	"queues": {"scheduling.volcano.sh", "v1beta1", "Queue", "queues", false,
		`"spec":{"weight":1,"extendClusters":FILL}`,
		`"spec":{"weight":1,"parent":FILL}`},
	"hypernodes": {"topology.volcano.sh", "v1alpha1", "HyperNode", "hypernodes", false,
		`"spec":{"tier":1,"members":FILL}`,
		`"spec":{"tier":1,"members":[{"type":"Node","selector":{"regexMatch":{"pattern":FILL}}}]}`},
	"jobflows": {"flow.volcano.sh", "v1alpha1", "JobFlow", "jobflows", true,
		`"spec":{"flows":FILL}`,
		`"spec":{"flows":[{"name":FILL,"dependsOn":{"targets":["b"]}},{"name":"b"}]}`},
	"pods": {"", "v1", "Pod", "pods", true,
		`"spec":{"schedulerName":"volcano","containers":FILL}`,
		`"spec":{"schedulerName":"volcano","containers":[{"name":FILL,"image":"b"}]}`},
}

// costShape is one adversarial value and where it goes.
type costShape struct {
	name  string
	where func(k costKind) string
	fill  func(n int) []byte
}

var costShapes = []costShape{
	{"empty objects in the kind's list", func(k costKind) string { return k.array }, emptyObjects},
	{"empty objects in metadata.ownerReferences", func(costKind) string { return `"metadata":{"name":"cost","ownerReferences":FILL}` }, emptyObjects},
	{"a long string", func(k costKind) string { return k.str }, longString},
	{"arrays nested deep in the kind's list", func(k costKind) string { return k.array }, deepArrays},
	{"objects nested deep in spec", func(costKind) string { return `"spec":{"x":FILL}` }, deepObjects},
}

// costOp is an operation and where the adversarial object goes: object,
// oldObject (the API server's DELETE and UPDATE carry it), or both ways for a
// direct caller, who sends what it likes.
type costOp struct {
	name      string
	op        admissionv1.Operation
	objectAdv bool // else the adversarial object is the oldObject
	smallNew  bool // object is a small object of the kind (UPDATE)
}

var costOps = []costOp{
	{"CREATE", admissionv1.Create, true, false},
	{"UPDATE (huge oldObject)", admissionv1.Update, false, true},
	{"DELETE (huge object)", admissionv1.Delete, true, false},
	{"DELETE (huge oldObject)", admissionv1.Delete, false, false},
	{"CONNECT", admissionv1.Connect, true, false},
}

// directReview returns an AdmissionReview of size bytes at most (its
// adversarial value filling what the rest leaves) and its uid.
func directReview(path string, k costKind, s costShape, o costOp, namespace string, size int, seq int) ([]byte, string) {
	uid := fmt.Sprintf("cost-%06d", seq)
	ns := ""
	if k.namespaced {
		ns = namespace
	}
	object := func(body string) string {
		meta := fmt.Sprintf(`"metadata":{"name":"cost","namespace":%q}`, ns)
		if strings.HasPrefix(body, `"metadata":{`) {
			meta = ""
			body = `"metadata":{` + fmt.Sprintf(`"namespace":%q,`, ns) + strings.TrimPrefix(body, `"metadata":{`)
		} else {
			meta += ","
		}
		return fmt.Sprintf(`{"apiVersion":%q,"kind":%q,%s%s}`, strings.TrimPrefix(k.group+"/"+k.version, "/"), k.kind, meta, body)
	}
	adv := object(s.where(k))
	small := object(`"spec":{}`)
	newObj, oldObj := "null", "null"
	if o.objectAdv {
		newObj = adv
	} else {
		oldObj = adv
		if o.smallNew {
			newObj = small
		}
	}
	gvk := fmt.Sprintf(`{"group":%q,"version":%q,"kind":%q}`, k.group, k.version, k.kind)
	gvr := fmt.Sprintf(`{"group":%q,"version":%q,"resource":%q}`, k.group, k.version, k.resource)
	review := fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":%q,"kind":%s,"resource":%s,"requestKind":%s,"requestResource":%s,"name":"cost","namespace":%q,"operation":%q,"userInfo":{"username":"e2e-cost"},"object":%s,"oldObject":%s}}`,
		uid, gvk, gvr, gvk, gvr, ns, o.op, newObj, oldObj)
	before, after, ok := strings.Cut(review, "FILL")
	Expect(ok).To(BeTrue(), "%s: no FILL in %s", path, s.where(k))
	fill := s.fill(size - len(before) - len(after))
	out := make([]byte, 0, len(before)+len(fill)+len(after))
	out = append(append(append(out, before...), fill...), after...)
	return out, uid
}

// The manager's port takes reviews from any pod (no client authentication, no
// NetworkPolicy by default), so it is called here as a pod could (H2): the
// API server would never send most of these.
var _ = Describe("Adversarial AdmissionReviews straight to vc-webhook-manager's port", Serial, func() {
	f := framework.New("cost-direct")

	It("are each answered within 2 s with no 5xx, 413 only over the path's cap (3 MiB, 6 MiB on ours), on every served path and operation, and its memory grows by less than 200 MiB",
		func(ctx SpecContext) {
			tc := framework.Cluster()
			if tc.Local == nil {
				Skip("KUBECONFIG cluster: the webhook manager's address is not known to the suite")
			}
			restartManagerIfFailed(f)
			var enabled string
			for _, c := range tc.Local.Components {
				if c.Name != localcluster.WebhookManager {
					continue
				}
				for i, a := range c.Args {
					if a == "--enabled-admission" && i+1 < len(c.Args) {
						enabled = c.Args[i+1]
					} else if v, ok := strings.CutPrefix(a, "--enabled-admission="); ok {
						enabled = v
					}
				}
			}
			Expect(enabled).NotTo(BeEmpty(), "--enabled-admission of %s", localcluster.WebhookManager)
			paths := append(strings.Split(enabled, ","), webhook.MutatePath, webhook.ValidatePath)
			GinkgoWriter.Printf("paths: %s\n", strings.Join(paths, " "))

			ca, err := os.ReadFile(filepath.Join(tc.Local.RootDir, "pki", "ca.crt"))
			Expect(err).NotTo(HaveOccurred())
			pool := x509.NewCertPool()
			Expect(pool.AppendCertsFromPEM(ca)).To(BeTrue())
			transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
			DeferCleanup(transport.CloseIdleConnections)
			client := &http.Client{Transport: transport, Timeout: costRequestTimeout}
			base := fmt.Sprintf("https://127.0.0.1:%d", tc.Local.Ports[localcluster.WebhookManager])

			type result struct {
				status int
				took   time.Duration
				err    error
				review *admissionv1.AdmissionReview
			}
			send := func(ctx context.Context, path string, body []byte) result {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
				Expect(err).NotTo(HaveOccurred())
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					return result{took: time.Since(start), err: err}
				}
				defer resp.Body.Close()
				raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
				r := result{status: resp.StatusCode, took: time.Since(start), err: err}
				if err == nil && resp.StatusCode == http.StatusOK {
					var ar admissionv1.AdmissionReview
					if json.Unmarshal(raw, &ar) == nil {
						r.review = &ar
					}
				}
				return r
			}

			var problems []string
			// The manager's peak VmRSS while each review was answered, to
			// tell which raise it.
			type reviewPeak struct {
				what        string
				before, rss int64
			}
			var peaks []reviewPeak
			statuses := map[string]int{}
			var slowest time.Duration
			slowestWhat := ""
			sent, seq := 0, 0
			w := watchRSS(webhookManagerPID())
			start := time.Now()
			kindOf := func(path string) costKind {
				first := strings.Split(strings.TrimPrefix(path, "/"), "/")[0]
				k, ok := costKinds[first]
				Expect(ok).To(BeTrue(), "no costKinds entry for the resource of %s: add one", path)
				return k
			}
		sending:
			for _, path := range paths {
				k := kindOf(path)
				// Our own paths take the larger review of an UPDATE the API
				// server may send (object and oldObject).
				limit := webhook.VolcanoMaxBody
				if path == webhook.MutatePath || path == webhook.ValidatePath {
					limit = webhook.MaxReviewBytes
				}
				for _, s := range costShapes {
					for _, o := range costOps {
						if time.Since(start) > directBudget {
							problems = append(problems, fmt.Sprintf("stopped after %d reviews: sending took over %v", sent, directBudget))
							break sending
						}
						seq++
						body, uid := directReview(path, k, s, o, f.Namespace, limit-1024, seq)
						what := fmt.Sprintf("%s %s, %s (%d bytes)", path, o.name, s.name, len(body))
						before := w.mark()
						r := send(ctx, path, body)
						sent++
						peaks = append(peaks, reviewPeak{what, before, w.windowPeak()})
						if r.took > slowest {
							slowest, slowestWhat = r.took, what
						}
						switch {
						case r.err != nil:
							statuses["no answer"]++
							problems = append(problems, fmt.Sprintf("%s: no answer after %v: %v", what, r.took.Round(time.Millisecond), r.err))
							continue
						case r.status >= 500 || r.status == http.StatusRequestEntityTooLarge || r.status == http.StatusTooManyRequests:
							problems = append(problems, fmt.Sprintf("%s: HTTP %d within the cap", what, r.status))
						case r.status == http.StatusOK && (r.review == nil || r.review.Response == nil):
							problems = append(problems, fmt.Sprintf("%s: HTTP 200 without an AdmissionReview response", what))
						case r.status == http.StatusOK && r.review.Response.UID != "" && string(r.review.Response.UID) != uid:
							problems = append(problems, fmt.Sprintf("%s: answered for uid %s, sent %s", what, r.review.Response.UID, uid))
						}
						key := strconv.Itoa(r.status)
						if r.review != nil && r.review.Response != nil {
							key += map[bool]string{true: " allowed", false: " denied"}[r.review.Response.Allowed]
						}
						statuses[key]++
						if r.took >= costAnswerWithin {
							problems = append(problems, fmt.Sprintf("%s: answered in %v", what, r.took.Round(time.Millisecond)))
						}
					}
				}
				// Over the cap: refused as too large, before any decoding.
				seq++
				body, _ := directReview(path, k, costShapes[0], costOps[0], f.Namespace, limit+64<<10, seq)
				what := fmt.Sprintf("%s CREATE over the cap (%d bytes)", path, len(body))
				before := w.mark()
				r := send(ctx, path, body)
				sent++
				peaks = append(peaks, reviewPeak{what, before, w.windowPeak()})
				switch {
				case r.err != nil:
					// A server may answer 413 and close before the rest is sent.
					statuses["over the cap: no answer"]++
					problems = append(problems, fmt.Sprintf("%s: no answer after %v: %v", what, r.took.Round(time.Millisecond), r.err))
				case r.status != http.StatusRequestEntityTooLarge:
					statuses["over the cap: "+strconv.Itoa(r.status)]++
					problems = append(problems, fmt.Sprintf("%s: HTTP %d, want 413", what, r.status))
				default:
					statuses["over the cap: 413"]++
				}
				if r.took >= costAnswerWithin {
					problems = append(problems, fmt.Sprintf("%s: answered in %v", what, r.took.Round(time.Millisecond)))
				}
			}
			GinkgoWriter.Printf("%d reviews in %v; answers: %s; slowest %v (%s)\n", sent, time.Since(start).Round(time.Millisecond),
				counts(statuses), slowest.Round(time.Millisecond), slowestWhat)
			for _, p := range problems {
				GinkgoWriter.Printf("problem: %s\n", p)
			}
			if w.pid != 0 {
				sort.SliceStable(peaks, func(i, j int) bool { return peaks[i].rss-peaks[i].before > peaks[j].rss-peaks[j].before })
				for _, p := range peaks[:min(len(peaks), 15)] {
					GinkgoWriter.Printf("VmRSS %4d MiB -> peak %4d MiB (%+d MiB) while answering %s\n", p.before>>20, p.rss>>20, (p.rss-p.before)>>20, p.what)
				}
			}
			shown := problems
			if len(shown) > 60 {
				shown = append(shown[:60:60], fmt.Sprintf("... and %d more (all above)", len(problems)-60))
			}
			_, _, _ = w.report() // printed before any assertion fails
			Expect(len(problems)).To(BeZero(), "%d of %d reviews:\n%s", len(problems), sent, strings.Join(shown, "\n"))
			w.check()
		}, SpecTimeout(directBudget+2*time.Minute))
})

// M1: ownership by UID alone. A co-tenant who may create Secrets in the
// Job's namespace, and reads its UID from the conflict, forges a controller
// reference with that UID under other coordinates; the ssh plugin must still
// refuse the Secret, and the Job's pods must not mount the co-tenant's keys.
var _ = Describe("A Secret of the ssh plugin's name with a forged controller reference", func() {
	f := framework.New("forged")

	It("is not adopted: the Job gets a PluginObjectConflict event for it, the Secret is not written and no pod mounts it", func(ctx SpecContext) {
		const name = "train"
		secretName := name + "-ssh"
		secrets := f.Kube.CoreV1().Secrets(f.Namespace)
		// What Volcano's ssh plugin generates for this Job (one host, port 22),
		// so that a plugin that adopts the Secret keeps it as it is.
		config := "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n" +
			"Host " + name + "-t-0\n  HostName " + name + "-t-0." + name + "\n  Port 22\n"
		_, err := secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secretName, Labels: map[string]string{"owner": "co-tenant"}},
			Data: map[string][]byte{"config": []byte(config), "id_rsa": []byte("the co-tenant's private key"),
				"id_rsa.pub": []byte("the co-tenant's public key"), "authorized_keys": []byte("the co-tenant's public key")},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		job := f.CreateJob(ctx, &batch.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: batch.JobSpec{
				SchedulerName: "volcano", Queue: "default", MinAvailable: 1,
				Plugins: map[string][]string{"ssh": {}},
				Tasks:   []batch.TaskSpec{kwokTask("t", "a", 1)},
			},
		})
		DeferCleanup(f.DeleteJobAndPods, job)
		conflict := func(ctx context.Context) bool {
			for _, e := range f.Events(ctx, events.ReasonObjectConflict) {
				if e.InvolvedObject.Name == name && e.InvolvedObject.UID == job.UID &&
					strings.Contains(e.Message, "Secret "+f.Namespace+"/"+secretName) {
					return true
				}
			}
			return false
		}
		By("waiting for the conflict over the co-tenant's plain Secret, which tells the Job's UID")
		framework.Eventually(ctx, conflict, framework.ObjectCreatedTimeout).Should(BeTrue(),
			"a PluginObjectConflict event on Job %s naming Secret %s", name, secretName)

		By("forging a controller reference with the Job's UID under another kind, and clearing the event")
		yes := true
		cur, err := secrets.Get(ctx, secretName, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		cur.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.invalid/v1", Kind: "Decoy", Name: "x", UID: job.UID, Controller: &yes}}
		forged, err := secrets.Update(ctx, cur, metav1.UpdateOptions{})
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			// An admission policy that refuses the forgery also keeps the
			// Secret from being adopted; the rest still holds.
			GinkgoWriter.Printf("the forged reference was refused: %v\n", err)
			forged, err = secrets.Get(ctx, secretName, metav1.GetOptions{})
		}
		Expect(err).NotTo(HaveOccurred())
		for _, e := range f.Events(ctx, events.ReasonObjectConflict) {
			Expect(f.Kube.CoreV1().Events(f.Namespace).Delete(ctx, e.Name, metav1.DeleteOptions{})).To(Succeed())
		}

		mounting := func() []string {
			var out []string
			for _, p := range f.PodsOf(job) {
				for _, v := range p.Spec.Volumes {
					if v.Secret != nil && v.Secret.SecretName == secretName {
						out = append(out, p.Name)
					}
					if v.Projected != nil {
						for _, s := range v.Projected.Sources {
							if s.Secret != nil && s.Secret.Name == secretName {
								out = append(out, p.Name)
							}
						}
					}
				}
			}
			return out
		}
		adopted := func(ctx context.Context) error {
			if pods := mounting(); len(pods) > 0 {
				return fmt.Errorf("pods %v mount Secret %s", pods, secretName)
			}
			s, err := secrets.Get(ctx, secretName, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("Secret %s: %w", secretName, err)
			}
			if s.ResourceVersion != forged.ResourceVersion {
				return fmt.Errorf("Secret %s was written (resourceVersion %s, forged at %s)", secretName, s.ResourceVersion, forged.ResourceVersion)
			}
			return nil
		}
		// Volcano retries the failed sync at 5 ms doubling (15 times, about
		// 160 s in all): the next tries, within the minute, read the forged
		// Secret.
		By("waiting for the Job's next sync to refuse the Secret again")
		framework.Eventually(ctx, func(ctx context.Context) error {
			if err := adopted(ctx); err != nil {
				return StopTrying("the Secret was adopted: " + err.Error())
			}
			if !conflict(ctx) {
				return errors.New("no PluginObjectConflict event naming the Secret since the forgery")
			}
			return nil
		}, time.Minute).Should(Succeed())
		framework.Consistently(ctx, adopted, 10*time.Second).Should(Succeed())
		GinkgoWriter.Printf("pods of %s: %v\n", name, framework.PodNames(f.PodsOf(job)))
	}, SpecTimeout(framework.SpecTimeout))
})
