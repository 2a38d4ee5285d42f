package wait

import (
	"net"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Environment variables through which Container passes its settings to the script.
const (
	// TargetsEnv holds the dependencies, separated by single spaces, each as
	// Target.String writes it: host:port must accept a TCP connection, a bare
	// host must resolve.
	TargetsEnv = "WAIT_TARGETS"
	// TimeoutEnv holds the timeout in whole seconds, 0 for none.
	TimeoutEnv = "WAIT_TIMEOUT_SECONDS"
	// TargetsFileEnv holds the path of a file with the dependencies
	// (FileContainer), written as TargetsFile writes them.
	TargetsFileEnv = "WAIT_TARGETS_FILE"
)

// The non-root IDs the container runs as ("nobody" and "nogroup"). Numeric,
// because the kubelet can verify runAsNonRoot only against a numeric user.
const (
	runAsUser  int64 = 65534
	runAsGroup int64 = 65534
)

// Resources of the wait container: enough for busybox sh, nc and wget, and
// explicit so that namespaces with a ResourceQuota (which then requires
// requests and limits on every container) or a LimitRange accept the pod.
var (
	cpuRequest    = resource.MustParse("10m")
	memoryRequest = resource.MustParse("16Mi")
	cpuLimit      = resource.MustParse("100m")
	memoryLimit   = resource.MustParse("32Mi")
)

// String writes t as the script reads it: "host:port" ("[addr]:port" for an
// IPv6 address) for a TCP dependency, the bare host for Port 0 (DNS only).
func (t Target) String() string {
	if t.Port == 0 {
		return t.Host
	}
	return net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
}

// Container returns the init container, named ContainerName, that holds a pod's
// main containers back until every target answers:
//
//   - a Target with a Port answers when a TCP connection to Host:Port succeeds
//     (checked with a 1 s connect timeout);
//   - a Target with Port 0 answers when Host resolves through the pod's resolver
//     (its /etc/hosts and DNS search path, as the framework's own processes
//     will resolve it).
//
// The script checks each dependency that has not answered yet about once a
// second, remembers the ones that did, logs what it still waits for every 10 s,
// and exits 0 within about a second of the last one answering. If o.Timeout
// passes first it exits TimeoutExitCode (124) after logging every dependency
// that never answered; with TerminationMessagePolicy FallbackToLogsOnError
// that line becomes the container's termination message (kubectl describe pod
// shows it). The pod's restart policy alone would restart the container
// (OnFailure, Always); vc-controller-manager's wait-timeout controller
// (pkg/waitwatch) fails such a pod instead and reports it on the Job.
//
// Targets are passed in TargetsEnv and the timeout in TimeoutEnv (whole
// seconds, rounded up; 0 means no limit, as does a negative Timeout), so the
// command is the same constant script for every pod. Hosts must be DNS names
// or IP addresses: they are separated by spaces, so they cannot contain any.
// An empty targets list yields a container that exits 0 at once.
//
// The image is o.ImageOrDefault() and needs busybox's sh, nc (with -w and -e),
// wget, timeout and sleep applets, as busybox:1.36.1 and Debian's busybox
// have. The container meets Pod Security "restricted": it runs as user and
// group 65534 without privilege escalation, capabilities or a writable root
// filesystem (the checks are TCP connects and lookups, never ping, which would
// need NET_RAW), with the runtime's default seccomp profile. It requests 10m
// CPU and 16Mi memory and is limited to 100m and 32Mi.
//
// Each call returns a container sharing no pointers or maps with earlier
// results, so callers may modify it freely.
func Container(targets []Target, o Options) v1.Container {
	var b strings.Builder
	for i, t := range targets {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.String())
	}
	return v1.Container{
		Name:    ContainerName,
		Image:   o.ImageOrDefault(),
		Command: []string{"sh", "-c", script},
		Env: []v1.EnvVar{
			{Name: TargetsEnv, Value: b.String()},
			{Name: TimeoutEnv, Value: strconv.FormatInt(timeoutSeconds(o.Timeout), 10)},
		},
		Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: cpuRequest.DeepCopy(), v1.ResourceMemory: memoryRequest.DeepCopy()},
			Limits:   v1.ResourceList{v1.ResourceCPU: cpuLimit.DeepCopy(), v1.ResourceMemory: memoryLimit.DeepCopy()},
		},
		ImagePullPolicy:          v1.PullIfNotPresent,
		TerminationMessagePath:   v1.TerminationMessagePathDefault,
		TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          securityContext(),
	}
}

// TargetsFile returns targets as FileContainer's file holds them: each as
// Target.String writes it, followed by a newline ("" for no targets).
func TargetsFile(targets []Target) string {
	var b strings.Builder
	for _, t := range targets {
		b.WriteString(t.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// TargetsFileLen returns len(TargetsFile(targets)) for targets whose hosts
// together are hostsLen bytes long, n of them, all with port (0 for DNS
// only), without building it: admission measures Jobs of any size. Hosts
// must be DNS names or IPv4 addresses (an IPv6 address gains brackets).
func TargetsFileLen(hostsLen, n, port int) int {
	per := 1
	if port != 0 {
		per += 1 + len(strconv.Itoa(port))
	}
	return hostsLen + n*per
}

// FileContainer returns the wait container of Container that reads its
// dependencies from the file at path instead of TargetsEnv. Thousands of
// targets are too many for the pod spec (each copy of the pod is stored and
// watched) and, past about 3,000 hosts, for one environment string (Linux's
// MAX_ARG_STRLEN, 128 KiB); a file has neither limit. The container mounts
// mount, which must cover path; the caller's pod must have mount's volume and
// put TargetsFile's content at path, e.g. as a key of a ConfigMap the plugin
// keeps (mpi's launcher: its hostfile ConfigMap). A file that cannot be read
// fails the container with exit status 2 and cat's message naming the path.
// The image needs busybox's cat applet besides Container's.
func FileContainer(path string, mount v1.VolumeMount, o Options) v1.Container {
	c := Container(nil, o)
	c.Command = []string{"sh", "-c", fileScript}
	for i := range c.Env {
		if c.Env[i].Name == TargetsEnv {
			c.Env[i] = v1.EnvVar{Name: TargetsFileEnv, Value: path}
		}
	}
	c.VolumeMounts = []v1.VolumeMount{mount}
	return c
}

// timeoutSeconds converts d to whole seconds for the script, rounding up so
// that a positive timeout never becomes 0 (no limit); d <= 0 gives 0.
func timeoutSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// securityContext is the Pod Security "restricted" container security context.
func securityContext() *v1.SecurityContext {
	yes, no := true, false
	user, group := runAsUser, runAsGroup
	return &v1.SecurityContext{
		RunAsNonRoot:             &yes,
		RunAsUser:                &user,
		RunAsGroup:               &group,
		AllowPrivilegeEscalation: &no,
		ReadOnlyRootFilesystem:   &yes,
		Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}},
		SeccompProfile:           &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
	}
}
