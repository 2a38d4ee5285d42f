package dask

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// daskJob is the Job the argument errors are reported against unless a case
// needs other tasks: a scheduler, 2 workers and a client.
func daskJob() *batch.Job {
	mk := jobtest.MakeTask
	return jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Obj()).Task(mk("client", 1).Obj()).Obj()
}

func TestParseArgs(t *testing.T) {
	mk := jobtest.MakeTask
	full := daskJob()
	defaults := Args{Scheduler: "scheduler", Worker: "worker", Client: "client", Port: 8786,
		Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}}
	cases := map[string]struct {
		args    []string
		job     *batch.Job
		want    *Args
		wantErr string
	}{
		"defaults":               {job: full, want: &defaults},
		"defaults without a job": {want: &defaults},
		"every flag": {
			args: []string{"--scheduler=s", "--worker=w", "--client=c", "--port=9000", "--wait=false", "--wait-timeout=90s", "--wait-image=busybox:1"},
			want: &Args{Scheduler: "s", Worker: "w", Client: "c", Port: 9000, Wait: wait.Options{Timeout: 90 * time.Second, Image: "busybox:1"}},
		},
		"renamed roles fit the job": {
			args: []string{"--scheduler=sched", "--worker=dask-worker", "--client=runner"},
			job: jobtest.MakeJob("dk").Task(mk("sched", 1).Obj()).Task(mk("dask-worker", 3).Obj()).
				Task(mk("runner", 1).Obj()).Obj(),
			want: &Args{Scheduler: "sched", Worker: "dask-worker", Client: "runner", Port: 8786, Wait: defaults.Wait},
		},
		"two-item flag spelling": {
			args: []string{"--port", "8787", "--wait-timeout", "30"},
			job:  full,
			want: &Args{Scheduler: "scheduler", Worker: "worker", Client: "client", Port: 8787, Wait: wait.Options{Enabled: true, Timeout: 30 * time.Second}},
		},
		"unknown flag": {
			args:    []string{"--prot=8786"},
			job:     full,
			wantErr: `spec.plugins[dask][0]: Invalid value: "--prot=8786": plugin dask: unknown flag --prot for plugin dask (did you mean --port=8786?); accepted flags: --client, --port, --scheduler, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"an mxnet flag is unknown": {
			args:    []string{"--server=server"},
			wantErr: `spec.plugins[dask][0]: Invalid value: "--server=server": plugin dask: unknown flag --server for plugin dask; accepted flags: --client, --port, --scheduler, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"port not a number": {
			args:    []string{"--port=tcp-comm"},
			wantErr: `spec.plugins[dask][0]: Invalid value: "--port=tcp-comm": plugin dask: --port=tcp-comm: must be an integer`,
		},
		"port too large": {
			args:    []string{"--worker=worker", "--port=87860"},
			wantErr: `spec.plugins[dask][1]: Invalid value: "--port=87860": plugin dask: --port=87860: must be between 1 and 65535`,
		},
		"empty role": {
			args:    []string{"--client="},
			wantErr: `spec.plugins[dask][0]: Invalid value: "--client=": plugin dask: --client=: must not be empty`,
		},
		"negative wait timeout": {
			args:    []string{"--wait-timeout=-1m"},
			wantErr: `spec.plugins[dask][0]: Invalid value: "--wait-timeout=-1m": plugin dask: --wait-timeout=-1m: must not be negative`,
		},
		"missing scheduler": {
			job:     jobtest.MakeJob("dk").Task(mk("worker", 2).Obj()).Task(mk("client", 1).Obj()).Obj(),
			wantErr: `spec.plugins[dask]: Invalid value: "--scheduler=scheduler (default)": plugin dask: --scheduler names task "scheduler", which the job does not have (tasks: worker, client)`,
		},
		"two schedulers": {
			job:     jobtest.MakeJob("dk").Task(mk("scheduler", 2).Obj()).Task(mk("worker", 2).Obj()).Task(mk("client", 1).Obj()).Obj(),
			wantErr: `spec.plugins[dask]: Invalid value: "--scheduler=scheduler (default)": plugin dask: task "scheduler" (--scheduler) must have at most 1 replica, has 2`,
		},
		"missing worker": {
			job:     jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("client", 1).Obj()).Obj(),
			wantErr: `spec.plugins[dask]: Invalid value: "--worker=worker (default)": plugin dask: --worker names task "worker", which the job does not have (tasks: scheduler, client)`,
		},
		"worker without replicas": {
			args:    []string{"--worker=dask-worker"},
			job:     jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("dask-worker", 0).Obj()).Task(mk("client", 1).Obj()).Obj(),
			wantErr: `spec.plugins[dask][0]: Invalid value: "--worker=dask-worker": plugin dask: --worker names task "dask-worker", which has no replicas`,
		},
		"missing client": {
			job:     jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[dask]: Invalid value: "--client=client (default)": plugin dask: --client names task "client", which the job does not have (tasks: scheduler, worker)`,
		},
		"renamed client missing": {
			args:    []string{"--client=runner"},
			job:     full,
			wantErr: `spec.plugins[dask][0]: Invalid value: "--client=runner": plugin dask: --client names task "runner", which the job does not have (tasks: scheduler, worker, client)`,
		},
		"two clients": {
			job:     jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Obj()).Task(mk("client", 2).Obj()).Obj(),
			wantErr: `spec.plugins[dask]: Invalid value: "--client=client (default)": plugin dask: task "client" (--client) must have at most 1 replica, has 2`,
		},
		"client without replicas": {
			job:     jobtest.MakeJob("dk").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Obj()).Task(mk("client", 0).Obj()).Obj(),
			wantErr: `spec.plugins[dask]: Invalid value: "--client=client (default)": plugin dask: --client names task "client", which has no replicas`,
		},
		"one task, two roles": {
			args:    []string{"--client=scheduler"},
			job:     full,
			wantErr: `spec.plugins[dask][0]: Invalid value: "--client=scheduler": plugin dask: --scheduler and --client both name task "scheduler"; a task can play one role`,
		},
		"every problem is reported": {
			args: []string{"--port=0", "--client=runner"},
			job:  jobtest.MakeJob("dk").Task(mk("scheduler", 2).Obj()).Obj(),
			wantErr: `[spec.plugins[dask][0]: Invalid value: "--port=0": plugin dask: --port=0: must be between 1 and 65535, ` +
				`spec.plugins[dask]: Invalid value: "--scheduler=scheduler (default)": plugin dask: task "scheduler" (--scheduler) must have at most 1 replica, has 2, ` +
				`spec.plugins[dask]: Invalid value: "--worker=worker (default)": plugin dask: --worker names task "worker", which the job does not have (tasks: scheduler), ` +
				`spec.plugins[dask][1]: Invalid value: "--client=runner": plugin dask: --client names task "runner", which the job does not have (tasks: scheduler)]`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := ParseArgs(tc.args, tc.job)
			if diff := cmp.Diff(tc.wantErr, jobtest.ErrorString(errs)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("args (-want +got):\n%s", diff)
				}
			}
		})
	}
}
