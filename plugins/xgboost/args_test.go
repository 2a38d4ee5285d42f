package xgboost

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

const acceptedFlags = "accepted flags: --master, --port, --wait, --wait-image, --wait-timeout, --worker"

func TestParseArgs(t *testing.T) {
	mk := jobtest.MakeTask
	full := jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).Obj()
	masterOnly := jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Obj()
	defaults := Args{Master: "master", Worker: "worker", Port: 9999, Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}}
	cases := map[string]struct {
		args    []string
		job     *batch.Job
		want    *Args
		wantErr string
	}{
		"defaults":                    {job: full, want: &defaults},
		"defaults without a job":      {want: &defaults},
		"the worker task is optional": {job: masterOnly, want: &defaults},
		"worker task without replicas counts as none": {
			job:  jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Task(mk("worker", 0).Obj()).Obj(),
			want: &defaults,
		},
		"every flag": {
			args: []string{"--master=m", "--worker=w", "--port=29500", "--wait=false", "--wait-timeout=90s", "--wait-image=busybox:1"},
			want: &Args{Master: "m", Worker: "w", Port: 29500, Wait: wait.Options{Timeout: 90 * time.Second, Image: "busybox:1"}},
		},
		"renamed roles fit the job": {
			args: []string{"--master=tracker", "--worker=trainer"},
			job:  jobtest.MakeJob("xgb").Task(mk("tracker", 1).Obj()).Task(mk("trainer", 3).Obj()).Obj(),
			want: &Args{Master: "tracker", Worker: "trainer", Port: 9999, Wait: defaults.Wait},
		},
		"two list items for one flag": {
			args: []string{"--port", "9000"},
			job:  full,
			want: &Args{Master: "master", Worker: "worker", Port: 9000, Wait: defaults.Wait},
		},
		"unknown flag": {
			args:    []string{"--prot=9999"},
			job:     full,
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--prot=9999": plugin xgboost: unknown flag --prot for plugin xgboost (did you mean --port=9999?); ` + acceptedFlags,
		},
		"an mxnet flag is unknown": {
			args:    []string{"--scheduler=master"},
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--scheduler=master": plugin xgboost: unknown flag --scheduler for plugin xgboost; ` + acceptedFlags,
		},
		"port not a number": {
			args:    []string{"--port=xgboostjob-port"},
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--port=xgboostjob-port": plugin xgboost: --port=xgboostjob-port: must be an integer`,
		},
		"port with a trailing space": {
			args:    []string{"--port=9999 "},
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--port=9999 ": plugin xgboost: --port=9999 : must be an integer`,
		},
		"port too large": {
			args:    []string{"--master=master", "--port=65536"},
			wantErr: `spec.plugins[xgboost][1]: Invalid value: "--port=65536": plugin xgboost: --port=65536: must be between 1 and 65535`,
		},
		"empty role": {
			args:    []string{"--worker="},
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--worker=": plugin xgboost: --worker=: must not be empty`,
		},
		"positional argument": {
			args:    []string{"master"},
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "master": plugin xgboost: unexpected argument: arguments are --flag=value; ` + acceptedFlags,
		},
		"flag without value": {
			args:    []string{"--port"},
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--port": plugin xgboost: flag --port needs a value (--port=<value>)`,
		},
		"negative wait timeout": {
			args:    []string{"--wait-timeout=-1"},
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--wait-timeout=-1": plugin xgboost: --wait-timeout=-1: must not be negative`,
		},
		"missing master": {
			job:     jobtest.MakeJob("xgb").Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[xgboost]: Invalid value: "--master=master (default)": plugin xgboost: --master names task "master", which the job does not have (tasks: worker)`,
		},
		"renamed master missing": {
			args:    []string{"--master=tracker"},
			job:     full,
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--master=tracker": plugin xgboost: --master names task "tracker", which the job does not have (tasks: master, worker)`,
		},
		"master without replicas": {
			job:     jobtest.MakeJob("xgb").Task(mk("master", 0).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[xgboost]: Invalid value: "--master=master (default)": plugin xgboost: --master names task "master", which has no replicas`,
		},
		"two masters": {
			job:     jobtest.MakeJob("xgb").Task(mk("master", 2).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[xgboost]: Invalid value: "--master=master (default)": plugin xgboost: task "master" (--master) must have at most 1 replica, has 2`,
		},
		"explicit --worker naming a missing task": {
			args:    []string{"--worker=trainer"},
			job:     full,
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--worker=trainer": plugin xgboost: --worker names task "trainer", which the job does not have (tasks: master, worker)`,
		},
		"explicit --worker naming a task without replicas": {
			args:    []string{"--worker=worker"},
			job:     jobtest.MakeJob("xgb").Task(mk("master", 1).Obj()).Task(mk("worker", 0).Obj()).Obj(),
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--worker=worker": plugin xgboost: --worker names task "worker", which has no replicas`,
		},
		"one task, two roles": {
			args:    []string{"--worker=master"},
			job:     full,
			wantErr: `spec.plugins[xgboost][0]: Invalid value: "--worker=master": plugin xgboost: --master and --worker both name task "master"; a task can play one role`,
		},
		"every problem is reported": {
			args: []string{"--port=0", "--worker=trainer"},
			job:  jobtest.MakeJob("xgb").Task(mk("master", 3).Obj()).Obj(),
			wantErr: `[spec.plugins[xgboost][0]: Invalid value: "--port=0": plugin xgboost: --port=0: must be between 1 and 65535, ` +
				`spec.plugins[xgboost]: Invalid value: "--master=master (default)": plugin xgboost: task "master" (--master) must have at most 1 replica, has 3, ` +
				`spec.plugins[xgboost][1]: Invalid value: "--worker=trainer": plugin xgboost: --worker names task "trainer", which the job does not have (tasks: master)]`,
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
