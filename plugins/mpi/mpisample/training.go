package mpisample

import (
	"regexp"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/internal/training"
	"github.com/vcplugins/framework-plugins/plugins/mpi"
)

// sshdListening is what sshd -De prints once it accepts: "Server listening
// on 0.0.0.0 port 2222.".
var sshdListening = regexp.MustCompile(`^Server listening on \S+ port \d+\.$`)

// openMPIOrMPICH is an example of example/mpi/train_mpi.py launched as file
// says, judged by judgeMPI; stock: make startup runs it under Volcano's stock
// controller manager too.
func openMPIOrMPICH(what, file string, stock bool) training.Example {
	return training.Example{
		Framework: mpi.Name, What: what, File: file, Stock: stock, ConfigMap: "mpi-digits",
		Programs: []string{"example/mpi/train_mpi.py"}, Container: "mpi",
		Judge: judgeMPI, Joined: training.Joined{Line: training.DigitsJoinedLine}, Listening: sshdListening,
		PluginConfigMaps: func(job *batch.Job) []string { return []string{mpi.ConfigMapName(job)} },
	}
}

// trainingExamples train on the digits with Open MPI's mpirun and MPICH's
// mpiexec. Volcano's in-tree plugin runs the first only, its mpirun given
// the hosts (hack/demo's stockExample); MPICH's mpiexec would need a
// rewriting of its own.
var trainingExamples = []training.Example{
	openMPIOrMPICH("Open MPI: mpirun over ssh, the hostfile and OMPI_* only, mpi4py allreduce", "example/mpi/mpi-digits-openmpi.yaml", true),
	openMPIOrMPICH("MPICH: Hydra's mpiexec over ssh without -localhost", "example/mpi/mpi-digits-mpich.yaml", false),
}

// hellos are example/mpi/mpi.yaml and ChainerMN over MPI
// (example/chainermn/chainermn.yaml): the launcher prints a line per rank.
var hellos = []training.Hello{
	{
		Source: "example/mpi/mpi.yaml", Name: "mpi-dist", Container: "mpi",
		Success: regexp.MustCompile(`(?m)^rank [01] of 2 on mpi-dist-worker-[01]$`), Tasks: []string{"master"}, PerPod: 2,
	},
	{
		Source: "example/chainermn/chainermn.yaml", Name: "chainermn-example", Container: "master",
		Success: regexp.MustCompile(`(?m)^rank [0-2] of 3 on chainermn-example-worker-[0-2]: allreduce 3 OK$`), Tasks: []string{"master"}, PerPod: 3,
	},
}
