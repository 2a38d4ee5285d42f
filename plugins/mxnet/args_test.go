package mxnet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

func TestParseArgs(t *testing.T) {
	mk := jobtest.MakeTask
	full := jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("server", 2).Obj()).Task(mk("worker", 2).Obj()).Obj()
	noServer := jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("worker", 2).Obj()).Obj()
	defaults := Args{Scheduler: "scheduler", Server: "server", Worker: "worker", Port: 9091,
		Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}}
	cases := map[string]struct {
		args    []string
		job     *batch.Job
		want    *Args
		wantErr string
	}{
		"defaults":               {job: full, want: &defaults},
		"the server is optional": {job: noServer, want: &defaults},
		"defaults without a job": {want: &defaults},
		"every flag": {
			args: []string{"--scheduler=s", "--server=p", "--worker=w", "--port=9000", "--wait=false", "--wait-timeout=90s", "--wait-image=busybox:1"},
			want: &Args{Scheduler: "s", Server: "p", Worker: "w", Port: 9000, Wait: wait.Options{Timeout: 90 * time.Second, Image: "busybox:1"}},
		},
		"renamed roles fit the job": {
			args: []string{"--scheduler=sched", "--server=ps", "--worker=trainer"},
			job: jobtest.MakeJob("mx").Task(mk("sched", 1).Obj()).Task(mk("ps", 1).Obj()).
				Task(mk("trainer", 1).Obj()).Obj(),
			want: &Args{Scheduler: "sched", Server: "ps", Worker: "trainer", Port: 9091, Wait: defaults.Wait},
		},
		"bare number timeout is seconds": {
			args: []string{"--wait-timeout=30"},
			want: &Args{Scheduler: "scheduler", Server: "server", Worker: "worker", Port: 9091, Wait: wait.Options{Enabled: true, Timeout: 30 * time.Second}},
		},
		"unknown flag": {
			args:    []string{"--prot=9091"},
			job:     full,
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--prot=9091": plugin mxnet: unknown flag --prot for plugin mxnet (did you mean --port=9091?); accepted flags: --port, --scheduler, --server, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"a tensorflow flag is unknown": {
			args:    []string{"--ps=server"},
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--ps=server": plugin mxnet: unknown flag --ps for plugin mxnet; accepted flags: --port, --scheduler, --server, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"port not a number": {
			args:    []string{"--port=http"},
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--port=http": plugin mxnet: --port=http: must be an integer`,
		},
		"port zero": {
			args:    []string{"--port=0"},
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--port=0": plugin mxnet: --port=0: must be between 1 and 65535`,
		},
		"port too large": {
			args:    []string{"--worker=worker", "--port=65536"},
			wantErr: `spec.plugins[mxnet][1]: Invalid value: "--port=65536": plugin mxnet: --port=65536: must be between 1 and 65535`,
		},
		"empty role": {
			args:    []string{"--scheduler="},
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--scheduler=": plugin mxnet: --scheduler=: must not be empty`,
		},
		"positional argument": {
			args:    []string{"scheduler"},
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "scheduler": plugin mxnet: unexpected argument: arguments are --flag=value; accepted flags: --port, --scheduler, --server, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"flag without value": {
			args:    []string{"--port"},
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--port": plugin mxnet: flag --port needs a value (--port=<value>)`,
		},
		"bad boolean": {
			args:    []string{"--wait=maybe"},
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--wait=maybe": plugin mxnet: --wait=maybe: must be true or false`,
		},
		"missing scheduler": {
			job:     jobtest.MakeJob("mx").Task(mk("server", 1).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[mxnet]: Invalid value: "--scheduler=scheduler (default)": plugin mxnet: --scheduler names task "scheduler", which the job does not have (tasks: server, worker)`,
		},
		"renamed scheduler missing": {
			args:    []string{"--scheduler=sched"},
			job:     full,
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--scheduler=sched": plugin mxnet: --scheduler names task "sched", which the job does not have (tasks: scheduler, server, worker)`,
		},
		"scheduler without replicas": {
			job:     jobtest.MakeJob("mx").Task(mk("scheduler", 0).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[mxnet]: Invalid value: "--scheduler=scheduler (default)": plugin mxnet: --scheduler names task "scheduler", which has no replicas`,
		},
		"two schedulers": {
			job:     jobtest.MakeJob("mx").Task(mk("scheduler", 2).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[mxnet]: Invalid value: "--scheduler=scheduler (default)": plugin mxnet: task "scheduler" (--scheduler) must have at most 1 replica, has 2`,
		},
		"missing worker": {
			job:     jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("server", 1).Obj()).Obj(),
			wantErr: `spec.plugins[mxnet]: Invalid value: "--worker=worker (default)": plugin mxnet: --worker names task "worker", which the job does not have (tasks: scheduler, server)`,
		},
		"worker without replicas": {
			args:    []string{"--worker=trainer"},
			job:     jobtest.MakeJob("mx").Task(mk("scheduler", 1).Obj()).Task(mk("trainer", 0).Obj()).Obj(),
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--worker=trainer": plugin mxnet: --worker names task "trainer", which has no replicas`,
		},
		"explicit --server naming a missing task": {
			args:    []string{"--server=ps"},
			job:     noServer,
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--server=ps": plugin mxnet: --server names task "ps", which the job does not have (tasks: scheduler, worker)`,
		},
		"explicit --server naming the default task, which is missing": {
			args:    []string{"--server=server"},
			job:     noServer,
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--server=server": plugin mxnet: --server names task "server", which the job does not have (tasks: scheduler, worker)`,
		},
		"one task, two roles": {
			args:    []string{"--worker=server"},
			job:     full,
			wantErr: `spec.plugins[mxnet][0]: Invalid value: "--worker=server": plugin mxnet: --server and --worker both name task "server"; a task can play one role`,
		},
		"every problem is reported": {
			args: []string{"--port=0", "--server=ps"},
			job:  jobtest.MakeJob("mx").Task(mk("scheduler", 2).Obj()).Obj(),
			wantErr: `[spec.plugins[mxnet][0]: Invalid value: "--port=0": plugin mxnet: --port=0: must be between 1 and 65535, ` +
				`spec.plugins[mxnet]: Invalid value: "--scheduler=scheduler (default)": plugin mxnet: task "scheduler" (--scheduler) must have at most 1 replica, has 2, ` +
				`spec.plugins[mxnet][1]: Invalid value: "--server=ps": plugin mxnet: --server names task "ps", which the job does not have (tasks: scheduler), ` +
				`spec.plugins[mxnet]: Invalid value: "--worker=worker (default)": plugin mxnet: --worker names task "worker", which the job does not have (tasks: scheduler)]`,
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
