// Command pause is the sandbox ("pause") container of the local cluster's real node,
// built by hack/tools/images into localhost/framework-plugins/pause:local because no registry
// is reachable to pull registry.k8s.io/pause.
//
// It runs as PID 1 of the pod's PID namespace and does only two things:
//   - reaps every child that exits (SIGCHLD, then wait4(-1, WNOHANG) until none is
//     left), so orphans reparented to it with a shared PID namespace don't stay
//     zombies;
//   - exits 0 on SIGTERM or SIGINT (PID 1 gets no default signal handling from the
//     kernel, so without a handler the runtime would have to SIGKILL it).
//
// Build it static: CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' ./pause
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("pause (vcplugins, local build)")
		return
	}
	// Buffered: signal.Notify drops a signal it cannot deliver at once. A dropped
	// SIGCHLD is harmless because every reap loop drains all exited children.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT)
	// Children may have exited before Notify was in place.
	reap()
	for s := range sigs {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every exited child without blocking and returns when none is left
// (no children: ECHILD; children still running: pid 0).
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
