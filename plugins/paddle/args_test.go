package paddle

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

func TestParseArgs(t *testing.T) {
	mk := jobtest.MakeTask
	collective := jobtest.MakeJob("pd").Task(mk("worker", 3).Obj()).Obj()
	ps := jobtest.MakeJob("pd").Task(mk("master", 2).Obj()).Task(mk("worker", 2).Obj()).Obj()
	defaults := Args{Master: "master", Worker: "worker", Port: 36543, Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}}
	const flags = "accepted flags: --master, --port, --wait, --wait-image, --wait-timeout, --worker"
	cases := map[string]struct {
		args    []string
		job     *batch.Job
		want    *Args
		wantErr string
	}{
		"collective: the master is optional": {job: collective, want: &defaults},
		"parameter server":                   {job: ps, want: &defaults},
		"defaults without a job":             {want: &defaults},
		"masters only": {
			job:  jobtest.MakeJob("pd").Task(mk("master", 2).Obj()).Obj(),
			want: &defaults,
		},
		"every flag": {
			args: []string{"--master=ps", "--worker=trainer", "--port=37777", "--wait=false", "--wait-timeout=90s", "--wait-image=busybox:1"},
			want: &Args{Master: "ps", Worker: "trainer", Port: 37777, Wait: wait.Options{Timeout: 90 * time.Second, Image: "busybox:1"}},
		},
		"renamed roles fit the job": {
			args: []string{"--master=ps", "--worker=trainer"},
			job:  jobtest.MakeJob("pd").Task(mk("ps", 1).Obj()).Task(mk("trainer", 1).Obj()).Obj(),
			want: &Args{Master: "ps", Worker: "trainer", Port: 36543, Wait: defaults.Wait},
		},
		"unknown flag": {
			args:    []string{"--prot=36543"},
			job:     collective,
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--prot=36543": plugin paddle: unknown flag --prot for plugin paddle (did you mean --port=36543?); ` + flags,
		},
		"a pytorch flag is unknown": {
			args:    []string{"--nproc-per-node=2"},
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--nproc-per-node=2": plugin paddle: unknown flag --nproc-per-node for plugin paddle; ` + flags,
		},
		"port not a number": {
			args:    []string{"--port=master"},
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--port=master": plugin paddle: --port=master: must be an integer`,
		},
		"port too large": {
			args:    []string{"--worker=worker", "--port=65536"},
			wantErr: `spec.plugins[paddle][1]: Invalid value: "--port=65536": plugin paddle: --port=65536: must be between 1 and 65535`,
		},
		"empty role": {
			args:    []string{"--master="},
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--master=": plugin paddle: --master=: must not be empty`,
		},
		"bad timeout": {
			args:    []string{"--wait-timeout=1y"},
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--wait-timeout=1y": plugin paddle: --wait-timeout=1y: must be a duration such as 90s or 10m, or a whole number of seconds`,
		},
		"one task, two roles": {
			args:    []string{"--master=worker"},
			job:     collective,
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--master=worker": plugin paddle: --worker and --master both name task "worker"; a task can play one role`,
		},
		"explicit master task missing": {
			args:    []string{"--master=ps"},
			job:     collective,
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--master=ps": plugin paddle: --master names task "ps", which the job does not have (tasks: worker)`,
		},
		"explicit worker task without replicas": {
			args:    []string{"--worker=trainer"},
			job:     jobtest.MakeJob("pd").Task(mk("master", 1).Obj()).Task(mk("trainer", 0).Obj()).Obj(),
			wantErr: `spec.plugins[paddle][0]: Invalid value: "--worker=trainer": plugin paddle: --worker names task "trainer", which has no replicas`,
		},
		"neither task": {
			job:     jobtest.MakeJob("pd").Task(mk("trainer", 2).Obj()).Obj(),
			wantErr: `spec.plugins[paddle]: Invalid value: "--worker=worker (default)": plugin paddle: the job has neither a worker task ("worker") nor a master task ("master")`,
		},
		"default tasks without replicas count as missing": {
			job:     jobtest.MakeJob("pd").Task(mk("master", 0).Obj()).Task(mk("worker", 0).Obj()).Obj(),
			wantErr: `the job has neither a worker task ("worker") nor a master task ("master")`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, errs := ParseArgs(tc.args, tc.job)
			if gotErr := jobtest.ErrorString(errs); tc.wantErr != "" {
				if len(errs) == 0 || !strings.Contains(gotErr, tc.wantErr) {
					t.Fatalf("errors = %q, want %q", gotErr, tc.wantErr)
				}
				return
			} else if gotErr != "" {
				t.Fatalf("unexpected errors: %s", gotErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Args (-want +got):\n%s", diff)
			}
		})
	}
}
