// Package wait builds the init container that holds a pod's main containers back
// until the roles it depends on answer (launch order). All pods of a job are
// created and gang-scheduled together; only the processes wait. The container
// runs a POSIX sh script under busybox, needs no capabilities (TCP connects and
// DNS lookups, never ping) and passes Pod Security "restricted".
package wait

import (
	"time"

	"github.com/vcplugins/framework-plugins/pkg/args"
)

// ContainerName is the name of the init container the plugins add.
const ContainerName = "wait-for-dependencies"

// TimeoutExitCode is the wait container's exit status when --wait-timeout
// passed before every dependency answered (as timeout(1) reports a timeout).
// The script exits with it only then, and its last line, on stderr and so in
// the container's termination message, is "timed out after <N>s waiting for
// <what>: <dependencies>". pkg/waitwatch fails the pod on it.
const TimeoutExitCode = 124

// DefaultTimeout is how long a pod waits for its dependencies unless told otherwise.
const DefaultTimeout = 10 * time.Minute

// MaxTimeout is the longest --wait-timeout: a year. The wait script counts in
// centiseconds in the shell's 64-bit arithmetic, and a longer wait is a wait
// for ever, which 0 asks for.
const MaxTimeout = 365 * 24 * time.Hour

// BuiltinImage is the image used when neither the plugin arguments nor the
// controller (SetDefaultImage) name one: Docker Hub's official busybox 1.36.1,
// pinned by the digest of its multi-platform index so that a re-pushed tag
// cannot change what every Job's pods run (the kubelet pulls by digest and
// ignores the tag). The digest is the one Docker Hub served for the tag in
// October 2026.
const BuiltinImage = "busybox:1.36.1@sha256:73aaf090f3d85aa34ee199857f03fa3a95c8ede2ffd4cc2cdb5b94e566b11662"

var defaultImage = BuiltinImage

// SetDefaultImage sets the controller-wide image for wait containers
// (vc-controller-manager --wait-image). Call it before the controller starts.
func SetDefaultImage(image string) {
	if image != "" {
		defaultImage = image
	}
}

// DefaultImage returns the controller-wide wait image.
func DefaultImage() string { return defaultImage }

// Options are a plugin's launch-order settings.
type Options struct {
	// Enabled adds the wait container to the pods that must wait.
	Enabled bool
	// Timeout is how long to wait before failing the pod; 0 waits forever.
	Timeout time.Duration
	// Image runs the script; empty means DefaultImage().
	Image string
}

// AddFlags defines --wait (default true), --wait-timeout (default 10m; a bare
// number is seconds; 0 for none) and --wait-image on s.
func (o *Options) AddFlags(s *args.Set) {
	s.Bool(&o.Enabled, "wait", true, "add an init container that waits for the roles this pod depends on")
	s.Duration(&o.Timeout, "wait-timeout", DefaultTimeout, time.Second, MaxTimeout, "how long the wait container waits before failing (0: no limit)")
	s.String(&o.Image, "wait-image", "", "image of the wait container (default: the controller's --wait-image, else "+BuiltinImage+")")
}

// ImageOrDefault returns the image to run.
func (o Options) ImageOrDefault() string {
	if o.Image != "" {
		return o.Image
	}
	return defaultImage
}

// Target is one dependency: a host, and a TCP port to connect to. Port 0 means
// the host only has to resolve in DNS.
type Target struct {
	Host string
	Port int
}
