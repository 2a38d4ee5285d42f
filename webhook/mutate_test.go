package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
)

const (
	taskCompleted = "TaskCompleted"
	completeJob   = "CompleteJob"
	podFailed     = "PodFailed"
	terminateJob  = "TerminateJob"
)

// initGPU gives the task's pods an init container that requests a GPU.
func initGPU(t batch.TaskSpec, name v1.ResourceName) batch.TaskSpec {
	q := resource.MustParse("1")
	t.Template.Spec.InitContainers = append(t.Template.Spec.InitContainers, v1.Container{
		Name: "prepare", Image: "init:latest",
		Resources: v1.ResourceRequirements{Limits: v1.ResourceList{name: q}},
	})
	return t
}

func TestMutateJob(t *testing.T) {
	tests := []struct {
		name         string
		job          *batch.Job
		opts         Options
		want         *batch.Job
		wantWarnings []string
	}{
		{
			name: "a job without framework plugins is left alone",
			job: mkJob("plain").SchedulerName("").MinAvailable(0).
				Task(jobtest.MakeTask("main", 2).RestartPolicy("").GPU(1).Obj()).Plugin("env").Obj(),
			want: mkJob("plain").SchedulerName("").MinAvailable(0).
				Task(jobtest.MakeTask("main", 2).RestartPolicy("").GPU(1).Obj()).Plugin("env").Obj(),
		},
		{
			name: "tensorflow without chief: svc added, workers complete the job, OnFailure on role tasks",
			job: mkJob("tf").
				Task(jobtest.MakeTask("ps", 1).RestartPolicy("").Obj()).
				Task(jobtest.MakeTask("worker", 2).RestartPolicy("").Obj()).
				Plugin("tensorflow").Obj(),
			want: mkJob("tf").
				Task(jobtest.MakeTask("ps", 1).RestartPolicy(v1.RestartPolicyOnFailure).Obj()).
				Task(jobtest.MakeTask("worker", 2).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Policy(podFailed, terminateJob).Obj()).
				Plugin("tensorflow").Plugin("svc").Obj(),
		},
		{
			name: "tensorflow with chief: the chief completes the job; restartPolicy set by the user is kept",
			job: mkJob("tf").
				Task(jobtest.MakeTask("chief", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).Task(jobtest.MakeTask("evaluator", 1).Obj()).
				Plugin("tensorflow", "--port=3333").Obj(),
			want: mkJob("tf").
				Task(jobtest.MakeTask("chief", 1).Policy(taskCompleted, completeJob).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Task(jobtest.MakeTask("evaluator", 1).Obj()).
				Plugin("tensorflow", "--port=3333").Plugin("svc").Obj(),
		},
		{
			name: "tensorflow: a task that plays no role keeps its empty restartPolicy",
			job: mkJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).Task(jobtest.MakeTask("sidecar", 1).RestartPolicy("").Obj()).
				Plugin("tensorflow").Obj(),
			want: mkJob("tf").Task(jobtest.MakeTask("worker", 2).Policy(taskCompleted, completeJob).Obj()).
				Task(jobtest.MakeTask("sidecar", 1).RestartPolicy("").Obj()).
				Plugin("tensorflow").Plugin("svc").Obj(),
		},
		{
			name: "the user's svc arguments are kept",
			job: mkJob("tf").Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("tensorflow").Plugin("svc", "--publish-not-ready-addresses").Obj(),
			want: mkJob("tf").Task(jobtest.MakeTask("worker", 2).Policy(taskCompleted, completeJob).Obj()).
				Plugin("tensorflow").Plugin("svc", "--publish-not-ready-addresses").Obj(),
		},
		{
			name: "mpi: svc and ssh added, the master completes the job",
			job: mkJob("mpi").Task(jobtest.MakeTask("master", 1).RestartPolicy("").Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("mpi", "--slots-per-worker=2").Obj(),
			want: mkJob("mpi").
				Task(jobtest.MakeTask("master", 1).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Policy(podFailed, terminateJob).Obj()).
				Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("mpi", "--slots-per-worker=2").Plugin("svc").Plugin("ssh").Obj(),
		},
		{
			name: "mpi: the user's ssh and svc arguments are kept",
			job: mkJob("mpi").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("mpi").Plugin("ssh", "--no-root").Plugin("svc", "--disable-network-policy").Obj(),
			want: mkJob("mpi").Task(jobtest.MakeTask("master", 1).Policy(taskCompleted, completeJob).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("mpi").Plugin("ssh", "--no-root").Plugin("svc", "--disable-network-policy").Obj(),
		},
		{
			name: "mxnet: svc added, the workers complete the job",
			job: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("server", 2).Obj()).
				Task(jobtest.MakeTask("worker", 2).RestartPolicy("").Obj()).Plugin("mxnet").Obj(),
			want: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("server", 2).Obj()).
				Task(jobtest.MakeTask("worker", 2).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Policy(podFailed, terminateJob).Obj()).
				Plugin("mxnet").Plugin("svc").Obj(),
		},
		{
			name: "a timed-out wait ends the job: waiting tasks restarted in place get PodFailed → TerminateJob",
			job: mkJob("tf").Task(jobtest.MakeTask("ps", 1).Obj()).Task(jobtest.MakeTask("chief", 1).RestartPolicy("").Obj()).
				Task(jobtest.MakeTask("worker", 3).RestartPolicy(v1.RestartPolicyAlways).Obj()).
				Task(jobtest.MakeTask("evaluator", 1).Obj()).Plugin("tensorflow").Obj(),
			want: mkJob("tf").Task(jobtest.MakeTask("ps", 1).Obj()).
				Task(jobtest.MakeTask("chief", 1).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Policy(podFailed, terminateJob).Obj()).
				Task(jobtest.MakeTask("worker", 3).RestartPolicy(v1.RestartPolicyAlways).Policy(podFailed, terminateJob).Obj()).
				Task(jobtest.MakeTask("evaluator", 1).Obj()).Plugin("tensorflow").Plugin("svc").Obj(),
		},
		{
			name: "jax: processes waiting for their own pod 0 also get PodFailed → TerminateJob",
			job:  mkJob("jx").Task(jobtest.MakeTask("worker", 3).RestartPolicy("").Obj()).Plugin("jax").Obj(),
			want: mkJob("jx").Task(jobtest.MakeTask("worker", 3).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Policy(podFailed, terminateJob).Obj()).
				Plugin("jax").Plugin("svc").Obj(),
		},
		{
			name: "a waiting task with policies of its own, or restartPolicy Never, gets no PodFailed policy",
			job: mkJob("mpi").Task(jobtest.MakeTask("master", 1).RestartPolicy("").Policy(podFailed, "RestartJob").Obj()).
				Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mpi").Obj(),
			want: mkJob("mpi").Task(jobtest.MakeTask("master", 1).RestartPolicy(v1.RestartPolicyOnFailure).Policy(podFailed, "RestartJob").Obj()).
				Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mpi").Plugin("svc").Plugin("ssh").Obj(),
		},
		{
			name: "job-level policies that handle PodFailed win",
			job: mkJob("mpi").Policy(podFailed, "RestartJob").Task(jobtest.MakeTask("master", 1).RestartPolicy("").Obj()).
				Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mpi").Obj(),
			want: mkJob("mpi").Policy(podFailed, "RestartJob").
				Task(jobtest.MakeTask("master", 1).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Obj()).
				Task(jobtest.MakeTask("worker", 2).Obj()).Plugin("mpi").Plugin("svc").Plugin("ssh").Obj(),
		},
		{
			name: "pytorch: the master completes the job",
			job:  mkJob("pt").Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).Plugin("pytorch").Obj(),
			want: mkJob("pt").Task(jobtest.MakeTask("master", 1).Policy(taskCompleted, completeJob).Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).
				Plugin("pytorch").Plugin("svc").Obj(),
		},
		{
			name: "pytorch without master: the workers complete the job",
			job:  mkJob("pt").Task(jobtest.MakeTask("worker", 3).Obj()).Plugin("pytorch").Obj(),
			want: mkJob("pt").Task(jobtest.MakeTask("worker", 3).Policy(taskCompleted, completeJob).Obj()).Plugin("pytorch").Plugin("svc").Obj(),
		},
		{
			name: "a task with policies of its own gets none",
			job:  mkJob("pt").Task(jobtest.MakeTask("master", 1).Policy("PodFailed", "RestartJob").Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).Plugin("pytorch").Obj(),
			want: mkJob("pt").Task(jobtest.MakeTask("master", 1).Policy("PodFailed", "RestartJob").Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).
				Plugin("pytorch").Plugin("svc").Obj(),
		},
		{
			name: "job-level policies that handle TaskCompleted win",
			job: mkJob("pt").Policy(taskCompleted, "AbortJob").
				Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).Plugin("pytorch").Obj(),
			want: mkJob("pt").Policy(taskCompleted, "AbortJob").
				Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).Plugin("pytorch").Plugin("svc").Obj(),
		},
		{
			name: "job-level policies on any event win",
			job: mkJob("pt").Policy("*", "AbortJob").
				Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).Plugin("pytorch").Obj(),
			want: mkJob("pt").Policy("*", "AbortJob").
				Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 3).Obj()).Plugin("pytorch").Plugin("svc").Obj(),
		},
		{
			name: "GPU task: all-or-nothing task, job minAvailable summed over tasks, default scheduler",
			job: mkJob("tf").SchedulerName("").
				Task(jobtest.MakeTask("ps", 2).Obj()).Task(jobtest.MakeTask("worker", 4).GPU(1).Obj()).Plugin("tensorflow").Obj(),
			want: mkJob("tf").SchedulerName("volcano").MinAvailable(6).
				Task(jobtest.MakeTask("ps", 2).Obj()).Task(jobtest.MakeTask("worker", 4).GPU(1).MinAvailable(4).Policy(taskCompleted, completeJob).Obj()).
				Plugin("tensorflow").Plugin("svc").Obj(),
		},
		{
			name: "GPU task: the scheduler of the options, the user's other task minAvailable counted",
			job: mkJob("tf").SchedulerName("").
				Task(jobtest.MakeTask("ps", 2).MinAvailable(1).Obj()).Task(jobtest.MakeTask("worker", 4).GPU(2).Obj()).Plugin("tensorflow").Obj(),
			opts: Options{SchedulerName: "gang"},
			want: mkJob("tf").SchedulerName("gang").MinAvailable(5).
				Task(jobtest.MakeTask("ps", 2).MinAvailable(1).Obj()).Task(jobtest.MakeTask("worker", 4).GPU(2).MinAvailable(4).Policy(taskCompleted, completeJob).Obj()).
				Plugin("tensorflow").Plugin("svc").Obj(),
		},
		{
			name: "GPU task: the user's job minAvailable and scheduler are kept",
			job: mkJob("tf").SchedulerName("other").MinAvailable(1).
				Task(jobtest.MakeTask("worker", 4).GPU(1).Obj()).Plugin("tensorflow").Obj(),
			want: mkJob("tf").SchedulerName("other").MinAvailable(1).
				Task(jobtest.MakeTask("worker", 4).GPU(1).MinAvailable(4).Policy(taskCompleted, completeJob).Obj()).
				Plugin("tensorflow").Plugin("svc").Obj(),
		},
		{
			name: "GPU task with a smaller minAvailable: admitted as written, with a warning",
			job: mkJob("mpi").
				Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 4).GPU(8).MinAvailable(2).Obj()).Plugin("mpi").Obj(),
			want: mkJob("mpi").MinAvailable(3).
				Task(jobtest.MakeTask("master", 1).Policy(taskCompleted, completeJob).Obj()).Task(jobtest.MakeTask("worker", 4).GPU(8).MinAvailable(2).Obj()).
				Plugin("mpi").Plugin("svc").Plugin("ssh").Obj(),
			wantWarnings: []string{`task "worker" requests nvidia.com/gpu with minAvailable 2 < replicas 4: partially allocated GPUs sit idle until the rest arrive`},
		},
		{
			name: "elastic pytorch: the workers' gang minimum is the elastic minimum less the master",
			job: mkJob("pt").
				Task(jobtest.MakeTask("master", 1).GPU(1).Obj()).Task(jobtest.MakeTask("worker", 8).GPU(1).Obj()).
				Plugin("pytorch", "--min-nodes=3", "--max-nodes=9").Obj(),
			want: mkJob("pt").MinAvailable(3).
				Task(jobtest.MakeTask("master", 1).GPU(1).MinAvailable(1).Policy(taskCompleted, completeJob).Obj()).
				Task(jobtest.MakeTask("worker", 8).GPU(1).MinAvailable(2).Obj()).
				Plugin("pytorch", "--min-nodes=3", "--max-nodes=9").Plugin("svc").Obj(),
		},
		{
			name: "elastic pytorch without master; a smaller user minAvailable is no cause for a warning",
			job: mkJob("pt").
				Task(jobtest.MakeTask("worker", 4).GPU(1).Obj()).Task(jobtest.MakeTask("tuner", 2).GPU(1).MinAvailable(1).Obj()).
				Plugin("pytorch", "--min-nodes=2").Obj(),
			want: mkJob("pt").MinAvailable(3).
				Task(jobtest.MakeTask("worker", 4).GPU(1).MinAvailable(2).Policy(taskCompleted, completeJob).Obj()).
				Task(jobtest.MakeTask("tuner", 2).GPU(1).MinAvailable(1).Obj()).
				Plugin("pytorch", "--min-nodes=2").Plugin("svc").Obj(),
			wantWarnings: []string{`task "tuner" requests nvidia.com/gpu with minAvailable 1 < replicas 2: partially allocated GPUs sit idle until the rest arrive`},
		},
		{
			name: "elastic pytorch with the user's worker minAvailable: kept, no warning",
			job: mkJob("pt").
				Task(jobtest.MakeTask("master", 1).Obj()).Task(jobtest.MakeTask("worker", 8).GPU(1).MinAvailable(1).Obj()).
				Plugin("pytorch", "--min-nodes=4").Obj(),
			want: mkJob("pt").MinAvailable(2).
				Task(jobtest.MakeTask("master", 1).Policy(taskCompleted, completeJob).Obj()).Task(jobtest.MakeTask("worker", 8).GPU(1).MinAvailable(1).Obj()).
				Plugin("pytorch", "--min-nodes=4").Plugin("svc").Obj(),
		},
		{
			name: "amd.com/gpu is a GPU, example.com/fpga is not",
			job: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Resource("example.com/fpga", "1").Obj()).
				Task(jobtest.MakeTask("worker", 3).Resource("amd.com/gpu", "1").Obj()).Plugin("mxnet").Obj(),
			want: mkJob("mx").MinAvailable(4).Task(jobtest.MakeTask("scheduler", 1).Resource("example.com/fpga", "1").Obj()).
				Task(jobtest.MakeTask("worker", 3).Resource("amd.com/gpu", "1").MinAvailable(3).Policy(taskCompleted, completeJob).Obj()).
				Plugin("mxnet").Plugin("svc").Obj(),
		},
		{
			name: "GPU resources come from the options",
			job: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).
				Task(jobtest.MakeTask("worker", 3).Resource("habana.ai/Gaudi", "1").Obj()).Plugin("mxnet").Obj(),
			opts: Options{GPUResources: []string{"gpu", "gaudi"}},
			want: mkJob("mx").MinAvailable(4).Task(jobtest.MakeTask("scheduler", 1).Obj()).
				Task(jobtest.MakeTask("worker", 3).Resource("habana.ai/Gaudi", "1").MinAvailable(3).Policy(taskCompleted, completeJob).Obj()).
				Plugin("mxnet").Plugin("svc").Obj(),
		},
		{
			name: "a zero GPU quantity is no GPU",
			job:  mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("worker", 3).GPU(0).Obj()).Plugin("mxnet").Obj(),
			want: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Obj()).
				Task(jobtest.MakeTask("worker", 3).GPU(0).Policy(taskCompleted, completeJob).Obj()).Plugin("mxnet").Plugin("svc").Obj(),
		},
		{
			name: "a GPU in an init container counts",
			job: mkJob("pt").Task(jobtest.MakeTask("master", 1).Obj()).
				Task(initGPU(jobtest.MakeTask("worker", 2).Obj(), "nvidia.com/gpu")).Plugin("pytorch").Obj(),
			want: mkJob("pt").MinAvailable(3).Task(jobtest.MakeTask("master", 1).Policy(taskCompleted, completeJob).Obj()).
				Task(initGPU(jobtest.MakeTask("worker", 2).MinAvailable(2).Obj(), "nvidia.com/gpu")).Plugin("pytorch").Plugin("svc").Obj(),
		},
		{
			name: "arguments that do not parse: svc and gang only, no role-dependent defaults",
			job: mkJob("tf").Task(jobtest.MakeTask("worker", 2).RestartPolicy("").GPU(1).Obj()).
				Plugin("tensorflow", "--bogus").Obj(),
			want: mkJob("tf").MinAvailable(2).Task(jobtest.MakeTask("worker", 2).RestartPolicy("").GPU(1).MinAvailable(2).Obj()).
				Plugin("tensorflow", "--bogus").Plugin("svc").Obj(),
		},
		{
			name: "the user made another task complete the job: the framework's completion task gets no policy",
			job: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Policy(taskCompleted, completeJob).Obj()).
				Task(jobtest.MakeTask("server", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("mxnet").Obj(),
			want: mkJob("mx").Task(jobtest.MakeTask("scheduler", 1).Policy(taskCompleted, completeJob).Obj()).
				Task(jobtest.MakeTask("server", 1).Obj()).Task(jobtest.MakeTask("worker", 2).Obj()).
				Plugin("mxnet").Plugin("svc").Obj(),
		},
		{
			name: "two frameworks: each one's completion task and roles",
			job: mkJob("two").Task(jobtest.MakeTask("chief", 1).RestartPolicy("").Obj()).
				Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("learner", 2).Obj()).
				Plugin("tensorflow").Plugin("mxnet", "--worker=learner").Obj(),
			want: mkJob("two").Task(jobtest.MakeTask("chief", 1).RestartPolicy(v1.RestartPolicyOnFailure).Policy(taskCompleted, completeJob).Obj()).
				Task(jobtest.MakeTask("scheduler", 1).Obj()).Task(jobtest.MakeTask("learner", 2).Policy(taskCompleted, completeJob).Obj()).
				Plugin("tensorflow").Plugin("mxnet", "--worker=learner").Plugin("svc").Obj(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.job.DeepCopy()
			got, warnings := MutateJob(tc.job, tc.opts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MutateJob() job (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, warnings); diff != "" {
				t.Errorf("MutateJob() warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.job); diff != "" {
				t.Errorf("MutateJob() modified its argument (-before +after):\n%s", diff)
			}
			// The patch form gives the same result when applied.
			patch, pw, err := MutatePatch(nil, tc.job, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, applyPatch(t, tc.job, patch)); diff != "" {
				t.Errorf("MutatePatch() applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, pw); diff != "" {
				t.Errorf("MutatePatch() warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMutatePatchNoChange(t *testing.T) {
	for _, job := range []*batch.Job{
		mkJob("plain").Task(jobtest.MakeTask("main", 2).GPU(1).Obj()).Obj(),
		// Everything already as the mutation would set it.
		mkJob("tf").MinAvailable(2).Task(jobtest.MakeTask("worker", 2).GPU(1).MinAvailable(2).Policy(taskCompleted, completeJob).Obj()).
			Plugin("tensorflow").Plugin("svc").Obj(),
	} {
		patch, warnings, err := MutatePatch(nil, job, Options{})
		if err != nil || patch != nil || warnings != nil {
			t.Errorf("MutatePatch(%s) = %s, %v, %v; want no patch, no warnings, no error", job.Name, patch, warnings, err)
		}
	}
}

func TestIsGPU(t *testing.T) {
	for _, tc := range []struct {
		resource v1.ResourceName
		opts     Options
		want     bool
	}{
		{"nvidia.com/gpu", Options{}, true},
		{"amd.com/gpu", Options{}, true},
		{"gpu.intel.com/i915", Options{}, true},
		{"nvidia.com/mig-1g.5gb", Options{}, false},
		{"nvidia.com/mig-1g.5gb", Options{GPUResources: []string{"gpu", "nvidia.com/mig-"}}, true},
		{"cpu", Options{}, false},
		{"example.com/GPU", Options{}, true},
		{"nvidia.com/gpu", Options{GPUResources: []string{"tpu"}}, false},
		{"nvidia.com/gpu", Options{GPUResources: []string{" "}}, false},
	} {
		if got := tc.opts.IsGPU(tc.resource); got != tc.want {
			t.Errorf("Options%v.IsGPU(%s) = %v, want %v", tc.opts.GPUResources, tc.resource, got, tc.want)
		}
	}
}

// TestMutateJobOneCompletionPolicyPerTask: when two framework plugins name
// the same task as the one that completes the Job, it gets one TaskCompleted
// policy; two would make Volcano deny the Job ("duplicate event
// TaskCompleted") for policies the user never wrote.
func TestMutateJobOneCompletionPolicyPerTask(t *testing.T) {
	job := mkJob("shared").
		Task(jobtest.MakeTask("mx-scheduler", 1).Obj()).Task(jobtest.MakeTask("server", 2).Obj()).Task(jobtest.MakeTask("worker", 4).Obj()).
		Plugin("mxnet", "--scheduler=mx-scheduler", "--port=9091").Plugin("pytorch", "--worker=worker").Obj()
	mutated, _ := MutateJob(job, Options{})
	var got []string
	for _, task := range mutated.Spec.Tasks {
		for _, p := range task.Policies {
			if p.Event == taskCompleted {
				got = append(got, task.Name)
			}
		}
	}
	if diff := cmp.Diff([]string{"worker"}, got); diff != "" {
		t.Errorf("tasks with a TaskCompleted policy (-want +got):\n%s", diff)
	}
}
