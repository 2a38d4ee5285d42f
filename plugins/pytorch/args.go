package pytorch

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"

	"github.com/vcplugins/framework-plugins/pkg/args"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

// Defaults. Master, worker and port are those of Volcano's in-tree pytorch
// plugin; nproc-per-node, rendezvous backend and the elastic settings follow
// torchrun's (torch.distributed.run) and Kubeflow PyTorchJob's.
const (
	DefaultMaster       = "master"
	DefaultWorker       = "worker"
	DefaultPort         = 23456
	DefaultNprocPerNode = "auto"
	DefaultRdzvBackend  = "c10d"
	DefaultMaxRestarts  = 3
	// UpstreamWaitMasterTimeout is Volcano's default --wait-master-timeout
	// (v1.14+, 300 seconds): the wait timeout of a Job that writes one of
	// upstream's --wait-master-* flags but neither timeout flag.
	UpstreamWaitMasterTimeout = 300 * time.Second
)

// Args are the pytorch plugin's arguments.
type Args struct {
	// Master and Worker name the tasks. The master task is optional: without it
	// worker 0 is rank 0 and the master address.
	Master, Worker string
	// Port is the master's port (MASTER_PORT, and the rendezvous port when elastic).
	Port int
	// NprocPerNode is torchrun's --nproc-per-node: a positive integer, "auto",
	// "gpu" or "cpu".
	NprocPerNode string
	// MinNodes and MaxNodes bound the number of pods when elastic (0: not set).
	MinNodes, MaxNodes int
	// RdzvBackend is torchrun's rendezvous backend (elastic only).
	RdzvBackend string
	// MaxRestarts is torchrun's --max-restarts (elastic only).
	MaxRestarts int
	// Wait holds workers back until the master's address resolves.
	Wait wait.Options
	// WaitMasterPort also waits until the master's port accepts connections:
	// --wait-master-port, or true when the Job writes any of upstream's
	// --wait-master-* flags (see ParseArgs).
	WaitMasterPort bool
}

// Elastic reports whether the job runs under torchrun's elastic rendezvous:
// --min-nodes or --max-nodes was given.
func (a *Args) Elastic() bool { return a.MinNodes > 0 || a.MaxNodes > 0 }

// NodeRange returns the elastic minimum and maximum number of pods for a job
// of pods pods: the flags, or pods where one is not given.
func (a *Args) NodeRange(pods int) (min, max int) {
	min, max = a.MinNodes, a.MaxNodes
	if min == 0 {
		min = pods
		if max > 0 && max < min {
			min = max
		}
	}
	if max == 0 {
		max = pods
		if max < min {
			max = min
		}
	}
	return min, max
}

// ParseArgs parses the pytorch plugin's arguments (Volcano-style
// ["--flag=value", ...]) and, when job is not nil, checks them against it.
//
// Flags: --master, --worker, --port, --nproc-per-node, --min-nodes, --max-nodes,
// --rdzv-backend, --max-restarts, --wait, --wait-timeout, --wait-image,
// --wait-master-port, and the spellings of Volcano v1.14+ --wait-master-enabled,
// --wait-master-timeout (a bare number is seconds), --wait-master-image, which
// set --wait, --wait-timeout and --wait-image. A Job that writes any of these
// three keeps upstream's meaning: workers wait until the master's port accepts
// TCP connections (upstream's init container loops on nc -z), so WaitMasterPort
// is true unless --wait-master-port says otherwise, and the timeout is
// upstream's 300 s unless a timeout flag is given. Jobs that write none keep
// our defaults (DNS only, wait.DefaultTimeout).
// It returns field errors under spec.plugins[pytorch] for unknown flags,
// malformed values, a role flag naming a task that does not exist or has no
// replicas, a master task with more than one replica, a job with neither task,
// and min-nodes above max-nodes.
func ParseArgs(argv []string, job *batch.Job) (*Args, field.ErrorList) {
	a := &Args{}
	s := args.New(Name)
	s.NonEmpty(&a.Master, "master", DefaultMaster, "name of the master task")
	s.NonEmpty(&a.Worker, "worker", DefaultWorker, "name of the worker task")
	s.Port(&a.Port, "port", DefaultPort, "master port (MASTER_PORT)")
	a.NprocPerNode = DefaultNprocPerNode
	s.Func("nproc-per-node", "processes per pod: a positive integer, auto, gpu or cpu",
		func() string { return a.NprocPerNode }, func(v string) error {
			switch v {
			case "auto", "gpu", "cpu":
			default:
				if n, err := strconv.Atoi(v); err != nil || n < 1 {
					return fmt.Errorf("must be a positive integer, auto, gpu or cpu")
				}
			}
			a.NprocPerNode = v
			return nil
		})
	s.Int(&a.MinNodes, "min-nodes", 0, 1, 1<<20, "elastic: minimum number of pods (default: all)")
	s.Int(&a.MaxNodes, "max-nodes", 0, 1, 1<<20, "elastic: maximum number of pods (default: all)")
	s.NonEmpty(&a.RdzvBackend, "rdzv-backend", DefaultRdzvBackend, "elastic: torchrun rendezvous backend")
	s.Int(&a.MaxRestarts, "max-restarts", DefaultMaxRestarts, 0, 1<<20, "elastic: torchrun --max-restarts")
	a.Wait.AddFlags(s)
	s.Bool(&a.WaitMasterPort, "wait-master-port", false, "workers also wait until the master port accepts connections")
	// Volcano v1.14+'s spellings; writing any of them also turns on the port
	// wait below. The defaults here are ours, for Jobs that write none.
	s.Bool(&a.Wait.Enabled, "wait-master-enabled", true, "--wait, and wait for the master's port")
	s.Duration(&a.Wait.Timeout, "wait-master-timeout", wait.DefaultTimeout, time.Second, wait.MaxTimeout, "--wait-timeout (a bare number is seconds), and wait for the master's port")
	s.String(&a.Wait.Image, "wait-master-image", "", "--wait-image, and wait for the master's port")
	s.Parse(argv)
	if s.IsSet("wait-master-enabled") || s.IsSet("wait-master-timeout") || s.IsSet("wait-master-image") {
		if !s.IsSet("wait-master-port") {
			a.WaitMasterPort = true
		}
		if !s.IsSet("wait-master-timeout") && !s.IsSet("wait-timeout") {
			a.Wait.Timeout = UpstreamWaitMasterTimeout
		}
	}
	if job == nil {
		return a, s.Errors()
	}
	if !s.Distinct("master", "worker") {
		return a, s.Errors()
	}
	master := s.Task(job, "master", a.Master, false, 1)
	worker := s.Task(job, "worker", a.Worker, false, 0)
	if master == nil && worker == nil && len(s.Errors()) == 0 {
		s.Invalid("master", a.Master, fmt.Sprintf("the job has neither a master task (%q) nor a worker task (%q)", a.Master, a.Worker))
	}
	if a.MinNodes > 0 && a.MaxNodes > 0 && a.MinNodes > a.MaxNodes {
		// No range to check the pods against.
		s.Invalid("min-nodes", strconv.Itoa(a.MinNodes), fmt.Sprintf("--min-nodes=%d is above --max-nodes=%d", a.MinNodes, a.MaxNodes))
	} else if a.Elastic() {
		// NodeRange derives an unset bound from the pods, so only a bound the
		// user set can exclude them: blame that one.
		pods := jobs.Replicas(job, a.Master) + jobs.Replicas(job, a.Worker)
		switch min, max := a.NodeRange(pods); {
		case pods < min:
			s.Invalid("min-nodes", strconv.Itoa(a.MinNodes), fmt.Sprintf(
				"the job asks for %d pods, outside the elastic range %d:%d; the master and worker replicas must add up to at least --min-nodes=%d",
				pods, min, max, a.MinNodes))
		case pods > max:
			s.Invalid("max-nodes", strconv.Itoa(a.MaxNodes), fmt.Sprintf(
				"the job asks for %d pods, outside the elastic range %d:%d; the master and worker replicas must add up to at most --max-nodes=%d",
				pods, min, max, a.MaxNodes))
		}
	}
	return a, s.Errors()
}
