package training

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/plugins/mxnet"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// examplePods returns the pods of ex's Job as the controller creates them and
// ex's framework plugin mutates them.
func examplePods(t *testing.T, ex Example, build jobtest.Builder) (*batch.Job, []*corev1.Pod) {
	t.Helper()
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	job, err := LoadJob(root, ex.File)
	if err != nil {
		t.Fatal(err)
	}
	job.Namespace = "ns"
	var pods []*corev1.Pod
	for _, task := range job.Spec.Tasks {
		for i := 0; i < int(task.Replicas); i++ {
			pods = append(pods, jobtest.RunPod(t, build, ex.Framework, job, task.Name, i))
		}
	}
	return job, pods
}

func example(t *testing.T, file string) Example {
	t.Helper()
	for _, ex := range Examples {
		if ex.File == file {
			return ex
		}
	}
	t.Fatalf("no example %s", file)
	return Example{}
}

// digitsLog is what train_digits.py prints as rank of world, ending with
// losses and verdict.
func digitsLog(rank, world int, losses []string, verdict string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rank %d of %d joined on host-%d\n", rank, world, rank)
	if rank == 0 {
		for i, l := range losses {
			fmt.Fprintf(&b, "epoch %d loss %s\n", i+1, l)
		}
		b.WriteString("test accuracy 0.9644\n")
	}
	fmt.Fprintf(&b, "rank %d: parameters %s across %d ranks (checksum 12.5)\n", rank, verdict, world)
	return b.String()
}

func TestJudgeDigits(t *testing.T) {
	ex := example(t, "example/pytorch/pytorch-digits-ddp.yaml")
	_, pods := examplePods(t, ex, pytorch.New)
	falling := []string{"1.9000", "0.4000", "0.1500"}
	// logs gives each pod the log of the rank its injected RANK says.
	logs := func(edit func(rank int) (int, []string, string)) map[string]string {
		out := map[string]string{}
		for _, p := range pods {
			var rank int
			fmt.Sscan(kubeutil.EnvOf(p, ex.Container)["RANK"], &rank)
			r, losses, verdict := edit(rank)
			out[p.Name] = digitsLog(r, 3, losses, verdict)
		}
		return out
	}
	tests := []struct {
		name    string
		logs    map[string]string
		wantErr string
	}{
		{name: "every rank trained and agrees", logs: logs(func(r int) (int, []string, string) { return r, falling, "agree" })},
		{
			name:    "a pod trained as another rank than injected",
			logs:    logs(func(r int) (int, []string, string) { return (r + 1) % 3, falling, "agree" }),
			wantErr: "trained as rank 1 but was injected RANK=\"0\"",
		},
		{
			name:    "the ranks disagree",
			logs:    logs(func(r int) (int, []string, string) { return r, falling, "DIFFER from rank 0" }),
			wantErr: "final parameters DIFFER from rank 0",
		},
		{
			name:    "the loss did not fall",
			logs:    logs(func(r int) (int, []string, string) { return r, []string{"1.9", "1.8"}, "agree" }),
			wantErr: "loss went from 1.9 to 1.8",
		},
		{
			name:    "a rank never finished",
			logs:    map[string]string{pods[0].Name: digitsLog(0, 3, falling, "agree")},
			wantErr: "never finished training",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			summary, err := ex.Judge(Run{Pods: pods, Logs: tc.logs})
			checkJudged(t, summary, err, tc.wantErr)
		})
	}
}

func TestJudgeDigitsElastic(t *testing.T) {
	ex := example(t, "example/pytorch/pytorch-digits-elastic.yaml")
	_, pods := examplePods(t, ex, pytorch.New)
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	falling := []string{"1.9000", "0.4000"}
	// Two pods trained (ranks swapped against their pod order), one came late.
	logs := map[string]string{pods[0].Name: digitsLog(1, 2, nil, "agree"), pods[1].Name: digitsLog(0, 2, falling, "agree"), pods[2].Name: ""}
	summary, err := ex.Judge(Run{Pods: pods, Logs: logs})
	checkJudged(t, summary, err, "")
	delete(logs, pods[1].Name)
	_, err = ex.Judge(Run{Pods: pods, Logs: logs})
	checkJudged(t, "", err, "rank 0 of 2 never joined")
}

func TestJudgeTFConfig(t *testing.T) {
	ex := example(t, "example/tensorflow/tensorflow-contract.yaml")
	job, pods := examplePods(t, ex, tensorflow.New)
	cluster := fmt.Sprintf(`{"chief": ["%[1]s-chief-0.%[1]s:2222"], "ps": ["%[1]s-ps-0.%[1]s:2222"], "worker": ["%[1]s-worker-0.%[1]s:2222", "%[1]s-worker-1.%[1]s:2222"]}`, job.Name)
	done := func(task string, peers int, cluster string) string {
		return fmt.Sprintf("%s serves x:2222\n%s: reached %d peers, heard from %d peers, cluster %s\n", task, task, peers, peers, cluster)
	}
	good := func() map[string]string {
		return map[string]string{
			pods[0].Name: done("chief:0", 3, cluster), pods[1].Name: done("ps:0", 3, cluster),
			pods[2].Name: done("worker:0", 3, cluster), pods[3].Name: "worker:1 serves x:2222\n",
		}
	}
	tests := []struct {
		name    string
		edit    func(map[string]string)
		wantErr string
	}{
		{name: "the chief and two others finished, one was stopped", edit: func(map[string]string) {}},
		{
			name: "a task found its address is another pod",
			edit: func(l map[string]string) {
				l[pods[3].Name] += "MISMATCH worker:1: my address x resolves to y, not to this pod\n"
			},
			wantErr: "pod " + pods[3].Name + ": MISMATCH worker:1: my address",
		},
		{
			name:    "a pod ran as another index",
			edit:    func(l map[string]string) { l[pods[2].Name] = done("worker:1", 3, cluster) },
			wantErr: "ran as worker:1",
		},
		{
			name:    "the chief never finished",
			edit:    func(l map[string]string) { l[pods[0].Name] = "chief:0 serves x:2222\n" },
			wantErr: "the chief never finished",
		},
		{
			name: "TF_CONFIG's cluster is larger than the job",
			edit: func(l map[string]string) {
				big := strings.Replace(cluster, `"ps": [`, `"ps": ["extra:1", `, 1)
				for name, log := range l {
					l[name] = strings.ReplaceAll(log, cluster, big)
				}
			},
			wantErr: "TF_CONFIG's cluster has 5 tasks",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs := good()
			tc.edit(logs)
			summary, err := ex.Judge(Run{Pods: pods, Logs: logs})
			checkJudged(t, summary, err, tc.wantErr)
		})
	}
}

func TestJudgeDMLC(t *testing.T) {
	ex := example(t, "example/mxnet/mxnet-contract.yaml")
	_, pods := examplePods(t, ex, mxnet.New)
	for i, p := range pods {
		p.Status.PodIP = fmt.Sprintf("10.245.0.%d", i+2)
	}
	var b strings.Builder
	for _, p := range pods[1:] {
		fmt.Fprintf(&b, "scheduler: registered %s %s:4000\n", kubeutil.EnvOf(p, ex.Container)["DMLC_ROLE"], p.Status.PodIP)
	}
	registered := b.String()
	final := "scheduler: 2 servers and 2 workers registered (ids 8 9 10 11); every worker reached every server\n"
	tests := []struct {
		name, scheduler, worker, wantErr string
	}{
		{name: "every node registered and met", scheduler: registered + final},
		{
			name:      "the scheduler waited for fewer servers",
			scheduler: registered + strings.Replace(final, "2 servers", "1 servers", 1),
			wantErr:   "waited for 1 servers and 2 workers, the Job has 2 and 2",
		},
		{
			name:      "a server registered as a worker",
			scheduler: strings.Replace(registered, "registered server", "registered worker", 1) + final,
			wantErr:   "registered as a worker, but its pod has DMLC_ROLE=server",
		},
		{
			name:      "a worker found two workers with its id",
			scheduler: registered,
			worker:    "MISMATCH two workers have DMLC_WORKER_ID 0\n",
			wantErr:   ": MISMATCH two workers have DMLC_WORKER_ID 0",
		},
		{name: "the scheduler never finished", scheduler: registered, wantErr: "never finished"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs := map[string]string{pods[0].Name: tc.scheduler, pods[len(pods)-1].Name: tc.worker}
			summary, err := ex.Judge(Run{Pods: pods, Logs: logs})
			checkJudged(t, summary, err, tc.wantErr)
		})
	}
}

// The judged example files exist, load as Jobs of their framework, and mount
// their program's ConfigMap in the container the judge reads.
func TestExamplesLoad(t *testing.T) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range Examples {
		job, err := LoadJob(root, ex.File)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := job.Spec.Plugins[ex.Framework]; !ok {
			t.Errorf("%s: no %s plugin", ex.File, ex.Framework)
		}
		cm, err := ex.ConfigMapOf(root, "ns")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range job.Spec.Tasks {
			spec := task.Template.Spec
			if len(spec.Containers) == 0 || spec.Containers[0].Name != ex.Container {
				t.Errorf("%s task %s: first container is not %s", ex.File, task.Name, ex.Container)
			}
			mounted := false
			for _, v := range spec.Volumes {
				mounted = mounted || (v.ConfigMap != nil && v.ConfigMap.Name == cm.Name)
			}
			if !mounted {
				t.Errorf("%s task %s does not mount ConfigMap %s", ex.File, task.Name, cm.Name)
			}
		}
	}
}

func checkJudged(t *testing.T, summary string, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("Judge: %v", err)
	case wantErr == "" && summary == "":
		t.Errorf("Judge: empty summary")
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("Judge error = %v, want one containing %q", err, wantErr)
	}
}

func TestJudgeMPI(t *testing.T) {
	for _, file := range []string{"example/mpi/mpi-digits-openmpi.yaml", "example/mpi/mpi-digits-mpich.yaml"} {
		t.Run(file, func(t *testing.T) {
			ex := example(t, file)
			job, pods := examplePods(t, ex, mpi.New)
			a, errs := mpi.ParseArgs(job.Spec.Plugins[mpi.Name], job)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			hostfile := mpi.Hostfile(job, a)
			hosts := []string{job.Name + "-worker-0", job.Name + "-worker-1"}
			// mpiLog is the launcher's log: every rank's lines, rank r on
			// host[r].
			mpiLog := func(host func(rank int) string, serial string) string {
				var b strings.Builder
				for r := 0; r < 2; r++ {
					fmt.Fprintf(&b, "rank %d of 2 joined on %s\n", r, host(r))
				}
				b.WriteString("epoch 10 loss 0.7647\nepoch 40 loss 0.3081\ntest accuracy 0.9467\n")
				fmt.Fprintf(&b, "serial check: max |w - w_serial| %s\n", serial)
				for r := 0; r < 2; r++ {
					fmt.Fprintf(&b, "rank %d: parameters agree across 2 ranks (checksum 1.621367)\n", r)
				}
				return b.String()
			}
			launcher := pods[0].Name
			tests := []struct {
				name, log, hostfile, wantErr string
			}{
				{name: "one rank per slot, agreeing with the serial run", log: mpiLog(func(r int) string { return hosts[r] }, "7.77e-16"), hostfile: hostfile},
				{
					name:     "both ranks on one host of one slot",
					log:      mpiLog(func(int) string { return hosts[0] }, "7.77e-16"),
					hostfile: hostfile,
					wantErr:  "2 ranks ran on " + hosts[0] + ", which has 1 slots",
				},
				{
					name:     "the hostfile has more slots than ranks joined",
					log:      mpiLog(func(r int) string { return hosts[r] }, "7.77e-16"),
					hostfile: hostfile + job.Name + "-worker-2." + job.Name + " slots=1\n",
					wantErr:  "joined a world of 2 ranks; the hostfile has 3 slots",
				},
				{
					name:     "rank 0 differs from the serial run",
					log:      mpiLog(func(r int) string { return hosts[r] }, "0.0125"),
					hostfile: hostfile,
					wantErr:  "differ from the serial run's by 0.0125",
				},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					summary, err := ex.Judge(Run{Pods: pods, Logs: map[string]string{launcher: tc.log}, Hostfile: tc.hostfile})
					checkJudged(t, summary, err, tc.wantErr)
				})
			}
		})
	}
}
