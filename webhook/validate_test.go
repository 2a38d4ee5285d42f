package webhook

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// newTF builds the tensorflow plugin with the job's arguments for it.
func newTF(job *batch.Job) pluginsinterface.PluginInterface {
	return plugins.Builders()[tensorflow.Name](pluginsinterface.PluginClientset{}, job.Spec.Plugins[tensorflow.Name])
}

// longName returns a DNS-label-safe name of n characters.
func longName(prefix string, n int) string {
	return prefix + strings.Repeat("x", n-len(prefix))
}

// The plugins' own parsers decide: every rule they check is a denial, with
// the message naming the plugin, the flag and the value.
func TestValidateJobArguments(t *testing.T) {
	tf := func(args ...string) *batch.Job {
		return mkJob("tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow", args...).Obj()
	}
	tests := []struct {
		name string
		job  *batch.Job
		want []string
	}{
		{"valid tensorflow", tf("--port=2223", "--wait-timeout=5m"), nil},
		{"unknown flag", tf("--bogus=1"),
			[]string{`spec.plugins[tensorflow][0]: Invalid value: "--bogus=1": plugin tensorflow: unknown flag --bogus for plugin tensorflow`}},
		{"port out of range", tf("--port=70000"),
			[]string{`spec.plugins[tensorflow][0]: Invalid value: "--port=70000": plugin tensorflow: --port=70000: must be between 1 and 65535`}},
		{"port zero", tf("--port=0"), []string{`"--port=0": plugin tensorflow: --port=0: must be between 1 and 65535`}},
		{"bad duration", tf("--wait-timeout=soon"), []string{`"--wait-timeout=soon": plugin tensorflow: --wait-timeout=soon: must be a duration`}},
		{"role flag naming a missing task", tf("--ps=params"),
			[]string{`spec.plugins[tensorflow][0]: Invalid value: "--ps=params": plugin tensorflow: --ps names task "params", which the job does not have (tasks: ps, worker)`}},
		{"two roles on one task", tf("--chief=worker"), []string{`--worker and --chief both name task "worker"`}},
		{"two chiefs",
			mkJob("tf").Task(jobtest.MakeTask("chief", 2).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Obj(),
			[]string{`spec.plugins[tensorflow]: Invalid value: "--chief=chief (default)": plugin tensorflow: task "chief" (--chief) must have at most 1 replica, has 2`}},
		{"pytorch: two masters",
			mkJob("pt").Task(jobtest.MakeTask("master", 2).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("pytorch").Obj(),
			[]string{`task "master" (--master) must have at most 1 replica, has 2`}},
		{"pytorch: elastic range",
			mkJob("pt").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("pytorch", "--min-nodes=4").Obj(),
			[]string{`the job asks for 3 pods, outside the elastic range 4:4`}},
		{"mxnet: two schedulers",
			mkJob("mx").Task(jobtest.MakeTask("scheduler", 2).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet").Obj(),
			[]string{`task "scheduler" (--scheduler) must have at most 1 replica, has 2`}},
		{"mxnet: missing scheduler",
			mkJob("mx").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet").Obj(),
			[]string{`spec.plugins[mxnet]: Invalid value: "--scheduler=scheduler (default)": plugin mxnet: --scheduler names task "scheduler", which the job does not have (tasks: worker)`}},
		{"mpi: bad implementation",
			mkJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mpi", "--mpi-implementation=mvapich").Obj(),
			[]string{`"--mpi-implementation=mvapich": plugin mpi: --mpi-implementation=mvapich: must be one of openmpi, intel, mpich`}},
		{"mpi: cluster domain not a DNS name",
			mkJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mpi", "--mpi-implementation=mpich", "--cluster-domain=cluster.local.").Obj(),
			[]string{`spec.plugins[mpi][1]: Invalid value: "--cluster-domain=cluster.local.": plugin mpi: --cluster-domain=cluster.local.: must be a DNS name`}},
		{"every plugin's errors",
			mkJob("two").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("mpi", "--port=0").Plugin("pytorch", "--port=65536").Obj(),
			[]string{`spec.plugins[mpi][0]: Invalid value: "--port=0"`, `spec.plugins[pytorch][0]: Invalid value: "--port=65536"`}},
		{"jobs without framework plugins are not checked",
			mkJob("plain").Task(jobtest.MakeTask("main", 1).Obj()).Plugin("svc", "--bogus").Obj(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkContains(t, ValidateJob(tc.job), tc.want)
		})
	}
}

func TestValidateJobClaims(t *testing.T) {
	tests := []struct {
		name string
		job  *batch.Job
		want field.ErrorList
	}{
		{
			name: "tensorflow and pytorch both claim worker",
			job:  mkJob("two").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Plugin("pytorch").Obj(),
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "tasks").Index(1).Child("name"), "worker",
				`plugin pytorch: task "worker" plays role worker of plugin pytorch and role worker of plugin tensorflow; a task can play roles in one framework plugin only`)},
		},
		{
			name: "mpi and mxnet on separate tasks",
			job: mkJob("two").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("learner", 2).Obj()).
				Plugin("mpi").Plugin("mxnet", "--worker=learner").Obj(),
		},
		{
			name: "a task claimed three times is reported once",
			job: mkJob("three").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Task(jobtest.MakeTask("scheduler", 1).Obj()).
				Plugin("mpi").Plugin("mxnet").Plugin("tensorflow").Obj(),
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "tasks").Index(1).Child("name"), "worker",
				`plugin mpi: task "worker" plays role worker of plugin mpi and role worker of plugin mxnet; a task can play roles in one framework plugin only`)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(errorStrings(tc.want), errorStrings(ValidateJob(tc.job))); diff != "" {
				t.Errorf("ValidateJob() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateJobLaunchOrder(t *testing.T) {
	tasks := field.NewPath("spec", "tasks")
	tests := []struct {
		name string
		job  *batch.Job
		want []string
	}{
		{
			name: "dependsOn in the direction of the wait is fine",
			job: mkJob("tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("worker", 2).DependsOn("ps").Obj()).
				Plugin("tensorflow").Obj(),
		},
		{
			name: "dependsOn against the tensorflow wait",
			job: mkJob("tf").Task(jobtest.MakeTask("ps", 1).DependsOn("worker").Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("tensorflow").Obj(),
			want: []string{tasks.Index(0).Child("dependsOn", "name").Index(0).String() +
				`: Invalid value: "ps -> worker -> ps": plugin tensorflow: launch-order cycle: ps waits for worker (dependsOn), worker waits for ps (tensorflow --wait); the pods would wait for each other forever`},
		},
		{
			name: "no cycle when the plugin does not wait",
			job: mkJob("tf").Task(jobtest.MakeTask("ps", 1).DependsOn("worker").Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("tensorflow", "--wait=false").Obj(),
		},
		{
			name: "pytorch master depending on the workers",
			job: mkJob("pt").Task(jobtest.MakeTask("master", 1).DependsOn("worker").Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("pytorch").Obj(),
			want: []string{`"master -> worker -> master": plugin pytorch: launch-order cycle: master waits for worker (dependsOn), worker waits for master (pytorch --wait)`},
		},
		{
			name: "mpi workers depending on the master",
			job: mkJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).DependsOn("master").Obj()).
				Plugin("mpi").Obj(),
			want: []string{`spec.plugins[mpi]: Invalid value: "master -> worker -> master": plugin mpi: launch-order cycle: master waits for worker (mpi --wait), worker waits for master (dependsOn)`},
		},
		{
			name: "mxnet scheduler depending on the servers",
			job: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).DependsOn("server").Obj()).Task(jobtest.MakeTask("server", 1).Obj()).
				Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mxnet").Obj(),
			want: []string{`"scheduler -> server -> scheduler": plugin mxnet: launch-order cycle: scheduler waits for server (dependsOn), server waits for scheduler (mxnet --wait)`},
		},
		{
			name: "two frameworks on crossed tasks",
			job: mkJob("two").Task(jobtest.MakeTask("a", 1).Obj()).Task(jobtest.MakeTask("b", 1).Obj()).Task(jobtest.MakeTask("c", 2).Obj()).
				Plugin("tensorflow", "--worker=a", "--ps=b").Plugin("mxnet", "--scheduler=a", "--server=b", "--worker=c").Obj(),
			want: []string{
				`spec.tasks[0].name: Invalid value: "a": plugin mxnet: task "a" plays role scheduler of plugin mxnet and role worker of plugin tensorflow`,
				`spec.tasks[1].name: Invalid value: "b": plugin mxnet: task "b" plays role server of plugin mxnet and role ps of plugin tensorflow`,
				`spec.plugins[tensorflow]: Invalid value: "a -> b -> a": plugin tensorflow: launch-order cycle: a waits for b (tensorflow --wait), b waits for a (mxnet --wait)`,
			},
		},
		{
			name: "a cycle of three tasks through dependsOn and a wait",
			job: mkJob("tf").Task(jobtest.MakeTask("ps", 1).DependsOn("prep").Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Task(jobtest.MakeTask("prep", 1).DependsOn("worker").Obj()).Plugin("tensorflow").Obj(),
			want: []string{`"ps -> prep -> worker -> ps": plugin tensorflow: launch-order cycle: ps waits for prep (dependsOn), prep waits for worker (dependsOn), worker waits for ps (tensorflow --wait)`},
		},
		{
			name: "a task depending on itself",
			job:  mkJob("tf").Task(jobtest.MakeTask("worker", 2).DependsOn("worker").Obj()).Plugin("tensorflow").Obj(),
			want: []string{`spec.tasks[0].dependsOn.name[0]: Invalid value: "worker -> worker": plugin tensorflow: launch-order cycle: worker waits for worker (dependsOn)`},
		},
		{
			name: "dependsOn a task the job does not have",
			job:  mkJob("tf").Task(jobtest.MakeTask("worker", 2).DependsOn("ps", "data").Obj()).Plugin("tensorflow").Obj(),
			want: []string{
				`spec.tasks[0].dependsOn.name[0]: Invalid value: "ps": plugin tensorflow: task "worker" depends on task "ps", which the job does not have (tasks: worker)`,
				`spec.tasks[0].dependsOn.name[1]: Invalid value: "data": plugin tensorflow: task "worker" depends on task "data", which the job does not have (tasks: worker)`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkContains(t, ValidateJob(tc.job), tc.want)
		})
	}
}

func TestGraphCycle(t *testing.T) {
	e := func(from, to string) edge { return edge{from: from, to: to, how: "test", path: field.NewPath("x")} }
	job := mkJob("g").Task(jobtest.MakeTask("a", 1).Obj()).Task(jobtest.MakeTask("b", 1).Obj()).Task(jobtest.MakeTask("c", 1).Obj()).Task(jobtest.MakeTask("d", 1).Obj()).Obj()
	tests := []struct {
		name  string
		edges []edge
		want  string
	}{
		{"none", nil, ""},
		{"dag", []edge{e("a", "b"), e("a", "c"), e("b", "d"), e("c", "d")}, ""},
		{"self", []edge{e("c", "c")}, "c -> c"},
		{"two", []edge{e("a", "b"), e("b", "a")}, "a -> b -> a"},
		{"behind a dag", []edge{e("a", "b"), e("b", "c"), e("c", "d"), e("d", "b")}, "b -> c -> d -> b"},
		{"second component", []edge{e("a", "b"), e("c", "d"), e("d", "c")}, "c -> d -> c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGraph(job)
			for _, x := range tc.edges {
				g.add(x)
			}
			got := ""
			if c := g.cycle(); c != nil {
				got = fmt.Sprint(cycleError(c).BadValue)
			}
			if got != tc.want {
				t.Errorf("cycle = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateJobLimits(t *testing.T) {
	// Hostnames: <job>-<task>-<index>; the job name is the subdomain.
	job53, job54 := longName("j", 53), longName("j", 54)
	tests := []struct {
		name string
		job  *batch.Job
		want []string
	}{
		{
			name: "the last pod's hostname is 64 characters",
			job:  mkJob(job54).Task(jobtest.MakeTask("worker", 100).Obj()).Plugin("tensorflow").Obj(),
			want: []string{`spec.tasks[0].name: Invalid value: "` + job54 + `-worker-99": plugin tensorflow: the hostname of pod 99 of task "worker" would be 64 characters; a pod hostname is a DNS label of at most 63, so the pod could not be created: shorten the job or task name`},
		},
		{
			name: "63 characters are fine",
			job:  mkJob(job53).Task(jobtest.MakeTask("worker", 100).Obj()).Plugin("tensorflow").Obj(),
		},
		{
			name: "a hostname set in the template is Volcano's to check",
			job:  mkJob(job53).Task(jobtest.MakeTask("worker", 1000).Hostname("w").Obj()).Plugin("tensorflow").Obj(),
		},
		{
			name: "a dotted job name makes neither a hostname nor a subdomain",
			job:  mkJob("tf.v2").Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("tensorflow").Obj(),
			want: []string{
				`spec.tasks[0].name: Invalid value: "tf.v2-worker-1": plugin tensorflow: the hostname of pod 1 of task "worker" is not a valid DNS label`,
				`metadata.name: Invalid value: "tf.v2": plugin tensorflow: the job name is its pods' subdomain and must be a DNS label`,
			},
		},
		{
			name: "a dotted job name with hostname and subdomain set in the template",
			job:  mkJob("tf.v2").Task(jobtest.MakeTask("worker", 2).Hostname("w").Subdomain("s").Obj()).Plugin("tensorflow").Obj(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkContains(t, ValidateJob(tc.job), tc.want)
		})
	}
}

// tfConfigJob is a tensorflow job of ps and workers with names of n
// characters; args are the tensorflow plugin's.
func tfConfigJob(name string, ps, workers int32, args ...string) *batch.Job {
	return mkJob(name).Task(jobtest.MakeTask("ps", ps).Obj()).Task(jobtest.MakeTask("worker", workers).Obj()).
		Plugin("tensorflow", args...).Plugin("svc").Obj()
}

// TestValidateJobEnvironmentLimits: the TF_CONFIG limit is the same in every
// --tf-config mode, since the process sees the same bytes; with reference
// (and auto, which resolves to it at these sizes) the pod spec holds only
// the short reference and the figure is computed.
func TestValidateJobEnvironmentLimits(t *testing.T) {
	name := longName("tf", 40)
	boundary := map[string]int32{}
	modes := []string{"--tf-config=inline", "--tf-config=reference", "--tf-config=auto"}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			// Find the largest job whose TF_CONFIG fits and check both sides of the
			// limit: the figure in the message is the exact size.
			fits, over := int32(0), int32(0)
			for n := int32(300); n < 800; n++ {
				if len(ValidateJob(tfConfigJob(name, n, n, mode))) == 0 {
					fits = n
					continue
				}
				over = n
				break
			}
			if fits == 0 || over != fits+1 {
				t.Fatalf("no boundary found: fits %d, over %d", fits, over)
			}
			boundary[mode] = over
			errs := ValidateJob(tfConfigJob(name, over, over, mode))
			checkContains(t, errs, []string{
				fmt.Sprintf(`spec.plugins[tensorflow]: Too long: plugin tensorflow: environment variable TF_CONFIG of pod "%s-worker-%d" (task "worker", index %d) would be`,
					name, over-1, over-1),
			})
			// The figure is the size of "TF_CONFIG=<value>" and its NUL, the
			// value as inline writes it.
			job := tfConfigJob(name, over, over, "--tf-config=inline")
			pod := jobs.NewPod(job, &job.Spec.Tasks[1], int(over-1))
			if err := newTF(job).OnPodCreate(pod, job); err != nil {
				t.Fatal(err)
			}
			var size int
			for _, e := range pod.Spec.Containers[0].Env {
				if e.Name == "TF_CONFIG" {
					size = envSize(e.Name, e.Value)
				}
			}
			if size <= MaxArgStrlen || !strings.Contains(errs[0].Error(), fmt.Sprintf("would be %d bytes", size)) {
				t.Errorf("TF_CONFIG string is %d bytes; message %q", size, errs[0].Error())
			}
		})
	}
	for _, mode := range modes[1:] {
		if boundary[mode] != boundary[modes[0]] {
			t.Errorf("the first job too large differs between the modes: %v", boundary)
		}
	}

	t.Run("mpi: MPI_HOST over the limit is no problem (the master gets none); its wait targets are a file", func(t *testing.T) {
		job := mkJob(longName("m", 40)).Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 1500).Obj()).Plugin("mpi").Obj()
		if errs := ValidateJob(job); len(errs) > 0 {
			t.Errorf("denied: %v", errs)
		}
	})
	t.Run("mpi: a hostfile over 1 MiB is no problem (its ConfigMap holds ranges)", func(t *testing.T) {
		// 4,500 workers: the hostfile and the wait targets over 1 MiB
		// together, the ssh plugin's config within MaxSSHConfigBytes.
		job := mkJob(longName("m", 45)).Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 4500).Obj()).Plugin("mpi").Plugin("ssh").Obj()
		if errs := ValidateJob(job); len(errs) > 0 {
			t.Errorf("denied: %v", errs)
		}
	})
	t.Run("svc: host files over 1 MiB are no problem (its ConfigMap holds ranges)", func(t *testing.T) {
		// 12,000 hosts of about 114 bytes: the <task>.host file alone is over 1 MiB
		// (VC_WORKER_HOSTS, over MAX_ARG_STRLEN, is left out).
		job := mkJob(longName("s", 50)).Task(jobtest.MakeTask("worker", 12000).Obj()).Plugin("pytorch", "--wait=false").Plugin("svc").Obj()
		if errs := ValidateJob(job); len(errs) > 0 {
			t.Errorf("denied: %v", errs)
		}
		want := "plugin svc: the host files of ConfigMap " + job.Name + "-svc would be"
		if !slices.ContainsFunc(SvcHostsWarnings(job), func(w string) bool { return strings.HasPrefix(w, want) }) {
			t.Errorf("warnings %q, want one starting %q", SvcHostsWarnings(job), want)
		}
	})
	t.Run("svc: the variables that fit over 1 MiB", func(t *testing.T) {
		// 10 tasks of 1,100 hosts of about 110 bytes: each VC_<TASK>_HOSTS
		// (121 KB) fits in a pod's environment, and together they pass the
		// 1 MiB of the ConfigMap, host files as ranges or not.
		b := mkJob(longName("s", 45))
		for i := range 10 {
			b = b.Task(jobtest.MakeTask(fmt.Sprintf("worker%d", i), 1100).Obj())
		}
		job := b.Plugin("pytorch", "--wait=false", "--worker=worker0").Plugin("svc").Obj()
		checkContains(t, ValidateJob(job), []string{
			`spec.plugins[svc]: Too long: plugin svc: ConfigMap "` + job.Name + `-svc" would be`,
		})
	})
}
