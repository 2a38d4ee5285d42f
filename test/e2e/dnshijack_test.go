package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// The trap of M1 (docs/security.md, round 3): a namespace named like a Job,
// with a headless Service named like the Job's master pod whose endpoint is a
// listener that logs every connection. A two-label name
// <job>-master-0.<job> whose own record is not yet published falls through
// the pods' DNS search path to <job>-master-0.<job>.svc.cluster.local, that
// Service.
const (
	// trapListener logs a line per TCP connection to the master's port.
	trapListener = `touch /tmp/c; tail -f /tmp/c & nc -ll -p "$PORT" -e sh -c 'echo connection >>/tmp/c'`
	// hijackHold is the master's first init container: it holds the master
	// back (so that it is not Ready) for 20 s, and meanwhile shows that the
	// trap is armed: the two-label name resolves to the trap's listener, the
	// injected MASTER_ADDR to nothing or the master itself. busybox wget
	// prints "Connecting to NAME:1 (ADDRESS:1)" once a name resolved (port 1:
	// the listener is not reached).
	hijackHold = `
resolve() { out=$({ timeout 2 wget -Y off --spider "http://$1:1/" 2>&1 </dev/null; } 2>&1); case $out in *"Connecting to "*) a=${out#*Connecting to *(}; echo "${a%%:*}" ;; esac; }
short="$JOB_NAME-master-0.$JOB_NAME"
i=0; ip=
while [ -z "$ip" ] && [ $i -lt 15 ]; do i=$((i + 1)); ip=$(resolve "$short"); [ -z "$ip" ] && sleep 1; done
echo "two-label $short resolves to ${ip:-nothing}"
q=$(resolve "$MASTER_ADDR")
echo "injected $MASTER_ADDR resolves to ${q:-nothing}"
sleep 20
`
	// hijackMaster serves MASTER_PORT until both workers' programs have said
	// hello there (the workers' wait containers connect and send nothing).
	hijackMaster = `touch /tmp/c; nc -ll -p "$MASTER_PORT" -e sh -c 'read -r l; echo "$l" >>/tmp/c' & l=$!
i=0; while [ $(($(grep -c hello /tmp/c))) -lt 2 ] && [ $i -lt 120 ]; do i=$((i + 1)); sleep 1; done
echo "master heard $(($(grep -c hello /tmp/c))) workers"; kill $l; sleep 10`
	// hijackWorker says hello to MASTER_ADDR:MASTER_PORT, the address of the
	// training traffic.
	hijackWorker = `i=0; until echo hello | nc -w 2 "$MASTER_ADDR" "$MASTER_PORT"; do i=$((i + 1)); [ $i -ge 60 ] && exit 1; sleep 1; done
echo "reached $MASTER_ADDR:$MASTER_PORT"`
)

// hijackJob is a pytorch Job named job of a master held back by hijackHold
// and 2 workers that wait for the master's port (--wait-master-port), on the
// real node.
func hijackJob(job string) *batch.Job {
	sh := func(container, script string) corev1.Container {
		return corev1.Container{Name: container, Image: localcluster.WaitImage, Command: []string{"sh", "-c", script},
			Env: []corev1.EnvVar{{Name: "JOB_NAME", Value: job}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}}
	}
	task := func(role string, replicas int32, init []corev1.Container, main corev1.Container) batch.TaskSpec {
		return batch.TaskSpec{Name: role, Replicas: replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, InitContainers: init, Containers: []corev1.Container{main}}}}
	}
	return framework.OnRealNode(&batch.Job{
		ObjectMeta: metav1.ObjectMeta{Name: job},
		Spec: batch.JobSpec{
			SchedulerName: "volcano", Queue: "default",
			Plugins: map[string][]string{pytorch.Name: {"--wait-master-port"}},
			Tasks: []batch.TaskSpec{
				task(pytorch.DefaultMaster, 1, []corev1.Container{sh("hold", hijackHold)}, sh("pytorch", hijackMaster)),
				task(pytorch.DefaultWorker, 2, nil, sh("pytorch", hijackWorker)),
			},
		},
	})
}

var _ = Describe("A namespace named like a Job", func() {
	f := framework.New("dnshijack")

	It("sends the wait probes and the traffic of a Job to its own pods, not to a Service named like its master in a namespace named like the Job",
		func(ctx SpecContext) {
			framework.RequireRealNode()
			// Unique per run: namespaces are cluster-wide.
			name := "hijack-" + f.Namespace[strings.LastIndex(f.Namespace, "-")+1:]
			master := name + "-" + pytorch.DefaultMaster + "-0"

			By("arming the trap: namespace " + name + ", Service " + master + " and its listener")
			_, err := f.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func(ctx context.Context) {
				err := f.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					Expect(err).NotTo(HaveOccurred(), "deleting namespace %s", name)
				}
			}, NodeTimeout(framework.GarbageCollectedTimeout))
			framework.Eventually(ctx, func(ctx context.Context) error {
				_, err := f.Kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
				return err
			}, framework.NamespaceReadyTimeout).Should(Succeed(), "default ServiceAccount of namespace %s", name)
			labels := map[string]string{"app": "trap"}
			_, err = f.Kube.CoreV1().Services(name).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: master},
				Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: labels,
					Ports: []corev1.ServicePort{{Name: "trap", Port: pytorch.DefaultPort}}},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			listener := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "listener", Labels: labels},
				Spec: corev1.PodSpec{
					// Bound to the real node here: the cluster runs no
					// default scheduler, and the trap is no Volcano Job.
					NodeName:    localcluster.RealNodeName,
					Tolerations: []corev1.Toleration{localcluster.RealNodeToleration()},
					Containers: []corev1.Container{{Name: "listener", Image: localcluster.WaitImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{"sh", "-c", trapListener},
						Env:     []corev1.EnvVar{{Name: "PORT", Value: strconv.Itoa(pytorch.DefaultPort)}}}},
				},
			}
			_, err = f.Kube.CoreV1().Pods(name).Create(ctx, listener, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			var trapIP string
			framework.Eventually(ctx, func(ctx context.Context) (bool, error) {
				p, err := f.Kube.CoreV1().Pods(name).Get(ctx, listener.Name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
						trapIP = p.Status.PodIP
						return true, nil
					}
				}
				return false, nil
			}, framework.RealJobCompletedTimeout).Should(BeTrue(), "listener pod Ready")

			By("running Job " + name + ", its master held back 20 s")
			job := f.CreateJob(ctx, hijackJob(name))
			DeferCleanup(f.DeleteJobAndPods, job)
			f.WaitJobPhaseOrDump(ctx, job, batch.Completed, framework.RealJobCompletedTimeout)

			pods := f.PodsOf(job)
			Expect(framework.PodNames(pods)).To(Equal([]string{master, name + "-worker-0", name + "-worker-1"}))
			masterPod := pods[0]
			hold := f.PodLog(ctx, masterPod, "hold")
			GinkgoWriter.Printf("--- %s/hold:\n%s", master, hold)
			qualified := fmt.Sprintf("%s.%s.%s.svc.cluster.local", master, name, f.Namespace)
			Expect(framework.EnvOf(masterPod, "pytorch")).To(HaveKeyWithValue("MASTER_ADDR", qualified))
			Expect(hold).To(ContainSubstring(fmt.Sprintf("two-label %s.%s resolves to %s\n", master, name, trapIP)),
				"the trap is armed: the two-label name reaches the listener")
			// The master's own record may be published before it is Ready
			// (its address is known); the trap's never is.
			Expect(hold).To(MatchRegexp(`(?m)^injected %s resolves to (nothing|%s)$`, regexp.QuoteMeta(qualified), regexp.QuoteMeta(masterPod.Status.PodIP)),
				"the injected name does not fall through to the trap (%s) while the master is held back", trapIP)

			By("checking that nothing reached the trap")
			l, err := f.Kube.CoreV1().Pods(name).Get(ctx, listener.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			trapLog := f.PodLog(ctx, l, "listener")
			Expect(trapLog).NotTo(ContainSubstring("connection"), "connections the listener in namespace %s logged", name)

			By("checking that the workers waited for the master itself")
			masterStarted := training.StartedAt(masterPod, "pytorch")
			Expect(masterStarted.IsZero()).To(BeFalse(), "start of the master's program")
			for _, w := range pods[1:] {
				var waited *corev1.ContainerStateTerminated
				for _, s := range w.Status.InitContainerStatuses {
					if s.Name == waitContainer {
						waited = s.State.Terminated
					}
				}
				Expect(waited).NotTo(BeNil(), "wait container of pod %s", w.Name)
				Expect(waited.ExitCode).To(BeZero(), "wait container of pod %s", w.Name)
				Expect(waited.FinishedAt.Time).NotTo(BeTemporally("<", masterStarted),
					"pod %s's wait ended before the master's program started", w.Name)
				log := f.PodLog(ctx, w, "pytorch")
				Expect(log).To(MatchRegexp(`(?m)^reached %s:%d$`, regexp.QuoteMeta(qualified), pytorch.DefaultPort), "pod %s", w.Name)
			}
			Expect(f.PodLog(ctx, masterPod, "pytorch")).To(ContainSubstring("master heard 2 workers"))
		}, SpecTimeout(framework.RealSpecTimeout))
})
