package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// TestIntegrationUpJobDown starts a real cluster from the binaries in
// _output/bin (make binaries), runs a two-pod Volcano Job with the svc plugin
// to completion on the KWOK nodes, checks that Up on the running cluster is a
// no-op, and that Down leaves no process behind. It takes about a minute, so it
// only runs with LOCALCLUSTER_INTEGRATION=1. LOCALCLUSTER_CONTROLLER_MANAGER
// selects the controller manager binary (e.g. vc-controller-manager-stock).
func TestIntegrationUpJobDown(t *testing.T) {
	if os.Getenv("LOCALCLUSTER_INTEGRATION") != "1" {
		t.Skip("set LOCALCLUSTER_INTEGRATION=1 to start a real local cluster")
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_output", "localcluster-it")
	cfg := Config{
		RootDir:                 dir,
		ControllerManagerBinary: os.Getenv("LOCALCLUSTER_CONTROLLER_MANAGER"),
		Out:                     logWriter{t},
	}
	t.Cleanup(func() { _ = Down(dir) })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	cl, err := Up(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Up took %.1fs", time.Since(start).Seconds())

	start = time.Now()
	again, err := Up(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.Components[0].PID != cl.Components[0].PID {
		t.Errorf("second Up restarted the cluster")
	}
	t.Logf("Up on the running cluster took %.1fs", time.Since(start).Seconds())

	kc, err := cl.KubeClient()
	if err != nil {
		t.Fatal(err)
	}
	vc, err := cl.VolcanoClient()
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: "default"},
		Spec: batchv1alpha1.JobSpec{
			SchedulerName: "volcano",
			MinAvailable:  2,
			Queue:         "default",
			Plugins:       map[string][]string{"svc": {}},
			Tasks: []batchv1alpha1.TaskSpec{{
				Name:     "worker",
				Replicas: 2,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "main", Image: "busybox", Command: []string{"true"},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: DefaultNodeResources()[corev1.ResourceCPU],
						}},
					}},
				}},
			}},
		},
	}
	submitted := time.Now()
	if _, err := vc.BatchV1alpha1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Each pod asks for a whole node's CPU, so the two must land on two nodes.
	var phase batchv1alpha1.JobPhase
	boundNodes := map[string]string{}
	for time.Since(submitted) < 2*time.Minute && phase != batchv1alpha1.Completed {
		pods, err := kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameKey + "=smoke"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				boundNodes[p.Name] = p.Spec.NodeName
			}
		}
		j, err := vc.BatchV1alpha1().Jobs("default").Get(ctx, "smoke", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		phase = j.Status.State.Phase
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("job phase %s after %.1fs; pods bound: %v", phase, time.Since(submitted).Seconds(), boundNodes)
	if phase != batchv1alpha1.Completed {
		t.Errorf("job phase = %q, want Completed", phase)
	}
	if len(boundNodes) != 2 {
		t.Errorf("bound pods = %v, want 2", boundNodes)
	}
	distinct := map[string]bool{}
	for _, n := range boundNodes {
		if !strings.HasPrefix(n, "kwok-node-") {
			t.Errorf("pod bound to %s, not a KWOK node", n)
		}
		distinct[n] = true
	}
	if len(distinct) != len(boundNodes) {
		t.Errorf("pods share a node although each needs a whole node's CPU: %v", boundNodes)
	}
	// The svc plugin's Service is deleted again when the Job completes, but
	// its mark on the pods stays.
	pods, err := kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameKey + "=smoke"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.Subdomain != "smoke" {
			t.Errorf("pod %s subdomain = %q, want smoke (set by the svc plugin)", p.Name, p.Spec.Subdomain)
		}
	}

	// Gang scheduling: five pods of 25 CPU pass the enqueue checks (125 CPU
	// of 128 in the cluster) but only one fits a 32-CPU node, so four fit in
	// all and the gang plugin must keep all five unbound.
	gang := job.DeepCopy()
	gang.Name = "gang"
	gang.Spec.MinAvailable = 5
	gang.Spec.Tasks[0].Replicas = 5
	gang.Spec.Tasks[0].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("25")
	if _, err := vc.BatchV1alpha1().Jobs("default").Create(ctx, gang, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var created int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && created < 5; time.Sleep(250 * time.Millisecond) {
		pods, err := kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameKey + "=gang"})
		if err != nil {
			t.Fatal(err)
		}
		created = len(pods.Items)
	}
	if created != 5 {
		t.Fatalf("gang job has %d pods, want 5 (PodGroup not enqueued?)", created)
	}
	time.Sleep(5 * time.Second) // several scheduling cycles (1s each)
	pods, err = kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameKey + "=gang"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			t.Errorf("gang pod %s bound to %s although the gang cannot fit", p.Name, p.Spec.NodeName)
		}
	}
	t.Logf("gang job: %d pods created, none bound after 5s", len(pods.Items))

	// DefaultKwokConfig's annotations: pods that keep running, and pods that
	// fail with an exit code after a while.
	running := job.DeepCopy()
	running.Name = "running"
	running.Spec.Tasks[0].Template.Annotations = map[string]string{AnnotationPodResult: "Running"}
	failing := job.DeepCopy()
	failing.Name = "failing"
	failing.Spec.Tasks[0].Template.Annotations = map[string]string{
		AnnotationPodResult: "Failed", AnnotationPodRunFor: "3s", AnnotationPodExitCode: "7",
	}
	for _, j := range []*batchv1alpha1.Job{running, failing} {
		j.Spec.Tasks[0].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
	}
	// The gang job's Inqueue PodGroup reserves 125 of the queue's 128 CPU;
	// it must be gone before more jobs can be allocated.
	if err := vc.BatchV1alpha1().Jobs("default").Delete(ctx, "gang", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		pgs, err := vc.SchedulingV1beta1().PodGroups("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, pg := range pgs.Items {
			if strings.HasPrefix(pg.Name, "gang-") {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the gang job's PodGroup was not deleted within 30s")
		}
	}
	submitted = time.Now()
	for _, j := range []*batchv1alpha1.Job{running, failing} {
		if _, err := vc.BatchV1alpha1().Jobs("default").Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	podPhases := func(name string) map[corev1.PodPhase]int {
		pods, err := kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameKey + "=" + name})
		if err != nil {
			t.Fatal(err)
		}
		phases := map[corev1.PodPhase]int{}
		for _, p := range pods.Items {
			phases[p.Status.Phase]++
			if p.Status.Phase == corev1.PodFailed {
				if code := p.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != 7 {
					t.Errorf("pod %s exit code %d, want 7", p.Name, code)
				}
			}
		}
		return phases
	}
	var failedAfter time.Duration
	for time.Since(submitted) < time.Minute && failedAfter == 0 {
		if podPhases("failing")[corev1.PodFailed] > 0 {
			failedAfter = time.Since(submitted)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if failedAfter < 3*time.Second {
		t.Errorf("failing pods failed after %v, want >= 3s (never = 0)", failedAfter)
	}
	if got := podPhases("running"); got[corev1.PodRunning] != 2 {
		t.Errorf("running job's pods = %v, want 2 Running", got)
		dumpJob(ctx, t, cl, "running")
	}
	if j, err := vc.BatchV1alpha1().Jobs("default").Get(ctx, "running", metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if j.Status.State.Phase != batchv1alpha1.Running {
		t.Errorf("running job phase = %s, want Running", j.Status.State.Phase)
	}
	t.Logf("annotated pods: failing job's pods failed after %.1fs; running job's pods still Running", failedAfter.Seconds())

	start = time.Now()
	if err := Down(dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("Down took %.1fs", time.Since(start).Seconds())
	if left := processesUnder(cl.BinDir); len(left) > 0 {
		t.Errorf("processes left after Down: %v", left)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Down", dir)
	}
}

// processesUnder lists "pid binary" of every process whose executable lies in dir.
func processesUnder(dir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if bin := binaryOf(pid); strings.HasPrefix(bin, dir+string(filepath.Separator)) && alive(pid, "") {
			found = append(found, fmt.Sprintf("%d %s", pid, bin))
		}
	}
	return found
}

// logWriter sends each line written to t.Log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	s := bufio.NewScanner(bytes.NewReader(p))
	for s.Scan() {
		w.t.Log(s.Text())
	}
	return len(p), nil
}

// TestIntegrationComponentFailure checks that a component dying during Up fails
// it with that component's log tail, and that Up stops what it had started.
// Needs LOCALCLUSTER_INTEGRATION=1 like TestIntegrationUpJobDown.
func TestIntegrationComponentFailure(t *testing.T) {
	if os.Getenv("LOCALCLUSTER_INTEGRATION") != "1" {
		t.Skip("set LOCALCLUSTER_INTEGRATION=1 to start a real local cluster")
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_output", "localcluster-it-fail")
	t.Cleanup(func() { _ = Down(dir) })
	_, err = Up(context.Background(), Config{
		RootDir:   dir,
		Webhook:   WebhookOff,
		ExtraArgs: map[string][]string{Scheduler: {"--no-such-flag"}},
		Timeout:   2 * time.Minute,
		Out:       logWriter{t},
	})
	if err == nil {
		t.Fatal("Up succeeded with a scheduler that cannot start")
	}
	t.Logf("Up error: %v", err)
	for _, want := range []string{"vc-scheduler", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	st, err := Status(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Components {
		if c.Alive {
			t.Errorf("%s still runs after the failed Up", c.Name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "vc-scheduler.log")); err != nil {
		t.Errorf("logs not kept after a failed Up: %v", err)
	}
}

// dumpJob logs the state of a Job, its PodGroup and pods, to explain a failure.
func dumpJob(ctx context.Context, t *testing.T, cl *Cluster, name string) {
	t.Helper()
	kc, _ := cl.KubeClient()
	vc, _ := cl.VolcanoClient()
	if j, err := vc.BatchV1alpha1().Jobs("default").Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Logf("job %s status: %+v", name, j.Status)
	}
	pgs, _ := vc.SchedulingV1beta1().PodGroups("default").List(ctx, metav1.ListOptions{})
	for _, pg := range pgs.Items {
		t.Logf("podgroup %s: phase %s, conditions %+v", pg.Name, pg.Status.Phase, pg.Status.Conditions)
	}
	pods, _ := kc.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameKey + "=" + name})
	for _, p := range pods.Items {
		t.Logf("pod %s: node %q phase %s conditions %+v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
	}
	events, _ := kc.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	for _, e := range events.Items {
		t.Logf("event %s/%s: %s %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
}
