package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	busv1alpha1 "volcano.sh/apis/pkg/apis/bus/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/localcluster"
	"github.com/vcplugins/framework-plugins/plugins"
	"github.com/vcplugins/framework-plugins/plugins/pytorch"
	"github.com/vcplugins/framework-plugins/plugins/tensorflow"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
)

// probeScript is the main container of every pod of the real-node Jobs, run by
// busybox sh as a non-root user. It
//   - serves SERVE_PORT, if set, for exactly SERVE_CONNECTIONS connections (one
//     per pod whose wait container waits for this one), starting 8 s late so
//     that those wait containers find it absent first;
//   - resolves, through the pod's own resolver and DNS search path, every peer
//     name the plugins injected (<job>-<task>-<index>.<job>, in its environment
//     and in the files of Volcano's svc plugin and of the mpi plugin), retrying
//     for up to 2 minutes, and prints "resolved NAME ADDRESS" for each;
//   - meets every one of them at a barrier on port 7777: connects to each over
//     the pod network and waits until each has connected to it ("all N peers
//     connected"), since a pod that has ended no longer resolves (it leaves
//     the Service's endpoints), and every pod sees every name through the svc
//     plugin's host files;
//   - prints TF_CONFIG, if set, as "TF_CONFIG=<value>";
//   - exits 0 after LINGER_SECONDS: the pods of the task whose completion
//     completes the Job linger longest, so that every other pod has ended by
//     then and the Job's completion deletes no running pod (whose log would
//     go with it).
//
// busybox wget prints "Connecting to NAME:PORT (ADDRESS:PORT)" once a name has
// resolved; nslookup would skip the search path for these dotted names.
const probeScript = `
pattern="$JOB_NAME-[a-z0-9-]+-[0-9]+\.$JOB_NAME"
names=$({ env; cat /etc/volcano/* /etc/mpi/* 2>/dev/null; } | grep -oE "$pattern" | sort -u)
n=0
for name in $names; do n=$((n + 1)); done
echo "peers: $n"
# TF_CONFIG as the process sees it (the kubelet expanded a reference, if any).
if [ -n "${TF_CONFIG+set}" ]; then printf 'TF_CONFIG=%s\n' "$TF_CONFIG"; fi

# count FILE prints the number of lines of FILE, 0 if it does not exist.
count() {
	if [ -f "$1" ]; then echo $(($(wc -l <"$1"))); else echo 0; fi
}

# accept PORT starts a persistent listener on PORT (busybox nc -ll) that adds
# a line to /tmp/accepted-PORT per connection, and sets listener to its PID.
# A one-shot "nc -l" in a loop would miscount: connections the kernel completed
# while no nc was accepting are reset, after their clients saw success.
accept() {
	nc -ll -p "$1" -e sh -c "echo >>/tmp/accepted-$1" </dev/null >/dev/null 2>&1 &
	listener=$!
}

# await FILE N waits (up to 2 minutes) until FILE has N lines.
await() {
	tries=0
	while [ "$(count "$1")" -lt "$2" ]; do
		tries=$((tries + 1))
		if [ "$tries" -ge 120 ]; then
			echo "only $(count "$1") of $2 connections after 2 minutes"
			exit 1
		fi
		sleep 1
	done
}

# barrier PORT connects once to PORT of every peer (itself included) and
# returns when every peer has connected to its own PORT.
barrier() {
	accept "$1"
	for name in $names; do
		tries=0
		until nc -w 1 "$name" "$1" -e true </dev/null >/dev/null 2>&1; do
			tries=$((tries + 1))
			if [ "$tries" -ge 120 ]; then
				echo "could not connect to $name:$1"
				exit 1
			fi
			sleep 1
		done
		echo "connected to $name:$1"
	done
	await "/tmp/accepted-$1" "$n"
	kill "$listener"
}

server=
# SERVE_POD: only that pod of the task serves (a wait for pod 0 only).
if [ -n "$SERVE_PORT" ] && { [ -z "$SERVE_POD" ] || [ "$(hostname)" = "$SERVE_POD" ]; }; then
	sleep 8
	accept "$SERVE_PORT"
	server=$listener
	echo "serving port $SERVE_PORT"
fi
for name in $names; do
	tries=0
	while :; do
		out=$({ timeout 2 wget -Y off --spider "http://$name:1/" 2>&1 </dev/null; } 2>&1)
		case $out in *"Connecting to "*) break ;; esac
		tries=$((tries + 1))
		if [ "$tries" -ge 120 ]; then
			echo "could not resolve $name: $out"
			exit 1
		fi
		sleep 1
	done
	addr=${out#*Connecting to *(}
	echo "resolved $name ${addr%%:*}"
done
if [ -n "$server" ]; then
	await "/tmp/accepted-$SERVE_PORT" "$SERVE_CONNECTIONS"
	kill "$server"
	echo "served $(count "/tmp/accepted-$SERVE_PORT") connections on port $SERVE_PORT"
fi
echo "probe done"
barrier 7777
echo "all $n peers connected"
sleep "$LINGER_SECONDS"
`

// realJob is one framework's Job on the real node: the restricted test Job of
// that framework with its containers replaced by the probe.
type realJob struct {
	file string
	// args replaces the plugin's arguments when not nil.
	args []string
}

// served is the port a serving task's pods open and the connections each
// expects: one per pod whose wait container waits for it. firstOnly: only
// the task's pod 0 serves.
type served struct {
	port, connections int
	firstOnly         bool
}

// realJobArgs are the plugin arguments of the frameworks whose real-node Job
// does not use the defaults. The pytorch workers wait for the master's port,
// not just its name: a name can be there before a worker's wait container
// starts, a late port cannot.
//
// The tensorflow Job passes --tf-config=reference: the default auto inlines
// a Job this small, as in the examples that train here, and the reference's
// expansion by the kubelet is then checked on a real kubelet too.
var realJobArgs = map[string][]string{pytorch.Name: {"--wait-master-port"}, tensorflow.Name: {"--tf-config=reference"}}

// realJobs are every framework's restricted Job (testdata/restricted/<name>.yaml).
var realJobs = func() []realJob {
	var out []realJob
	for _, name := range plugins.Names() {
		out = append(out, realJob{file: path.Join("restricted", name+".yaml"), args: realJobArgs[name]})
	}
	return out
}()

// servedBy returns, by task, what the pods of job serve: the targets of the
// TCP waits the framework plugins' descriptions of job give (a wait for a
// name only is no connection).
func servedBy(job *batch.Job) map[string]served {
	out := map[string]served{}
	for _, f := range plugins.Frameworks {
		args, ok := job.Spec.Plugins[f.Name]
		if !ok {
			continue
		}
		for _, w := range f.Describe(args, job).Waits {
			if w.Port == 0 {
				continue
			}
			waiting := replicasOf(job, w.From)
			if w.FirstOnly && w.From == w.To {
				waiting--
			}
			s := out[w.To]
			s.port, s.firstOnly = w.Port, w.FirstOnly
			s.connections += waiting
			out[w.To] = s
		}
	}
	return out
}

// waitingPods returns the names of the pods of job that the framework
// plugins' descriptions of job make wait for others.
func waitingPods(job *batch.Job) map[string]bool {
	out := map[string]bool{}
	for _, f := range plugins.Frameworks {
		args, ok := job.Spec.Plugins[f.Name]
		if !ok {
			continue
		}
		for _, w := range f.Describe(args, job).Waits {
			for i := 0; i < replicasOf(job, w.From); i++ {
				if !(w.FirstOnly && w.From == w.To && i == 0) {
					out[fmt.Sprintf("%s-%s-%d", job.Name, w.From, i)] = true
				}
			}
		}
	}
	return out
}

func replicasOf(job *batch.Job, task string) int {
	for _, t := range job.Spec.Tasks {
		if t.Name == task {
			return int(t.Replicas)
		}
	}
	return 0
}

// Seconds the probe lingers after the barrier: the pods of the Job's
// completing task outlast the others by more than the kubelet needs to report
// a pod Succeeded.
const (
	lingerCompleting = "15"
	lingerOthers     = "1"
)

// probeJob turns the restricted Job of r into its real-node version. The task
// that completes the Job is the one with a TaskCompleted → CompleteJob policy
// in the Job as admitted (the webhook sets it), found by a dry run.
func probeJob(ctx context.Context, f *framework.Framework, r realJob) *batch.Job {
	GinkgoHelper()
	job := framework.OnRealNode(framework.LoadJob(filepath.Join(testdata, r.file)))
	if r.args != nil {
		for name := range job.Spec.Plugins {
			if name != "svc" && name != "ssh" {
				job.Spec.Plugins[name] = r.args
			}
		}
	}
	serve := servedBy(job)
	completing := map[string]bool{}
	for _, t := range f.DryRunJob(ctx, job).Spec.Tasks {
		for _, p := range t.Policies {
			if p.Event == busv1alpha1.TaskCompletedEvent && p.Action == busv1alpha1.CompleteJobAction {
				completing[t.Name] = true
			}
		}
	}
	for i := range job.Spec.Tasks {
		t := &job.Spec.Tasks[i]
		c := &t.Template.Spec.Containers[0]
		c.Image = localcluster.WaitImage
		c.Command = []string{"sh", "-c", probeScript}
		c.Args = nil
		c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("20m"),
			corev1.ResourceMemory: resource.MustParse("32Mi"),
		}}
		linger := lingerOthers
		if completing[t.Name] {
			linger = lingerCompleting
		}
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "JOB_NAME", Value: job.Name},
			corev1.EnvVar{Name: "LINGER_SECONDS", Value: linger})
		if s, ok := serve[t.Name]; ok {
			c.Env = append(c.Env,
				corev1.EnvVar{Name: "SERVE_PORT", Value: strconv.Itoa(s.port)},
				corev1.EnvVar{Name: "SERVE_CONNECTIONS", Value: strconv.Itoa(s.connections)})
			if s.firstOnly {
				c.Env = append(c.Env, corev1.EnvVar{Name: "SERVE_POD", Value: job.Name + "-" + t.Name + "-0"})
			}
		}
	}
	return job
}

// injectedPeers returns the peer names of job found in what the plugins gave
// pod: its main container's literal environment and the ConfigMaps it mounts
// or reads variables from (Volcano's svc hosts, the mpi hostfile). The probe
// reads the same things from inside the container.
func injectedPeers(f *framework.Framework, job *batch.Job, pod *corev1.Pod) []string {
	GinkgoHelper()
	re := regexp.MustCompile(regexp.QuoteMeta(job.Name) + `-[a-z0-9-]+-[0-9]+\.` + regexp.QuoteMeta(job.Name))
	var text strings.Builder
	cms := map[string]bool{}
	for _, e := range pod.Spec.Containers[0].Env {
		text.WriteString(e.Value + "\n")
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			cms[e.ValueFrom.ConfigMapKeyRef.Name] = true
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil {
			cms[v.ConfigMap.Name] = true
		}
	}
	for name := range cms {
		// The svc plugin deletes its ConfigMap when the Job completes.
		cm := f.ConfigMapSeen(name)
		Expect(cm).NotTo(BeNil(), "ConfigMap %s of pod %s", name, pod.Name)
		for _, v := range cm.Data {
			text.WriteString(v + "\n")
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range re.FindAllString(text.String(), -1) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// expectRan checks the logs of one pod of a real-node Job.
func expectRan(ctx context.Context, f *framework.Framework, job *batch.Job, r realJob, pod *corev1.Pod) {
	GinkgoHelper()
	Expect(pod.Spec.NodeName).To(Equal(localcluster.RealNodeName), "node of pod %s", pod.Name)
	main := pod.Spec.Containers[0].Name
	log := f.PodLog(ctx, pod, main)
	GinkgoWriter.Printf("--- %s/%s:\n%s", pod.Name, main, log)

	peers := injectedPeers(f, job, pod)
	Expect(peers).NotTo(BeEmpty(), "peer names injected into pod %s", pod.Name)
	Expect(log).To(ContainSubstring(fmt.Sprintf("peers: %d\n", len(peers))), "pod %s finds the injected peers", pod.Name)
	for _, p := range peers {
		Expect(log).To(MatchRegexp(`(?m)^resolved %s 10\.245\.0\.[0-9]+$`, regexp.QuoteMeta(p)),
			"pod %s resolving peer %s to a pod address", pod.Name, p)
		Expect(log).To(ContainSubstring("connected to "+p+":7777\n"), "pod %s reaching peer %s", pod.Name, p)
	}
	Expect(log).To(ContainSubstring("probe done"))
	if spec, ok := framework.EnvOf(pod, main)[tensorflow.EnvTFConfig]; ok {
		// By reference the pod spec holds the reference and the process the
		// whole value, which the kubelet expanded; inline both the value.
		want := wantTFConfig(job, pod)
		if tfMode(job) == tensorflow.Reference {
			Expect(spec).To(ContainSubstring(tfReference), "TF_CONFIG in the spec of pod %s", pod.Name)
		} else {
			Expect(spec).To(Equal(want), "TF_CONFIG in the spec of pod %s", pod.Name)
		}
		Expect(log).To(ContainSubstring("TF_CONFIG="+want+"\n"), "TF_CONFIG inside pod %s", pod.Name)
	}
	task := pod.Annotations[batch.TaskSpecKey]
	if s, ok := servedBy(job)[task]; ok && (!s.firstOnly || pod.Name == job.Name+"-"+task+"-0") {
		Expect(log).To(ContainSubstring(fmt.Sprintf("served %d connections on port %d", s.connections, s.port)), "pod %s", pod.Name)
	}

	if len(pod.Spec.InitContainers) == 0 {
		return
	}
	Expect(framework.InitContainerNames(pod)).To(Equal([]string{waitContainer}))
	wait := f.PodLog(ctx, pod, waitContainer)
	GinkgoWriter.Printf("--- %s/%s:\n%s", pod.Name, waitContainer, wait)
	if byNameOnly(f.WaitTargets(ctx, pod)) {
		// A name resolves as soon as its pod has an address, which can be
		// before this pod's wait container starts (xgboost's workers wait for
		// the master's name only): there is nothing to hold back then.
		Expect(wait).To(MatchRegexp(`(dependencies|dependency) ready after [0-9]+s`), "wait container of pod %s", pod.Name)
		return
	}
	// Absent first, then present: the wait container really held the pod
	// (the probe serves its port only after a delay).
	Expect(wait).To(MatchRegexp(`(?s)waiting for .*(dependencies|dependency) ready after [0-9]+s`), "wait container of pod %s", pod.Name)
}

// byNameOnly reports whether every wait target is a bare host name, which
// only has to resolve.
func byNameOnly(targets []string) bool {
	for _, t := range targets {
		if strings.Contains(t, ":") {
			return false
		}
	}
	return len(targets) > 0
}

var _ = Describe("The real node", func() {
	f := framework.New("realnode-info")

	It("is Ready beside the KWOK nodes, runs containerd and the apiserver's Kubernetes version, and keeps other pods off", func(ctx SpecContext) {
		framework.RequireRealNode()
		node, err := f.Kube.CoreV1().Nodes().Get(ctx, localcluster.RealNodeName, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		server, err := f.Kube.Discovery().ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(node.Status.NodeInfo.KubeletVersion).To(Equal(server.GitVersion), "kubelet version")
		Expect(node.Status.NodeInfo.ContainerRuntimeVersion).To(HavePrefix("containerd://"))
		Expect(node.Labels).To(HaveKeyWithValue(localcluster.RealNodeLabel, "true"))
		Expect(node.Spec.Taints).To(ContainElement(HaveField("Key", localcluster.RealNodeTaint)))
		var ready bool
		for _, c := range node.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		Expect(ready).To(BeTrue(), "node %s Ready", node.Name)
		nodes, err := f.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(len(nodes.Items)).To(BeNumerically(">", 1), "KWOK nodes beside the real node")
	}, SpecTimeout(framework.SpecTimeout))
})

var _ = Describe("Jobs on the real node", func() {
	for _, ns := range []struct {
		name   string
		labels map[string]string
	}{
		{"realnode", nil},
		{"realnode-restricted", map[string]string{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		}},
	} {
		Context("in namespace "+ns.name+"-*", func() {
			f := framework.New(ns.name, framework.WithNamespaceLabels(ns.labels))

			It("run for real with every framework: each pod resolves every injected peer name and waiting roles wait", func(ctx SpecContext) {
				framework.RequireRealNode()
				var jobs []*batch.Job
				for _, r := range realJobs {
					jobs = append(jobs, probeJob(ctx, f, r))
				}
				jobs = f.CreateJobs(ctx, jobs...)
				for _, job := range jobs {
					f.WaitJobPhaseOrDump(ctx, job, batch.Completed, framework.RealJobCompletedTimeout)
				}
				for i, job := range jobs {
					// All of them: the Job's completion deleted none.
					pods := f.LivePodsOf(job)
					Expect(framework.PodNames(pods)).To(HaveLen(framework.TotalReplicas(job)), "pods of Job %s after it completed", job.Name)
					for _, pod := range pods {
						Expect(f.PodPhase(ctx, pod)).To(Equal(corev1.PodSucceeded), "phase of pod %s", pod.Name)
						expectRan(ctx, f, job, realJobs[i], pod)
					}
				}
				Expect(f.Events(ctx, "FailedCreate")).To(BeEmpty(), "pod creations the API server refused")
			}, SpecTimeout(framework.RealSpecTimeout))
		})
	}
})

// wantTFConfig is the TF_CONFIG of a pod of a tensorflow Job whose tasks are
// named after the roles and listen on the default port, as encoding/json
// writes it from the Job's tasks, independently of the plugin.
func wantTFConfig(job *batch.Job, pod *corev1.Pod) string {
	GinkgoHelper()
	cluster := map[string][]string{}
	for _, t := range job.Spec.Tasks {
		if t.Name == tensorflow.RoleEvaluator {
			continue
		}
		for i := 0; i < int(t.Replicas); i++ {
			cluster[t.Name] = append(cluster[t.Name], fmt.Sprintf("%s-%s-%d.%s.%s.svc.cluster.local:%d", job.Name, t.Name, i, job.Name, pod.Namespace, tensorflow.DefaultPort))
		}
	}
	index, err := strconv.Atoi(pod.Name[strings.LastIndex(pod.Name, "-")+1:])
	Expect(err).NotTo(HaveOccurred(), "index of pod %s", pod.Name)
	type task struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	raw, err := json.Marshal(struct {
		Cluster     map[string][]string `json:"cluster"`
		Task        task                `json:"task"`
		Environment string              `json:"environment"`
	}{cluster, task{pod.Annotations[batch.TaskSpecKey], index}, "cloud"})
	Expect(err).NotTo(HaveOccurred())
	return string(raw)
}
