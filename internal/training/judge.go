package training

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
)

// mismatchLine is what the contract checks print before exiting 1.
var mismatchLine = regexp.MustCompile(`(?m)^MISMATCH .*$`)

// linePrefix is what torchrun's --tee puts before each line of its workers'
// output ("[default0]:"); the torchrun examples need it (see their YAML).
const linePrefix = `(?m)^(?:\[[a-z]+[0-9]+\]:)?`

// The lines train_digits.py prints.
var (
	epochLine    = regexp.MustCompile(linePrefix + `epoch (\d+) loss ([0-9.]+)$`)
	accuracyLine = regexp.MustCompile(linePrefix + `test accuracy ([0-9.]+)$`)
	verdictLine  = regexp.MustCompile(linePrefix + `rank (\d+): parameters (agree|DIFFER.*) across (\d+) ranks \(checksum (\S+)\)$`)
)

// digitsRank is what one rank of train_digits.py printed.
type digitsRank struct {
	pod          string
	rank, world  int
	verdict      string
	injectedRank string
}

// judgeDigits judges a run of example/pytorch/train_digits.py: every rank of
// one world size in [minWorld, maxWorld] joined and ended with the same
// parameters as every other, rank 0's loss fell to less than half and its
// test accuracy is at least 0.9, and, unless elastic (torchrun's elastic agent
// assigns the ranks), each pod trained as the RANK it was injected.
func judgeDigits(minWorld, maxWorld int, elastic bool) func(Run) (string, error) {
	return func(run Run) (string, error) {
		pods, logs := run.Pods, run.Logs
		var ranks []digitsRank
		var rank0 string
		for _, pod := range pods {
			log := logs[pod.Name]
			// An elastic agent may restart its worker and so print more than
			// once: the last round is the one that trained.
			verdicts := verdictLine.FindAllStringSubmatch(log, -1)
			if len(verdicts) == 0 {
				if elastic {
					// A pod that came too late for the round that trained
					// sits it out; the ranks of that round are checked below.
					continue
				}
				return "", fmt.Errorf("pod %s never finished training: no final parameter check in its log", pod.Name)
			}
			v := verdicts[len(verdicts)-1]
			r := digitsRank{pod: pod.Name, verdict: v[2], injectedRank: kubeutil.EnvOf(pod, containerOf(pod))["RANK"]}
			r.rank, _ = strconv.Atoi(v[1])
			r.world, _ = strconv.Atoi(v[3])
			if !regexp.MustCompile(fmt.Sprintf(linePrefix+`rank %d of %d joined on `, r.rank, r.world)).MatchString(log) {
				return "", fmt.Errorf("pod %s: rank %d of %d never said it joined", pod.Name, r.rank, r.world)
			}
			ranks = append(ranks, r)
			if r.rank == 0 {
				rank0 = log
			}
		}
		if len(ranks) == 0 {
			return "", fmt.Errorf("no pod finished training")
		}
		world := ranks[0].world
		if world < minWorld || world > maxWorld {
			return "", fmt.Errorf("world size %d, want %d to %d", world, minWorld, maxWorld)
		}
		seen := map[int]string{}
		for _, r := range ranks {
			switch {
			case r.world != world:
				return "", fmt.Errorf("pod %s trained in a world of %d, pod %s in one of %d", r.pod, r.world, ranks[0].pod, world)
			case r.verdict != "agree":
				return "", fmt.Errorf("pod %s (rank %d): final parameters %s", r.pod, r.rank, r.verdict)
			case seen[r.rank] != "":
				return "", fmt.Errorf("rank %d claimed by pods %s and %s", r.rank, seen[r.rank], r.pod)
			case !elastic && strconv.Itoa(r.rank) != r.injectedRank:
				return "", fmt.Errorf("pod %s trained as rank %d but was injected RANK=%q", r.pod, r.rank, r.injectedRank)
			}
			seen[r.rank] = r.pod
		}
		for rank := 0; rank < world; rank++ {
			if seen[rank] == "" {
				return "", fmt.Errorf("rank %d of %d never joined (ranks seen: %v)", rank, world, seen)
			}
		}
		if !elastic && len(ranks) != len(pods) {
			return "", fmt.Errorf("%d of %d pods trained", len(ranks), len(pods))
		}

		learned, err := judgeLearned(rank0)
		if err != nil {
			return "", err
		}
		var members []string
		for rank := 0; rank < world; rank++ {
			members = append(members, fmt.Sprintf("%d=%s", rank, seen[rank]))
		}
		return fmt.Sprintf("%d ranks (%s), %s, parameters agree", world, strings.Join(members, " "), learned), nil
	}
}

// judgeLearned checks rank 0's log of a digits training: at least 2 epochs,
// the last loss under half the first, a test accuracy of at least 0.9. It
// returns "loss A → B over N epochs, test accuracy C".
func judgeLearned(rank0 string) (string, error) {
	epochs := epochLine.FindAllStringSubmatch(rank0, -1)
	if len(epochs) < 2 {
		return "", fmt.Errorf("rank 0 printed %d epochs, want at least 2", len(epochs))
	}
	first, _ := strconv.ParseFloat(epochs[0][2], 64)
	last, _ := strconv.ParseFloat(epochs[len(epochs)-1][2], 64)
	if last >= first/2 {
		return "", fmt.Errorf("rank 0: loss went from %s to %s, want it at least halved", epochs[0][2], epochs[len(epochs)-1][2])
	}
	acc := accuracyLine.FindStringSubmatch(rank0)
	if acc == nil {
		return "", fmt.Errorf("rank 0 printed no test accuracy")
	}
	if accuracy, _ := strconv.ParseFloat(acc[1], 64); accuracy < 0.9 {
		return "", fmt.Errorf("test accuracy %s on the digits, want at least 0.9", acc[1])
	}
	return fmt.Sprintf("loss %s → %s over %d epochs, test accuracy %s", epochs[0][2], epochs[len(epochs)-1][2], len(epochs), acc[1]), nil
}

// The lines of example/mpi/train_mpi.py that train_digits.py does not print
// (epoch, accuracy and verdict lines are the same), and a hostfile line in
// either format ("<host> slots=<n>", "<host>:<n>").
var (
	mpiJoinedLine = regexp.MustCompile(`(?m)^rank (\d+) of (\d+) joined on (\S+)$`)
	mpiSerialLine = regexp.MustCompile(`(?m)^serial check: max \|w - w_serial\| (\S+)$`)
	hostfileLine  = regexp.MustCompile(`^([^\s:]+)(?: slots=|:)(\d+)$`)
)

// judgeMPI judges a run of example/mpi/train_mpi.py from its launcher's log
// (mpirun and mpiexec gather every rank's output there) against the hostfile
// the Job had: the world has as many ranks as the hostfile has slots, every
// rank joined once on a host of the hostfile with as many ranks per host as
// it has slots, every rank ended with the same parameters, rank 0 learned
// (judgeLearned) and its parameters are the serial run's within 1e-9.
func judgeMPI(run Run) (string, error) {
	if err := noMismatch(run.Pods, run.Logs); err != nil {
		return "", err
	}
	var launcher *corev1.Pod
	for _, pod := range run.Pods {
		for _, v := range pod.Spec.Volumes {
			if v.Name == mpi.VolumeName {
				launcher = pod
			}
		}
	}
	if launcher == nil {
		return "", fmt.Errorf("no pod mounts the hostfile: no launcher")
	}
	log := run.Logs[launcher.Name]
	slots, world := map[string]int{}, 0
	for _, line := range strings.Split(strings.TrimSpace(run.Hostfile), "\n") {
		m := hostfileLine.FindStringSubmatch(line)
		if m == nil {
			return "", fmt.Errorf("hostfile line %q", line)
		}
		n, _ := strconv.Atoi(m[2])
		// The rank prints gethostname(): the host's first label.
		slots[strings.SplitN(m[1], ".", 2)[0]] += n
		world += n
	}
	joined, perHost := map[int]string{}, map[string]int{}
	for _, m := range mpiJoinedLine.FindAllStringSubmatch(log, -1) {
		rank, _ := strconv.Atoi(m[1])
		switch {
		case m[2] != strconv.Itoa(world):
			return "", fmt.Errorf("rank %d joined a world of %s ranks; the hostfile has %d slots", rank, m[2], world)
		case joined[rank] != "":
			return "", fmt.Errorf("rank %d joined twice", rank)
		case slots[m[3]] == 0:
			return "", fmt.Errorf("rank %d joined on %s, which is not in the hostfile", rank, m[3])
		}
		joined[rank] = m[3]
		perHost[m[3]]++
	}
	for rank := 0; rank < world; rank++ {
		if joined[rank] == "" {
			return "", fmt.Errorf("rank %d of %d never joined (joined: %v)", rank, world, joined)
		}
	}
	hosts := make([]string, 0, len(slots))
	for host := range slots {
		hosts = append(hosts, host)
	}
	sort.Strings(hosts)
	for _, host := range hosts {
		if perHost[host] != slots[host] {
			return "", fmt.Errorf("%d ranks ran on %s, which has %d slots in the hostfile", perHost[host], host, slots[host])
		}
	}
	agreed := map[int]bool{}
	for _, v := range verdictLine.FindAllStringSubmatch(log, -1) {
		rank, _ := strconv.Atoi(v[1])
		if v[2] != "agree" || v[3] != strconv.Itoa(world) {
			return "", fmt.Errorf("rank %d: parameters %s across %s ranks", rank, v[2], v[3])
		}
		agreed[rank] = true
	}
	for rank := 0; rank < world; rank++ {
		if !agreed[rank] {
			return "", fmt.Errorf("rank %d never finished training: no final parameter check", rank)
		}
	}
	learned, err := judgeLearned(log)
	if err != nil {
		return "", err
	}
	serial := mpiSerialLine.FindStringSubmatch(log)
	if serial == nil {
		return "", fmt.Errorf("rank 0 printed no check against the serial run")
	}
	if diff, err := strconv.ParseFloat(serial[1], 64); err != nil || diff > 1e-9 {
		return "", fmt.Errorf("rank 0's parameters differ from the serial run's by %s, want at most 1e-9", serial[1])
	}
	var members []string
	for rank := 0; rank < world; rank++ {
		members = append(members, fmt.Sprintf("%d=%s", rank, joined[rank]))
	}
	return fmt.Sprintf("%d ranks on %d hostfile slots (%s), %s, parameters agree (with the serial run's: max diff %s)",
		world, world, strings.Join(members, " "), learned, serial[1]), nil
}

// tfDoneLine is the last line of tf_config_check.py in a task of the cluster.
var tfDoneLine = regexp.MustCompile(`(?m)^(\w+):(\d+): reached (\d+) peers, heard from (\d+) peers, cluster (\{.*\})$`)

// judgeTFConfig judges example/tensorflow/tf_config_check.py: no task found a
// mismatch; the chief finished, having reached every other pod of the Job as
// the task TF_CONFIG names for its address and been reached by each; every
// task that finished saw the same cluster, of exactly the Job's pods, and
// claims the role and index of its own pod.
func judgeTFConfig(run Run) (string, error) {
	pods, logs := run.Pods, run.Logs
	if err := noMismatch(pods, logs); err != nil {
		return "", err
	}
	var cluster string
	var chief []string
	for _, pod := range pods {
		m := tfDoneLine.FindStringSubmatch(logs[pod.Name])
		if m == nil {
			continue
		}
		task, index := pod.Annotations[batch.TaskSpecKey], pod.Name[strings.LastIndex(pod.Name, "-")+1:]
		if m[1] != task || m[2] != index {
			return "", fmt.Errorf("pod %s (task %s, index %s) ran as %s:%s", pod.Name, task, index, m[1], m[2])
		}
		if want := strconv.Itoa(len(pods) - 1); m[3] != want || m[4] != want {
			return "", fmt.Errorf("pod %s reached %s peers and heard from %s, want %s each (the Job has %d pods)", pod.Name, m[3], m[4], want, len(pods))
		}
		if cluster != "" && m[5] != cluster {
			return "", fmt.Errorf("pod %s saw the cluster %s, another pod %s", pod.Name, m[5], cluster)
		}
		cluster = m[5]
		if m[1] == "chief" {
			chief = m
		}
	}
	if chief == nil {
		return "", fmt.Errorf("the chief never finished: it did not reach or hear from every task")
	}
	var spec map[string][]string
	if err := json.Unmarshal([]byte(cluster), &spec); err != nil {
		return "", fmt.Errorf("the cluster the chief printed: %w", err)
	}
	var tasks []string
	for job, addrs := range spec {
		for i := range addrs {
			tasks = append(tasks, fmt.Sprintf("%s:%d", job, i))
		}
	}
	sort.Strings(tasks)
	if len(tasks) != len(pods) {
		return "", fmt.Errorf("TF_CONFIG's cluster has %d tasks (%s), the Job %d pods", len(tasks), strings.Join(tasks, " "), len(pods))
	}
	return fmt.Sprintf("%d tasks (%s): each serves on its TF_CONFIG address, the chief reached and heard from all %s others",
		len(tasks), strings.Join(tasks, " "), chief[3]), nil
}

// The scheduler's lines of dmlc_check.py.
var (
	dmlcRegistered = regexp.MustCompile(`(?m)^scheduler: registered (server|worker) (\S+)$`)
	dmlcDone       = regexp.MustCompile(`(?m)^scheduler: (\d+) servers and (\d+) workers registered \(ids ([0-9 ]+)\); every worker reached every server$`)
)

// judgeDMLC judges example/mxnet/dmlc_check.py: no node found a mismatch, and
// the scheduler saw exactly the Job's server and worker pods register (by
// their pod IPs when known) and every worker reach every server.
func judgeDMLC(run Run) (string, error) {
	pods, logs := run.Pods, run.Logs
	if err := noMismatch(pods, logs); err != nil {
		return "", err
	}
	count := map[string]int{}
	ips := map[string]string{}
	var scheduler *corev1.Pod
	for _, pod := range pods {
		role := kubeutil.EnvOf(pod, containerOf(pod))["DMLC_ROLE"]
		count[role]++
		if role == "scheduler" {
			scheduler = pod
		} else if pod.Status.PodIP != "" {
			ips[pod.Status.PodIP] = role
		}
	}
	if scheduler == nil {
		return "", fmt.Errorf("no pod has DMLC_ROLE=scheduler")
	}
	log := logs[scheduler.Name]
	done := dmlcDone.FindStringSubmatch(log)
	if done == nil {
		return "", fmt.Errorf("the scheduler %s never finished: not every node registered, or a worker did not reach every server", scheduler.Name)
	}
	if done[1] != strconv.Itoa(count["server"]) || done[2] != strconv.Itoa(count["worker"]) {
		return "", fmt.Errorf("the scheduler waited for %s servers and %s workers, the Job has %d and %d", done[1], done[2], count["server"], count["worker"])
	}
	registered := dmlcRegistered.FindAllStringSubmatch(log, -1)
	if len(registered) != count["server"]+count["worker"] {
		return "", fmt.Errorf("%d nodes registered with the scheduler, the Job has %d servers and workers", len(registered), count["server"]+count["worker"])
	}
	for _, r := range registered {
		ip := r[2][:strings.LastIndex(r[2], ":")]
		if role, known := ips[ip]; known && role != r[1] {
			return "", fmt.Errorf("%s registered as a %s, but its pod has DMLC_ROLE=%s", r[2], r[1], role)
		}
	}
	return fmt.Sprintf("the scheduler registered %s servers and %s workers (ids %s); every worker reached every server", done[1], done[2], done[3]), nil
}

// noMismatch returns an error naming the first pod that printed a MISMATCH
// line, the contract checks' way of saying what was injected wrong.
func noMismatch(pods []*corev1.Pod, logs map[string]string) error {
	for _, pod := range pods {
		if m := mismatchLine.FindString(logs[pod.Name]); m != "" {
			return fmt.Errorf("pod %s: %s", pod.Name, m)
		}
	}
	return nil
}

// containerOf is the name of pod's first container, the one the examples run
// their program in.
func containerOf(pod *corev1.Pod) string {
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	return pod.Spec.Containers[0].Name
}
