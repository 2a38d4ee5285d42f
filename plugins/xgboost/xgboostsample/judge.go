package xgboostsample

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/vcplugins/framework-plugins/internal/kubeutil"
	"github.com/vcplugins/framework-plugins/internal/training"
)

// The lines of example/xgboost/train_xgboost.py.
var (
	xgbJoinedLine   = regexp.MustCompile(`(?m)^rank (\d+) of (\d+) joined tracker at (\S+)$`)
	xgbAccuracyLine = regexp.MustCompile(`(?m)^rank (\d+): test accuracy ([0-9.]+) on (\d+) held-out digits$`)
	xgbModelLine    = regexp.MustCompile(`(?m)^rank (\d+): model sha256 ([0-9a-f]{64}) (agrees across (\d+) ranks|DIFFERS.*)$`)
	xgbSerialLine   = regexp.MustCompile(`(?m)^master: serial check: the model (equals|DIFFERS from) the one a single process trains on all (\d+) training digits$`)
)

// xgbRank is what one pod of train_xgboost.py printed and was injected.
type xgbRank struct {
	pod                         string
	rank, world                 int
	tracker, model, acc         string
	podIP                       string
	injectedRank, injectedWorld string
	injectedTracker             string
}

// judgeXGBoost judges a run of example/xgboost/train_xgboost.py: no pod found
// a mismatch in its variables; every pod joined the collective once, as the
// RANK it was injected, in a world of WORLD_SIZE ranks that has every rank
// and as many ranks as the Job has pods, at the tracker its DMLC_TRACKER_URI
// and DMLC_TRACKER_PORT name; every rank ended with the same model (the same
// sha256, and its own check against rank 0's agreed); rank 0's test accuracy
// is at least 0.9; and the master found the model equal to one a single
// process trains on all the training digits.
func judgeXGBoost(run training.Run) (string, error) {
	if err := training.NoMismatch(run.Pods, run.Logs); err != nil {
		return "", err
	}
	var ranks []xgbRank
	var serial []string
	for _, pod := range run.Pods {
		log := run.Logs[pod.Name]
		env := kubeutil.EnvOf(pod, training.ContainerOf(pod))
		joined := xgbJoinedLine.FindAllStringSubmatch(log, -1)
		if len(joined) != 1 {
			return "", fmt.Errorf("pod %s joined the tracker %d times, want once", pod.Name, len(joined))
		}
		r := xgbRank{pod: pod.Name, podIP: pod.Status.PodIP, tracker: joined[0][3], injectedRank: env["RANK"], injectedWorld: env["WORLD_SIZE"],
			injectedTracker: env["DMLC_TRACKER_URI"] + ":" + env["DMLC_TRACKER_PORT"]}
		r.rank, _ = strconv.Atoi(joined[0][1])
		r.world, _ = strconv.Atoi(joined[0][2])
		model := xgbModelLine.FindStringSubmatch(log)
		if model == nil || model[1] != joined[0][1] {
			return "", fmt.Errorf("pod %s (rank %d) never finished training: no model checksum in its log", pod.Name, r.rank)
		}
		if model[4] == "" || model[4] != joined[0][2] {
			return "", fmt.Errorf("pod %s (rank %d): model sha256 %s %s", pod.Name, r.rank, model[2], model[3])
		}
		r.model = model[2]
		if acc := xgbAccuracyLine.FindStringSubmatch(log); acc != nil && acc[1] == joined[0][1] {
			r.acc = acc[2]
		}
		if m := xgbSerialLine.FindStringSubmatch(log); m != nil {
			serial = m
		}
		ranks = append(ranks, r)
	}
	if len(ranks) == 0 {
		return "", fmt.Errorf("the Job has no pods")
	}
	world := ranks[0].world
	seen := map[int]string{}
	var rank0 xgbRank
	for _, r := range ranks {
		switch {
		case r.world != world:
			return "", fmt.Errorf("pod %s joined a world of %d ranks, pod %s one of %d", r.pod, r.world, ranks[0].pod, world)
		case strconv.Itoa(r.rank) != r.injectedRank:
			return "", fmt.Errorf("pod %s joined as rank %d but was injected RANK=%q", r.pod, r.rank, r.injectedRank)
		case strconv.Itoa(r.world) != r.injectedWorld:
			return "", fmt.Errorf("pod %s joined a world of %d ranks but was injected WORLD_SIZE=%q", r.pod, r.world, r.injectedWorld)
		case !sameTracker(r.tracker, r.injectedTracker, r.podIP):
			return "", fmt.Errorf("pod %s joined the tracker at %s but was injected %s", r.pod, r.tracker, r.injectedTracker)
		case seen[r.rank] != "":
			return "", fmt.Errorf("rank %d claimed by pods %s and %s", r.rank, seen[r.rank], r.pod)
		case r.model != ranks[0].model:
			return "", fmt.Errorf("pod %s (rank %d) ended with model sha256 %s, pod %s (rank %d) with %s", r.pod, r.rank, r.model, ranks[0].pod, ranks[0].rank, ranks[0].model)
		}
		seen[r.rank] = r.pod
		if r.rank == 0 {
			rank0 = r
		}
	}
	if world != len(run.Pods) {
		return "", fmt.Errorf("a world of %d ranks, the Job has %d pods", world, len(run.Pods))
	}
	for rank := 0; rank < world; rank++ {
		if seen[rank] == "" {
			return "", fmt.Errorf("rank %d of %d never joined (ranks seen: %v)", rank, world, seen)
		}
	}
	if rank0.acc == "" {
		return "", fmt.Errorf("rank 0 (%s) printed no test accuracy", rank0.pod)
	}
	if acc, _ := strconv.ParseFloat(rank0.acc, 64); acc < 0.9 {
		return "", fmt.Errorf("test accuracy %s on the held-out digits, want at least 0.9", rank0.acc)
	}
	if serial == nil {
		return "", fmt.Errorf("the master printed no serial check")
	}
	if serial[1] != "equals" {
		return "", fmt.Errorf("the distributed model differs from the one a single process trains on all %s training digits", serial[2])
	}
	var members []string
	for rank := 0; rank < world; rank++ {
		members = append(members, fmt.Sprintf("%d=%s", rank, seen[rank]))
	}
	// The workers name the tracker as the master's DNS name, the master
	// itself by its own address.
	tracker := rank0.tracker
	for _, r := range ranks {
		if r.rank != 0 {
			tracker = r.tracker + " (the master at " + rank0.tracker + ")"
			break
		}
	}
	return fmt.Sprintf("%d ranks (%s) joined the tracker at %s, test accuracy %s, one model on every rank (sha256 %s…), the serial model",
		world, strings.Join(members, " "), tracker, rank0.acc, rank0.model[:12]), nil
}

// sameTracker reports whether a rank joined the tracker at the address it
// was injected. The master's is $(POD_IP):port, its own IP as the kubelet
// expands it: the pod's IP where the pod still shows it (a finished pod may
// not), else any IPv4 address (the program itself checked it against its
// own host's address).
func sameTracker(joined, injected, podIP string) bool {
	const ref = "$(POD_IP)"
	if !strings.HasPrefix(injected, ref) {
		return joined == injected
	}
	port := strings.TrimPrefix(injected, ref)
	host, ok := strings.CutSuffix(joined, port)
	if !ok {
		return false
	}
	if podIP != "" {
		return host == podIP
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.To4() != nil
}
