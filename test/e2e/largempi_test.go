package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"volcano.sh/volcano/pkg/controllers/job/plugins/svc"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/jobtest"
	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/pkg/jobs/bounds"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
	"github.com/vcplugins/framework-plugins/pkg/wait"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// The largest Jobs (issue "Large jobs"): an mpi Job of 8,192 workers whose
// name has 40 characters passes every per-host list's old ceiling at once:
// svc's VC_WORKER_HOSTS (over MAX_ARG_STRLEN: left out), its ConfigMap with
// that key (over 1 MiB: written without it), the ssh plugin's per-host
// config (over MaxSSHConfigBytes: one entry per task) and the hostfile with
// the wait targets (over 1 MiB: ranges). Not in make test: the pods are
// created in under a minute (37 s on 5 December 2026), but the garbage
// collector and the namespace's deletion then delete 8,193 pods while the
// specs that follow run; make test-large runs it alone.
const (
	largeMPIWorkers = 8192
	// largeMPIPodsTimeout bounds the creation of the 8,193 pods, with room
	// for a loaded machine.
	largeMPIPodsTimeout = 8 * time.Minute
)

var _ = Describe("An 8,192-worker mpi Job with a 40-character name", Label("large"), func() {
	f := framework.New("largempi")

	It("is admitted, all 8,193 pods are created, no object is over its limit, and its launcher starts on the real node with a hostfile of 8,192 workers", func(ctx SpecContext) {
		framework.RequireRealNode()
		name := "llama-70b-mpi-sweep-20261205-a1b2c3d4e5f"
		Expect(name).To(HaveLen(40))
		// The launcher on the real node prints what mpirun would read; the
		// workers are KWOK pods. No wait: the KWOK workers run no sshd.
		program := corev1.Container{Name: "launcher", Image: localcluster.WaitImage,
			Command: []string{"sh", "-c", `echo "hostfile lines: $(wc -l < ` + mpi.HostfilePath + `)"; head -n 1 ` + mpi.HostfilePath + `; tail -n 1 ` + mpi.HostfilePath}}
		created, warnings := createLargeJob(ctx, f, largeJob(name, "mpi", []string{"--wait=false"}, program, "worker", largeMPIWorkers), "8,192-worker mpi Job")
		Expect(containsSubstring(warnings, "environment variable VC_WORKER_HOSTS would be")).To(BeTrue(), "warnings %q", warnings)

		By("every object the plugins wrote is within its limit")
		hostfile, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, mpi.ConfigMapName(created), metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(hostfile.Data).To(HaveKey(mpi.HostfileRangesKey), "the hostfile ConfigMap holds ranges")
		svc, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, created.Name+"-svc", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(svc.Data).NotTo(HaveKey("VC_WORKER_HOSTS"))
		Expect(strings.Count(svc.Data["worker.host"], "\n")).To(Equal(largeMPIWorkers - 1))
		secret, err := f.Kube.CoreV1().Secrets(f.Namespace).Get(ctx, created.Name+"-ssh", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(secret.Data["config"])).To(Equal(bounds.CompactSSHConfig(created, bounds.DefaultSSHPort)), "the ssh config, one entry a task")
		for _, o := range []struct {
			what string
			data map[string]string
		}{{"hostfile ConfigMap", hostfile.Data}, {"svc ConfigMap", svc.Data}} {
			n := 0
			for _, v := range o.data {
				n += len(v)
			}
			GinkgoWriter.Printf("%s: %d bytes of data\n", o.what, n)
			Expect(n).To(BeNumerically("<=", ownedcm.MaxConfigMapBytes), o.what)
		}

		By("the launcher starts on the real node and reads 8,192 workers")
		launcher := waitPodSucceeded(ctx, f, created, "-master-0")
		log := f.PodLog(ctx, launcher, "launcher")
		GinkgoWriter.Printf("launcher:\n%s", log)
		Expect(log).To(ContainSubstring(fmt.Sprintf("hostfile lines: %d\n", largeMPIWorkers)))
		Expect(log).To(ContainSubstring(fmt.Sprintf("%s-worker-%d.%s.%s.svc.%s slots=1\n", created.Name, largeMPIWorkers-1, created.Name, f.Namespace, localcluster.ClusterDomain)))
		Expect(f.PodLog(ctx, launcher, mpi.HostfileContainerName)).To(ContainSubstring(fmt.Sprintf("%s: %d lines", mpi.HostfilePath, largeMPIWorkers)))
	}, SpecTimeout(2*largeMPIPodsTimeout))
})

// largeSvcWorkers makes the svc plugin's worker host file pass the 1 MiB a
// ConfigMap holds with a 40-character Job name and a 16-character task name
// (the longest that keeps the hostname <job>-<task>-<index> a DNS label):
// 10,240 hosts of 104 characters, 1.08 MB.
const largeSvcWorkers = 10240

// The largest pytorch Job: its svc host file is over a ConfigMap, so the
// ConfigMap holds ranges and every pod's first init container writes
// /etc/volcano from them; the master on the real node reads every worker
// there. Not in make test, as above.
var _ = Describe("A 10,240-worker pytorch Job with 40- and 16-character names", Label("large"), func() {
	f := framework.New("largesvc")

	It("is admitted with a warning, all 10,241 pods are created, svc's ConfigMap holds ranges, and its master on the real node reads 10,240 workers from /etc/volcano", func(ctx SpecContext) {
		framework.RequireRealNode()
		name, worker := "gpt-neox-20b-pretrain-20261205-a1b2c3d4e", "trainer-gpu-a100"
		Expect(name).To(HaveLen(40))
		Expect(worker).To(HaveLen(16))
		hostFile := svc.ConfigMapMountPath + "/" + strings.ReplaceAll(worker, "-", "_") + ".host"
		master := corev1.Container{Name: "pytorch", Image: localcluster.WaitImage,
			Command: []string{"sh", "-c", `echo "host lines: $(wc -l < ` + hostFile + `)"; head -n 1 ` + hostFile + `; tail -n 1 ` + hostFile + `; echo "VC_MASTER_HOSTS=$VC_MASTER_HOSTS"; env | grep -c '^VC_TRAINER_GPU_A100_HOSTS=' || true`}}
		created, warnings := createLargeJob(ctx, f, largeJob(name, "pytorch", []string{"--worker=" + worker}, master, worker, largeSvcWorkers), "10,240-worker pytorch Job")
		Expect(containsSubstring(warnings, "plugin svc: the host files of ConfigMap "+created.Name+"-svc would be")).To(BeTrue(), "warnings %q", warnings)

		By("svc's ConfigMap holds the ranges, within its limit")
		cm, err := f.Kube.CoreV1().ConfigMaps(f.Namespace).Get(ctx, created.Name+"-svc", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		key := strings.ReplaceAll(worker, "-", "_") + ".host"
		Expect(cm.Data[key]).To(Equal(wait.RangesFile(bounds.SvcHostRanges(created)[key])))
		n := 0
		for _, v := range cm.Data {
			n += len(v)
		}
		GinkgoWriter.Printf("svc ConfigMap: %d bytes of data; its host file expanded: %d bytes\n", n, wait.ExpandedLen(bounds.SvcHostRanges(created)[key]))
		Expect(n).To(BeNumerically("<=", ownedcm.MaxConfigMapBytes))

		By("the master starts on the real node and reads 10,240 workers in /etc/volcano")
		pod := waitPodSucceeded(ctx, f, created, "-master-0")
		log := f.PodLog(ctx, pod, "pytorch")
		GinkgoWriter.Printf("master:\n%s", log)
		Expect(log).To(ContainSubstring(fmt.Sprintf("host lines: %d\n", largeSvcWorkers)))
		Expect(log).To(ContainSubstring(fmt.Sprintf("%s-%s-0.%s\n", created.Name, worker, created.Name)))
		Expect(log).To(ContainSubstring(fmt.Sprintf("%s-%s-%d.%s\n", created.Name, worker, largeSvcWorkers-1, created.Name)))
		Expect(log).To(ContainSubstring(fmt.Sprintf("VC_MASTER_HOSTS=%s-master-0.%s\n0\n", created.Name, created.Name)), "VC_MASTER_HOSTS kept, VC_TRAINER_GPU_A100_HOSTS left out")
		Expect(f.PodLog(ctx, pod, bounds.SvcHostsContainerName)).To(ContainSubstring(fmt.Sprintf("%s: %d lines", hostFile, largeSvcWorkers)))
	}, SpecTimeout(2*largeMPIPodsTimeout))
})

// largeJob returns a Job of plugin with args: a master task of one pod on
// the real node that runs container once, and workers pods of task worker
// on the KWOK nodes (running until deleted), minAvailable 1 so that every pod
// is created.
func largeJob(name, plugin string, args []string, container corev1.Container, worker string, workers int) *batch.Job {
	master := jobtest.MakeTask("master", 1).Obj()
	master.Template.Spec.Containers = []corev1.Container{container}
	master.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	job := jobtest.MakeJob(name).Plugin(plugin, args...).MinAvailable(1).
		Task(master).
		Task(jobtest.MakeTask(worker, int32(workers)).Container(plugin).Resource("cpu", "10m").Obj()).Obj()
	framework.KeepRunning(job)
	job.Spec.Tasks[0].Template.Annotations = nil
	job = framework.OnRealNode(job)
	job.Spec.Tasks[1].Template.Spec.NodeSelector = nil
	job.Spec.Tasks[1].Template.Spec.Tolerations = nil
	return job
}

// createLargeJob creates job, waits until all its pods exist and reports,
// as entry what, the time that took and the controller's CPU meanwhile. It
// returns the Job and the admission's warnings.
func createLargeJob(ctx SpecContext, f *framework.Framework, job *batch.Job, what string) (*batch.Job, []string) {
	GinkgoHelper()
	n := 0
	for _, t := range job.Spec.Tasks {
		n += int(t.Replicas)
	}
	cpu0 := controllerCPU()
	start := time.Now()
	created, warnings, err := f.CreateJobWithWarnings(ctx, job)
	Expect(err).NotTo(HaveOccurred(), "creating Job %s", job.Name)
	// The Job alone: one DeleteCollection of thousands of pods outlasts the
	// API server's request timeout; the garbage collector and the
	// namespace's deletion take them.
	DeferCleanup(f.DeleteJob, created, metav1.DeletePropagationBackground)
	GinkgoWriter.Printf("admitted with warnings %q\n", warnings)
	Eventually(ctx, func() int { return len(f.PodsOf(created)) }).WithTimeout(largeMPIPodsTimeout).WithPolling(5*time.Second).
		Should(Equal(n), func() string {
			return "pods of Job " + created.Name + "; FailedCreate events:\n" + framework.DescribeEvents(f.Events(ctx, "FailedCreate"))
		})
	took := time.Since(start)
	cpu := controllerCPU() - cpu0
	line := fmt.Sprintf("%d pods of Job %s created in %s; vc-controller-manager used %s of CPU meanwhile", n, created.Name, took.Round(time.Second), cpu.Round(10*time.Millisecond))
	GinkgoWriter.Println(line)
	AddReportEntry(what, line)

	By("every container of every pod gets an environment that passes execve")
	largest, largestPod := 0, ""
	cms := map[string]map[string]string{}
	for _, p := range f.PodsOf(created) {
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			total := 0
			for _, e := range c.Env {
				n := len(e.Value)
				if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil {
					name := r.ConfigMapKeyRef.Name
					if _, ok := cms[name]; !ok {
						cm, err := f.Kube.CoreV1().ConfigMaps(created.Namespace).Get(ctx, name, metav1.GetOptions{})
						Expect(err).NotTo(HaveOccurred(), "ConfigMap %s of pod %s", name, p.Name)
						cms[name] = cm.Data
					}
					v, ok := cms[name][r.ConfigMapKeyRef.Key]
					Expect(ok).To(BeTrue(), "pod %s, container %s: %s reads key %s, which ConfigMap %s does not have", p.Name, c.Name, e.Name, r.ConfigMapKeyRef.Key, name)
					n = len(v)
				}
				Expect(bounds.EnvBytes(e.Name, n)).To(BeNumerically("<=", bounds.MaxArgStrlen), "pod %s, container %s: %s", p.Name, c.Name, e.Name)
				total += bounds.EnvBytes(e.Name, n)
			}
			if total > largest {
				largest, largestPod = total, p.Name+"/"+c.Name
			}
		}
	}
	GinkgoWriter.Printf("the largest environment: %d bytes (%s); every variable within MAX_ARG_STRLEN\n", largest, largestPod)
	return created, warnings
}

// waitPodSucceeded waits for the pod of job whose name ends in suffix to
// succeed, and returns it. Its pod, not the Job: completing a large Job
// deletes thousands of pods first.
func waitPodSucceeded(ctx SpecContext, f *framework.Framework, job *batch.Job, suffix string) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	for _, p := range f.PodsOf(job) {
		if strings.HasSuffix(p.Name, suffix) {
			pod = p
		}
	}
	Expect(pod).NotTo(BeNil(), "a pod of Job %s named *%s", job.Name, suffix)
	Eventually(ctx, func() corev1.PodPhase { return f.PodPhase(ctx, pod) }).WithTimeout(framework.JobCompletedTimeout).
		Should(Equal(corev1.PodSucceeded), func() string { f.DumpPods(job); return "pod " + pod.Name })
	return pod
}

// controllerCPU returns the CPU time (user and system) the local cluster's
// vc-controller-manager has used, from /proc/<pid>/stat (0 on a KUBECONFIG
// cluster).
func controllerCPU() time.Duration {
	GinkgoHelper()
	pid := managerPID(localcluster.ControllerManager)
	if pid == 0 {
		return 0
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	Expect(err).NotTo(HaveOccurred())
	// Fields 14 and 15 (utime, stime, in clock ticks of 1/100 s) after the
	// command in parentheses, which may hold spaces.
	s := bufio.NewScanner(strings.NewReader(string(stat[strings.LastIndexByte(string(stat), ')')+2:])))
	s.Split(bufio.ScanWords)
	var ticks int64
	for i := 3; s.Scan(); i++ {
		if i == 14 || i == 15 {
			n, err := strconv.ParseInt(s.Text(), 10, 64)
			Expect(err).NotTo(HaveOccurred())
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
