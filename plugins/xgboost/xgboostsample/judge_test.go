package xgboostsample

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
)

// xgbLog is what train_xgboost.py prints as rank of world (a run in the
// training image's root file system, pod names for hosts).
type xgbLog struct {
	rank, world int
	tracker     string
	accuracy    string
	model       string
	verdict     string // "" for "agrees across <world> ranks"
	serial      string // the master's serial check: "equals" or "DIFFERS from"
	mismatch    string
}

const (
	xgbModel = "081d629d5f818eba7c071d68fd970b66624a2cebdeaf5ddc110d7a521eb45e26"
	xgbOther = "062bb47cac5b2f8e0dbd0811272f6067095013b2d8d5d88984d3ff6cb191b094"
)

func (l xgbLog) String() string {
	var b strings.Builder
	if l.mismatch != "" {
		fmt.Fprintf(&b, "MISMATCH rank %d: %s\n", l.rank, l.mismatch)
		return b.String()
	}
	fmt.Fprintf(&b, "[05:00:18] task %d got new rank %d\n", l.rank, l.rank)
	fmt.Fprintf(&b, "rank %d of %d joined tracker at %s\n", l.rank, l.world, l.tracker)
	fmt.Fprintf(&b, "rank %d: trained 30 rounds on 449 of 1347 training digits\n", l.rank)
	fmt.Fprintf(&b, "rank %d: test accuracy %s on 450 held-out digits\n", l.rank, l.accuracy)
	verdict := l.verdict
	if verdict == "" {
		verdict = fmt.Sprintf("agrees across %d ranks", l.world)
	}
	fmt.Fprintf(&b, "rank %d: model sha256 %s %s\n", l.rank, l.model, verdict)
	if l.rank == 0 {
		fmt.Fprintf(&b, "master: tracker done, %d ranks shut down\n", l.world)
		fmt.Fprintf(&b, "master: serial check: the model %s the one a single process trains on all 1347 training digits\n", l.serial)
	}
	return b.String()
}

func TestJudgeXGBoost(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/xgboost/xgboost-digits.yaml")
	_, pods := trainingtest.Pods(t, ex, xgboost.New)
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	// The workers join the tracker at the master's name, the master at its
	// own address ($(POD_IP)).
	const tracker = "xgboost-digits-master-0.xgboost-digits.ns.svc.cluster.local:9999"
	const masterIP = "10.245.0.7"
	for _, p := range pods {
		if kubeutil.EnvOf(p, ex.Container)["RANK"] == "0" {
			p.Status.PodIP = masterIP
		}
	}
	// logs gives each pod the log of the rank its injected RANK says, edited.
	logs := func(edit func(l *xgbLog)) map[string]string {
		out := map[string]string{}
		for _, p := range pods {
			rank, _ := strconv.Atoi(kubeutil.EnvOf(p, ex.Container)["RANK"])
			l := xgbLog{rank: rank, world: 3, tracker: tracker, accuracy: "0.9644", model: xgbModel, serial: "equals"}
			if rank == 0 {
				l.tracker = masterIP + ":9999"
			}
			if edit != nil {
				edit(&l)
			}
			out[p.Name] = l.String()
		}
		return out
	}
	cases := []struct {
		name    string
		logs    map[string]string
		want    string // the summary, or with wantErr the error's start
		wantErr bool
	}{
		{name: "three ranks, one model", logs: logs(nil),
			want: "3 ranks (0=xgboost-digits-master-0 1=xgboost-digits-worker-0 2=xgboost-digits-worker-1) joined the tracker at " +
				tracker + " (the master at " + masterIP + ":9999), test accuracy 0.9644, one model on every rank (sha256 081d629d5f81…), the serial model"},
		{name: "a pod saw its variables contradict each other", wantErr: true,
			logs: logs(func(l *xgbLog) {
				if l.rank == 2 {
					l.mismatch = "DMLC_NUM_WORKER='2', want '3'"
				}
			}),
			want: "pod xgboost-digits-worker-1: MISMATCH rank 2: DMLC_NUM_WORKER='2', want '3'"},
		{name: "the tracker ranked the workers by host, not by DMLC_TASK_ID", wantErr: true,
			logs: logs(func(l *xgbLog) { l.rank = map[int]int{0: 0, 1: 2, 2: 1}[l.rank] }),
			want: `pod xgboost-digits-worker-0 joined as rank 2 but was injected RANK="1"`},
		{name: "a worker trained alone: a world of 1", wantErr: true,
			logs: logs(func(l *xgbLog) {
				if l.rank == 1 {
					l.world = 1
				}
			}),
			want: "pod xgboost-digits-worker-0 joined a world of 1 ranks, pod xgboost-digits-master-0 one of 3"},
		{name: "everyone in a world of 2", wantErr: true,
			logs: logs(func(l *xgbLog) { l.world = 2 }),
			want: `pod xgboost-digits-master-0 joined a world of 2 ranks but was injected WORLD_SIZE="3"`},
		{name: "a tracker elsewhere", wantErr: true,
			logs: logs(func(l *xgbLog) { l.tracker = "10.0.0.1:9999" }),
			want: "pod xgboost-digits-master-0 joined the tracker at 10.0.0.1:9999 but was injected $(POD_IP):9999"},
		{name: "the master joined at a name where its own address was injected", wantErr: true,
			logs: logs(func(l *xgbLog) {
				if l.rank == 0 {
					l.tracker = tracker
				}
			}),
			want: "pod xgboost-digits-master-0 joined the tracker at " + tracker + " but was injected $(POD_IP):9999"},
		{name: "a rank ended with another model", wantErr: true,
			logs: logs(func(l *xgbLog) {
				if l.rank == 2 {
					l.model, l.verdict = xgbOther, "DIFFERS: 2 of 3 ranks have rank 0's "+xgbModel
				}
			}),
			want: "pod xgboost-digits-worker-1 (rank 2): model sha256 " + xgbOther + " DIFFERS"},
		{name: "models differ although each rank says they agree", wantErr: true,
			logs: logs(func(l *xgbLog) {
				if l.rank == 1 {
					l.model = xgbOther
				}
			}),
			want: "pod xgboost-digits-worker-0 (rank 1) ended with model sha256 " + xgbOther},
		{name: "a worker never finished", wantErr: true,
			logs: func() map[string]string {
				out := logs(nil)
				log := out["xgboost-digits-worker-1"]
				out["xgboost-digits-worker-1"] = log[:strings.Index(log, "rank 2: trained")]
				return out
			}(),
			want: "pod xgboost-digits-worker-1 (rank 2) never finished training"},
		{name: "a pod never joined", wantErr: true,
			logs: func() map[string]string {
				out := logs(nil)
				out["xgboost-digits-worker-0"] = "[05:00:18] Connecting to (failed): [xgboost-digits-master-0.xgboost-digits.ns.svc.cluster.local]\n"
				return out
			}(),
			want: "pod xgboost-digits-worker-0 joined the tracker 0 times"},
		{name: "it did not learn", wantErr: true,
			logs: logs(func(l *xgbLog) { l.accuracy = "0.1011" }),
			want: "test accuracy 0.1011 on the held-out digits, want at least 0.9"},
		{name: "the distributed model is not the serial one: the shards were not combined", wantErr: true,
			logs: logs(func(l *xgbLog) { l.serial = "DIFFERS from" }),
			want: "the distributed model differs from the one a single process trains on all 1347 training digits"},
		{name: "the master stopped before its serial check", wantErr: true,
			logs: func() map[string]string {
				out := logs(nil)
				log := out["xgboost-digits-master-0"]
				out["xgboost-digits-master-0"] = log[:strings.Index(log, "master:")]
				return out
			}(),
			want: "the master printed no serial check"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := judgeXGBoost(training.Run{Pods: pods, Logs: tc.logs})
			switch {
			case tc.wantErr && err == nil:
				t.Fatalf("judged good: %s", got)
			case tc.wantErr && !strings.HasPrefix(err.Error(), tc.want):
				t.Errorf("error %q, want it to start with %q", err, tc.want)
			case !tc.wantErr && err != nil:
				t.Fatalf("error: %v", err)
			case !tc.wantErr && got != tc.want:
				t.Errorf("summary\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// The judge reads what train_xgboost.py prints: its format strings make the
// lines the judge's patterns match.
func TestXGBoostLinesMatchTheProgram(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/xgboost/xgboost-digits.yaml")
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cm, err := ex.ConfigMapOf(root, "ns")
	if err != nil {
		t.Fatal(err)
	}
	prog := cm.Data["train_xgboost.py"]
	for _, format := range []string{
		`"rank %d of %d joined tracker at %s"`,
		`"rank %d: test accuracy %.4f on %d held-out digits"`,
		`"rank %d: model sha256 %s agrees across %d ranks"`,
		`"rank %d: model sha256 %s DIFFERS: %d of %d ranks have rank 0's %s"`,
		`"master: serial check: the model %s the one a single process trains on all %d training digits"`,
		`"MISMATCH rank %d: %s"`,
	} {
		if !strings.Contains(prog, format) {
			t.Errorf("train_xgboost.py prints no %s", format)
		}
	}
}

// The hello's Success matches the lines its script printed in a run on
// 127.0.0.1, with the Job's tracker address in place of 127.0.0.1:19995.
func TestXGBoostHello(t *testing.T) {
	h := trainingtest.Hello(t, Sample.Hellos, "example/xgboost/xgboost.yaml")
	pod := func(name, task string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{batch.TaskSpecKey: task}}}
	}
	pods := []*corev1.Pod{pod("xgboost-dist-master-0", "master"), pod("xgboost-dist-worker-0", "worker"), pod("xgboost-dist-worker-1", "worker")}
	good := map[string]string{
		"xgboost-dist-master-0": "master: OK, ranks 1 to 2 joined the tracker at xgboost-dist-master-0.xgboost-dist.ns.svc.cluster.local:9999\n",
		"xgboost-dist-worker-0": "rank 1 of 3: OK, joined the tracker at xgboost-dist-master-0.xgboost-dist.ns.svc.cluster.local:9999\n",
		"xgboost-dist-worker-1": "rank 2 of 3: OK, joined the tracker at xgboost-dist-master-0.xgboost-dist.ns.svc.cluster.local:9999\n",
	}
	if n, err := h.Judge(training.Run{Pods: pods, Logs: good}); err != nil || n != 3 {
		t.Errorf("good run: %d lines, %v", n, err)
	}
	for name, log := range map[string]string{
		"xgboost-dist-master-0": "master: only ranks [1] of 1 to 2 joined\n",
		"xgboost-dist-worker-1": "rank 2: MISMATCH DMLC_TASK_ID='1', want '2'\n",
	} {
		bad := map[string]string{}
		for k, v := range good {
			bad[k] = v
		}
		bad[name] = log
		if _, err := h.Judge(training.Run{Pods: pods, Logs: bad}); err == nil || !strings.Contains(err.Error(), "pod "+name+" printed 0") {
			t.Errorf("%s printed %q: judged %v", name, log, err)
		}
	}
}

func TestSameTracker(t *testing.T) {
	for _, tc := range []struct {
		joined, injected, podIP string
		want                    bool
	}{
		{"m-0.m.ns.svc.cluster.local:9999", "m-0.m.ns.svc.cluster.local:9999", "", true},
		{"m-1.m.ns.svc.cluster.local:9999", "m-0.m.ns.svc.cluster.local:9999", "", false},
		{"10.245.0.7:9999", "$(POD_IP):9999", "10.245.0.7", true},
		{"10.245.0.8:9999", "$(POD_IP):9999", "10.245.0.7", false},
		// A finished pod may no longer show its IP: any IPv4 address.
		{"10.245.0.8:9999", "$(POD_IP):9999", "", true},
		{"m-0.m.ns.svc.cluster.local:9999", "$(POD_IP):9999", "", false},
		{"10.245.0.8:9998", "$(POD_IP):9999", "", false},
	} {
		if got := sameTracker(tc.joined, tc.injected, tc.podIP); got != tc.want {
			t.Errorf("sameTracker(%q, %q, %q) = %v, want %v", tc.joined, tc.injected, tc.podIP, got, tc.want)
		}
	}
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/xgboost/xgboost-digits.yaml": {
			Joined: []string{"rank 1 of 3 joined tracker at xgboost-digits-master-0.xgboost-digits.ns.svc.cluster.local:9999"},
		},
	})
}
