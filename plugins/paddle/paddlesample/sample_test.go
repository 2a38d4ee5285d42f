package paddlesample

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins/paddle"
)

// runPod runs the paddle plugin's hooks for the pod index of task and returns it.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, paddle.New, paddle.Name, job, task, index)
}

// sampleJob is the Sample's base Job: each role's task under its flag's
// default name, with the Sample's replicas.
func sampleJob(args ...string) *batch.Job {
	w := jobtest.MakeJob("pd")
	for _, r := range Sample.Roles {
		if r.Replicas > 0 {
			w.Task(jobtest.MakeTask(r.Flag, r.Replicas).Obj())
		}
	}
	return w.Plugin(paddle.Name, args...).Obj()
}

// The Sample's Check accepts every pod the plugin made and names what is
// wrong with one it did not.
func TestSampleCheck(t *testing.T) {
	job := sampleJob("--port=37777")
	check := func(role string, index int, env map[string]string) error {
		task, _ := jobs.Task(job, role)
		pod := jobs.NewPod(job, task, index)
		return Sample.Check(sample.Pod{Job: job, Pod: pod, Role: role, Index: index, Workers: 2, Env: env})
	}
	for _, tc := range []struct {
		role  string
		index int
	}{{"master", 0}, {"worker", 0}, {"worker", 1}} {
		pod := runPod(t, job, tc.role, tc.index)
		env := jobtest.Env(pod, 0)
		if err := check(tc.role, tc.index, env); err != nil {
			t.Errorf("%s %d: %v", tc.role, tc.index, err)
		}
		env[paddle.EnvPodIP] = "10.0.0.1"
		if tc.role == "master" {
			env[paddle.EnvMaster] = "10.0.0.1:37777"
		}
		if err := check(tc.role, tc.index, env); err != nil {
			t.Errorf("%s %d with POD_IP resolved: %v", tc.role, tc.index, err)
		}
	}
	worker := jobtest.Env(runPod(t, job, "worker", 1), 0)
	bad := map[string]func(map[string]string){
		`PADDLE_MASTER="pd-worker-0.pd.default.svc.cluster.local:37777", want "pd-master-0.pd.default.svc.cluster.local:37777"`: func(e map[string]string) { e[paddle.EnvMaster] = "pd-worker-0.pd.default.svc.cluster.local:37777" },
		`PADDLE_NNODES="2", want "3"`:          func(e map[string]string) { e[paddle.EnvNNodes] = "2" },
		`PADDLE_JOB_ID="", want "pd"`:          func(e map[string]string) { delete(e, paddle.EnvJobID) },
		`PADDLE_SERVER_NUM="1", want it unset`: func(e map[string]string) { e[paddle.EnvServerNum] = "1" },
	}
	for want, edit := range bad {
		env := map[string]string{}
		for k, v := range worker {
			env[k] = v
		}
		edit(env)
		if err := check("worker", 1, env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v, want an error containing %q", err, want)
		}
	}
}
