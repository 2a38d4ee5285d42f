package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/webhook"
)

// The scale jobs must be what both controllers run: valid arguments for this
// project's plugins, the pod count asked for and a gang of all pods.
func TestScaleJob(t *testing.T) {
	for _, fw := range []string{TensorFlow, MPI} {
		job, err := scaleJob(fw, 2000, ImplOurs)
		if err != nil {
			t.Fatal(err)
		}
		total := int32(0)
		for _, task := range job.Spec.Tasks {
			total += task.Replicas
		}
		if total != 2000 || job.Spec.MinAvailable != 2000 {
			t.Errorf("%s: %d pods, minAvailable %d; want 2000 and 2000", fw, total, job.Spec.MinAvailable)
		}
		var errs field.ErrorList
		switch fw {
		case TensorFlow:
			_, errs = tensorflow.ParseArgs(job.Spec.Plugins[fw], job)
		case MPI:
			_, errs = mpi.ParseArgs(job.Spec.Plugins[fw], job)
		}
		if len(errs) > 0 {
			t.Errorf("%s: our plugin refuses the arguments: %v", fw, errs.ToAggregate())
		}
		if _, ok := job.Spec.Plugins["svc"]; !ok {
			t.Errorf("%s: no svc plugin", fw)
		}
	}
	if _, err := scaleJob("mxnet", 10, ImplOurs); err == nil {
		t.Error("scaleJob(mxnet): no error")
	}
	if _, err := scaleJob(MPI, 1, ImplOurs); err == nil {
		t.Error("scaleJob with 1 pod: no error")
	}
}

func TestReport(t *testing.T) {
	s := time.Second
	ms := []Measurement{
		{Impl: ImplStock, Round: 1, Framework: TensorFlow, Pods: 2000, Created: 10 * s, Bound: 20 * s, CPUToBound: 10 * s, CPUTotal: 12 * s},
		{Impl: ImplOurs, Round: 1, Framework: TensorFlow, Pods: 2000, Created: 9 * s, Bound: 20 * s, CPUToBound: 5 * s, CPUTotal: 6 * s},
		{Impl: ImplStock, Round: 2, Framework: TensorFlow, Pods: 2000, Created: 12 * s, Bound: 22 * s, CPUToBound: 12 * s, CPUTotal: 14 * s},
		{Impl: ImplOurs, Round: 2, Framework: TensorFlow, Pods: 2000, Created: 9 * s, Bound: 22 * s, CPUToBound: 7 * s, CPUTotal: 8 * s},
		// mpi: bound 1.10 fails, cpu 1.04 holds.
		{Impl: ImplStock, Round: 1, Framework: MPI, Pods: 2000, Created: 10 * s, Bound: 10 * s, CPUToBound: 10 * s, CPUTotal: 10 * s},
		{Impl: ImplOurs, Round: 1, Framework: MPI, Pods: 2000, Created: 10 * s, Bound: 11 * s, CPUToBound: 10400 * time.Millisecond, CPUTotal: 10 * s, SchedulerWrotePods: 1999},
	}
	var out strings.Builder
	failed := report(&out, ms, targetRatio)
	if diff := cmp.Diff([]string{"mpi bound ratio 1.100 > 1.05"}, failed); diff != "" {
		t.Errorf("failed targets (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		// tensorflow medians: stock bound (20+22)/2 = 21, ours cpu to bound 6.
		"tensorflow  stock       2    11.00  21.00         11.00      13.00",
		"tensorflow    0.818  1.000         0.545      0.538   yes",
		"mpi    1.000  1.100         1.040      1.000    NO",
		// Each round, with the pods vc-scheduler marked unschedulable.
		"mpi ours 1 11.00 10.00 1999",
		"tensorflow stock 2 22.00 14.00 0",
	} {
		// Column widths are tabwriter's business; compare the words.
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	// kube-apiserver RSS growth of the TensorFlow job, ours: at most 1.2×
	// the PyTorch job's with ours; the MPI job's and stock's are only shown.
	for _, c := range []struct {
		ours   int64
		failed []string
	}{
		{240 << 20, nil},
		{241 << 20, []string{"tensorflow kube-apiserver RSS growth ours 241MiB > 1.2× the pytorch job's 200MiB"}},
	} {
		rss := []Measurement{
			{Impl: ImplStock, Round: 1, Framework: TensorFlow, Pods: 2000, Bound: s, CPUTotal: s, APIServerRSSGrowth: 500 << 20},
			{Impl: ImplOurs, Round: 1, Framework: TensorFlow, Pods: 2000, Bound: s, CPUTotal: s, APIServerRSSGrowth: c.ours},
			{Impl: ImplOurs, Round: 1, Framework: PyTorch, Pods: 2000, Bound: s, CPUTotal: s, APIServerRSSGrowth: 200 << 20},
			{Impl: ImplOurs, Round: 1, Framework: MPI, Pods: 2000, Bound: s, CPUTotal: s, APIServerRSSGrowth: 100 << 20},
		}
		out.Reset()
		if diff := cmp.Diff(c.failed, report(&out, rss, targetRatio)); diff != "" {
			t.Errorf("RSS growth %d: failed targets (-want +got):\n%s", c.ours, diff)
		}
	}

	// TF_CONFIG in etcd, ours: at most 1 MiB per job and 2,000 B in any pod;
	// stock's (inline, in every pod) is shown but not checked.
	for _, c := range []struct {
		job    int64
		pod    int
		failed []string
	}{
		{1 << 20, 2000, nil},
		{1<<20 + 1, 2000, []string{"TF_CONFIG bytes stored per tensorflow job 1048577 B > 1048576 B"}},
		{1 << 20, 2001, []string{"TF_CONFIG bytes stored in the largest tensorflow pod 2001 B > 2000 B"}},
	} {
		tf := []Measurement{
			{Impl: ImplStock, Round: 1, Framework: TensorFlow, Pods: 2000, Bound: s, CPUTotal: s,
				StoredPodBytes: 200 << 20, StoredPodMedian: 100_000, StoredPodMax: 100_500, TFConfigBytes: 190 << 20, TFConfigPodMax: 98_000},
			{Impl: ImplOurs, Round: 1, Framework: TensorFlow, Pods: 2000, Bound: s, CPUTotal: s,
				StoredPodBytes: 16 << 20, StoredPodMedian: 8_500, StoredPodMax: 9_400, TFConfigBytes: c.job, TFConfigPodMax: c.pod},
		}
		out.Reset()
		if diff := cmp.Diff(c.failed, report(&out, tf, targetRatio)); diff != "" {
			t.Errorf("TF_CONFIG %d B per job, %d B per pod: failed targets (-want +got):\n%s", c.job, c.pod, diff)
		}
		for _, want := range []string{
			"tensorflow stock 200MiB 100000B 100500B 194560KiB 98000B",
			fmt.Sprintf("tensorflow ours 16MiB 8500B 9400B %dKiB %dB", c.job>>10, c.pod),
		} {
			if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
				t.Errorf("report lacks %q:\n%s", want, out.String())
			}
		}
	}

	// One implementation only: medians, no ratio, nothing fails.
	out.Reset()
	if failed := report(&out, ms[4:5], targetRatio); len(failed) != 0 {
		t.Errorf("one impl: failed %v", failed)
	}
}

// wroteStatus finds a manager's write of the status subresource only.
func TestWroteStatus(t *testing.T) {
	entry := func(manager, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource}
	}
	for _, c := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"no entries", nil, false},
		{"spec only", []metav1.ManagedFieldsEntry{entry("vc-controller-manager", "")}, false},
		{"scheduler's spec", []metav1.ManagedFieldsEntry{entry("vc-scheduler", "")}, false},
		{"another manager's status", []metav1.ManagedFieldsEntry{entry("kwok", "status")}, false},
		{"scheduler's status", []metav1.ManagedFieldsEntry{entry("vc-controller-manager", ""), entry("kwok", "status"), entry("vc-scheduler", "status")}, true},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ManagedFields: c.entries}}
		if got := wroteStatus(pod, localcluster.Scheduler); got != c.want {
			t.Errorf("%s: wroteStatus = %v, want %v", c.name, got, c.want)
		}
	}
}

// unschedulable reads only a PodScheduled=False condition.
func TestUnschedulable(t *testing.T) {
	cond := func(typ corev1.PodConditionType, status corev1.ConditionStatus, reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: status, Reason: reason, Message: "m"}
	}
	for _, c := range []struct {
		conds []corev1.PodCondition
		want  string
	}{
		{nil, ""},
		{[]corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue, "")}, ""},
		{[]corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse, "NotReady")}, ""},
		{[]corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse, "NotReady"), cond(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable")}, "Unschedulable: m"},
	} {
		pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: c.conds}}
		got := ""
		if reason, msg, ok := unschedulable(pod); ok {
			got = reason + ": " + msg
		}
		if got != c.want {
			t.Errorf("conditions %v: unschedulable = %q, want %q", c.conds, got, c.want)
		}
	}
}

// ours-inline runs the TensorFlow job only and stock-wait the PyTorch job
// only: 8 clusters a round with the defaults.
func TestRuns(t *testing.T) {
	got := map[string][]string{}
	for _, fw := range []string{TensorFlow, MPI, PyTorch} {
		for _, impl := range []string{ImplStock, ImplStockWait, ImplOurs, ImplOursInline} {
			if runs(impl, fw) {
				got[fw] = append(got[fw], impl)
			}
		}
	}
	want := map[string][]string{
		TensorFlow: {ImplStock, ImplOurs, ImplOursInline},
		MPI:        {ImplStock, ImplOurs},
		PyTorch:    {ImplStock, ImplStockWait, ImplOurs},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("impls per job (-want +got):\n%s", diff)
	}
}

// The job of each impl carries its arguments: stock-wait's PyTorch job
// --wait-master-enabled (which gives the in-tree plugin's workers its wait
// container), ours-inline's TensorFlow job --tf-config=inline; no other.
func TestScaleJobImplArgs(t *testing.T) {
	for _, c := range []struct {
		fw, impl string
		want     []string
	}{
		{PyTorch, ImplStockWait, []string{"--master=master", "--worker=worker", "--port=23456", "--wait-master-enabled"}},
		{PyTorch, ImplStock, []string{"--master=master", "--worker=worker", "--port=23456"}},
		{PyTorch, ImplOurs, []string{"--master=master", "--worker=worker", "--port=23456"}},
		{TensorFlow, ImplOursInline, []string{"--ps=ps", "--worker=worker", "--port=2222", "--tf-config=inline"}},
		{TensorFlow, ImplStock, []string{"--ps=ps", "--worker=worker", "--port=2222"}},
	} {
		job, err := scaleJob(c.fw, 10, c.impl)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, job.Spec.Plugins[c.fw]); diff != "" {
			t.Errorf("%s job, %s: arguments (-want +got):\n%s", c.fw, c.impl, diff)
		}
	}
}

// ours/stock-wait is printed for the PyTorch job but is not a target: ours
// slower than stock-wait fails nothing; without stock-wait no such table.
func TestReportStockWait(t *testing.T) {
	s := time.Second
	ms := []Measurement{
		{Impl: ImplStock, Round: 1, Framework: PyTorch, Pods: 2000, Created: 10 * s, Bound: 20 * s, CPUToBound: 10 * s, CPUTotal: 10 * s},
		{Impl: ImplStockWait, Round: 1, Framework: PyTorch, Pods: 2000, Created: 8 * s, Bound: 16 * s, CPUToBound: 8 * s, CPUTotal: 8 * s},
		{Impl: ImplOurs, Round: 1, Framework: PyTorch, Pods: 2000, Created: 10 * s, Bound: 20 * s, CPUToBound: 10 * s, CPUTotal: 10 * s},
	}
	var out strings.Builder
	if failed := report(&out, ms, targetRatio); len(failed) != 0 {
		t.Errorf("failed targets: %v", failed)
	}
	words := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"pytorch stock-wait 1 8.00 16.00 8.00 8.00",
		"Ratios ours/stock (target: at most 1.05 for [bound cpu total]): framework created bound cpu to bound cpu total holds pytorch 1.000 1.000 1.000 1.000 yes",
		"not a target): framework created bound cpu to bound cpu total holds pytorch 1.250 1.250 1.250 1.250 (not a target)",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	report(&out, []Measurement{ms[0], ms[2]}, targetRatio)
	if strings.Contains(out.String(), "stock-wait") {
		t.Errorf("report without stock-wait measurements names it:\n%s", out.String())
	}
}

// Each of podParts takes out exactly its part: a pod that has all of them
// loses bytes to each, and one that has only the user's container loses none
// (labels, annotations, owner aside, which every pod here has).
func TestPodParts(t *testing.T) {
	script := strings.Repeat("x", 2000)
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "j-worker-0", Labels: map[string]string{"volcano.sh/job-name": "j"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "vc-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: wait.ContainerName, Command: []string{"sh", "-c", script}}},
			Containers: []corev1.Container{{Name: "main", Image: "training", Env: []corev1.EnvVar{
				{Name: "VC_WORKER_HOSTS", Value: "j-worker-0.j"}, {Name: "RANK", Value: "0"},
			}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	bare := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "j-worker-0", Labels: map[string]string{"volcano.sh/job-name": "j"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "training", Env: []corev1.EnvVar{{Name: "RANK", Value: "0"}}}}},
	}
	for _, part := range podParts {
		got := localcluster.PartBytes(full, part.drop)
		if got <= 0 {
			t.Errorf("%s: %d bytes of a pod that has it, want > 0", part.name, got)
		}
		if part.name == "its script" && got < len(script) {
			t.Errorf("%s: %d bytes, want at least the script's %d", part.name, got, len(script))
		}
		if part.name == "labels, annotations, owner" {
			continue
		}
		if got := localcluster.PartBytes(bare, part.drop); got != 0 {
			t.Errorf("%s: %d bytes of a pod without it, want 0", part.name, got)
		}
	}
	if got := localcluster.PartBytes(full, func(*corev1.Pod) {}); got != 0 {
		t.Errorf("dropping nothing: %d bytes, want 0", got)
	}
}

// The scale jobs are cut to what our admission admits, and only where it
// refuses more: the TensorFlow job of 2,000 pods carries a TF_CONFIG over
// MAX_ARG_STRLEN, the others are admitted whole.
func TestAdmittedPods(t *testing.T) {
	for _, fw := range []string{TensorFlow, MPI, PyTorch} {
		n, denial, err := admittedPods(fw, 2000)
		if err != nil {
			t.Fatalf("%s: %v", fw, err)
		}
		if fw != TensorFlow {
			if n != 2000 || denial != "" {
				t.Errorf("%s: admittedPods = %d, %q; want 2000 and no denial", fw, n, denial)
			}
			continue
		}
		if n >= 2000 || n < 1000 || !strings.Contains(denial, "MAX_ARG_STRLEN") {
			t.Errorf("%s: admittedPods = %d, %q; want fewer than 2000 (and over 1000) and a MAX_ARG_STRLEN denial", fw, n, denial)
		}
		for _, c := range []struct {
			pods int
			ok   bool
		}{{n, true}, {n + 1, false}} {
			job, _ := scaleJob(fw, c.pods, ImplOurs)
			mutated, _ := webhook.MutateJob(job, webhook.Options{})
			if got := len(webhook.ValidateJob(mutated)) == 0; got != c.ok {
				t.Errorf("%s of %d pods: admitted %v, want %v", fw, c.pods, got, c.ok)
			}
		}
		if got, _, _ := admittedPods(fw, n); got != n {
			t.Errorf("%s: admittedPods(%d) = %d, want it unchanged", fw, n, got)
		}
	}
}

// The report's first line names each framework's job size when they differ.
func TestReportJobSizes(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		tf   int
		want string
	}{
		{2000, "2000 pods each;"},
		{1671, "pods: tensorflow 1671, mpi 2000;"},
	} {
		var b strings.Builder
		report(&b, []Measurement{
			{Impl: ImplStock, Round: 1, Framework: TensorFlow, Pods: c.tf, Bound: s, CPUTotal: s},
			{Impl: ImplOurs, Round: 1, Framework: TensorFlow, Pods: c.tf, Bound: s, CPUTotal: s},
			{Impl: ImplStock, Round: 1, Framework: MPI, Pods: 2000, Bound: s, CPUTotal: s},
			{Impl: ImplOurs, Round: 1, Framework: MPI, Pods: 2000, Bound: s, CPUTotal: s},
		}, 1.05)
		if first, _, _ := strings.Cut(b.String(), "\n"); !strings.Contains(first, c.want) {
			t.Errorf("tensorflow %d pods: first line %q, want it to contain %q", c.tf, first, c.want)
		}
	}
	var b strings.Builder
	report(&b, nil, 1.05) // no measurement: no panic
}
