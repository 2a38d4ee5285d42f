package training

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
)

// mismatchLine is what the contract checks (and train_xgboost.py) print
// before exiting 1.
var mismatchLine = regexp.MustCompile(`(?m)^MISMATCH .*$`)

// linePrefix is what torchrun's --tee puts before each line of its workers'
// output ("[default0]:"); the torchrun examples need it (see their YAML).
const linePrefix = `(?m)^(?:\[[a-z]+[0-9]+\]:)?`

// The lines train_digits.py prints, and train_mpi.py with them (JudgeLearned
// reads the first two).
var (
	epochLine    = regexp.MustCompile(linePrefix + `epoch (\d+) loss ([0-9.]+)$`)
	accuracyLine = regexp.MustCompile(linePrefix + `test accuracy ([0-9.]+)$`)
)

// DigitsVerdictLine is the last line of each rank of train_digits.py and
// train_mpi.py: submatches rank, "agree" or what differs, world size and
// checksum.
var DigitsVerdictLine = regexp.MustCompile(linePrefix + `rank (\d+): parameters (agree|DIFFER.*) across (\d+) ranks \(checksum (\S+)\)$`)

// digitsRank is what one rank of train_digits.py printed.
type digitsRank struct {
	pod          string
	rank, world  int
	verdict      string
	injectedRank string
}

// JudgeDigits returns the judge of a run of example/pytorch/train_digits.py: every rank of
// one world size in [minWorld, maxWorld] joined and ended with the same
// parameters as every other, rank 0's loss fell to less than half and its
// test accuracy is at least 0.9, and, unless elastic (torchrun's elastic agent
// assigns the ranks), each pod trained as the RANK it was injected.
func JudgeDigits(minWorld, maxWorld int, elastic bool) func(Run) (string, error) {
	return func(run Run) (string, error) {
		pods, logs := run.Pods, run.Logs
		var ranks []digitsRank
		var rank0 string
		for _, pod := range pods {
			log := logs[pod.Name]
			// An elastic agent may restart its worker and so print more than
			// once: the last round is the one that trained.
			verdicts := DigitsVerdictLine.FindAllStringSubmatch(log, -1)
			if len(verdicts) == 0 {
				if elastic {
					// A pod that came too late for the round that trained
					// sits it out; the ranks of that round are checked below.
					continue
				}
				return "", fmt.Errorf("pod %s never finished training: no final parameter check in its log", pod.Name)
			}
			v := verdicts[len(verdicts)-1]
			r := digitsRank{pod: pod.Name, verdict: v[2], injectedRank: kubeutil.EnvOf(pod, ContainerOf(pod))["RANK"]}
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

		learned, err := JudgeLearned(rank0)
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

// JudgeLearned checks rank 0's log of a digits training: at least 2 epochs,
// the last loss under half the first, a test accuracy of at least 0.9. It
// returns "loss A → B over N epochs, test accuracy C".
func JudgeLearned(rank0 string) (string, error) {
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

// NoMismatch returns an error naming the first pod that printed a MISMATCH
// line, the contract checks' way of saying what was injected wrong.
func NoMismatch(pods []*corev1.Pod, logs map[string]string) error {
	for _, pod := range pods {
		if m := mismatchLine.FindString(logs[pod.Name]); m != "" {
			return fmt.Errorf("pod %s: %s", pod.Name, m)
		}
	}
	return nil
}

// ContainerOf is the name of pod's first container, the one the examples run
// their program in.
func ContainerOf(pod *corev1.Pod) string {
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	return pod.Spec.Containers[0].Name
}
