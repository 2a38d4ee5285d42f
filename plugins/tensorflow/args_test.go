package tensorflow

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
	psWorker := jobtest.MakeJob("tf").Task(mk("ps", 1).Obj()).Task(mk("worker", 2).Obj()).Obj()
	defaults := Args{PS: "ps", Worker: "worker", Chief: "chief", Evaluator: "evaluator", Port: 2222, TFConfig: Auto,
		Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}}
	cases := map[string]struct {
		args    []string
		job     *batch.Job
		want    *Args
		wantErr string
	}{
		"defaults": {job: psWorker, want: &defaults},
		"every flag": {
			args: []string{"--ps=p", "--worker=w", "--chief=c", "--evaluator=e", "--port=5000", "--tf-config=inline", "--wait=false", "--wait-timeout=90s", "--wait-image=busybox:1"},
			want: &Args{PS: "p", Worker: "w", Chief: "c", Evaluator: "e", Port: 5000, TFConfig: Inline, Wait: wait.Options{Timeout: 90 * time.Second, Image: "busybox:1"}},
		},
		"bare number timeout is seconds": {
			args: []string{"--wait-timeout=30"},
			want: &Args{PS: "ps", Worker: "worker", Chief: "chief", Evaluator: "evaluator", Port: 2222, TFConfig: Auto, Wait: wait.Options{Enabled: true, Timeout: 30 * time.Second}},
		},
		"--tf-config=reference": {
			args: []string{"--tf-config=reference"},
			job:  psWorker,
			want: &Args{PS: "ps", Worker: "worker", Chief: "chief", Evaluator: "evaluator", Port: 2222, TFConfig: Reference, Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}},
		},
		"--tf-config=auto is the default": {
			args: []string{"--tf-config=auto"},
			job:  psWorker,
			want: &defaults,
		},
		"unknown --tf-config mode": {
			args:    []string{"--tf-config=file"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--tf-config=file": plugin tensorflow: --tf-config=file: must be auto, reference or inline`,
		},
		"unknown flag": {
			args:    []string{"--prot=2222"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--prot=2222": plugin tensorflow: unknown flag --prot for plugin tensorflow (did you mean --port=2222?); accepted flags: --chief, --evaluator, --port, --ps, --tf-config, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"flag and value in one argument": {
			args:    []string{"--ps ps"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--ps ps": plugin tensorflow: "--ps ps" is a flag and its value in one argument; write --ps=ps`,
		},
		"shortened flag": {
			args:    []string{"--wait-time=5m"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--wait-time=5m": plugin tensorflow: unknown flag --wait-time for plugin tensorflow (did you mean --wait-timeout=5m?); accepted flags: --chief, --evaluator, --port, --ps, --tf-config, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"nothing close": {
			args:    []string{"--bogus"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--bogus": plugin tensorflow: unknown flag --bogus for plugin tensorflow; accepted flags: --chief, --evaluator, --port, --ps, --tf-config, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"port not a number": {
			args:    []string{"--port=http"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--port=http": plugin tensorflow: --port=http: must be an integer`,
		},
		"port zero": {
			args:    []string{"--port=0"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--port=0": plugin tensorflow: --port=0: must be between 1 and 65535`,
		},
		"port too large": {
			args:    []string{"--worker=worker", "--port=65536"},
			wantErr: `spec.plugins[tensorflow][1]: Invalid value: "--port=65536": plugin tensorflow: --port=65536: must be between 1 and 65535`,
		},
		"empty role": {
			args:    []string{"--ps="},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--ps=": plugin tensorflow: --ps=: must not be empty`,
		},
		"positional argument": {
			args:    []string{"ps"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "ps": plugin tensorflow: unexpected argument: arguments are --flag=value; accepted flags: --chief, --evaluator, --port, --ps, --tf-config, --wait, --wait-image, --wait-timeout, --worker`,
		},
		"flag without value": {
			args:    []string{"--port"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--port": plugin tensorflow: flag --port needs a value (--port=<value>)`,
		},
		"bad boolean": {
			args:    []string{"--wait=maybe"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--wait=maybe": plugin tensorflow: --wait=maybe: must be true or false`,
		},
		"bad timeout": {
			args:    []string{"--wait-timeout=soon"},
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--wait-timeout=soon": plugin tensorflow: --wait-timeout=soon: must be a duration such as 90s or 10m, or a whole number of seconds`,
		},
		"role task missing": {
			args:    []string{"--ps=pserver"},
			job:     psWorker,
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--ps=pserver": plugin tensorflow: --ps names task "pserver", which the job does not have (tasks: ps, worker)`,
		},
		"role task has no replicas": {
			args:    []string{"--chief=chief"},
			job:     jobtest.MakeJob("tf").Task(mk("chief", 0).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--chief=chief": plugin tensorflow: --chief names task "chief", which has no replicas`,
		},
		"two chiefs": {
			job:     jobtest.MakeJob("tf").Task(mk("chief", 2).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[tensorflow]: Invalid value: "--chief=chief (default)": plugin tensorflow: task "chief" (--chief) must have at most 1 replica, has 2`,
		},
		"one task, two roles": {
			args:    []string{"--chief=worker"},
			job:     psWorker,
			wantErr: `spec.plugins[tensorflow][0]: Invalid value: "--chief=worker": plugin tensorflow: --worker and --chief both name task "worker"; a task can play one role`,
		},
		"no role task at all": {
			job:     jobtest.MakeJob("tf").Task(mk("trainer", 2).Obj()).Obj(),
			wantErr: `spec.plugins[tensorflow]: Invalid value: "--worker=worker (default)": plugin tensorflow: the job has none of the tasks the roles name, with replicas (--ps=ps, --worker=worker, --chief=chief, --evaluator=evaluator); its tasks: trainer`,
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
