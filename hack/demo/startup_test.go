package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	intreepytorch "volcano.sh/volcano/pkg/controllers/job/plugins/distributed-framework/pytorch"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/catalog/ninthtest"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// t0 is the tests' create time; at(s) is s seconds after it.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// stampedLines makes log lines from pairs of (seconds after t0, text).
func stampedLines(pairs ...any) []training.LogLine {
	var out []training.LogLine
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, training.LogLine{At: at(pairs[i].(float64)), Text: pairs[i+1].(string)})
	}
	return out
}

// realExamples loads the real examples as make startup does.
func realExamples(t *testing.T) []*example {
	t.Helper()
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	all, err := loadRealExamples(root, "startup", 0)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// exampleOf loads the real example of file as make startup does.
func exampleOf(t *testing.T, file string) *example {
	t.Helper()
	all := realExamples(t)
	for _, ex := range all {
		if ex.file == file {
			return ex
		}
	}
	t.Fatalf("no example %s", file)
	return nil
}

// pluginPods returns the pods of ex's Job as our plugin build makes them,
// each started (main container running since startedAt(pod name)) and bound.
func pluginPods(t *testing.T, ex *example, build jobtest.Builder, started map[string]float64) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	for _, task := range ex.job.Spec.Tasks {
		for i := 0; i < int(task.Replicas); i++ {
			p := jobtest.RunPod(t, build, ex.framework, ex.job, task.Name, i)
			p.Spec.NodeName = localcluster.RealNodeName
			if s, ok := started[p.Name]; ok {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{
					Name:  ex.real.Container,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at(s))}},
				}}
			}
			pods = append(pods, p)
		}
	}
	return pods
}

func TestTimelineOf(t *testing.T) {
	ex := exampleOf(t, "example/pytorch/pytorch-digits-ddp.yaml")
	started := map[string]float64{"pytorch-digits-ddp-master-0": 2, "pytorch-digits-ddp-worker-0": 3, "pytorch-digits-ddp-worker-1": 3}
	pods := pluginPods(t, ex, pytorch.New, started)
	bound := map[string]time.Time{"pytorch-digits-ddp-master-0": at(0.25), "pytorch-digits-ddp-worker-0": at(0.5), "pytorch-digits-ddp-worker-1": at(0.3)}
	joined := map[string][]training.LogLine{
		"pytorch-digits-ddp-master-0": stampedLines(6.0, "rank 0 of 3 joined on pytorch-digits-ddp-master-0", 7.0, "epoch 1 loss 2.0"),
		"pytorch-digits-ddp-worker-0": stampedLines(6.1, "rank 1 of 3 joined on pytorch-digits-ddp-worker-0"),
		"pytorch-digits-ddp-worker-1": stampedLines(6.2, "rank 2 of 3 joined on pytorch-digits-ddp-worker-1"),
	}
	for _, tc := range []struct {
		name      string
		pods      []*corev1.Pod
		bound     map[string]time.Time
		lines     map[string][]training.LogLine
		completed time.Time
		want      timeline
	}{
		{
			name: "every stage", pods: pods, bound: bound, lines: joined, completed: at(12),
			want: timeline{Created: t0, Bound: at(0.5), Started: at(3), Joined: at(6.2), Completed: at(12)},
		},
		{
			name: "a pod never bound nor started, a rank missing, not completed",
			pods: pods[:2], bound: map[string]time.Time{"pytorch-digits-ddp-master-0": at(0.25)},
			lines: map[string][]training.LogLine{"pytorch-digits-ddp-master-0": joined["pytorch-digits-ddp-master-0"]},
			want:  timeline{Created: t0, JoinErr: "1 of 3 ranks printed that they joined"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := timelineOf(t0, ex.job, 3, tc.pods, tc.bound, ex.real.Container, ex.real.Joined, tc.lines, tc.completed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("timeline (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestarts(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{
		InitContainerStatuses: []corev1.ContainerStatus{{Name: wait.ContainerName, RestartCount: 1}},
		ContainerStatuses:     []corev1.ContainerStatus{{Name: "main", RestartCount: 2}},
	}}
	if got := restarts([]*corev1.Pod{pod, {}}, 1); got != 4 {
		t.Errorf("restarts = %d, want 4 (1 init, 2 main, 1 pod replaced)", got)
	}
}

func TestWaitReleases(t *testing.T) {
	torch := exampleOf(t, "example/pytorch/pytorch-digits-ddp.yaml")
	tf := exampleOf(t, "example/tensorflow/tensorflow-contract.yaml")
	ompi := exampleOf(t, "example/mpi/mpi-digits-openmpi.yaml")
	noCM := func(name string) (map[string]string, error) { return nil, fmt.Errorf("no ConfigMap %s", name) }
	// The mpi plugin's ConfigMap as the run saw it: the launcher reads its
	// targets from there.
	mpiCM := func(name string) (map[string]string, error) {
		if name != mpi.ConfigMapName(ompi.job) {
			return nil, fmt.Errorf("no ConfigMap %s", name)
		}
		return map[string]string{mpi.WaitTargetsKey: "mpi-digits-openmpi-worker-0.mpi-digits-openmpi:2222\nmpi-digits-openmpi-worker-1.mpi-digits-openmpi:2222\n"}, nil
	}
	waited := func(released float64, last string) []training.LogLine {
		return stampedLines(1.0, "waiting for 1 dependency: x (0s elapsed, timeout 600s)", released, last)
	}
	for _, tc := range []struct {
		name      string
		ex        *example
		build     jobtest.Builder
		configMap func(string) (map[string]string, error)
		waitLines map[string][]training.LogLine
		lines     map[string][]training.LogLine
		readyAt   map[string]time.Time
		want      []waitRelease
	}{
		{
			name: "pytorch: the workers wait for the master's name, answered when it was seen Ready",
			ex:   torch, build: pytorch.New, configMap: noCM,
			waitLines: map[string][]training.LogLine{
				"pytorch-digits-ddp-worker-0": waited(3.4, "1 dependency ready after 2s"),
				// This one started after the master was Ready.
				"pytorch-digits-ddp-worker-1": stampedLines(3.5, "1 dependency ready after 0s"),
			},
			readyAt: map[string]time.Time{"pytorch-digits-ddp-master-0": at(3)},
			want: []waitRelease{
				{Pod: "pytorch-digits-ddp-worker-0", Waited: true, Released: at(3.4), Answered: at(3), Proxy: proxyReady},
				{Pod: "pytorch-digits-ddp-worker-1", Released: at(3.5), Answered: at(3), Proxy: proxyReady},
			},
		},
		{
			name: "tensorflow: chief and workers wait for the ps's port, answered at its listening line",
			ex:   tf, build: tensorflow.New, configMap: noCM,
			waitLines: map[string][]training.LogLine{
				"tf-config-check-chief-0":  waited(2.3, "1 dependency ready after 1s"),
				"tf-config-check-worker-0": waited(2.9, "1 dependency ready after 1s"),
				"tf-config-check-worker-1": waited(9.0, "timed out after 600s waiting for 1 dependency: tf-config-check-ps-0.tf-config-check:2222"),
			},
			lines: map[string][]training.LogLine{
				"tf-config-check-ps-0": stampedLines(2.0, "ps:0 serves tf-config-check-ps-0.tf-config-check:2222"),
			},
			// Ready is not what a TCP dependency is measured by.
			readyAt: map[string]time.Time{"tf-config-check-ps-0": at(1.5)},
			want: []waitRelease{
				{Pod: "tf-config-check-chief-0", Waited: true, Released: at(2.3), Answered: at(2), Proxy: proxyListening},
				{Pod: "tf-config-check-worker-0", Waited: true, Released: at(2.9), Answered: at(2), Proxy: proxyListening},
				{Pod: "tf-config-check-worker-1", Err: `its wait did not end ready: "timed out after 600s waiting for 1 dependency: tf-config-check-ps-0.tf-config-check:2222"`},
			},
		},
		{
			name: "mpi: the launcher waits for both workers' sshd, the later one counts",
			ex:   ompi, build: mpi.New, configMap: mpiCM,
			waitLines: map[string][]training.LogLine{
				"mpi-digits-openmpi-launcher-0": stampedLines(1.0, "waiting for 2 of 2 dependencies: a b (0s elapsed, timeout 600s)", 4.75, "all 2 dependencies ready after 3s"),
			},
			lines: map[string][]training.LogLine{
				"mpi-digits-openmpi-worker-0": stampedLines(3.0, "Server listening on 0.0.0.0 port 2222.", 3.01, "Server listening on :: port 2222."),
				"mpi-digits-openmpi-worker-1": stampedLines(4.5, "Server listening on 0.0.0.0 port 2222."),
			},
			want: []waitRelease{
				{Pod: "mpi-digits-openmpi-launcher-0", Waited: true, Released: at(4.75), Answered: at(4.5), Proxy: proxyListening},
			},
		},
		{
			name: "mpi: a worker's listening line missing, or no wait log",
			ex:   ompi, build: mpi.New, configMap: mpiCM,
			waitLines: map[string][]training.LogLine{
				"mpi-digits-openmpi-launcher-0": stampedLines(4.75, "all 2 dependencies ready after 3s"),
			},
			lines: map[string][]training.LogLine{
				"mpi-digits-openmpi-worker-0": stampedLines(3.0, "Server listening on 0.0.0.0 port 2222."),
			},
			want: []waitRelease{
				{Pod: "mpi-digits-openmpi-launcher-0", Released: at(4.75), Answered: at(3), Err: `mpi-digits-openmpi-worker-1 never printed a line matching ^Server listening on \S+ port \d+\.$`},
			},
		},
		{
			name: "pytorch: no wait log, master never Ready",
			ex:   torch, build: pytorch.New, configMap: noCM,
			waitLines: map[string][]training.LogLine{
				"pytorch-digits-ddp-worker-1": waited(3.4, "1 dependency ready after 2s"),
			},
			want: []waitRelease{
				{Pod: "pytorch-digits-ddp-worker-0", Err: "no log of its wait container"},
				{Pod: "pytorch-digits-ddp-worker-1", Waited: true, Released: at(3.4), Err: "pytorch-digits-ddp-master-0 was never seen Ready"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := pluginPods(t, tc.ex, tc.build, nil)
			got := waitReleases(pods, tc.configMap, tc.waitLines, tc.lines, tc.ex.real.Listening, tc.readyAt)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("waitReleases (-want +got):\n%s", diff)
			}
		})
	}
}

// result is a run's result for the target tests: joined s seconds after
// create (0: never), with waits released after the given latencies.
func result(impl, example string, n int, ok bool, joined float64, waits ...float64) runResult {
	r := runResult{Impl: impl, Example: example, Run: n, OK: ok, Timeline: timeline{Created: t0}}
	if joined > 0 {
		r.Timeline.Joined = at(joined)
	}
	if !ok {
		r.Reason = "pod x failed"
	}
	for i, w := range waits {
		r.Waits = append(r.Waits, waitRelease{Pod: fmt.Sprintf("p%d", i), Waited: true, Answered: at(1), Released: at(1 + w), Proxy: proxyReady})
	}
	return r
}

func TestCheckTargets(t *testing.T) {
	ddp := "pytorch-digits-ddp"
	type got struct {
		Name, Measured string
		OK             bool
	}
	for _, tc := range []struct {
		name    string
		results []runResult
		want    []got
	}{
		{
			name: "ours all successful, within a second of stock's fastest run, waits fast",
			results: []runResult{
				result(implOurs, ddp, 0, true, 9, 0.9),
				result(implOurs, ddp, 1, true, 6.0, 0.2, 0.4), result(implOurs, ddp, 2, true, 6.4, 0.3), result(implOurs, ddp, 3, true, 6.2, 0.6),
				result(implStock, ddp, 0, false, 0),
				result(implStock, ddp, 1, true, 5.5), result(implStock, ddp, 2, false, 0), result(implStock, ddp, 3, true, 5.9),
			},
			want: []got{
				{"ours, pytorch-digits-ddp: every run successful", "3/3 runs successful (0 failed, 0 restarted a pod; warm-ups: 0 of 1 failed)", true},
				{"pytorch-digits-ddp: create → every rank joined, ours' median ≤ fastest successful stock run + 1.00s",
					"ours 6.20s (median of 3); stock fastest 5.50s (2 of 3 succeeded, median 5.70s) + 1.00s = 6.50s", true},
				{"ours: a wait container releases its pod ≤ 0.50s (median) after its last dependency answered",
					"median 0.35s over 4 waits (max 0.60s); 0 released at their first check and 0 not measurable, not counted", true},
			},
		},
		{
			name: "a failed warm-up, slower than stock, slow waits",
			results: []runResult{
				result(implOurs, ddp, 0, false, 0),
				result(implOurs, ddp, 1, true, 7.0, 0.6), result(implOurs, ddp, 2, true, 7.5, 0.7),
				result(implStock, ddp, 1, true, 5.5),
			},
			want: []got{
				{"ours, pytorch-digits-ddp: every run successful", "2/2 runs successful (0 failed, 0 restarted a pod; warm-ups: 1 of 1 failed)", false},
				{"pytorch-digits-ddp: create → every rank joined, ours' median ≤ fastest successful stock run + 1.00s",
					"ours 7.25s (median of 2); stock fastest 5.50s (1 of 1 succeeded, median 5.50s) + 1.00s = 6.50s", false},
				{"ours: a wait container releases its pod ≤ 0.50s (median) after its last dependency answered",
					"median 0.65s over 2 waits (max 0.70s); 0 released at their first check and 0 not measurable, not counted", false},
			},
		},
		{
			name: "a failed run of ours, no stock run succeeded, no wait measured",
			results: []runResult{
				result(implOurs, ddp, 1, true, 7.0), result(implOurs, ddp, 2, false, 0),
				result(implStock, ddp, 1, false, 0), result(implStock, ddp, 2, false, 0),
			},
			want: []got{
				{"ours, pytorch-digits-ddp: every run successful", "1/2 runs successful (1 failed, 0 restarted a pod; no warm-up)", false},
				{"pytorch-digits-ddp: create → every rank joined, ours' median ≤ fastest successful stock run + 1.00s",
					"ours 7.00s (median of 1); no stock run succeeded (2 of 2 failed): nothing to be slower than", true},
				{"ours: a wait container releases its pod ≤ 0.50s (median) after its last dependency answered",
					"no wait measured (0 released at their first check, 0 not measurable)", false},
			},
		},
		{
			name:    "ours only, an example without stock",
			results: []runResult{result(implOurs, "xgboost-digits", 1, true, 4, 0.1)},
			want: []got{
				{"ours, xgboost-digits: every run successful", "1/1 runs successful (0 failed, 0 restarted a pod; no warm-up)", true},
				{"ours: a wait container releases its pod ≤ 0.50s (median) after its last dependency answered",
					"median 0.10s over 1 waits (max 0.10s); 0 released at their first check and 0 not measurable, not counted", true},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var checks []got
			for _, c := range checkTargets(tc.results, time.Second, 500*time.Millisecond) {
				checks = append(checks, got{c.name, c.measured, c.ok})
			}
			if diff := cmp.Diff(tc.want, checks); diff != "" {
				t.Errorf("checks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummarizeCountsRestartsAndWarmups(t *testing.T) {
	restarted := result(implStock, "tf-config-check", 2, false, 0)
	restarted.Restarts = 1
	got := summarize([]runResult{
		result(implStock, "tf-config-check", 0, false, 0),
		result(implStock, "tf-config-check", 1, true, 3),
		restarted,
		result(implStock, "tf-config-check", 3, true, 2),
	})
	want := []summary{{impl: implStock, example: "tf-config-check", runs: 3, ok: 2, failed: 1, restarted: 1, warmupsFailed: 1, joined: sec(2.5), bestJoined: sec(2), reached: [4]int{0, 0, 2, 0}}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(summary{})); diff != "" {
		t.Errorf("summarize (-want +got):\n%s", diff)
	}
}

func TestRunResult(t *testing.T) {
	ex := exampleOf(t, "example/pytorch/pytorch-digits-ddp.yaml")
	started := map[string]float64{"pytorch-digits-ddp-master-0": 2, "pytorch-digits-ddp-worker-0": 3, "pytorch-digits-ddp-worker-1": 3}
	newRun := func() *run {
		r := &run{example: ex, want: 3, submitted: t0, pods: map[string]*corev1.Pod{}, boundAt: map[string]time.Time{}, readyAt: map[string]time.Time{"pytorch-digits-ddp-master-0": at(2.5)}}
		for _, p := range pluginPods(t, ex, pytorch.New, started) {
			r.pods[p.Name], r.boundAt[p.Name] = p, at(0.5)
		}
		r.job = ex.job.DeepCopy()
		r.job.Status.State.Phase = batch.Completed
		r.ok, r.ended = true, at(12)
		r.lines = map[string][]training.LogLine{}
		r.waitLines = map[string][]training.LogLine{}
		for i, name := range []string{"pytorch-digits-ddp-master-0", "pytorch-digits-ddp-worker-0", "pytorch-digits-ddp-worker-1"} {
			r.lines[name] = stampedLines(6+float64(i)/10, fmt.Sprintf("rank %d of 3 joined on %s", i, name))
			if i > 0 {
				r.waitLines[name] = stampedLines(2.9, "1 dependency ready after 0s")
			}
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		edit   func(r *run)
		ok     bool
		reason string
	}{
		{name: "successful", edit: func(*run) {}, ok: true},
		{name: "a pod failed", edit: func(r *run) {
			r.ok, r.reason = false, "pod pytorch-digits-ddp-worker-1 failed (exit code 1); its log ends: ValueError: gaierror"
			r.job.Status.State.Phase = batch.Running
			delete(r.lines, "pytorch-digits-ddp-worker-1")
		}, reason: "pod pytorch-digits-ddp-worker-1 failed (exit code 1); its log ends: ValueError: gaierror"},
		{name: "completed, but a rank never said it joined", edit: func(r *run) { r.lines["pytorch-digits-ddp-worker-1"] = nil },
			reason: "not every rank joined: 2 of 3 ranks printed that they joined"},
		{name: "a pod replaced", edit: func(r *run) { r.replaced = 1 }, reason: "1 container restarts or replaced pods"},
		{name: "unreadable timestamps", edit: func(r *run) { r.logErrs = []string{"x: line 1"} }, reason: "log timestamps unreadable: x: line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRun()
			tc.edit(r)
			res := r.result(implOurs, "pytorch-digits-ddp", 1)
			if res.OK != tc.ok || res.Reason != tc.reason {
				t.Errorf("OK %v, reason %q; want %v, %q", res.OK, res.Reason, tc.ok, tc.reason)
			}
			if tc.ok {
				want := timeline{Created: t0, Bound: at(0.5), Started: at(3), Joined: at(6.2), Completed: at(12)}
				if diff := cmp.Diff(want, res.Timeline); diff != "" {
					t.Errorf("timeline (-want +got):\n%s", diff)
				}
				if len(res.Waits) != 2 || res.Waits[0].Waited || res.Waits[0].Err != "" {
					t.Errorf("waits %+v, want the workers' two, released at their first check", res.Waits)
				}
			}
		})
	}
}

func TestObserveRecordsBindingReadinessAndReplacements(t *testing.T) {
	r := &run{pods: map[string]*corev1.Pod{}, gone: map[string]bool{}, boundAt: map[string]time.Time{}, readyAt: map[string]time.Time{}, out: &strings.Builder{}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID("1")}}
	r.observe(pod, false, t0)
	if len(r.boundAt)+len(r.readyAt) != 0 {
		t.Fatalf("unbound pod recorded: %v %v", r.boundAt, r.readyAt)
	}
	bound := pod.DeepCopy()
	bound.Spec.NodeName = "n"
	r.observe(bound, false, t0)
	ready := bound.DeepCopy()
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	r.observe(ready, false, t0)
	first := r.boundAt["p"]
	r.observe(ready, false, t0)
	if first.IsZero() || !r.boundAt["p"].Equal(first) || r.readyAt["p"].IsZero() {
		t.Errorf("boundAt %v, readyAt %v: want the first sightings", r.boundAt, r.readyAt)
	}
	replacement := ready.DeepCopy()
	replacement.UID = "2"
	r.observe(replacement, false, t0)
	if r.replaced != 1 {
		t.Errorf("replaced = %d, want 1", r.replaced)
	}
}

func TestStockExample(t *testing.T) {
	type want struct {
		Plugins  map[string][]string
		Launcher []string
		Env      []corev1.EnvVar
	}
	for _, tc := range []struct {
		file    string
		want    want
		wantErr string
	}{
		{
			file: "example/pytorch/pytorch-digits-ddp.yaml",
			want: want{Plugins: map[string][]string{"svc": {}, "pytorch": {"--master=master", "--worker=worker", "--port=23456"}}},
		},
		{
			file: "example/tensorflow/tensorflow-contract.yaml",
			want: want{Plugins: map[string][]string{"svc": {}, "tensorflow": {"--chief=chief", "--ps=ps", "--worker=worker", "--port=2222"}}},
		},
		{
			file: "example/mpi/mpi-digits-openmpi.yaml",
			want: want{
				Plugins:  map[string][]string{"svc": {}, "ssh": {}, "mpi": {"--master=launcher", "--worker=worker", "--port=2222"}},
				Launcher: []string{"sh", "-c", `exec mpirun --host "$MPI_HOST" "$@"`, "mpirun", "python3", "/opt/train/train_mpi.py"},
				Env:      []corev1.EnvVar{{Name: mpi.EnvOMPIRshArgs, Value: "-p 2222"}, {Name: mpi.EnvOMPIKeepFQDN, Value: "true"}},
			},
		},
		{file: "example/pytorch/pytorch-digits-torchrun.yaml", wantErr: `Volcano's pytorch plugin does not take "--nproc-per-node=1"`},
		{file: "example/mpi/mpi-digits-mpich.yaml", wantErr: `Volcano's mpi plugin does not take "--mpi-implementation=mpich"`},
		{file: "example/xgboost/xgboost-digits.yaml", wantErr: "Volcano has no in-tree xgboost plugin"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ex := exampleOf(t, tc.file)
			before := ex.job.DeepCopy()
			got, err := stockExample(ex)
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(before, ex.job); diff != "" {
				t.Errorf("the example's own Job changed (-before +after):\n%s", diff)
			}
			if err != nil {
				return
			}
			if !got.stock || got.job.Name != ex.job.Name {
				t.Errorf("stock %v, name %s", got.stock, got.job.Name)
			}
			g := want{Plugins: got.job.Spec.Plugins}
			for _, task := range got.job.Spec.Tasks {
				c := task.Template.Spec.Containers[0]
				if task.Name == "launcher" {
					g.Launcher = c.Command
					for _, e := range c.Env {
						if e.Name != "OMP_NUM_THREADS" {
							g.Env = append(g.Env, e)
						}
					}
				}
				if len(task.Template.Spec.InitContainers) > 0 {
					t.Errorf("task %s has init containers", task.Name)
				}
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("stock Job (-want +got):\n%s", diff)
			}
		})
	}
}

// The stock variant of every example marked Stock loads, one per framework
// with an in-tree plugin; the variant of another example's is refused.
func TestStockExamples(t *testing.T) {
	all := realExamples(t)
	var got []string
	for _, ex := range all {
		if !ex.real.Stock {
			continue
		}
		got = append(got, ex.file)
		if _, err := stockExample(ex); err != nil {
			t.Errorf("%s: %v", ex.file, err)
		}
	}
	want := []string{"example/tensorflow/tensorflow-contract.yaml", "example/pytorch/pytorch-digits-ddp.yaml", "example/mpi/mpi-digits-openmpi.yaml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stock examples (-want +got):\n%s", diff)
	}
	if _, err := stockExample(exampleOf(t, "example/dask/dask-digits.yaml")); err == nil || !strings.Contains(err.Error(), "Volcano has no in-tree dask plugin") {
		t.Errorf("the dask example's stock variant: %v", err)
	}
}

func TestSelectExamples(t *testing.T) {
	all := realExamples(t)
	names := func(exs []*example) []string {
		var out []string
		for _, ex := range exs {
			out = append(out, ex.job.Name)
		}
		return out
	}
	for _, tc := range []struct {
		which   string
		want    []string
		wantErr string
	}{
		{which: "", want: []string{"tf-config-check", "pytorch-digits-ddp", "mpi-digits-openmpi", "mxnet-dmlc-check", "xgboost-digits", "dask-digits", "jax-contract-check", "paddle-check"}},
		{which: "tf-config-check,example/mpi/mpi-digits-mpich.yaml", want: []string{"tf-config-check", "mpi-digits-mpich"}},
		{which: "nope", wantErr: `--examples: no example "nope"`},
	} {
		t.Run(tc.which, func(t *testing.T) {
			got, err := selectExamples(all, tc.which)
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("examples (-want +got):\n%s", diff)
			}
		})
	}
	if got, _ := selectExamples(all, "all"); len(got) != len(samples.Examples()) {
		t.Errorf("all: %d examples, want %d", len(got), len(samples.Examples()))
	}
}

// A launcher that does not run mpirun cannot be given Volcano's MPI_HOST.
func TestStockExampleNeedsMpirun(t *testing.T) {
	ex := exampleOf(t, "example/mpi/mpi-digits-openmpi.yaml")
	edited := *ex
	edited.job = ex.job.DeepCopy()
	edited.job.Spec.Tasks[0].Template.Spec.Containers[0].Command = []string{"mpiexec", "python3", "/opt/train/train_mpi.py"}
	if _, err := stockExample(&edited); err == nil || !strings.Contains(err.Error(), `the launcher runs ["mpiexec" "python3" "/opt/train/train_mpi.py"], not mpirun (Open MPI)`) {
		t.Errorf("error %v", err)
	}
}

func TestWriteReport(t *testing.T) {
	rs := []runResult{
		result(implOurs, "pytorch-digits-ddp", 1, true, 6.0, 0.7),
		result(implStock, "pytorch-digits-ddp", 1, false, 0),
	}
	var b strings.Builder
	failed := writeReport(&b, rs, checkTargets(rs, time.Second, 500*time.Millisecond))
	if diff := cmp.Diff([]string{"ours: a wait container releases its pod ≤ 0.50s (median) after its last dependency answered"}, failed); diff != "" {
		t.Errorf("failed targets (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		// Stages no successful run reached have no median.
		"  ours        pytorch-digits-ddp       1     1       0          0        -        -   6.00s          -         6.00s\n",
		"  stock       pytorch-digits-ddp       1     0       1          0        -        -       -          -             -\n",
		"  stock       pytorch-digits-ddp   run  1   FAILED  bound      -  started      -  joined      -  completed      -\n         pod x failed\n",
		"  FAILED ours: a wait container releases",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestLastWords(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"", ""},
		{"one\ntwo\n", "two"},
		{"ORTE was unable to reliably start one or more daemons.\n------------------\n\n", "ORTE was unable to reliably start one or more daemons."},
		{"-----\n", ""},
	} {
		if got := lastWords(tc.log); got != tc.want {
			t.Errorf("lastWords(%q) = %q, want %q", tc.log, got, tc.want)
		}
	}
}

// A ninth framework's example (ninthtest.Register: the catalog and the
// samples alone) is among the demo's real examples, last, and the first
// of each framework make startup picks by default.
func TestNinthFrameworkExample(t *testing.T) {
	ninthtest.Register(t)
	all := realExamples(t)
	last := all[len(all)-1]
	if last.framework != ninthtest.Name || last.file != ninthtest.Example.File || last.real.What != ninthtest.Example.What {
		t.Errorf("the last real example is %s %s (%s), want the ninth framework's", last.framework, last.file, last.real.What)
	}
	picked, err := selectExamples(all, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := picked[len(picked)-1]; got != last {
		t.Errorf("make startup's default examples end with %s %s, not the ninth framework's", got.framework, got.file)
	}
}

// stock-wait runs the stock PyTorch example alone, its pytorch plugin given
// --wait-master-enabled and the node's busybox, which makes the in-tree
// plugin add its wait-for-master container to the workers only; stock runs
// every stock example unchanged.
func TestStockPlan(t *testing.T) {
	all := realExamples(t)
	for _, tc := range []struct {
		impl string
		want map[string][]string // pytorch plugin's arguments by example; "-": not pytorch
	}{
		{implStock, map[string][]string{
			"tf-config-check":    {"-"},
			"pytorch-digits-ddp": {"--master=master", "--worker=worker", "--port=23456"},
			"mpi-digits-openmpi": {"-"},
		}},
		{implStockWait, map[string][]string{
			"pytorch-digits-ddp": {"--master=master", "--worker=worker", "--port=23456",
				"--wait-master-enabled", "--wait-master-image=" + training.Image},
		}},
	} {
		t.Run(tc.impl, func(t *testing.T) {
			exs, err := stockPlan(tc.impl, all)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, ex := range exs {
				args, ok := ex.job.Spec.Plugins[pytorch.Name]
				if !ok {
					args = []string{"-"}
				}
				got[ex.job.Name] = args
				if !ex.stock {
					t.Errorf("%s: not marked stock", ex.job.Name)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("examples and pytorch arguments (-want +got):\n%s", diff)
			}
			for _, ex := range exs {
				if ex.framework != pytorch.Name {
					continue
				}
				job := ex.job.DeepCopy()
				job.Status.ControlledResources = map[string]string{} // as the controller makes it
				for _, task := range job.Spec.Tasks {
					pod := jobtest.RunPod(t, intreepytorch.New, pytorch.Name, job, task.Name, 0)
					var inits []string
					for _, c := range pod.Spec.InitContainers {
						inits = append(inits, c.Name+" "+c.Image)
					}
					var want []string
					if tc.impl == implStockWait && task.Name == "worker" {
						want = []string{"wait-for-master " + training.Image}
					}
					if diff := cmp.Diff(want, inits); diff != "" {
						t.Errorf("task %s: the in-tree plugin's init containers (-want +got):\n%s", task.Name, diff)
					}
				}
			}
		})
	}
	// The examples themselves are left alone.
	if ddp := exampleOf(t, "example/pytorch/pytorch-digits-ddp.yaml"); slices.Contains(ddp.job.Spec.Plugins[pytorch.Name], "--wait-master-enabled") {
		t.Errorf("the example's own Job got %v", ddp.job.Spec.Plugins[pytorch.Name])
	}
}

// stock-wait's runs are shown beside stock's but enter no target: ours'
// join is compared with plain stock's only.
func TestCheckTargetsLeaveStockWaitOut(t *testing.T) {
	ddp := "pytorch-digits-ddp"
	base := []runResult{
		result(implOurs, ddp, 1, true, 6.4, 0.3), result(implOurs, ddp, 2, true, 6.2, 0.2),
		result(implStock, ddp, 1, true, 5.5),
	}
	withWait := append(slices.Clone(base), result(implStockWait, ddp, 1, true, 3.0), result(implStockWait, ddp, 2, false, 0))
	if diff := cmp.Diff(checkTargets(base, time.Second, 500*time.Millisecond), checkTargets(withWait, time.Second, 500*time.Millisecond), cmp.AllowUnexported(check{})); diff != "" {
		t.Errorf("stock-wait's runs changed the targets (-without +with):\n%s", diff)
	}
	var b strings.Builder
	writeReport(&b, withWait, nil)
	for _, want := range []string{
		"  stock-wait  pytorch-digits-ddp       2     1       1          0        -        -   3.00s          -         3.00s\n",
		"  stock-wait  pytorch-digits-ddp   run  2   FAILED",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
