// Package mpi is the mpi job plugin: it writes the job's hostfile into a
// ConfigMap owned by the Job, mounts it on the master (the launcher that runs
// mpirun) together with the variables that make mpirun/mpiexec find it and
// reach the workers' sshd, opens the ssh port on the workers, and holds the
// master back until every worker's sshd accepts connections.
//
// Compatibility with Volcano's in-tree mpi plugin: the flags --master, --worker
// and --port, the MPI_HOST variable on the master (the comma-separated worker
// hosts) and the container port name are the same; the hosts are
// <hostname>.<subdomain>.<namespace>.svc.<cluster domain> where Volcano's are
// <hostname>.<subdomain> (docs/security.md, M1).
// What Volcano v1.15 adds keeps its meaning: the ssh plugin's --ssh-port is
// the port unless --port is given (SSHPluginPort), and a job without worker
// pods is single-node MPI on the launcher (see ParseArgs).
//
// The hostfile formats and the launcher variables follow Kubeflow mpi-operator
// (pkg/controller/mpi_job_controller.go, MPIJob v2beta1) and the
// implementations' own documentation:
//
//   - Open MPI 4 (ORTE, https://docs.open-mpi.org/en/v4.1.x and orte_hosts(7)):
//     hostfile lines "<host> slots=<n>"; MCA parameters orte_default_hostfile,
//     orte_keep_fqdn_hostnames, orte_set_default_slots and plm_rsh_args, set
//     through OMPI_MCA_<param> variables.
//   - Open MPI 5 (PRRTE replaces ORTE; https://docs.open-mpi.org/en/v5.0.x/mca.html
//     explains that runtime parameters take the PRTE_MCA_ prefix): the same
//     hostfile, and the PRRTE parameters prte_default_hostfile,
//     prte_keep_fqdn_hostnames, prte_set_default_slots
//     (src/runtime/prte_mca_params.c) and plm_ssh_args (the ssh launcher's
//     "args", src/mca/plm/ssh/plm_ssh_component.c). Each release ignores the
//     other's variables, so both sets are set.
//   - Intel MPI (Intel MPI Library Developer Reference, "Hydra Environment
//     Variables"): hostfile lines "<host>:<n>"; I_MPI_HYDRA_HOST_FILE,
//     I_MPI_HYDRA_BOOTSTRAP, I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS, I_MPI_PERHOST,
//     I_MPI_HYDRA_IFACE.
//   - MPICH (Hydra process manager user guide): hostfile lines "<host>:<n>";
//     HYDRA_HOST_FILE, and HYDRA_LAUNCHER_EXTRA_ARGS (what current Hydra reads,
//     lib/tools/bootstrap/external/external_common_launch.c) together with
//     HYDRA_LAUNCH_EXTRA_ARGS (what older Hydra releases read, and what
//     mpi-operator sets), and HYDRA_IFACE (Hydra's -iface: the proxies
//     connect back to that interface's address, utils/sock/sock.c).
//
// The pods' DNS names are those of Volcano's svc plugin (pod hostname
// <job>-<task>-<index>, subdomain <job>), which the job needs enabled unless its
// templates set hostname and subdomain themselves.
package mpi

import (
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batch "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	pluginsinterface "volcano.sh/volcano/pkg/controllers/job/plugins/interface"

	"github.com/vcplugins/framework-plugins/pkg/framework"
	"github.com/vcplugins/framework-plugins/pkg/inject"
	"github.com/vcplugins/framework-plugins/pkg/jobs"
	"github.com/vcplugins/framework-plugins/pkg/ownedcm"
	"github.com/vcplugins/framework-plugins/pkg/wait"
)

const (
	// Name is the plugin's name in a Job's plugins stanza.
	Name = "mpi"
	// PortName names the ssh port opened on the workers (as Volcano's in-tree plugin).
	PortName = "mpijob-port"
	// ConfigMapSuffix makes the name of the hostfile ConfigMap: <job>-mpi-hostfile
	// in the Job's namespace (see ConfigMapName).
	ConfigMapSuffix = "-mpi-hostfile"
	// HostfileKey is the ConfigMap key, and the file name, of the hostfile.
	HostfileKey = "hostfile"
	// ConfigDir is where the master mounts the ConfigMap (read-only). Like
	// mpi-operator's it hides whatever the image has in that directory.
	ConfigDir = "/etc/mpi"
	// HostfilePath is the hostfile as the master sees it.
	HostfilePath = ConfigDir + "/" + HostfileKey
	// WaitTargetsKey is the ConfigMap key, and the file name, of the workers'
	// ssh endpoints the master's wait container waits for (wait.TargetsFile:
	// "<host>:<port>" lines; empty while nothing waits, so that the master's
	// volume, which projects it, never names a missing key). A file, not the
	// container's environment: at 2,000 workers the list is ~70 KB, which
	// would double the launcher pod's size, and past ~3,000 workers it would
	// exceed what one environment string may hold.
	WaitTargetsKey = "wait-targets"
	// WaitTargetsPath is the wait targets file as the master's wait
	// container sees it (it mounts the same volume at ConfigDir).
	WaitTargetsPath = ConfigDir + "/" + WaitTargetsKey
	// VolumeName names the master's volume at ConfigDir: the ConfigMap, or
	// with ranges (Ranges) an emptyDir the hostfile container writes.
	VolumeName = "mpi-hostfile"
	// HostfileRangesKey and WaitTargetRangesKey are the ConfigMap keys of
	// the hostfile's and the wait targets' ranges (wait.RangesFile), set
	// instead of HostfileKey and WaitTargetsKey (then "") when those two
	// would not fit in a ConfigMap together (ownedcm.MaxConfigMapBytes):
	// past 4,000 to 7,000 workers, as host names carry the Job's name and
	// namespace. mpi-operator v2's single hostfile ConfigMap stops there.
	HostfileRangesKey   = "hostfile-ranges"
	WaitTargetRangesKey = "wait-targets-ranges"
	// RangesVolumeName names the master's volume of the ranges (the
	// ConfigMap), mounted at RangesDir in the hostfile container only.
	RangesVolumeName = "mpi-hostfile-ranges"
	RangesDir        = "/etc/mpi-ranges"
	// HostfileContainerName is the master's first init container with
	// ranges: it writes the hostfile and the wait targets into ConfigDir
	// (wait.RangesContainer) before the wait container reads them.
	HostfileContainerName = "mpi-hostfile"
	// SSHConnectionArgs are added to the launcher's ssh command line after
	// "-p <port>": they retry while a worker's sshd is still starting
	// (mpi-operator passes the same).
	SSHConnectionArgs = "-o ConnectionAttempts=10"
	// PodInterface is the pod's network interface on the cluster network: the
	// name the kubelet's container runtime asks the CNI plugin for (CNI_IFNAME
	// "eth0" in containerd's and CRI-O's CRI). Hydra's launcher (Intel MPI,
	// MPICH) given it through EnvHydraIface / EnvIntelIface tells its proxies
	// to connect back to that interface's IP address instead of its host
	// name: the launcher's DNS record is published only once its pod is Ready,
	// when mpiexec is already starting the proxies, and a proxy that looks the
	// name up a moment too early fails for good (measured on the real node:
	// "unable to get host address for <job>-launcher-0", mpiexec hung).
	PodInterface = "eth0"
)

// Variables the plugin sets on the master.
const (
	// EnvMPIHost is the comma-separated list of worker hosts (Volcano's in-tree
	// plugin's variable), preceded by the master with --launcher-as-worker.
	EnvMPIHost = "MPI_HOST"

	// Open MPI 4 (ORTE).
	EnvOMPIHostfile     = "OMPI_MCA_orte_default_hostfile"
	EnvOMPIKeepFQDN     = "OMPI_MCA_orte_keep_fqdn_hostnames"
	EnvOMPIDefaultSlots = "OMPI_MCA_orte_set_default_slots"
	EnvOMPIRshArgs      = "OMPI_MCA_plm_rsh_args"
	// Open MPI 5 (PRRTE).
	EnvPRTEHostfile     = "PRTE_MCA_prte_default_hostfile"
	EnvPRTEKeepFQDN     = "PRTE_MCA_prte_keep_fqdn_hostnames"
	EnvPRTEDefaultSlots = "PRTE_MCA_prte_set_default_slots"
	EnvPRTESSHArgs      = "PRTE_MCA_plm_ssh_args"

	// Intel MPI.
	EnvIntelHostfile      = "I_MPI_HYDRA_HOST_FILE"
	EnvIntelBootstrap     = "I_MPI_HYDRA_BOOTSTRAP"
	EnvIntelBootstrapArgs = "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"
	EnvIntelPerHost       = "I_MPI_PERHOST"
	EnvIntelIface         = "I_MPI_HYDRA_IFACE"

	// MPICH (Hydra).
	EnvHydraHostfile     = "HYDRA_HOST_FILE"
	EnvHydraLauncherArgs = "HYDRA_LAUNCHER_EXTRA_ARGS"
	EnvHydraLaunchArgs   = "HYDRA_LAUNCH_EXTRA_ARGS"
	EnvHydraIface        = "HYDRA_IFACE"

	// Set to "" on a master that requests no GPU and runs no ranks, so the
	// NVIDIA container runtime gives it none (as mpi-operator does).
	EnvNvidiaVisibleDevices     = "NVIDIA_VISIBLE_DEVICES"
	EnvNvidiaDriverCapabilities = "NVIDIA_DRIVER_CAPABILITIES"
)

// MPI roles: the master is the launcher that runs mpirun.
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

var definition = framework.Definition[*plan]{Name: Name, Build: buildPlan}

// Framework describes the mpi plugin to the rest of the project
// (plugins.Frameworks).
var Framework = definition.Framework(func(b framework.Base[*plan]) pluginsinterface.PluginInterface { return &Plugin{b} },
	framework.Describer(ParseArgs, describe), framework.SvcPlugin, framework.SSHPlugin).WithStock(&framework.Stock{Admits: stockAdmits})

// describe: the master (launcher) waits for every worker's sshd and its
// completion ends training.
func describe(a *Args, job *batch.Job) framework.Description {
	var d framework.Description
	d.AddRoles(job, framework.Role{Name: RoleMaster, Task: a.Master}, framework.Role{Name: RoleWorker, Task: a.Worker})
	if a.Wait.Enabled {
		d.AddWaits(job, a.Worker, a.Port, false, a.Master)
		for i := range d.Waits {
			d.Waits[i].Domain = jobs.Domain(a.ClusterDomain)
		}
	}
	if jobs.Present(job, a.Master) {
		d.Completion = a.Master
		d.Sizes = func() []framework.SizedEnv {
			return []framework.SizedEnv{{Name: EnvMPIHost, Task: a.Master, Index: 0, ValueLen: MPIHostSize(job, a),
				Optional: "the launcher's hostfile lists the hosts for mpirun"}}
		}
	}
	return d
}

// Plugin implements Volcano's PluginInterface. Volcano builds one per hook call.
type Plugin struct {
	framework.Base[*plan]
}

// New builds the plugin with the Job's arguments for it (Framework.New): the
// builder registered with Volcano's plugin factory.
func New(client pluginsinterface.PluginClientset, arguments []string) pluginsinterface.PluginInterface {
	return Framework.New(client, arguments)
}

// ConfigMapName returns the name of the job's hostfile ConfigMap:
// <job>-mpi-hostfile, in the Job's namespace.
func ConfigMapName(job *batch.Job) string { return job.Name + ConfigMapSuffix }

// plan is what one Job revision's pods and hooks share.
type plan struct {
	master, worker   string
	launcherAsWorker bool
	port             int32
	// hostfile is the ConfigMap's HostfileKey value, or with ranges its
	// HostfileRangesKey value.
	hostfile string
	// ranges: the ConfigMap holds the ranges of the hostfile and the wait
	// targets, which the master's hostfile container expands.
	ranges bool
	// rangesOptions are the hostfile container's image options (--wait-image).
	rangesOptions wait.Options
	// masterEnv is every variable the master gets.
	masterEnv []v1.EnvVar
	// waitTargets is the ConfigMap's WaitTargetsKey value (with ranges its
	// WaitTargetRangesKey value) and wait the
	// master's init container that reads it, from describe's wait edge: ""
	// and nil when waiting is off or there are no worker pods.
	waitTargets string
	wait        *wait.Template
	// dnsSearches are added to the master's and the workers' DNS search path
	// (Intel MPI and MPICH only; see dnsSearches).
	dnsSearches []string
	// hostfileSynced is when the hostfile ConfigMap was last found or made to
	// match this plan. It is the plan's one mutable field.
	hostfileSynced ownedcm.Synced
}

// hostfileCM is the hostfile ConfigMap's lifecycle (ownedcm.Hooks).
var hostfileCM = ownedcm.Hooks[*plan]{
	Kept: ownedcm.Kept{Plugin: Name, Purpose: "the launcher's hostfile", Name: ConfigMapName},
	Data: func(p *plan) (map[string]string, *ownedcm.Synced) {
		if p.ranges {
			// The plain keys stay (empty) for a master that mounts them.
			return map[string]string{HostfileKey: "", WaitTargetsKey: "", HostfileRangesKey: p.hostfile, WaitTargetRangesKey: p.waitTargets}, &p.hostfileSynced
		}
		return map[string]string{HostfileKey: p.hostfile, WaitTargetsKey: p.waitTargets}, &p.hostfileSynced
	},
}

func buildPlan(argv []string, job *batch.Job) (*plan, field.ErrorList) {
	a, errs := ParseArgs(argv, job)
	if len(errs) > 0 {
		return nil, errs
	}
	masterTask, _ := jobs.Task(job, a.Master)
	workerTask, _ := jobs.PresentTask(job, a.Worker)
	groups := a.hostGroups(job)
	hostfileLen, targetsLen := ConfigMapSize(job, a)
	ranges := hostfileLen+targetsLen > ownedcm.MaxConfigMapBytes
	var hostfile, mpiHost string
	if ranges {
		hostfile = wait.RangesFile(hostRanges(job, jobs.Domain(a.ClusterDomain), a.Implementation, groups))
	} else {
		hostfile, mpiHost = renderHosts(job, jobs.Domain(a.ClusterDomain), a.Implementation, groups)
	}
	// The launcher's default slots are the workers' (the master's when it is
	// the only host task): the last group's.
	slots := a.slots(nil)
	if len(groups) > 0 {
		slots = groups[len(groups)-1].slots
	}
	p := &plan{
		master:           a.Master,
		worker:           a.Worker,
		launcherAsWorker: a.LauncherAsWorker,
		port:             int32(a.Port),
		hostfile:         hostfile,
		ranges:           ranges,
		rangesOptions:    a.Wait,
	}
	if a.Implementation != OpenMPI {
		p.dnsSearches = dnsSearches(job, a.ClusterDomain, masterTask, workerTask)
	}
	// MPI_HOST is the in-tree plugin's; mpirun reads the hostfile. One too
	// long for a container to start is left out (Description.Sizes says so),
	// as is any with ranges: the hosts are then over a MiB.
	if !ranges && !framework.OverArgLimit(EnvMPIHost, len(mpiHost)) {
		p.masterEnv = []v1.EnvVar{{Name: EnvMPIHost, Value: mpiHost}}
	}
	p.masterEnv = append(p.masterEnv, launcherEnv(a.Implementation, slots, a.Port)...)
	if !a.LauncherAsWorker && !jobs.RequestsResource(&masterTask.Template.Spec, jobs.IsGPU) {
		p.masterEnv = append(p.masterEnv,
			v1.EnvVar{Name: EnvNvidiaVisibleDevices, Value: ""},
			v1.EnvVar{Name: EnvNvidiaDriverCapabilities, Value: ""})
	}
	if waits := describe(a, job).Waits; len(waits) > 0 {
		if ranges {
			var r []wait.Range
			for _, w := range waits {
				r = append(r, waitRanges(job, w)...)
			}
			p.waitTargets = wait.RangesFile(r)
		} else {
			var targets []wait.Target
			for _, w := range waits {
				targets = append(targets, framework.WaitTargets(job, w)...)
			}
			p.waitTargets = wait.TargetsFile(targets)
		}
		p.wait = wait.NewFileTemplate(WaitTargetsPath, hostfileMount(), a.Wait)
	}
	return p, nil
}

// dnsSearches returns the search domains under which the short host names of
// the master's and the workers' pods resolve: the Service domain of each task's
// subdomain (jobs.Subdomain), <subdomain>.<namespace>.svc.<clusterDomain>,
// without repeats, the master's first (nil for a job without a namespace).
//
// Without an interface Hydra (Intel MPI, MPICH) tells the proxies it starts on
// the workers to connect back to the launcher by the launcher's gethostname(),
// the pod's short hostname, which the cluster's DNS answers only under its
// subdomain's Service domain (Kubernetes' "Pod's hostname and subdomain
// fields"). The plugin gives Hydra the interface (PodInterface), which the user
// may override; the search path keeps the short names resolvable for a
// launcher without it and for the job's own scripts. Open MPI's daemons
// connect back by IP address.
func dnsSearches(job *batch.Job, clusterDomain string, tasks ...*batch.TaskSpec) []string {
	if job.Namespace == "" {
		return nil
	}
	var out []string
	for _, t := range tasks {
		if t == nil {
			continue
		}
		d := jobs.Subdomain(job, t) + jobs.Domain(clusterDomain).Qualifier(job)
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// launcherEnv returns the variables that point impl's launcher at HostfilePath
// and make its ssh use port and retry; slots is the default slots per host.
func launcherEnv(impl Implementation, slots, port int) []v1.EnvVar {
	sshArgs := "-p " + strconv.Itoa(port) + " " + SSHConnectionArgs
	n := strconv.Itoa(slots)
	switch impl {
	case Intel:
		return []v1.EnvVar{
			{Name: EnvIntelHostfile, Value: HostfilePath},
			{Name: EnvIntelBootstrap, Value: "ssh"},
			{Name: EnvIntelBootstrapArgs, Value: sshArgs},
			{Name: EnvIntelPerHost, Value: n},
			{Name: EnvIntelIface, Value: PodInterface},
		}
	case MPICH:
		return []v1.EnvVar{
			{Name: EnvHydraHostfile, Value: HostfilePath},
			{Name: EnvHydraLauncherArgs, Value: sshArgs},
			{Name: EnvHydraLaunchArgs, Value: sshArgs},
			{Name: EnvHydraIface, Value: PodInterface},
		}
	default:
		return []v1.EnvVar{
			{Name: EnvOMPIHostfile, Value: HostfilePath},
			{Name: EnvOMPIKeepFQDN, Value: "true"},
			{Name: EnvOMPIDefaultSlots, Value: n},
			{Name: EnvOMPIRshArgs, Value: sshArgs},
			{Name: EnvPRTEHostfile, Value: HostfilePath},
			{Name: EnvPRTEKeepFQDN, Value: "true"},
			{Name: EnvPRTEDefaultSlots, Value: n},
			{Name: EnvPRTESSHArgs, Value: sshArgs},
		}
	}
}

// Hostfile returns the hostfile of a job whose arguments a were checked against
// it (ParseArgs): one line per host, the master first with LauncherAsWorker, then
// the workers in index order. Open MPI lines are "<host> slots=<n>", Intel MPI and
// MPICH lines "<host>:<n>", each ending in "\n". Hosts are
// <hostname>.<subdomain>.<namespace>.svc.<a.ClusterDomain> (jobs.Domain.Host);
// a task whose template sets a hostname has a single host, as all its
// replicas share that name. Slots: --slots-per-worker, else the GPUs the task's
// first container requests, else 1.
func Hostfile(job *batch.Job, a *Args) string {
	hostfile, _ := renderHosts(job, jobs.Domain(a.ClusterDomain), a.Implementation, a.hostGroups(job))
	return hostfile
}

// ConfigMapSize returns the sizes in bytes of the data of the job's
// ConfigMap (ConfigMapName), computed without building it: the hostfile
// (HostfileSize) and, while the master waits for the workers, its wait
// targets (WaitTargetsKey: each distinct worker host as "<host>:<port>\n"; 0
// without). ParseArgs rejects a job whose sum exceeds
// ownedcm.MaxConfigMapBytes.
func ConfigMapSize(job *batch.Job, a *Args) (hostfile, waitTargets int) {
	for _, w := range describe(a, job).Waits {
		waitTargets += framework.WaitTargetsLen(job, w)
	}
	return HostfileSize(job, a), waitTargets
}

// renderHosts builds the hostfile and MPI_HOST (the same hosts joined by
// commas) of groups in one pass over their hosts, each into a buffer of the
// size measureHosts computes.
func renderHosts(job *batch.Job, domain jobs.Domain, impl Implementation, groups []hostGroup) (hostfile, mpiHost string) {
	var file, list strings.Builder
	fileLen, listLen := measureHosts(job, domain, impl, groups)
	file.Grow(fileLen)
	list.Grow(listLen)
	sep := impl.hostfileSep()
	for _, g := range groups {
		n := strconv.Itoa(g.slots)
		for _, h := range domain.DistinctHosts(job, g.task) {
			if list.Len() > 0 {
				list.WriteByte(',')
			}
			list.WriteString(h)
			file.WriteString(h)
			file.WriteString(sep)
			file.WriteString(n)
			file.WriteByte('\n')
		}
	}
	return file.String(), list.String()
}

// hostRanges returns the hostfile of groups as ranges (wait.Range): per
// group its hosts' prefix and suffix (jobs.Domain.HostParts), the suffix
// followed by impl's separator and the group's slots; a task whose pods
// share a hostname is one line. wait.ExpandRanges of them is renderHosts'
// hostfile.
func hostRanges(job *batch.Job, domain jobs.Domain, impl Implementation, groups []hostGroup) []wait.Range {
	out := make([]wait.Range, 0, len(groups))
	for _, g := range groups {
		prefix, suffix, indexed := domain.HostParts(job, g.task)
		out = append(out, wait.Range{Prefix: prefix, Suffix: suffix + impl.hostfileSep() + strconv.Itoa(g.slots),
			Count: jobs.DistinctHostCount(g.task), Indexed: indexed})
	}
	return out
}

// waitRanges returns the targets of w (framework.WaitTargets) as ranges:
// wait.ExpandRanges of them is wait.TargetsFile of the targets.
func waitRanges(job *batch.Job, w framework.Wait) []wait.Range {
	to, _ := jobs.Task(job, w.To)
	port := ""
	if w.Port != 0 {
		port = ":" + strconv.Itoa(w.Port)
	}
	if w.FirstOnly {
		return []wait.Range{{Prefix: w.Domain.Host(job, to, 0), Suffix: port}}
	}
	prefix, suffix, indexed := w.Domain.HostParts(job, to)
	return []wait.Range{{Prefix: prefix, Suffix: suffix + port, Count: jobs.DistinctHostCount(to), Indexed: indexed}}
}

// OnPodCreate prepares the master and worker pods; pods of other tasks are left
// alone. The master gets MPI_HOST and the launcher variables of the chosen
// implementation on every container, the hostfile ConfigMap mounted read-only at
// ConfigDir, NVIDIA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES set to "" when
// it requests no GPU and runs no ranks, and, as its first init container, the wait
// container for every worker's ssh port, which reads the workers' endpoints
// from WaitTargetsPath (key WaitTargetsKey of the same ConfigMap). Workers
// (and the master with --launcher-as-worker) get the ssh port opened. With
// ranges (a hostfile the ConfigMap cannot hold with the wait targets) the
// master's ConfigDir is an emptyDir that its first init container,
// HostfileContainerName, fills from the ranges (wait.RangesContainer: the
// ConfigMap mounted at RangesDir in that container only) with the same two
// files; a running launcher then keeps the hosts it started with. With Intel MPI and MPICH both
// get the Service domains of the job's subdomains in dnsConfig.searches
// (dnsSearches). What the user set already is kept. Invalid arguments inject nothing and are reported as an
// InvalidPluginArguments event on the Job.
//
// Before preparing a master pod it reads the hostfile ConfigMap (one GET per
// master pod; skipped without a client, as in admission): when another
// owner's ConfigMap has the name it returns a *ConflictError, after recording
// it as a PluginConfigMapConflict event, so that Volcano creates none of the
// Job's pods in that sync rather than a launcher that mounts a foreign file.
// API errors are returned as they come.
func (p *Plugin) OnPodCreate(pod *v1.Pod, job *batch.Job) error {
	pl, ok := p.Plan(job)
	if !ok {
		return nil
	}
	switch jobs.PodTask(pod) {
	case pl.master:
		if err := hostfileCM.Check(p.Client, job); err != nil {
			return err
		}
		inject.Env(pod, pl.masterEnv...)
		inject.DNSSearches(pod, pl.dnsSearches...)
		if pl.ranges {
			inject.Volume(pod, v1.Volume{Name: VolumeName, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}, hostfileMount(), true)
		} else {
			inject.Volume(pod, hostfileVolume(ConfigMapName(job)), hostfileMount(), true)
		}
		if pl.launcherAsWorker {
			inject.Port(pod, PortName, pl.port)
		}
		if pl.wait != nil {
			pl.wait.AddTo(pod)
		}
		if pl.ranges {
			// Before the wait container, which reads the targets it writes.
			inject.VolumeOnly(pod, rangesVolume(ConfigMapName(job)))
			inject.FirstInitContainerFunc(pod, HostfileContainerName, func() v1.Container {
				return wait.RangesContainer(HostfileContainerName,
					v1.VolumeMount{Name: RangesVolumeName, MountPath: RangesDir}, hostfileMount(), pl.rangesOptions)
			})
		}
	case pl.worker:
		inject.Port(pod, PortName, pl.port)
		inject.DNSSearches(pod, pl.dnsSearches...)
	}
	return nil
}

// hostfileVolume is the master's volume of ConfigMap configMap: the hostfile
// and the wait targets. Both keys always, as the data always has both: a
// running master keeps its volume while a new spec revision (fewer workers,
// waiting switched off) rewrites the data, and the kubelet stops refreshing a
// volume one of whose items has no key.
func hostfileVolume(configMap string) v1.Volume {
	return configMapVolume(VolumeName, configMap, v1.KeyToPath{Key: HostfileKey, Path: HostfileKey}, v1.KeyToPath{Key: WaitTargetsKey, Path: WaitTargetsKey})
}

// rangesVolume is the master's volume of ConfigMap configMap with ranges:
// the ranges of the hostfile and of the wait targets, under the names of the
// files the hostfile container writes from them.
func rangesVolume(configMap string) v1.Volume {
	return configMapVolume(RangesVolumeName, configMap, v1.KeyToPath{Key: HostfileRangesKey, Path: HostfileKey}, v1.KeyToPath{Key: WaitTargetRangesKey, Path: WaitTargetsKey})
}

// configMapVolume is volume name of ConfigMap configMap's items, read-only
// for all (0444).
func configMapVolume(name, configMap string, items ...v1.KeyToPath) v1.Volume {
	mode := int32(0o444)
	return v1.Volume{
		Name: name,
		VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: configMap},
			Items:                items,
			DefaultMode:          &mode,
		}},
	}
}

func hostfileMount() v1.VolumeMount {
	return v1.VolumeMount{Name: VolumeName, MountPath: ConfigDir, ReadOnly: true}
}

// OnJobAdd checks the arguments (reporting problems on the Job), marks the Job
// in status.controlledResources and creates or updates the hostfile ConfigMap
// (ConfigMapName), controlled by the Job. Invalid arguments create nothing. A
// ConfigMap of that name that the Job does not control is left as it is,
// reported once as a PluginConfigMapConflict event, and returned as a
// *ConflictError: Volcano then records a PluginError event, creates none of
// the Job's pods, retries with back-off, and terminates the Job once its
// retries (vc-controller-manager --max-requeue-num, 15 by default: about
// 3 minutes) are used up; removing the foreign ConfigMap before then lets the
// Job start. API errors are returned so that Volcano retries. Idempotent.
// Volcano calls it on every sync of a Pending Job; after the first success for
// a spec revision it skips the API for ownedcm.Recheck.
func (p *Plugin) OnJobAdd(job *batch.Job) error {
	return hostfileCM.OnJobAdd(&p.Base, job)
}

// OnJobUpdate rewrites the hostfile ConfigMap when it no longer matches the Job
// (worker replicas changed: a new spec revision); otherwise it reads it at
// most once per ownedcm.Recheck, and recreates it if it is gone. Errors as
// OnJobAdd: a foreign ConfigMap found under the name (ours deleted and
// another created) stops the sync of a running Job as well, since the
// kubelet would project its content into the running master's mount.
func (p *Plugin) OnJobUpdate(job *batch.Job) error {
	return hostfileCM.OnJobUpdate(&p.Base, job)
}

// OnJobDelete deletes the hostfile ConfigMap when the Job controls it (a missing
// one is fine; another owner's is left alone and reported as in OnJobAdd, but
// not returned: stopping the Job's pods must go on) and removes the plugin's
// mark. It does not depend on the arguments. Idempotent.
func (p *Plugin) OnJobDelete(job *batch.Job) error {
	return hostfileCM.OnJobDelete(&p.Base, job)
}

// ConflictError is what the hooks return while the hostfile ConfigMap's name
// is taken by a ConfigMap the Job does not control.
type ConflictError = ownedcm.ConflictError
