package dasksample

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/internal/training/trainingtest"
	"github.com/vcplugins/framework-plugins/plugins/dask"
)

func TestJudgeDask(t *testing.T) {
	ex := trainingtest.Example(t, Sample.Training, "example/dask/dask-digits.yaml")
	_, pods := trainingtest.Pods(t, ex, dask.New)
	byName := map[string]*corev1.Pod{}
	for i, p := range pods {
		p.Status.PodIP = fmt.Sprintf("10.245.0.%d", i+2)
		byName[p.Name] = p
	}
	const (
		sched   = "dask-digits-scheduler-0"
		worker0 = "dask-digits-worker-0"
		worker1 = "dask-digits-worker-1"
		client  = "dask-digits-client-0"
		address = "tcp://dask-digits-scheduler-0.dask-digits.ns.svc.cluster.local:8786"
	)
	w0 := "tcp://" + byName[worker0].Status.PodIP + ":41000"
	w1 := "tcp://" + byName[worker1].Status.PodIP + ":42000"
	clientLog := "client: connected to the scheduler at tcp://10.245.0.2:8786 (DASK_SCHEDULER_ADDRESS=" + address + ")\n" +
		"client: 2 workers: " + w0 + "=" + worker0 + " " + w1 + "=" + worker1 + "\n" +
		"client: part 0 (rows 0-749) held and computed by " + w0 + " (" + worker0 + ")\n" +
		"client: part 1 (rows 750-1499) held and computed by " + w1 + " (" + worker1 + ")\n" +
		"client: result OK: the 2 workers' normal equations match the local computation (max diff 9.1e-13); test accuracy 0.9899 on 297 held-out digits\n"
	workerLog := "2026-11-26 04:58:56,258 - distributed.worker - INFO - Waiting to connect to: " + address + "\n" +
		"2026-11-26 04:58:56,316 - distributed.worker - INFO -         Registered to:      " + address + "\n"
	tests := []struct {
		name    string
		edit    func(logs map[string]string)
		pods    func() []*corev1.Pod
		wantErr string
	}{
		{name: "the client fitted the digits on both workers"},
		{
			name:    "the client failed",
			edit:    func(l map[string]string) { l[client] += "client: FAILED: test accuracy 0.5000, want at least 0.9\n" },
			wantErr: "client: FAILED: test accuracy 0.5000",
		},
		{
			name:    "the client never connected",
			edit:    func(l map[string]string) { l[client] = "" },
			wantErr: "never connected",
		},
		{
			name: "the client ran with another address",
			edit: func(l map[string]string) {
				l[client] = strings.Replace(l[client], "DASK_SCHEDULER_ADDRESS="+address, "DASK_SCHEDULER_ADDRESS=tcp://10.0.0.1:8786", 1)
			},
			wantErr: `the client ran with DASK_SCHEDULER_ADDRESS="tcp://10.0.0.1:8786"`,
		},
		{
			name: "the client saw one worker",
			edit: func(l map[string]string) {
				l[client] = strings.Replace(l[client], "client: 2 workers: "+w0+"="+worker0+" ", "client: 1 workers: ", 1)
			},
			wantErr: "the client saw 1 workers, the Job has 2",
		},
		{
			name:    "a worker not named after its pod",
			edit:    func(l map[string]string) { l[client] = strings.Replace(l[client], w1+"="+worker1, w1+"="+w1, 1) },
			wantErr: `a worker named "` + w1 + `", which is not a worker pod`,
		},
		{
			name: "a worker at another pod's IP",
			edit: func(l map[string]string) {
				l[client] = strings.ReplaceAll(l[client], w1, "tcp://10.245.0.99:42000")
			},
			wantErr: "worker " + worker1 + " is at tcp://10.245.0.99:42000, its pod's IP is",
		},
		{
			name:    "a worker never registered",
			edit:    func(l map[string]string) { l[worker1] = "" },
			wantErr: "worker pod " + worker1 + " never registered",
		},
		{
			name: "a worker registered elsewhere",
			edit: func(l map[string]string) {
				l[worker0] = strings.ReplaceAll(l[worker0], address, "tcp://10.0.0.1:8786")
			},
			wantErr: "worker pod " + worker0 + " registered to tcp://10.0.0.1:8786, not to its DASK_SCHEDULER_ADDRESS " + address,
		},
		{
			name: "both parts on one worker",
			edit: func(l map[string]string) {
				l[client] = strings.Replace(l[client], "held and computed by "+w1+" ("+worker1+")", "held and computed by "+w0+" ("+worker0+")", 1)
			},
			wantErr: "worker " + worker0 + " computed parts 0 and 1",
		},
		{
			name: "a part computed at another address",
			edit: func(l map[string]string) {
				l[client] = strings.Replace(l[client], "held and computed by "+w1, "held and computed by tcp://10.245.0.99:1", 1)
			},
			wantErr: "part 1 was computed by tcp://10.245.0.99:1",
		},
		{
			name: "a worker computed nothing",
			edit: func(l map[string]string) {
				l[client] = strings.Replace(l[client], "client: part 1 (rows 750-1499) held and computed by "+w1+" ("+worker1+")\n", "", 1)
			},
			wantErr: "worker " + worker1 + " computed no part",
		},
		{
			name: "no result",
			edit: func(l map[string]string) {
				l[client] = l[client][:strings.Index(l[client], "client: result OK")]
			},
			wantErr: "never reported a result",
		},
		{
			name: "the result differs from the local one",
			edit: func(l map[string]string) {
				l[client] = strings.Replace(l[client], "max diff 9.1e-13", "max diff 3.0e-02", 1)
			},
			wantErr: "differ from the local ones by 3.0e-02",
		},
		{
			name: "the classifier did not learn",
			edit: func(l map[string]string) {
				l[client] = strings.Replace(l[client], "test accuracy 0.9899", "test accuracy 0.1010", 1)
			},
			wantErr: "test accuracy 0.1010 on the digits, want at least 0.9",
		},
		{
			name: "a worker pod failed",
			pods: func() []*corev1.Pod {
				out := make([]*corev1.Pod, len(pods))
				for i, p := range pods {
					out[i] = p.DeepCopy()
					if p.Name == worker1 {
						out[i].Status.Phase = corev1.PodFailed
					}
				}
				return out
			},
			wantErr: "pod " + worker1 + " failed",
		},
		{
			name: "the injected address does not name the scheduler pod",
			pods: func() []*corev1.Pod {
				out := make([]*corev1.Pod, len(pods))
				for i, p := range pods {
					out[i] = p.DeepCopy()
					if p.Name == client {
						out[i].Spec.Containers[0].Env[0].Value = "tcp://elsewhere:8786"
					}
				}
				return out
			},
			wantErr: `the client was injected DASK_SCHEDULER_ADDRESS="tcp://elsewhere:8786", which does not name the scheduler pod ` + sched,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs := map[string]string{sched: "", worker0: workerLog, worker1: workerLog, client: clientLog}
			if tc.edit != nil {
				tc.edit(logs)
			}
			run := training.Run{Pods: pods, Logs: logs}
			if tc.pods != nil {
				run.Pods = tc.pods()
			}
			summary, err := ex.Judge(run)
			trainingtest.CheckJudged(t, summary, err, tc.wantErr)
		})
	}
}

// The first lines and listening lines of each example as its program (or
// its framework's daemon) prints them: Joined.Line must match the first,
// Listening the second, and neither a line printed before.
func TestExampleLines(t *testing.T) {
	trainingtest.CheckLines(t, Sample.Training, map[string]trainingtest.Lines{
		"example/dask/dask-digits.yaml": {
			Joined: []string{
				"2026-11-26 04:58:56,316 - distributed.scheduler - INFO -   Scheduler at:   tcp://10.88.0.9:8786",
				"2026-11-26 04:58:56,316 - distributed.worker - INFO -         Registered to:      tcp://dask-digits-scheduler-0.dask-digits.ns.svc.cluster.local:8786",
				"client: connected to the scheduler at tcp://10.88.0.9:8786 (DASK_SCHEDULER_ADDRESS=tcp://dask-digits-scheduler-0.dask-digits.ns.svc.cluster.local:8786)",
			},
			Listening: []string{"2026-11-26 04:58:56,316 - distributed.scheduler - INFO -   Scheduler at:   tcp://10.88.0.9:8786"},
			Neither:   []string{"2026-11-26 04:58:55,001 - distributed.scheduler - INFO - -----------------------------------------------"},
		},
	})
}
