package xgboostsample

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/xgboost"
)

// baseJob is the Sample's base Job: a task per role with replicas, named as
// the role flag's default, workers scaled to workers when > 0.
func baseJob(workers int32, args ...string) *batch.Job {
	b := jobtest.MakeJob("xgb")
	for _, r := range Sample.Roles {
		n := r.Replicas
		if r.Flag == Sample.Worker && workers > 0 {
			n = workers
		}
		if n > 0 {
			b.Task(jobtest.MakeTask(r.Flag, n).Obj())
		}
	}
	return b.Plugin(xgboost.Name, args...).Obj()
}

// Check passes on every pod the plugin made and names what is wrong on a
// pod it did not make right.
func TestSampleCheck(t *testing.T) {
	const workers = 6
	job := baseJob(workers)
	for _, r := range Sample.Roles {
		task, _ := jobs.Task(job, r.Flag)
		for i := 0; i < int(task.Replicas); i++ {
			pod := runPod(t, job, r.Flag, i)
			c := sample.Pod{Job: job, Pod: pod, Role: r.Flag, Index: i, Workers: workers, Env: jobtest.Env(pod, 0)}
			if err := Sample.Check(c); err != nil {
				t.Errorf("%s %d: %v", r.Flag, i, err)
			}
		}
	}
	pod := runPod(t, job, "worker", 2)
	cases := map[string]struct {
		edit func(map[string]string)
		want string
	}{
		"nothing injected":       {func(env map[string]string) { clear(env) }, `worker 2: RANK = "" (set: false), want "3"`},
		"rank of the index":      {func(env map[string]string) { env[xgboost.EnvRank] = "2" }, `worker 2: RANK = "2" (set: true), want "3"`},
		"task id not the rank":   {func(env map[string]string) { env[xgboost.EnvTaskID] = "0" }, `worker 2: DMLC_TASK_ID = "0" (set: true), want "3"`},
		"workers only counted":   {func(env map[string]string) { env[xgboost.EnvNumWorker] = "6" }, `worker 2: DMLC_NUM_WORKER = "6" (set: true), want "7"`},
		"tracker somewhere else": {func(env map[string]string) { env[xgboost.EnvTrackerURI] = "xgb-worker-0.xgb.default.svc.cluster.local" }, `worker 2: DMLC_TRACKER_URI = "xgb-worker-0.xgb.default.svc.cluster.local" (set: true), want "xgb-master-0.xgb.default.svc.cluster.local"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := jobtest.Env(pod, 0)
			tc.edit(env)
			err := Sample.Check(sample.Pod{Job: job, Pod: pod, Role: "worker", Index: 2, Workers: workers, Env: env})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
		})
	}
}

// runPod runs the xgboost plugin's hooks for the pod index of task and returns it.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, xgboost.New, xgboost.Name, job, task, index)
}
