package mpi

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

const acceptedFlags = "--cluster-domain, --launcher-as-worker, --master, --mpi-implementation, --port, --slots-per-worker, --wait, --wait-image, --wait-timeout, --worker"

func TestParseArgs(t *testing.T) {
	mk := jobtest.MakeTask
	masterWorker := jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).Obj()
	masterOnly := jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Obj()
	defaults := Args{Master: "master", Worker: "worker", Port: 22, Implementation: OpenMPI, ClusterDomain: "cluster.local",
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
		"defaults": {job: masterWorker, want: &defaults},
		"every flag": {
			args: []string{"--master=l", "--worker=w", "--port=2222", "--mpi-implementation=mpich", "--slots-per-worker=8",
				"--launcher-as-worker", "--cluster-domain=k8s.corp.example", "--wait=false", "--wait-timeout=90s", "--wait-image=busybox:1"},
			want: &Args{Master: "l", Worker: "w", Port: 2222, Implementation: MPICH, SlotsPerWorker: 8, LauncherAsWorker: true,
				ClusterDomain: "k8s.corp.example",
				Wait:          wait.Options{Timeout: 90 * time.Second, Image: "busybox:1"}},
		},
		"upstream spellings": {
			args: []string{"--master=mpimaster", "--worker=mpiworker", "--port=2222"},
			job:  jobtest.MakeJob("mpi").Task(mk("mpimaster", 1).Obj()).Task(mk("mpiworker", 2).Obj()).Obj(),
			want: with(func(a *Args) { a.Master, a.Worker, a.Port = "mpimaster", "mpiworker", 2222 }),
		},
		"implementation is case-insensitive": {
			args: []string{"--mpi-implementation=Intel"},
			want: with(func(a *Args) { a.Implementation = Intel }),
		},
		"openmpi spelled as mpi-operator does": {
			args: []string{"--mpi-implementation=OpenMPI"},
			want: &defaults,
		},
		"slots bounds": {
			args: []string{"--slots-per-worker=1024"},
			want: with(func(a *Args) { a.SlotsPerWorker = 1024 }),
		},
		"launcher as worker without worker task": {
			args: []string{"--launcher-as-worker=true"},
			job:  masterOnly,
			want: with(func(a *Args) { a.LauncherAsWorker = true }),
		},
		"launcher as worker, worker task without replicas": {
			args: []string{"--launcher-as-worker"},
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 0).Obj()).Obj(),
			want: with(func(a *Args) { a.LauncherAsWorker = true }),
		},
		"cluster domain of the longest length": {
			args: []string{"--cluster-domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
			want: with(func(a *Args) {
				a.ClusterDomain = "aaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbb"
			}),
		},
		"cluster domain not a DNS name": {
			args:    []string{"--cluster-domain=Cluster_Local"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--cluster-domain=Cluster_Local": plugin mpi: --cluster-domain=Cluster_Local: must be a DNS name (RFC 1123 subdomain: lowercase letters, digits, '-' and '.'; no trailing dot), such as cluster.local`,
		},
		"cluster domain with a trailing dot": {
			args:    []string{"--cluster-domain=cluster.local."},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--cluster-domain=cluster.local.": plugin mpi: --cluster-domain=cluster.local.: must be a DNS name (RFC 1123 subdomain: lowercase letters, digits, '-' and '.'; no trailing dot), such as cluster.local`,
		},
		"cluster domain too long for a search domain": {
			args:    []string{"--cluster-domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--cluster-domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbb": plugin mpi: --cluster-domain=aaaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbb: must be at most 57 characters, so that <hostname>.<subdomain>.<namespace>.svc.<cluster domain> is a DNS name`,
		},
		"unknown flag": {
			args:    []string{"--slots=4"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--slots=4": plugin mpi: unknown flag --slots for plugin mpi (did you mean --slots-per-worker=4?); accepted flags: ` + acceptedFlags,
		},
		"positional argument": {
			args:    []string{"master"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "master": plugin mpi: unexpected argument: arguments are --flag=value; accepted flags: ` + acceptedFlags,
		},
		"unknown implementation": {
			args:    []string{"--mpi-implementation=mvapich"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--mpi-implementation=mvapich": plugin mpi: --mpi-implementation=mvapich: must be one of openmpi, intel, mpich`,
		},
		"empty implementation": {
			args:    []string{"--mpi-implementation="},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--mpi-implementation=": plugin mpi: --mpi-implementation=: must be one of openmpi, intel, mpich`,
		},
		"slots zero": {
			args:    []string{"--slots-per-worker=0"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--slots-per-worker=0": plugin mpi: --slots-per-worker=0: must be between 1 and 1024`,
		},
		"slots too many": {
			args:    []string{"--port=22", "--slots-per-worker=1025"},
			wantErr: `spec.plugins[mpi][1]: Invalid value: "--slots-per-worker=1025": plugin mpi: --slots-per-worker=1025: must be between 1 and 1024`,
		},
		"slots not a number": {
			args:    []string{"--slots-per-worker=all"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--slots-per-worker=all": plugin mpi: --slots-per-worker=all: must be an integer`,
		},
		"port zero": {
			args:    []string{"--port=0"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--port=0": plugin mpi: --port=0: must be between 1 and 65535`,
		},
		"port too large": {
			args:    []string{"--port=65536"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--port=65536": plugin mpi: --port=65536: must be between 1 and 65535`,
		},
		"bad boolean": {
			args:    []string{"--launcher-as-worker=yes"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--launcher-as-worker=yes": plugin mpi: --launcher-as-worker=yes: must be true or false`,
		},
		"empty master": {
			args:    []string{"--master="},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--master=": plugin mpi: --master=: must not be empty`,
		},
		"flag without value": {
			args:    []string{"--worker"},
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--worker": plugin mpi: flag --worker needs a value (--worker=<value>)`,
		},
		"master task missing": {
			job:     jobtest.MakeJob("mpi").Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[mpi]: Invalid value: "--master=master (default)": plugin mpi: --master names task "master", which the job does not have (tasks: worker)`,
		},
		"named master task missing": {
			args:    []string{"--master=launcher"},
			job:     masterWorker,
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--master=launcher": plugin mpi: --master names task "launcher", which the job does not have (tasks: master, worker)`,
		},
		"master without replicas": {
			job:     jobtest.MakeJob("mpi").Task(mk("master", 0).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[mpi]: Invalid value: "--master=master (default)": plugin mpi: --master names task "master", which has no replicas`,
		},
		"two masters": {
			job:     jobtest.MakeJob("mpi").Task(mk("master", 2).Obj()).Task(mk("worker", 2).Obj()).Obj(),
			wantErr: `spec.plugins[mpi]: Invalid value: "--master=master (default)": plugin mpi: task "master" (--master) must have at most 1 replica, has 2`,
		},
		// Master-only MPI (Volcano v1.15 admits it, volcano-sh/volcano#4955):
		// no worker pods and no --worker written, so the launcher runs the ranks.
		"master-only: no worker task": {
			job:  masterOnly,
			want: with(func(a *Args) { a.LauncherAsWorker = true }),
		},
		"master-only: worker task without replicas": {
			job:  jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 0).Obj()).Obj(),
			want: with(func(a *Args) { a.LauncherAsWorker = true }),
		},
		"master-only with the upstream --master": {
			args: []string{"--master=launcher"},
			job:  jobtest.MakeJob("mpi").Task(mk("launcher", 1).Obj()).Obj(),
			want: with(func(a *Args) { a.Master, a.LauncherAsWorker = "launcher", true }),
		},
		// A --worker the user wrote is a role they mean to fill: a task name
		// that is not there is a typo, not a request for single-node MPI.
		"named worker missing: not master-only": {
			args:    []string{"--worker=ranks"},
			job:     masterOnly,
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--worker=ranks": plugin mpi: --worker names task "ranks", which the job does not have (tasks: master)`,
		},
		"named worker without replicas": {
			args:    []string{"--worker=worker"},
			job:     jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 0).Obj()).Obj(),
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--worker=worker": plugin mpi: --worker names task "worker", which has no replicas`,
		},
		"named worker missing even as launcher-as-worker": {
			args:    []string{"--launcher-as-worker", "--worker=ranks"},
			job:     masterOnly,
			wantErr: `spec.plugins[mpi][1]: Invalid value: "--worker=ranks": plugin mpi: --worker names task "ranks", which the job does not have (tasks: master)`,
		},
		"one task, two roles": {
			args:    []string{"--worker=master"},
			job:     masterWorker,
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--worker=master": plugin mpi: --master and --worker both name task "master"; a task can play one role`,
		},
		// Volcano v1.15's ssh plugin writes --ssh-port into the pods' ssh
		// config; without --port, mpi follows it.
		"ssh plugin's --ssh-port without --port": {
			job:  withSSH(masterWorker, "--ssh-port=2222"),
			want: with(func(a *Args) { a.Port = 2222 }),
		},
		"ssh plugin's --ssh-port as two items, base prefix": {
			job:  withSSH(masterWorker, "--ssh-key-file-path=/home/mpiuser/.ssh", "-ssh-port", "0x8ae"),
			want: with(func(a *Args) { a.Port = 2222 }),
		},
		"ssh plugin's --ssh-port out of range: its fallback 22": {
			args: []string{"--wait=false"},
			job:  withSSH(masterWorker, "--ssh-port=70000"),
			want: with(func(a *Args) { a.Wait.Enabled = false }),
		},
		"ssh plugin's --ssh-port after an argument it cannot read: ignored, as Volcano does": {
			job:  withSSH(masterWorker, "--no-root", "--ssh-port=2222"),
			want: &defaults,
		},
		"ssh plugin without --ssh-port": {
			job:  withSSH(masterWorker, "--ssh-key-file-path=/home/mpiuser/.ssh"),
			want: &defaults,
		},
		"--port and --ssh-port agree": {
			args: []string{"--port=2222"},
			job:  withSSH(masterWorker, "--ssh-port=2222"),
			want: with(func(a *Args) { a.Port = 2222 }),
		},
		"--port and --ssh-port differ": {
			args: []string{"--mpi-implementation=intel", "--port=2222"},
			job:  withSSH(masterWorker, "--ssh-port=2200"),
			wantErr: `spec.plugins[mpi][1]: Invalid value: "--port=2222": plugin mpi: --port=2222 differs from the ssh plugin's --ssh-port=2200, ` +
				`which puts port 2200 into the pods' ssh config; give the port once, in --ssh-port (mpi then uses it), or the same in both`,
		},
		"--port and an out-of-range --ssh-port": {
			args: []string{"--port=2222"},
			job:  withSSH(masterWorker, "--ssh-port=0"),
			wantErr: `spec.plugins[mpi][0]: Invalid value: "--port=2222": plugin mpi: --port=2222 differs from the ssh plugin's --ssh-port=0, ` +
				`which puts port 22 into the pods' ssh config; give the port once, in --ssh-port (mpi then uses it), or the same in both`,
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

// withSSH returns a copy of job whose ssh plugin has args.
func withSSH(job *batch.Job, args ...string) *batch.Job {
	j := job.DeepCopy()
	if j.Spec.Plugins == nil {
		j.Spec.Plugins = map[string][]string{}
	}
	j.Spec.Plugins["ssh"] = args
	return j
}

func TestHostfileSize(t *testing.T) {
	mk := jobtest.MakeTask
	job := jobtest.MakeJob("big").Task(mk("master", 1).Obj()).Task(mk("worker", 50000).Obj()).Obj()
	a, errs := ParseArgs(nil, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got, want := HostfileSize(job, a), 2738890; got != want {
		t.Errorf("HostfileSize = %d, want %d", got, want)
	}
	// The size is exactly that of the hostfile.
	small := jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 2).Obj()).Obj()
	if got, want := HostfileSize(small, a), len("mpi-worker-0.mpi.default.svc.cluster.local slots=1\nmpi-worker-1.mpi.default.svc.cluster.local slots=1\n"); got != want {
		t.Errorf("HostfileSize = %d, want %d", got, want)
	}
}

// HostfileSize, MPIHostSize and ConfigMapSize compute, without building them,
// exactly the sizes of the hostfile, MPI_HOST and the wait targets the plan
// builds.
func TestSizesMatchBuiltStrings(t *testing.T) {
	mk := jobtest.MakeTask
	tests := []struct {
		name string
		job  *batch.Job
		argv []string
	}{
		{"openmpi", jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 12).Obj()).Obj(), nil},
		{"intel, gpus", jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 101).GPU(8).Obj()).Obj(),
			[]string{"--mpi-implementation=intel"}},
		{"mpich, slots", jobtest.MakeJob("m").Task(mk("master", 1).Obj()).Task(mk("worker", 10).Obj()).Obj(),
			[]string{"--mpi-implementation=mpich", "--slots-per-worker=1024"}},
		{"launcher as worker", jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 3).Obj()).Obj(),
			[]string{"--launcher-as-worker"}},
		{"launcher as the only worker", jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(2).Obj()).Obj(),
			[]string{"--launcher-as-worker"}},
		{"template hostname and subdomain", jobtest.MakeJob("mpi").Task(mk("master", 1).Hostname("launcher").Obj()).
			Task(mk("worker", 5).Hostname("shared").Subdomain("sub").Obj()).Obj(), []string{"--launcher-as-worker"}},
		{"subdomain", jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 10).Subdomain("s").Obj()).Obj(), nil},
		{"port of 5 digits", jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 11).Obj()).Obj(),
			[]string{"--port=65000"}},
		{"no wait", jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 4).Obj()).Obj(), []string{"--wait=false"}},
		{"master-only", jobtest.MakeJob("mpi").Task(mk("master", 1).GPU(8).Obj()).Obj(), nil},
		{"ssh plugin's port", withSSH(jobtest.MakeJob("mpi").Task(mk("master", 1).Obj()).Task(mk("worker", 9).Obj()).Obj(), "--ssh-port=22222"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, errs := ParseArgs(tc.argv, tc.job)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			p, errs := buildPlan(tc.argv, tc.job)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			cmHostfile, cmTargets := ConfigMapSize(tc.job, a)
			got := []int{HostfileSize(tc.job, a), MPIHostSize(tc.job, a), cmHostfile, cmTargets}
			want := []int{len(p.hostfile), len(p.masterEnv[0].Value), len(p.hostfile), len(p.waitTargets)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("[hostfile, MPI_HOST, ConfigMap hostfile, ConfigMap wait targets] sizes (-built +computed):\n%s", diff)
			}
		})
	}
}
