package localcluster

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestart restarts a component whose shell forks a child, as containerd
// forks its shims: the shell comes back with the same arguments and
// environment under a new PID recorded in state.json, and the child of the
// old one lives on.
func TestRestart(t *testing.T) {
	root := componentRoot(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	script := `sleep 300 & echo "child $! of $MARK"; wait`
	p, err := startProcess(root, "runtime", sh, []string{"-c", script}, []string{"MARK=run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeState(&State{RootDir: root, Components: []ComponentState{p.ComponentState}}); err != nil {
		t.Fatal(err)
	}
	child := waitChild(t, p.Log, 1)
	t.Cleanup(func() {
		_ = syscall.Kill(child, syscall.SIGKILL)
		st, _ := readState(root)
		if st != nil {
			_ = terminate(st.Components, time.Second)
		}
	})

	got, err := Restart(root, "runtime")
	if err != nil {
		t.Fatal(err)
	}
	if got.PID == p.PID || !alive(got.PID, sh) {
		t.Fatalf("restarted pid %d (old %d): want a new live process", got.PID, p.PID)
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the old process is still there")
	}
	if !alive(child, "") {
		t.Error("the old process's child was killed with it; only the component's own process must be")
	}
	st, err := readState(root)
	if err != nil || st == nil || len(st.Components) != 1 {
		t.Fatalf("state after restart: %+v, %v", st, err)
	}
	if c := st.Components[0]; c.PID != got.PID || strings.Join(c.Args, " ") != "-c "+script || strings.Join(c.Env, " ") != "MARK=run-1" {
		t.Errorf("recorded %+v, want pid %d with the old arguments and environment", c, got.PID)
	}
	// The same environment reached the new process.
	second := waitChild(t, p.Log, 2)
	_ = syscall.Kill(second, syscall.SIGKILL)

	if _, err := Restart(root, "nothing"); err == nil || !strings.Contains(err.Error(), `"nothing"`) {
		t.Errorf("Restart of an unknown component = %v, want an error naming it", err)
	}
}

// waitChild waits until the log has n "child PID of run-1" lines and returns
// the PID on the last.
func waitChild(t *testing.T, log string, n int) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		data, _ := os.ReadFile(log)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) < n || !strings.HasSuffix(lines[n-1], " of run-1") {
			continue
		}
		pid, err := strconv.Atoi(strings.Fields(lines[n-1])[1])
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	t.Fatalf("no %d child lines in %s", n, log)
	return 0
}

// TestRestartFreesThePort restarts a component that listens on a TCP port
// with several threads (a Go program, as every component is): the new
// process binds the same port, which it could not while the old one's threads
// were still exiting.
func TestRestartFreesThePort(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"logs", "pids"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// This test binary, run as TestHelperListener, is the component.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^TestHelperListener$"}
	env := []string{"HELPER_LISTEN=127.0.0.1:" + strconv.Itoa(port)}
	p, err := startProcess(root, "listener", self, args, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeState(&State{RootDir: root, Components: []ComponentState{p.ComponentState}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if st, _ := readState(root); st != nil {
			_ = terminate(st.Components, time.Second)
		}
	})
	for round := 1; round <= 5; round++ {
		waitListening(t, port)
		if _, err := Restart(root, "listener"); err != nil {
			t.Fatal(err)
		}
	}
	waitListening(t, port)
}

// waitListening waits until something accepts connections on port.
func waitListening(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on port %d", port)
}

// TestHelperListener listens on HELPER_LISTEN until killed; it does nothing
// when run as a test.
func TestHelperListener(t *testing.T) {
	addr := os.Getenv("HELPER_LISTEN")
	if addr == "" {
		return
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
	}
}

func TestThreadsGone(t *testing.T) {
	if threadsGone(os.Getpid()) {
		t.Error("threadsGone(this process) = true")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Not reaped yet: a zombie, whose threads have all exited.
	for deadline := time.Now().Add(5 * time.Second); !threadsGone(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("threadsGone(%d) stays false for an exited, unreaped child", pid)
		}
	}
	_ = cmd.Wait()
	if !threadsGone(pid) {
		t.Errorf("threadsGone(%d) = false once reaped", pid)
	}
}

// TestPause stops a component with Pause and continues it with resume: the
// process is in state T (stopped) between the two and runs afterwards; an
// unknown component is an error.
func TestPause(t *testing.T) {
	root := componentRoot(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	p, err := startProcess(root, "kubelet", sleep, []string{"300"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeState(&State{RootDir: root, Components: []ComponentState{p.ComponentState}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = terminate([]ComponentState{p.ComponentState}, time.Second) })

	if _, err := Pause(root, "etcd"); err == nil {
		t.Error("Pause of a component the cluster does not have: no error")
	}
	resume, err := Pause(root, "kubelet")
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, p.PID, 'T')
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	waitState(t, p.PID, 'S')
}

// waitState waits up to 5 s for process pid to be in state (the field of
// /proc/<pid>/stat after the command name: S sleeping, T stopped).
func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	var got byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
			if got = stat[i+2]; got == state {
				return
			}
		}
	}
	t.Fatalf("process %d is in state %q, want %q", pid, got, state)
}

// componentRoot is a temporary cluster root with the directories
// startProcess writes to (logs, pids).
func componentRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"logs", "pids"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
