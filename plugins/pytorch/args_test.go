package pytorch

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
	job := jobtest.MakeJob("pt").Task(mk("master", 1).Obj()).Task(mk("worker", 3).Obj()).Obj()
	defaults := Args{Master: "master", Worker: "worker", Port: 23456, NprocPerNode: "auto", RdzvBackend: "c10d", MaxRestarts: 3,
		Wait: wait.Options{Enabled: true, Timeout: 10 * time.Minute}}
	with := func(f func(a *Args)) *Args {
		a := defaults
		f(&a)
		return &a
	}
	cases := map[string]struct {
		args    []string
		job     *batch.Job
		want    *Args
		wantErr string
	}{
		"defaults": {job: job, want: &defaults},
		"every flag": {
			args: []string{"--master=m", "--worker=w", "--port=1234", "--nproc-per-node=4", "--min-nodes=1", "--max-nodes=4",
				"--rdzv-backend=etcd", "--max-restarts=0", "--wait=false", "--wait-timeout=0", "--wait-image=img", "--wait-master-port"},
			want: &Args{Master: "m", Worker: "w", Port: 1234, NprocPerNode: "4", MinNodes: 1, MaxNodes: 4, RdzvBackend: "etcd",
				WaitMasterPort: true, Wait: wait.Options{Image: "img"}},
		},
		"upstream wait flags": {
			args: []string{"--wait-master-enabled=false", "--wait-master-timeout=120", "--wait-master-image=busybox:1.36.1"},
			want: with(func(a *Args) {
				a.Wait, a.WaitMasterPort = wait.Options{Timeout: 120 * time.Second, Image: "busybox:1.36.1"}, true
			}),
		},
		// Volcano v1.14+'s --wait-master-* wait for the master's port (nc -z)
		// with a 300 s default: writing any one of them keeps that meaning.
		"upstream --wait-master-enabled: port wait, upstream's 300 s": {
			args: []string{"--wait-master-enabled=true"},
			want: with(func(a *Args) { a.Wait.Timeout, a.WaitMasterPort = 300*time.Second, true }),
		},
		"upstream --wait-master-timeout alone: port wait": {
			args: []string{"--wait-master-timeout=60"},
			want: with(func(a *Args) { a.Wait.Timeout, a.WaitMasterPort = time.Minute, true }),
		},
		"upstream --wait-master-image alone: port wait, upstream's 300 s": {
			args: []string{"--wait-master-image=mirror/busybox:1.36.1"},
			want: with(func(a *Args) {
				a.Wait.Image, a.Wait.Timeout, a.WaitMasterPort = "mirror/busybox:1.36.1", 300*time.Second, true
			}),
		},
		"upstream flag with our --wait-timeout: ours wins": {
			args: []string{"--wait-master-enabled", "--wait-timeout=20m"},
			want: with(func(a *Args) { a.Wait.Timeout, a.WaitMasterPort = 20*time.Minute, true }),
		},
		"upstream flag with an explicit --wait-master-port=false: DNS only": {
			args: []string{"--wait-master-enabled", "--wait-master-port=false"},
			want: with(func(a *Args) { a.Wait.Timeout = 300 * time.Second }),
		},
		"our own wait flags keep our defaults": {
			args: []string{"--wait=true", "--wait-image=img"},
			want: with(func(a *Args) { a.Wait.Image = "img" }),
		},
		"bad nproc": {
			args:    []string{"--nproc-per-node=0"},
			wantErr: `spec.plugins[pytorch][0]: Invalid value: "--nproc-per-node=0": plugin pytorch: --nproc-per-node=0: must be a positive integer, auto, gpu or cpu`,
		},
		"unknown flag": {
			args:    []string{"--nproc_per_node=2"},
			wantErr: `spec.plugins[pytorch][0]: Invalid value: "--nproc_per_node=2": plugin pytorch: unknown flag --nproc_per_node for plugin pytorch (did you mean --nproc-per-node=2?); accepted flags: --master, --max-nodes, --max-restarts, --min-nodes, --nproc-per-node, --port, --rdzv-backend, --wait, --wait-image, --wait-master-enabled, --wait-master-image, --wait-master-port, --wait-master-timeout, --wait-timeout, --worker`,
		},
		"port out of range": {
			args:    []string{"--port=99999"},
			wantErr: `spec.plugins[pytorch][0]: Invalid value: "--port=99999": plugin pytorch: --port=99999: must be between 1 and 65535`,
		},
		"two masters": {
			job:     jobtest.MakeJob("pt").Task(mk("master", 2).Obj()).Task(mk("worker", 3).Obj()).Obj(),
			wantErr: `spec.plugins[pytorch]: Invalid value: "--master=master (default)": plugin pytorch: task "master" (--master) must have at most 1 replica, has 2`,
		},
		"worker task missing": {
			args:    []string{"--worker=trainer"},
			job:     job,
			wantErr: `spec.plugins[pytorch][0]: Invalid value: "--worker=trainer": plugin pytorch: --worker names task "trainer", which the job does not have (tasks: master, worker)`,
		},
		"neither task": {
			job:     jobtest.MakeJob("pt").Task(mk("trainer", 3).Obj()).Obj(),
			wantErr: `spec.plugins[pytorch]: Invalid value: "--master=master (default)": plugin pytorch: the job has neither a master task ("master") nor a worker task ("worker")`,
		},
		"min above max": {
			args:    []string{"--min-nodes=5", "--max-nodes=2"},
			job:     job,
			wantErr: `spec.plugins[pytorch][0]: Invalid value: "--min-nodes=5": plugin pytorch: --min-nodes=5 is above --max-nodes=2`,
		},
		"pods outside the elastic range": {
			args:    []string{"--max-nodes=2"},
			job:     job,
			wantErr: `spec.plugins[pytorch][0]: Invalid value: "--max-nodes=2": plugin pytorch: the job asks for 4 pods, outside the elastic range 2:2; the master and worker replicas must add up to at most --max-nodes=2`,
		},
		"pods below the elastic minimum": {
			args:    []string{"--max-nodes=8", "--min-nodes=5"},
			job:     job,
			wantErr: `spec.plugins[pytorch][1]: Invalid value: "--min-nodes=5": plugin pytorch: the job asks for 4 pods, outside the elastic range 5:8; the master and worker replicas must add up to at least --min-nodes=5`,
		},
		"same task for both roles": {
			args:    []string{"--master=worker"},
			job:     job,
			wantErr: `spec.plugins[pytorch][0]: Invalid value: "--master=worker": plugin pytorch: --worker and --master both name task "worker"; a task can play one role`,
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
