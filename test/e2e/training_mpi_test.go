package e2e

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/plugins/mpi"
	"github.com/vcplugins/framework-plugins/test/e2e/framework"
	"github.com/vcplugins/framework-plugins/test/localcluster"
)

// The MPI training program and its ConfigMap, as the MPI example Jobs mount it.
const (
	mpiProgram   = "example/mpi/train_mpi.py"
	mpiConfigMap = "mpi-digits"
	// mpiContainer is the main container of the examples' pods; the ranks'
	// output reaches the launcher's log through mpirun/mpiexec.
	mpiContainer = "mpi"
	// mpiLauncherTask is the examples' --master task.
	mpiLauncherTask = "launcher"
)

// mpiTrainingJobs are the MPI example Jobs of train_mpi.py, by implementation.
var mpiTrainingJobs = []struct{ name, file string }{
	{name: "Open MPI, mpirun with the hostfile and ssh variables only", file: "example/mpi/mpi-digits-openmpi.yaml"},
	{name: "MPICH, Hydra's mpiexec without -localhost", file: "example/mpi/mpi-digits-mpich.yaml"},
}

// The lines train_mpi.py prints that train_digits.py does not (the epoch,
// accuracy and verdict lines are the same), and the hostfile's lines in both
// formats ("<host> slots=<n>", "<host>:<n>").
var (
	joinedLine   = regexp.MustCompile(`(?m)^rank (\d+) of (\d+) joined on (\S+)$`)
	serialLine   = regexp.MustCompile(`(?m)^serial check: max \|w - w_serial\| (\S+)$`)
	hostfileLine = regexp.MustCompile(`^([^\s:]+)(?: slots=|:)(\d+)$`)
)

// hostfileSlots parses the hostfile the launcher was given: slots per pod
// hostname (the host's first label, what gethostname returns in the pod) and
// their sum.
func hostfileSlots(hostfile string) (map[string]int, int) {
	GinkgoHelper()
	slots, world := map[string]int{}, 0
	for _, line := range strings.Split(strings.TrimSpace(hostfile), "\n") {
		m := hostfileLine.FindStringSubmatch(line)
		Expect(m).NotTo(BeNil(), "hostfile line %q", line)
		n, _ := strconv.Atoi(m[2])
		slots[strings.SplitN(m[1], ".", 2)[0]] += n
		world += n
	}
	return slots, world
}

// expectMPITrained checks the launcher's log of an MPI training run against
// the hostfile it was given: the world has as many ranks as the hostfile has
// slots, every rank joined once, on a host of the hostfile, as many ranks per
// host as it has slots, and ended with the same parameters as every other
// rank; rank 0's loss fell, its test accuracy is good and its result is the
// serial run's. It returns one line summing the run up.
func expectMPITrained(log, hostfile string) string {
	GinkgoHelper()
	slots, world := hostfileSlots(hostfile)

	joined := map[int]string{}
	perHost := map[string]int{}
	for _, m := range joinedLine.FindAllStringSubmatch(log, -1) {
		rank, _ := strconv.Atoi(m[1])
		Expect(m[2]).To(Equal(strconv.Itoa(world)), "rank %d joined a world of %s ranks; the hostfile has %d slots", rank, m[2], world)
		Expect(joined).NotTo(HaveKey(rank), "rank %d joined twice", rank)
		Expect(slots).To(HaveKey(m[3]), "rank %d joined on %s, which is not in the hostfile", rank, m[3])
		joined[rank] = m[3]
		perHost[m[3]]++
	}
	for rank := 0; rank < world; rank++ {
		Expect(joined).To(HaveKey(rank), "rank %d of %d never joined (joined: %v)", rank, world, joined)
	}
	Expect(perHost).To(Equal(slots), "ranks per host against the hostfile's slots")

	verdicts := map[int]string{}
	for _, v := range verdictLine.FindAllStringSubmatch(log, -1) {
		rank, _ := strconv.Atoi(v[1])
		Expect(v[3]).To(Equal(strconv.Itoa(world)), "rank %d's verdict", rank)
		Expect(v[2]).To(Equal("agree"), "rank %d: final parameters", rank)
		verdicts[rank] = v[4]
	}
	for rank := 0; rank < world; rank++ {
		Expect(verdicts).To(HaveKey(rank), "rank %d never finished training: no final parameter check", rank)
	}

	learned := expectLearned(log)
	serial := serialLine.FindStringSubmatch(log)
	Expect(serial).NotTo(BeNil(), "rank 0's check against the serial run")
	diff, err := strconv.ParseFloat(serial[1], 64)
	Expect(err).NotTo(HaveOccurred(), "serial check %q", serial[0])
	Expect(diff).To(BeNumerically("<=", 1e-9), "largest difference to the serial run's parameters")

	var members []string
	for rank := 0; rank < world; rank++ {
		members = append(members, fmt.Sprintf("%d=%s", rank, joined[rank]))
	}
	sort.Strings(members)
	return fmt.Sprintf("%d ranks on %d hostfile slots (%s), %s, parameters agree (with the serial run's: max diff %s)",
		world, world, strings.Join(members, " "), learned, serial[1])
}

var _ = Describe("MPI training on the real node", func() {
	f := framework.New("training-mpi")

	for _, mj := range mpiTrainingJobs {
		It("trains the digits logistic regression with mpi4py allreduce to agreement: "+mj.name+" ("+mj.file+")", func(ctx SpecContext) {
			r := runTraining(ctx, f, mj.file, mpiConfigMap, mpiProgram, mpiContainer)
			var launcher *corev1.Pod
			for _, p := range r.pods {
				Expect(p.Spec.NodeName).To(Equal(localcluster.RealNodeName), "node of pod %s", p.Name)
				if p.Annotations[batch.TaskSpecKey] == mpiLauncherTask {
					launcher = p
				}
			}
			Expect(launcher).NotTo(BeNil(), "launcher pod of %s", r.job.Name)
			Expect(launcher.Status.Phase).To(Equal(corev1.PodSucceeded), "launcher %s", launcher.Name)
			cm := f.ConfigMapSeen(mpi.ConfigMapName(r.job))
			Expect(cm).NotTo(BeNil(), "the hostfile ConfigMap of %s", r.job.Name)
			log := r.logs[launcher.Name]
			GinkgoWriter.Printf("--- hostfile:\n%s--- %s/%s:\n%s", cm.Data[mpi.HostfileKey], launcher.Name, mpiContainer, log)
			r.report(expectMPITrained(log, cm.Data[mpi.HostfileKey]))
		}, SpecTimeout(framework.RealSpecTimeout))
	}
})
