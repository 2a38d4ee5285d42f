package dasksample

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/sample"
	"github.com/vcplugins/framework-plugins/plugins/dask"
)

// runPod runs the dask plugin's hooks for the pod index of task and returns it.
func runPod(t *testing.T, job *batch.Job, task string, index int) *v1.Pod {
	t.Helper()
	return jobtest.RunPod(t, dask.New, dask.Name, job, task, index)
}

// sampleJob is the Sample's base Job with args: its roles' default tasks
// with their replicas.
func sampleJob(args ...string) *batch.Job {
	w := jobtest.MakeJob("dk")
	for _, r := range Sample.Roles {
		w.Task(jobtest.MakeTask(r.Flag, r.Replicas).Obj())
	}
	return w.Plugin(dask.Name, args...).Obj()
}

// The Sample's Check passes every pod of the base Job as the plugin builds
// it, and catches a wrong address, a missing or wrong worker name, and a
// worker name on another role.
func TestSampleCheck(t *testing.T) {
	job := sampleJob("--port=9000")
	check := func(role string, index int, env map[string]string) error {
		return Sample.Check(sample.Pod{Job: job, Role: role, Index: index, Workers: 2, Env: env})
	}
	for _, r := range Sample.Roles {
		for i := 0; i < int(r.Replicas); i++ {
			pod := runPod(t, job, r.Flag, i)
			if err := check(r.Flag, i, jobtest.Env(pod, 0)); err != nil {
				t.Errorf("%s %d: %v", r.Flag, i, err)
			}
		}
	}
	addr := "tcp://dk-scheduler-0.dk.default.svc.cluster.local:9000"
	cases := map[string]struct {
		role    string
		index   int
		env     map[string]string
		wantErr string
	}{
		"wrong port": {
			role: "client", env: map[string]string{dask.EnvSchedulerAddress: "tcp://dk-scheduler-0.dk.default.svc.cluster.local:8786"},
			wantErr: `dask: client pod 0: DASK_SCHEDULER_ADDRESS="tcp://dk-scheduler-0.dk.default.svc.cluster.local:8786", want "tcp://dk-scheduler-0.dk.default.svc.cluster.local:9000"`,
		},
		"no address": {
			role: "scheduler", env: map[string]string{},
			wantErr: `dask: scheduler pod 0: DASK_SCHEDULER_ADDRESS="", want "tcp://dk-scheduler-0.dk.default.svc.cluster.local:9000"`,
		},
		"another worker's name": {
			role: "worker", index: 1, env: map[string]string{dask.EnvSchedulerAddress: addr, dask.EnvWorkerName: "dk-worker-0"},
			wantErr: `dask: worker pod 1: DASK_WORKER_NAME="dk-worker-0", want "dk-worker-1"`,
		},
		"a worker name on the client": {
			role: "client", env: map[string]string{dask.EnvSchedulerAddress: addr, dask.EnvWorkerName: "dk-client-0"},
			wantErr: `dask: client pod 0: DASK_WORKER_NAME="dk-client-0", want it unset (workers only)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := check(tc.role, tc.index, tc.env)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}
