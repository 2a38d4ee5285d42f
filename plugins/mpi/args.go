package mpi

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Defaults. Master, worker and port are those of Volcano's in-tree mpi plugin;
// the implementation is that of Kubeflow mpi-operator's MPIJob.
const (
	DefaultMaster         = "master"
	DefaultWorker         = "worker"
	DefaultPort           = 22
	DefaultImplementation = OpenMPI
	// MaxSlotsPerWorker caps --slots-per-worker.
	MaxSlotsPerWorker = 1024
)

// Implementation is the MPI implementation the launcher runs, which decides
// the hostfile's format and the variables the master gets.
type Implementation string

// The accepted --mpi-implementation values (mpi-operator's OpenMPI, Intel and
// MPICH, in lower case).
const (
	OpenMPI Implementation = "openmpi"
	Intel   Implementation = "intel"
	MPICH   Implementation = "mpich"
)

// Implementations lists the accepted implementations, in the order error
// messages give them.
var Implementations = []Implementation{OpenMPI, Intel, MPICH}

// Args are the mpi plugin's arguments.
type Args struct {
	// Master names the launcher task (exactly one replica; it runs mpirun).
	// Worker names the task whose pods run sshd and the ranks.
	Master, Worker string
	// Port is the TCP port sshd listens on in the worker pods: --port, else
	// the --ssh-port of the Job's ssh plugin (SSHPluginPort), else 22.
	Port int
	// Implementation is the MPI implementation.
	Implementation Implementation
	// SlotsPerWorker is the number of slots (ranks) per worker host; 0 means
	// not given: each host gets the GPUs its first container requests, else 1.
	SlotsPerWorker int
	// LauncherAsWorker also runs ranks on the master: it is listed first in the
	// hostfile and the worker task becomes optional. --launcher-as-worker, or
	// true for a master-only job (see ParseArgs).
	LauncherAsWorker bool
	// ClusterDomain is the cluster's DNS domain: the hostfile's, MPI_HOST's
	// and the wait targets' hosts are named in it (jobs.Domain), and with
	// Intel MPI and MPICH the MPI pods search
	// <subdomain>.<namespace>.svc.<ClusterDomain>, so that the job's short
	// host names resolve (the launcher's is what Hydra's proxies connect back
	// to when no interface is given). Default: the manager's --cluster-domain
	// (jobs.ClusterDomain).
	ClusterDomain string
	// Wait holds the master back until every worker's ssh port accepts connections.
	Wait wait.Options
}

// ParseArgs parses the mpi plugin's arguments (Volcano-style
// ["--flag=value", ...]) and, when job is not nil, checks them against it.
//
// Flags: --master, --worker (task names), --port (1-65535), --mpi-implementation
// (openmpi, intel or mpich, case-insensitive), --slots-per-worker (1-1024),
// --launcher-as-worker, --cluster-domain (a DNS subdomain of at most
// jobs.MaxClusterDomainLength characters; default jobs.ClusterDomain()),
// --wait, --wait-timeout, --wait-image.
//
// Against a job it also reads the Job's other plugins as Volcano v1.15 does:
//
//   - Without --port, the port is the ssh plugin's --ssh-port when the Job
//     gives one (SSHPluginPort): the port its ssh config names, so that the
//     launcher's ssh -p, its wait and the workers' declared port follow it.
//   - Master-only MPI (single-node, admitted since Volcano v1.15,
//     volcano-sh/volcano#4955): when --worker is not given and the worker
//     task is absent or has no replicas, the launcher runs every rank, as with
//     --launcher-as-worker, which is then set. A --worker the user wrote must
//     still name a task with replicas: a misspelt worker task would otherwise
//     silently run the whole job on one pod.
//
// It returns field errors under spec.plugins[mpi] for unknown flags, malformed
// values, a master task that is missing or does not have exactly one replica,
// a --worker that names a task that is missing or has no replicas, both roles
// naming one task, and a --port that differs from the ssh plugin's --ssh-port.
// The hostfile has no bound of its own: one that a ConfigMap cannot hold
// with the wait targets is written as ranges (Ranges).
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.Master, "master", DefaultMaster, "name of the master (launcher) task")
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the worker task")
	s.Port(&a.Port, "port", DefaultPort, "port sshd listens on in the worker pods")
	a.Implementation = DefaultImplementation
	s.Func("mpi-implementation", "MPI implementation: openmpi, intel or mpich",
		func() string { return string(a.Implementation) }, func(v string) error {
			impl, ok := parseImplementation(v)
			if !ok {
				return fmt.Errorf("must be one of %s", implementationList())
			}
			a.Implementation = impl
			return nil
		})
	s.Int(&a.SlotsPerWorker, "slots-per-worker", 0, 1, MaxSlotsPerWorker,
		"slots per worker host (default: the GPUs the worker's first container requests, else 1)")
	s.Bool(&a.LauncherAsWorker, "launcher-as-worker", false, "also run ranks on the master pod")
	a.ClusterDomain = jobs.ClusterDomain()
	s.Func("cluster-domain", "the cluster's DNS domain of the hosts (default: the manager's --cluster-domain)",
		func() string { return a.ClusterDomain }, func(v string) error {
			if err := jobs.CheckClusterDomain(v); err != nil {
				return err
			}
			a.ClusterDomain = v
			return nil
		})
	a.Wait.AddFlags(s)
	s.Parse(argv)
	if job == nil {
		return a, s.Errors()
	}
	if ssh, ok := SSHPluginPort(job); ok {
		switch {
		case !s.IsSet("port"):
			a.Port = ssh.Port
		case a.Port != ssh.Port:
			s.Invalid("port", strconv.Itoa(a.Port), fmt.Sprintf(
				"--port=%d differs from the ssh plugin's %s, which puts port %d into the pods' ssh config; "+
					"give the port once, in --ssh-port (mpi then uses it), or the same in both", a.Port, ssh.Flag(), ssh.Port))
		}
	}
	s.Distinct("master", "worker")
	s.Task(job, "master", a.Master, true, 1)
	// Only a --worker the user wrote must exist (s.Task); else no worker
	// pods means master-only.
	if s.Task(job, "worker", a.Worker, false, 0) == nil && !s.IsSet("worker") {
		a.LauncherAsWorker = true
	}
	// No bound on the hostfile: one over a ConfigMap is written as ranges
	// (Ranges), a few bytes a task.
	return a, s.Errors()
}

func parseImplementation(v string) (Implementation, bool) {
	for _, impl := range Implementations {
		if strings.EqualFold(v, string(impl)) {
			return impl, true
		}
	}
	return "", false
}

func implementationList() string {
	names := make([]string, len(Implementations))
	for i, impl := range Implementations {
		names[i] = string(impl)
	}
	return strings.Join(names, ", ")
}

// hostfileSep returns what separates a host from its slot count on a
// hostfile line: Open MPI's "<host> slots=<n>", Intel MPI's and MPICH's
// "<host>:<n>".
func (impl Implementation) hostfileSep() string {
	if impl == OpenMPI {
		return " slots="
	}
	return ":"
}

// slots returns the slots of a host of task (nil: no such task):
// --slots-per-worker when given, else the GPUs the task's first container
// requests (jobs.FirstContainerGPUs), else 1.
func (a *Args) slots(task *batch.TaskSpec) int {
	if a.SlotsPerWorker > 0 {
		return a.SlotsPerWorker
	}
	if task != nil {
		if n := jobs.FirstContainerGPUs(task); n > 0 {
			return int(n)
		}
	}
	return 1
}

// hostGroup is one task's share of the hostfile and MPI_HOST: its pods'
// distinct hosts (jobs.DistinctHosts), each with slots slots.
type hostGroup struct {
	task  *batch.TaskSpec
	slots int
}

// hostGroups returns the tasks whose pods are MPI hosts, in hostfile order:
// the master first with LauncherAsWorker, then the worker task when the job
// has it with replicas. It is the one statement of what the hostfile and
// MPI_HOST list: the plan renders them from it (renderHosts) and the size
// check measures them from it (measureHosts).
func (a *Args) hostGroups(job *batch.Job) []hostGroup {
	var out []hostGroup
	if a.LauncherAsWorker {
		if m, ok := jobs.PresentTask(job, a.Master); ok {
			out = append(out, hostGroup{task: m, slots: a.slots(m)})
		}
	}
	if w, ok := jobs.PresentTask(job, a.Worker); ok {
		out = append(out, hostGroup{task: w, slots: a.slots(w)})
	}
	return out
}

// measureHosts returns the lengths in bytes of the hostfile and of MPI_HOST
// that renderHosts builds from groups, computed from the names and replica
// counts without building them (admission runs it on Jobs of any size).
func measureHosts(job *batch.Job, domain jobs.Domain, impl Implementation, groups []hostGroup) (hostfile, mpiHost int) {
	hosts := 0
	for _, g := range groups {
		n, namesLen := jobs.DistinctHostCount(g.task), domain.DistinctHostsLen(job, g.task)
		hostfile += namesLen + n*(len(impl.hostfileSep())+len(strconv.Itoa(g.slots))+1)
		mpiHost += namesLen
		hosts += n
	}
	return hostfile, mpiHost + max(hosts-1, 0)
}

// HostfileSize returns the size in bytes of Hostfile(job, a), computed
// without building the hostfile (measureHosts): with the wait targets
// (ConfigMapSize) it decides whether the ConfigMap holds the hostfile or its
// ranges (Ranges).
func HostfileSize(job *batch.Job, a *Args) int {
	n, _ := measureHosts(job, jobs.Domain(a.ClusterDomain), a.Implementation, a.hostGroups(job))
	return n
}

// MPIHostSize returns the length in bytes of the master's MPI_HOST value (the
// comma-separated hosts of the hostfile), computed like HostfileSize. a must be
// ParseArgs' result for job, without errors.
func MPIHostSize(job *batch.Job, a *Args) int {
	_, n := measureHosts(job, jobs.Domain(a.ClusterDomain), a.Implementation, a.hostGroups(job))
	return n
}
