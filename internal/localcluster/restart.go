package localcluster

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// killWait bounds waiting for a SIGKILLed component to be gone.
const killWait = 10 * time.Second

// Restart kills component name of the cluster recorded in dir ("" means the
// default root) with SIGKILL, as a crash or an OOM kill would, and starts it
// again with the same executable, arguments and environment, as a supervisor
// (systemd's Restart=always) would. Only the component's own process is
// killed, not its process group: containerd's shims and the containers they
// run stay, as under systemd's KillMode=process. The new process is recorded
// in state.json and pids/, so Down stops it. Restart returns once the new
// process runs, without waiting for it to serve: the caller checks what it
// needs (kube-apiserver's /readyz, the node's Ready condition...).
//
// It returns the new state, and an error if the cluster has no state, no
// component is called name, the old process survives SIGKILL for 10 s or
// the new one cannot be started.
func Restart(dir, name string) (ComponentState, error) {
	dir, st, i, err := findComponent(dir, name)
	if err != nil {
		return ComponentState{}, err
	}
	old := st.Components[i]
	if alive(old.PID, old.Binary) {
		_ = syscall.Kill(old.PID, syscall.SIGKILL)
		deadline := time.Now().Add(killWait)
		// Not alive(): a multi-threaded process's leader shows as a zombie
		// while its other threads still exit holding the file descriptors,
		// and the new process would find its port still bound.
		for !threadsGone(old.PID) {
			if time.Now().After(deadline) {
				return old, fmt.Errorf("%s (pid %d) survived SIGKILL for %s", name, old.PID, killWait)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	exe := old.Binary
	if old.Launcher != "" {
		exe = old.Launcher
	}
	p, err := startProcess(dir, name, exe, old.Args, old.Env)
	if err != nil {
		return old, err
	}
	p.Binary, p.Launcher = old.Binary, old.Launcher
	st.Components[i] = p.ComponentState
	return p.ComponentState, writeState(st)
}

// threadsGone reports whether every thread of process pid has exited: pid is
// gone, or each of its threads is a zombie (the leader stays one until its
// parent reaps it). Only then are its sockets closed.
func threadsGone(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true
	}
	for _, t := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		if err != nil {
			continue
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X' {
			return false
		}
	}
	return true
}

// findComponent reads the state of the cluster recorded in dir ("" means the
// default root) and returns the resolved root, the state and the index of
// component name in it; an error if there is no state or no such component.
func findComponent(dir, name string) (string, *State, int, error) {
	dir, err := resolveDir(dir)
	if err != nil {
		return "", nil, -1, err
	}
	st, err := readState(dir)
	if err != nil {
		return "", nil, -1, err
	}
	if st == nil {
		return "", nil, -1, fmt.Errorf("no local cluster in %s (no %s)", dir, stateFileName)
	}
	for i, c := range st.Components {
		if c.Name == name {
			return dir, st, i, nil
		}
	}
	return "", nil, -1, fmt.Errorf("the cluster in %s has no component %q", dir, name)
}

// Pause stops component name of the cluster recorded in dir with SIGSTOP: it
// keeps its memory, sockets and children (a kubelet's containers run on) but
// answers nothing, as a hung process or a node cut off from the control plane
// looks to its peers. The returned resume sends SIGCONT; call it on every path
// (Down stops a paused component too: SIGKILL reaches a stopped process).
// Pause returns an error if there is no such component or it does not run.
func Pause(dir, name string) (resume func() error, err error) {
	_, st, i, err := findComponent(dir, name)
	if err != nil {
		return nil, err
	}
	c := st.Components[i]
	if !alive(c.PID, c.Binary) {
		return nil, fmt.Errorf("%s (pid %d) does not run", name, c.PID)
	}
	if err := syscall.Kill(c.PID, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("stopping %s (pid %d): %w", name, c.PID, err)
	}
	return func() error {
		if err := syscall.Kill(c.PID, syscall.SIGCONT); err != nil {
			return fmt.Errorf("continuing %s (pid %d): %w", name, c.PID, err)
		}
		return nil
	}, nil
}
