package mpisample

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
)

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
// the Job had (of the ConfigMap the launcher mounts, in run.ConfigMaps): the world has as many ranks as the hostfile has slots, every
// rank joined once on a host of the hostfile with as many ranks per host as
// it has slots, every rank ended with the same parameters, rank 0 learned
// (training.JudgeLearned) and its parameters are the serial run's within 1e-9.
func judgeMPI(run training.Run) (string, error) {
	if err := training.NoMismatch(run.Pods, run.Logs); err != nil {
		return "", err
	}
	var launcher *corev1.Pod
	var hostfileCM string
	for _, pod := range run.Pods {
		for _, v := range pod.Spec.Volumes {
			if v.Name == mpi.VolumeName {
				launcher = pod
				if v.ConfigMap != nil {
					hostfileCM = v.ConfigMap.Name
				}
			}
		}
	}
	if launcher == nil {
		return "", fmt.Errorf("no pod mounts the hostfile: no launcher")
	}
	hostfile, ok := run.ConfigMaps[hostfileCM][mpi.HostfileKey]
	if !ok {
		return "", fmt.Errorf("launcher %s: no hostfile seen (ConfigMap %q, key %s)", launcher.Name, hostfileCM, mpi.HostfileKey)
	}
	log := run.Logs[launcher.Name]
	slots, world := map[string]int{}, 0
	for _, line := range strings.Split(strings.TrimSpace(hostfile), "\n") {
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
	for _, v := range training.DigitsVerdictLine.FindAllStringSubmatch(log, -1) {
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
	learned, err := training.JudgeLearned(log)
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
