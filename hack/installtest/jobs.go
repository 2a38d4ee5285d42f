package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/plugins/catalog/samples"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
)

// The two tasks of the install test's Jobs but the frameworks' own
// (frameworkJob): TensorFlow's default ps and worker, for the Jobs of
// Volcano's in-tree tensorflow plugin and the plain Jobs.
const (
	leadTask   = tensorflow.DefaultPS
	workerTask = tensorflow.DefaultWorker
)

// tfArgs are the TensorFlow Jobs' arguments, in the flags and defaults
// Volcano's in-tree plugin and ours share.
var tfArgs = []string{"--ps=" + leadTask, "--worker=" + workerTask, "--port=" + strconv.Itoa(tensorflow.DefaultPort)}

// job runs a Job of tasks leadTask and workerTask with plugin on the real
// node: the lead accepts a connection on port once (for at most 20 s), the
// worker checks that env var is set. This project's plugins hold the worker
// back in a wait init container until the lead answers there, Volcano's do
// not. Records the result.
func (x *t) job(ctx context.Context, name, plugin string, args []string, env string, port int) {
	x.runJob(ctx, plugin, realNodeJob(name, plugin, args, fmt.Sprintf(`case $(hostname) in *-%[3]s-0) timeout 20 nc -l -p %[2]d || true;; *) test -n "$%[1]s" && echo %[1]s="$%[1]s";; esac`,
		env, port, leadTask)))
}

// verifyJob runs docs/install.md's Verify Job, example/tensorflow/tensorflow.yaml,
// on the real node: its public image swapped for the local training image
// (training.Localize; the node pulls nothing), and the local wait image in
// its plugin's arguments (see steps). Records the result.
func (x *t) verifyJob(ctx context.Context, waitImageArg string) {
	const file = "example/tensorflow/tensorflow.yaml"
	report := func(err error) { x.record(false, fmt.Sprintf("job %s: %v", file, err)) }
	if _, err := os.Stat(filepath.Join(x.o.imageDir, filepath.Base(training.ImageTar))); err != nil {
		report(fmt.Errorf("its image is not built (make node-images-training): %w", err))
		return
	}
	j, err := training.LoadJob(".", file)
	if err == nil {
		_, err = training.Localize(j)
	}
	if err != nil {
		report(err)
		return
	}
	training.OnRealNode(j)
	j.Spec.Plugins[tensorflow.Name] = append(j.Spec.Plugins[tensorflow.Name], waitImageArg)
	x.runJob(ctx, tensorflow.Name, j)
}

// runJob creates j in namespace default, waits up to 4 minutes for it to
// end, records whether it Completed, and deletes it.
func (x *t) runJob(ctx context.Context, plugin string, j *batch.Job) {
	name := j.Name
	start := time.Now()
	res := func(ok bool, what string) {
		line := fmt.Sprintf("job %-16s %-10s %s (%.0fs)", name, plugin, what, time.Since(start).Seconds())
		fmt.Println(line)
		x.results = append(x.results, line)
		if !ok {
			x.failed = append(x.failed, "job "+name+": "+what)
		}
	}
	if _, err := x.vc.BatchV1alpha1().Jobs("default").Create(ctx, j, metav1.CreateOptions{}); err != nil {
		res(false, "create: "+err.Error())
		return
	}
	var phase batch.JobPhase
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := x.vc.BatchV1alpha1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		phase = got.Status.State.Phase
		return phase == batch.Completed || phase == batch.Failed || phase == batch.Aborted, nil
	})
	if err != nil || phase != batch.Completed {
		res(false, fmt.Sprintf("phase %q: %v", phase, err))
		x.describeJob(name)
	} else {
		res(true, "Completed")
	}
	_ = x.vc.BatchV1alpha1().Jobs("default").Delete(ctx, name, metav1.DeleteOptions{})
}

// describeJob prints what explains a Job that did not complete: the Job and
// its PodGroup (status and conditions), its pods and the namespace's events,
// and the end of the in-cluster controller's and scheduler's logs.
func (x *t) describeJob(name string) {
	x.printKubectl(
		[]string{"-n", "default", "get", "jobs.batch.volcano.sh", name, "-o", "yaml"},
		[]string{"-n", "default", "get", "podgroups.scheduling.volcano.sh", "-o", "yaml"},
		[]string{"-n", "default", "get", "pods", "-l", "volcano.sh/job-name=" + name, "-o", "wide"},
		[]string{"-n", "default", "get", "events", "--sort-by=.lastTimestamp"},
		[]string{"-n", "volcano-system", "get", "pods", "-o", "wide"},
		[]string{"-n", "volcano-system", "logs", "-l", "app=volcano-controller", "--tail=80", "--all-containers", "--prefix"},
		[]string{"-n", "volcano-system", "logs", "-l", "app=volcano-scheduler", "--tail=80", "--all-containers", "--prefix"})
}

// describeAdmission prints what explains Job creates that failed during a
// rollout of Volcano's admission pods: the pods (restarts, readiness), the
// admission Service's EndpointSlices, the namespace's events and the pods'
// logs, the previous container's too.
func (x *t) describeAdmission(ns string) {
	x.printKubectl(
		[]string{"-n", ns, "get", "pods", "-o", "wide"},
		[]string{"-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=volcano-admission-service", "-o", "yaml"},
		[]string{"-n", ns, "get", "events", "--sort-by=.lastTimestamp"},
		[]string{"-n", ns, "logs", "-l", "app=volcano-admission", "--tail=100", "--all-containers", "--prefix"},
		[]string{"-n", ns, "logs", "-l", "app=volcano-admission", "--tail=100", "--all-containers", "--prefix", "--previous"})
}

// printKubectl runs kubectl with each of commands' arguments against the
// cluster and prints each command and its output (errors included), for a
// failure's diagnosis.
func (x *t) printKubectl(commands ...[]string) {
	for _, args := range commands {
		cmd := exec.Command("kubectl", args...)
		cmd.Env = x.env
		out, _ := cmd.CombinedOutput()
		fmt.Printf("$ kubectl %s\n%s", strings.Join(args, " "), out)
	}
}

// realNodeJob is a Job of tasks leadTask and workerTask (one pod each) on the real node
// running busybox sh -c script, with plugin and the svc plugin ("" for none).
func realNodeJob(name, plugin string, args []string, script string) *batch.Job {
	j := &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batch.JobSpec{
			SchedulerName: "volcano", MinAvailable: 2,
			Tasks: []batch.TaskSpec{realNodeTask(leadTask, script), realNodeTask(workerTask, script)},
		},
	}
	if plugin != "" {
		j.Spec.Plugins = map[string][]string{plugin: args, framework.SvcPlugin: {}}
	}
	return j
}

// realNodeTask is a task of one pod on the real node running busybox sh -c
// script.
func realNodeTask(name, script string) batch.TaskSpec {
	return batch.TaskSpec{
		Name: name, Replicas: 1,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{localcluster.RealNodeLabel: "true"},
			Tolerations:   []corev1.Toleration{localcluster.RealNodeToleration()},
			Containers: []corev1.Container{{
				Name: "main", Image: localcluster.WaitImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"sh", "-c", script},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
			}},
		}},
	}
}

// frameworkJob returns the Job make test-install runs for framework f with
// this project's plugin, named ours-<framework>, from f's Sample alone: one
// pod on the real node for each role of the Sample's small Job
// (sample.Role.Small), each task named as its role flag's default; f's
// plugin given --wait-image=waitImage (the node pulls nothing) and the
// Sample's Install.Args, and the Volcano plugins f needs. Pod 0 of a task
// that others wait for on a port (f.Describe's wait edges) accepts a
// connection there once for each pod that waits (each for at most 20 s:
// busybox's nc -l serves one and exits, so with two tasks waiting one
// listener could leave the second waiting for good); every other pod checks
// that the plugin set Install.Env. It returns an error when f's plugin
// refuses the Job or its waits need two ports of one task.
func frameworkJob(f samples.Framework, waitImage string) (*batch.Job, error) {
	s := f.Sample
	args := append([]string{"--wait-image=" + waitImage}, s.Install.Args...)
	j := &batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "ours-" + f.Name},
		Spec:       batch.JobSpec{SchedulerName: "volcano", Plugins: map[string][]string{f.Name: args}},
	}
	for _, p := range f.VolcanoPlugins {
		j.Spec.Plugins[p] = []string{}
	}
	for _, r := range s.Roles {
		if r.Small > 0 {
			j.Spec.Tasks = append(j.Spec.Tasks, batch.TaskSpec{Name: r.Flag, Replicas: 1})
			j.Spec.MinAvailable++
		}
	}
	d := f.Describe(args, j)
	if len(d.Errs) > 0 {
		return nil, fmt.Errorf("%s refuses its install Job: %v", f.Name, d.Errs.ToAggregate())
	}
	port, waiters := map[string]int{}, map[string]int{}
	for _, w := range d.Waits {
		// Each task has one pod, so a task waiting for its own pod 0 has
		// nobody waiting.
		if w.Port == 0 || w.From == w.To {
			continue
		}
		if p, ok := port[w.To]; ok && p != w.Port {
			return nil, fmt.Errorf("%s: task %s is waited for on ports %d and %d", f.Name, w.To, p, w.Port)
		}
		port[w.To] = w.Port
		waiters[w.To]++
	}
	for i, task := range j.Spec.Tasks {
		script := fmt.Sprintf(`test -n "$%[1]s" && echo %[1]s="$%[1]s"`, s.Install.Env)
		if p, ok := port[task.Name]; ok {
			script = fmt.Sprintf(`i=0; while [ $i -lt %d ]; do timeout 20 nc -l -p %d || true; i=$((i+1)); done`, waiters[task.Name], p)
		}
		j.Spec.Tasks[i] = realNodeTask(task.Name, script)
	}
	return j, nil
}
