package localcluster

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// logTailLines is how many trailing log lines an error about a dead component
// quotes.
const logTailLines = 30

// process is a component started by this package: a child process in its own
// process group, with stdout and stderr appended to its log file.
type process struct {
	ComponentState

	done    chan struct{} // closed once the process has exited and been reaped
	mu      sync.Mutex
	exitErr error
}

// startProcess starts binary with args as component name, logging to
// <root>/logs/<name>.log and recording its PID in <root>/pids/<name>.pid. The
// process gets its own process group (Setpgid) so that Down can signal it and
// anything it forks as a unit, and so that a Ctrl-C in the terminal running
// `make local-up` does not reach it. No context bounds it (no
// exec.CommandContext): it must outlive the caller of Up. It returns an error if the log file cannot be created or the
// binary cannot be executed.
func startProcess(root, name, binary string, args, env []string) (*process, error) {
	logFile := filepath.Join(root, "logs", name+".log")
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own copy of the descriptor

	cmd := exec.Command(binary, args...)
	cmd.Dir = root
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	// Start can return while the child is still inside execve, its
	// /proc/<pid>/cmdline empty for a moment: alive() would not recognise it
	// yet. Waiting for the new command line (a few milliseconds at most) keeps
	// every later check simple.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); err != nil || len(data) > 0 {
			break
		}
	}
	p := &process{
		ComponentState: ComponentState{Name: name, PID: cmd.Process.Pid, Binary: binary, Args: args, Log: logFile, Env: env},
		done:           make(chan struct{}),
	}
	// Reaping here keeps a dead child from lingering as a zombie, which would
	// still look alive to kill(pid, 0) for as long as this process runs.
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	pidFile := filepath.Join(root, "pids", name+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(p.PID)+"\n"), 0o644); err != nil {
		return p, err
	}
	return p, nil
}

// exited reports whether the process has ended and, if so, an error naming it
// with its exit status and the tail of its log.
func (p *process) exited() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	status := "exited"
	if p.exitErr != nil {
		status = p.exitErr.Error()
	}
	p.mu.Unlock()
	return fmt.Errorf("%s (pid %d) %s; last lines of %s:\n%s", p.Name, p.PID, status, p.Log, tail(p.Log, logTailLines))
}

// tail returns the last n lines of file, or a note saying why it cannot.
func tail(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// alive reports whether pid is a live (not zombie) process running binary. The
// binary check guards against PID reuse: a state file left from a cluster that
// died with the machine must not make Down signal an unrelated process.
func alive(pid int, binary string) bool {
	if pid <= 0 {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	if binary != "" && string(argv0) != binary {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state is the field after the parenthesised command name, which may
	// itself contain spaces or parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
		return false
	}
	return true
}

// terminate stops the process group of each component still alive: SIGTERM,
// then SIGKILL for whatever is left after grace. Components are signalled in
// reverse start order so the control plane outlives its clients. It returns an
// error listing the components that survived SIGKILL.
func terminate(components []ComponentState, grace time.Duration) error {
	var live []ComponentState
	for i := len(components) - 1; i >= 0; i-- {
		c := components[i]
		if alive(c.PID, c.Binary) {
			// Setpgid made the component its group's leader, so -pid is its group.
			_ = syscall.Kill(-c.PID, syscall.SIGTERM)
			live = append(live, c)
		}
	}
	waitGone := func(d time.Duration) []ComponentState {
		deadline := time.Now().Add(d)
		for {
			var left []ComponentState
			for _, c := range live {
				if alive(c.PID, c.Binary) {
					left = append(left, c)
				}
			}
			if len(left) == 0 || time.Now().After(deadline) {
				return left
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	live = waitGone(grace)
	for _, c := range live {
		_ = syscall.Kill(-c.PID, syscall.SIGKILL)
	}
	live = waitGone(5 * time.Second)
	if len(live) == 0 {
		return nil
	}
	var errs []error
	for _, c := range live {
		errs = append(errs, fmt.Errorf("%s (pid %d) survived SIGKILL", c.Name, c.PID))
	}
	return errors.Join(errs...)
}

// freePort asks the kernel for an unused TCP port on 127.0.0.1. The port is
// released before the component binds it, so another process could take it in
// between; the component then fails to start and Up reports its log.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortExcept returns a free port on 127.0.0.1 that is none of the ports
// already given out: each freePort probe closes its listener, so the kernel
// may hand out the same port twice.
func freePortExcept(taken map[string]int) (int, error) {
	for {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		clash := false
		for _, p := range taken {
			clash = clash || p == port
		}
		if !clash {
			return port, nil
		}
	}
}
