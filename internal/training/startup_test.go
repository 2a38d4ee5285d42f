package training

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

// t0 is the base of the test clocks; at(s) is s seconds after it.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// stamped is a log as the kubelet returns it with Timestamps: each line
// after its time, in seconds after t0.
func stamped(lines ...any) string {
	var b strings.Builder
	for i := 0; i < len(lines); i += 2 {
		b.WriteString(at(lines[i].(float64)).Format("2006-01-02T15:04:05.000000000Z07:00"))
		b.WriteString(" " + lines[i+1].(string) + "\n")
	}
	return b.String()
}

func TestParseTimestamped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		log     string
		want    []LogLine
		wantErr string
	}{
		{name: "empty", log: ""},
		{
			name: "lines, one empty",
			log:  stamped(0.5, "rank 0 of 3 joined on h", 1.25, "", 2.0, "epoch 1 loss 2.1"),
			want: []LogLine{{at(0.5), "rank 0 of 3 joined on h"}, {at(1.25), ""}, {at(2), "epoch 1 loss 2.1"}},
		},
		{
			name: "last line without a newline",
			log:  strings.TrimSuffix(stamped(0.5, "a b", 1.0, "c"), "\n"),
			want: []LogLine{{at(0.5), "a b"}, {at(1), "c"}},
		},
		{
			name:    "a line without timestamp",
			log:     stamped(0.5, "a") + "no stamp\n",
			want:    []LogLine{{at(0.5), "a"}},
			wantErr: `line 2 of the log, "no stamp": no kubelet timestamp`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTimestamped(tc.log)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestUntimestamped(t *testing.T) {
	lines, err := ParseTimestamped(stamped(0.5, "a b", 1.0, "", 2.0, "c"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("a b\n\nc\n", Untimestamped(lines)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStartedAt(t *testing.T) {
	running := corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at(3))}}}
	done := corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: metav1.NewTime(at(4))}}}
	waiting := corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	other := corev1.ContainerStatus{Name: "sidecar", State: running.State}
	for _, tc := range []struct {
		name     string
		statuses []corev1.ContainerStatus
		want     time.Time
	}{
		{"running", []corev1.ContainerStatus{other, running}, at(3)},
		{"terminated", []corev1.ContainerStatus{done}, at(4)},
		{"waiting", []corev1.ContainerStatus{waiting}, time.Time{}},
		{"another container only", []corev1.ContainerStatus{other}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: tc.statuses}}
			if got := StartedAt(pod, "main"); !got.Equal(tc.want) {
				t.Errorf("StartedAt = %v, want %v", got, tc.want)
			}
		})
	}
}

// taskPod is a pod named name of task.
func taskPod(name, task string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{batch.TaskSpecKey: task}}}
}

func TestJoinedAt(t *testing.T) {
	job := &batch.Job{Spec: batch.JobSpec{Tasks: []batch.TaskSpec{{Name: "master", Replicas: 1}, {Name: "worker", Replicas: 2}}}}
	pods := []*corev1.Pod{taskPod("j-master-0", "master"), taskPod("j-worker-0", "worker"), taskPod("j-worker-1", "worker")}
	// A line that names its rank but not the world, as tf_config_check.py's
	// "chief:0 serves HOST:PORT" (tensorflowsample).
	tf := Joined{Line: regexp.MustCompile(`^(?P<rank>\w+:\d+) serves \S+$`)}
	for _, tc := range []struct {
		name    string
		joined  Joined
		logs    map[string]string
		want    time.Time
		wantErr string
	}{
		{
			name:   "one rank per pod, the last one counts",
			joined: Joined{Line: DigitsJoinedLine},
			logs: map[string]string{
				"j-master-0": stamped(5.0, "rank 0 of 3 joined on j-master-0", 6.0, "epoch 1 loss 2.0"),
				"j-worker-0": stamped(5.25, "rank 1 of 3 joined on j-worker-0"),
				"j-worker-1": stamped(4.5, "rank 2 of 3 joined on j-worker-1"),
			},
			want: at(5.25),
		},
		{
			name:   "every rank in one pod's log (mpirun gathers them)",
			joined: Joined{Line: DigitsJoinedLine},
			logs: map[string]string{
				"j-master-0": stamped(7.0, "rank 1 of 2 joined on w-1", 6.5, "rank 0 of 2 joined on w-0"),
				"j-worker-0": stamped(1.0, "Server listening on 0.0.0.0 port 2222."),
			},
			want: at(7),
		},
		{
			name:   "torchrun's prefix",
			joined: Joined{Line: DigitsJoinedLine},
			logs: map[string]string{
				"j-master-0": stamped(2.0, "[default0]:rank 0 of 2 joined on a"),
				"j-worker-0": stamped(3.0, "[default0]:rank 1 of 2 joined on b"),
			},
			want: at(3),
		},
		{
			name:   "elastic: the first complete round, each rank at its first line",
			joined: Joined{Line: DigitsJoinedLine},
			logs: map[string]string{
				// A round of 2 completes at 4; the round of 3 later.
				"j-master-0": stamped(3.0, "rank 0 of 2 joined on a", 9.0, "rank 0 of 3 joined on a"),
				"j-worker-0": stamped(4.0, "rank 1 of 2 joined on b", 9.5, "rank 1 of 3 joined on b"),
				"j-worker-1": stamped(10.0, "rank 2 of 3 joined on c"),
			},
			want: at(4),
		},
		{
			name:   "a rank missing",
			joined: Joined{Line: DigitsJoinedLine},
			logs: map[string]string{
				"j-master-0": stamped(5.0, "rank 0 of 3 joined on a"),
				"j-worker-0": stamped(5.0, "rank 1 of 3 joined on b"),
				"j-worker-1": stamped(4.0, "Traceback (most recent call last):"),
			},
			wantErr: "2 of 3 ranks printed that they joined",
		},
		{
			name:   "no world: every pod of the Job is a rank",
			joined: tf,
			logs: map[string]string{
				"j-master-0": stamped(1.0, "chief:0 serves a:2222", 2.0, "chief:0 reached ps:0 at b:2222"),
				"j-worker-0": stamped(1.5, "worker:0 serves b:2222"),
				"j-worker-1": stamped(2.5, "worker:1 serves c:2222"),
			},
			want: at(2.5),
		},
		{
			name:   "no world, a pod silent",
			joined: tf,
			logs: map[string]string{
				"j-master-0": stamped(1.0, "chief:0 serves a:2222"),
				"j-worker-0": stamped(1.5, "worker:0 serves b:2222"),
			},
			wantErr: "2 of 3 ranks printed that they joined",
		},
		{
			name:   "no world, the ranks of some tasks only",
			joined: Joined{Line: regexp.MustCompile(`^ready$`), Tasks: []string{"worker"}},
			logs: map[string]string{
				"j-master-0": stamped(9.0, "ready"),
				"j-worker-0": stamped(1.5, "ready"),
				"j-worker-1": stamped(2.5, "ready", 3.0, "ready"),
			},
			want: at(2.5),
		},
		{name: "no logs", joined: Joined{Line: DigitsJoinedLine}, wantErr: "0 of 3 ranks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := map[string][]LogLine{}
			for pod, log := range tc.logs {
				lines, err := ParseTimestamped(log)
				if err != nil {
					t.Fatal(err)
				}
				logs[pod] = lines
			}
			got, err := tc.joined.At(job, pods, logs)
			if !got.Equal(tc.want) {
				t.Errorf("At = %v, want %v", got, tc.want)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
