package jax

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
	workers := jobtest.MakeJob("jx").Task(mk("worker", 3).Obj()).Obj()
	defaults := Args{Worker: "worker", Port: 6666, Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}}
	cases := map[string]struct {
		args    []string
		job     *batch.Job
		want    *Args
		wantErr string
	}{
		"defaults":               {job: workers, want: &defaults},
		"defaults without a job": {want: &defaults},
		"one process": {
			job:  jobtest.MakeJob("jx").Task(mk("worker", 1).Obj()).Obj(),
			want: &defaults,
		},
		"other tasks are allowed": {
			job:  jobtest.MakeJob("jx").Task(mk("tensorboard", 1).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			want: &defaults,
		},
		"every flag": {
			args: []string{"--worker=trainer", "--port=1234", "--wait=false", "--wait-timeout=90s", "--wait-image=busybox:1"},
			job:  jobtest.MakeJob("jx").Task(mk("trainer", 2).Obj()).Obj(),
			want: &Args{Worker: "trainer", Port: 1234, Wait: wait.Options{Timeout: 90 * time.Second, Image: "busybox:1"}},
		},
		"two-item spelling": {
			args: []string{"--port", "7000"},
			job:  workers,
			want: &Args{Worker: "worker", Port: 7000, Wait: defaults.Wait},
		},
		"unknown flag": {
			args:    []string{"--prot=6666"},
			job:     workers,
			wantErr: `spec.plugins[jax][0]: Invalid value: "--prot=6666": plugin jax: unknown flag --prot for plugin jax (did you mean --port=6666?); accepted flags: --port, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"a pytorch flag is unknown": {
			args:    []string{"--master=worker"},
			wantErr: `spec.plugins[jax][0]: Invalid value: "--master=worker": plugin jax: unknown flag --master for plugin jax; accepted flags: --port, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"port not a number": {
			args:    []string{"--port=coordinator"},
			wantErr: `spec.plugins[jax][0]: Invalid value: "--port=coordinator": plugin jax: --port=coordinator: must be an integer`,
		},
		"port zero": {
			args:    []string{"--port=0"},
			wantErr: `spec.plugins[jax][0]: Invalid value: "--port=0": plugin jax: --port=0: must be between 1 and 65535`,
		},
		"port too large": {
			args:    []string{"--worker=worker", "--port=65536"},
			wantErr: `spec.plugins[jax][1]: Invalid value: "--port=65536": plugin jax: --port=65536: must be between 1 and 65535`,
		},
		"empty worker": {
			args:    []string{"--worker="},
			wantErr: `spec.plugins[jax][0]: Invalid value: "--worker=": plugin jax: --worker=: must not be empty`,
		},
		"positional argument": {
			args:    []string{"worker"},
			wantErr: `spec.plugins[jax][0]: Invalid value: "worker": plugin jax: unexpected argument: arguments are --flag=value; accepted flags: --port, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"flag without value": {
			args:    []string{"--port"},
			wantErr: `spec.plugins[jax][0]: Invalid value: "--port": plugin jax: flag --port needs a value (--port=<value>)`,
		},
		"bad boolean": {
			args:    []string{"--wait=maybe"},
			wantErr: `spec.plugins[jax][0]: Invalid value: "--wait=maybe": plugin jax: --wait=maybe: must be true or false`,
		},
		"missing worker": {
			job:     jobtest.MakeJob("jx").Task(mk("main", 2).Obj()).Obj(),
			wantErr: `spec.plugins[jax]: Invalid value: "--worker=worker (default)": plugin jax: --worker names task "worker", which the job does not have (tasks: main)`,
		},
		"renamed worker missing": {
			args:    []string{"--worker=trainer"},
			job:     workers,
			wantErr: `spec.plugins[jax][0]: Invalid value: "--worker=trainer": plugin jax: --worker names task "trainer", which the job does not have (tasks: worker)`,
		},
		"worker without replicas": {
			job:     jobtest.MakeJob("jx").Task(mk("worker", 0).Obj()).Obj(),
			wantErr: `spec.plugins[jax]: Invalid value: "--worker=worker (default)": plugin jax: --worker names task "worker", which has no replicas`,
		},
		"every problem is reported": {
			args: []string{"--port=0", "--wait-timeout=-1s"},
			job:  jobtest.MakeJob("jx").Task(mk("main", 2).Obj()).Obj(),
			wantErr: `[spec.plugins[jax][0]: Invalid value: "--port=0": plugin jax: --port=0: must be between 1 and 65535, ` +
				`spec.plugins[jax][1]: Invalid value: "--wait-timeout=-1s": plugin jax: --wait-timeout=-1s: must not be negative, ` +
				`spec.plugins[jax]: Invalid value: "--worker=worker (default)": plugin jax: --worker names task "worker", which the job does not have (tasks: main)]`,
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
