package wait

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type shell struct {
	name string
	argv []string // the command that runs sh -c SCRIPT, without "-c SCRIPT"
}

// shells returns the shells to run the script under: busybox's ash (what the
// wait image runs) and, where installed, dash, as a check that the script is
// plain POSIX sh. Both find the applets through a PATH of busybox links.
func shells(t *testing.T) []shell {
	bin, _ := busybox(t)
	s := []shell{{"ash", []string{bin, "sh"}}}
	if dash, err := exec.LookPath("dash"); err == nil {
		s = append(s, shell{"dash", []string{dash}})
	}
	return s
}

type scriptRun struct {
	out  string
	code int       // exit status; -1 if killed by a signal
	end  time.Time // when it exited
	err  error     // the script could not be run
}

// startScript starts the wait script with argv (a shell) with only PATH (busybox's
// applets) and env set: FileContainer's script when env sets TargetsFileEnv,
// else Container's. Wait for its result on the channel; it is killed if still
// running after 15s.
func startScript(argv []string, dir string, env map[string]string) (*exec.Cmd, <-chan scriptRun) {
	prog := script
	if _, ok := env[TargetsFileEnv]; ok {
		prog = fileScript
	}
	cmd := exec.Command(argv[0], append(argv[1:], "-c", prog)...)
	cmd.Env = []string{"PATH=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan scriptRun, 1)
	if err := cmd.Start(); err != nil {
		done <- scriptRun{err: err}
		return cmd, done
	}
	kill := time.AfterFunc(15*time.Second, func() { cmd.Process.Kill() })
	go func() {
		err := cmd.Wait()
		r := scriptRun{out: out.String(), end: time.Now()}
		var exit *exec.ExitError
		switch {
		case !kill.Stop():
			r.err = fmt.Errorf("still running after 15s; output so far:\n%s", r.out)
		case errors.As(err, &exit):
			r.code = exit.ExitCode()
		case err != nil:
			r.err = err
		}
		done <- r
	}()
	return cmd, done
}

// given are the addresses freeAddr handed out, never handed out twice.
var (
	givenMu sync.Mutex
	given   = map[string]bool{}
)

// freeAddr returns 127.0.0.1:port for a port nothing listens on (tried by
// listening and closing).
//
// The port is below the kernel's ephemeral range (ip_local_port_range), so
// that no outgoing connection (the scripts' own probes among them) takes it
// as a source port before a LATE listener opens on it: a port from
// Listen(":0") could be, and the late listen then failed with "address
// already in use" (seen once in a fresh-clone run).
func freeAddr(t *testing.T) string {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	givenMu.Lock()
	defer givenMu.Unlock()
	for try := 0; try < 1000; try++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(10000+rand.IntN(max(low-10000, 1))))
		if given[addr] {
			continue // another case's, maybe not listening yet
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		l.Close()
		given[addr] = true
		return addr
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// serve listens on addr and accepts (and closes) connections until the test ends.
func serve(t *testing.T, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return nil
}

// elapsedRE matches the whole seconds in the script's messages, which depend
// on timing; the tests compare them separately, against the clock.
var elapsedRE = regexp.MustCompile(`\b\d+s (elapsed)|(after) \d+s\b`)

func normalize(out string) []string {
	out = elapsedRE.ReplaceAllStringFunc(out, func(m string) string {
		if strings.HasPrefix(m, "after ") {
			return "after #s"
		}
		return "#s elapsed"
	})
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// placeholderRE matches the names the cases use for local addresses: OPEN
// listens from the start, LATE starts listening after the case's lateAfter,
// anything else (CLOSED, C1...) never listens.
var placeholderRE = regexp.MustCompile(`\b(OPEN|LATE|CLOSED|C\d)\b`)

// scriptCase is one run of the script. Targets and want lines name local
// addresses by placeholder (see placeholderRE) and elapsed seconds as "#".
type scriptCase struct {
	name      string
	targets   string        // WAIT_TARGETS
	file      string        // content of the WAIT_TARGETS_FILE, none if empty
	filePath  string        // WAIT_TARGETS_FILE when no file is written
	timeout   string        // WAIT_TIMEOUT_SECONDS
	report    string        // WAIT_REPORT_SECONDS, unset if empty
	lateAfter time.Duration // when LATE starts listening
	code      int           // exit status
	want      []string      // output lines
	// repeats: consecutive equal output lines count once (progress lines
	// whose number depends on how fast the machine probes).
	repeats bool
	// min and max time from start to exit; max 0 means no upper bound
	// beyond the late-listener check.
	min, max time.Duration
}

// TestScript runs the script under busybox sh (and dash) against local
// listeners and checks its exit status, its messages and its timing; in
// particular that it exits within 1.5s of the last dependency answering.
func TestScript(t *testing.T) {
	cases := []scriptCase{{
		name:      "late listener",
		targets:   "OPEN LATE localhost",
		timeout:   "30",
		lateAfter: 2 * time.Second,
		want: []string{
			"waiting for 1 of 3 dependencies: LATE (#s elapsed, timeout 30s)",
			"all 3 dependencies ready after #s",
		},
	}, {
		name:      "one dependency, no timeout",
		targets:   "LATE",
		timeout:   "0",
		lateAfter: 1 * time.Second,
		want: []string{
			"waiting for 1 dependency: LATE (#s elapsed, no timeout)",
			"1 dependency ready after #s",
		},
	}, {
		name:    "all ready at once",
		targets: "OPEN localhost [::1]",
		timeout: "5",
		want:    []string{"all 3 dependencies ready after #s"},
		max:     time.Second,
	}, {
		name:    "TCP timeout",
		targets: "OPEN CLOSED",
		timeout: "2",
		code:    TimeoutExitCode,
		want: []string{
			"waiting for 1 of 2 dependencies: CLOSED (#s elapsed, timeout 2s)",
			"timed out after #s waiting for 1 of 2 dependencies: CLOSED",
		},
		min: 2 * time.Second,
		max: 4 * time.Second,
	}, {
		name:    "DNS",
		targets: "localhost does-not-exist.invalid",
		timeout: "2",
		code:    TimeoutExitCode,
		want: []string{
			"waiting for 1 of 2 dependencies: does-not-exist.invalid (#s elapsed, timeout 2s)",
			"timed out after #s waiting for 1 of 2 dependencies: does-not-exist.invalid",
		},
		min: 2 * time.Second,
		max: 5 * time.Second,
	}, {
		name:    "long list shortened, full list on timeout",
		targets: "C1 C2 C3 C4 C5 C6 C7",
		timeout: "2",
		report:  "1",
		code:    TimeoutExitCode,
		// A report each second: one or two before the timeout, as fast
		// as a loaded machine probes seven closed ports.
		repeats: true,
		want: []string{
			"waiting for 7 of 7 dependencies: C1 C2 C3 C4 C5 and 2 more (#s elapsed, timeout 2s)",
			"timed out after #s waiting for 7 of 7 dependencies: C1 C2 C3 C4 C5 C6 C7",
		},
		min: 2 * time.Second,
		max: 4 * time.Second,
	}, {
		name:      "targets from a file too",
		targets:   "OPEN",
		file:      "LATE\n\n  localhost [::1]", // a blank line, no final newline
		timeout:   "30",
		lateAfter: time.Second,
		want: []string{
			"waiting for 1 of 4 dependencies: LATE (#s elapsed, timeout 30s)",
			"all 4 dependencies ready after #s",
		},
	}, {
		name:     "unreadable targets file",
		targets:  "OPEN",
		filePath: "/nonexistent/wait-targets",
		timeout:  "30",
		code:     2,
		want:     []string{"cat: can't open '/nonexistent/wait-targets': No such file or directory"},
		max:      time.Second,
	}, {
		name:    "no dependencies",
		targets: " ",
		timeout: "600",
		want:    []string{"no dependencies to wait for"},
		max:     time.Second,
	}, {
		name:    "bad timeout",
		targets: "OPEN",
		timeout: "10m",
		code:    2,
		want:    []string{"WAIT_TIMEOUT_SECONDS must be a whole number of seconds, not '10m'"},
		max:     time.Second,
	}, {
		// 10^17 s is 10^19 cs, past 2^63: the deadline would wrap negative.
		name:    "timeout too large",
		targets: "OPEN",
		timeout: "100000000000000000",
		code:    2,
		want:    []string{"WAIT_TIMEOUT_SECONDS must be at most 999999999, not '100000000000000000'"},
		max:     time.Second,
	}, {
		name:    "a target that reads as an option",
		targets: "OPEN -lp4444",
		timeout: "5",
		code:    2,
		want:    []string{"WAIT_TARGETS: '-lp4444' is not a host or host:port"},
		max:     time.Second,
	}}
	// The cases mostly sleep, so all of them run at once (t.Parallel would
	// run only GOMAXPROCS at a time), then each is checked in its subtest.
	_, dir := busybox(t)
	type run struct {
		name   string
		tc     *scriptCase
		addrs  map[string]string
		start  time.Time
		opened time.Time // when LATE started listening
		result scriptRun
	}
	var runs []*run
	var wg sync.WaitGroup
	for _, sh := range shells(t) {
		for i := range cases {
			tc := &cases[i]
			r := &run{name: sh.name + "/" + tc.name, tc: tc, addrs: map[string]string{}}
			runs = append(runs, r)
			for _, p := range placeholderRE.FindAllString(tc.targets+" "+tc.file, -1) {
				r.addrs[p] = freeAddr(t)
			}
			if a, ok := r.addrs["OPEN"]; ok {
				if err := serve(t, a); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{TargetsEnv: expand(tc.targets, r.addrs), TimeoutEnv: tc.timeout}
			if tc.report != "" {
				env["WAIT_REPORT_SECONDS"] = tc.report
			}
			if tc.filePath != "" {
				env[TargetsFileEnv] = tc.filePath
			}
			if tc.file != "" {
				file := filepath.Join(t.TempDir(), "wait-targets")
				if err := os.WriteFile(file, []byte(expand(tc.file, r.addrs)), 0o444); err != nil {
					t.Fatal(err)
				}
				env[TargetsFileEnv] = file
			}
			r.start = time.Now()
			_, done := startScript(sh.argv, dir, env)
			late, ok := r.addrs["LATE"]
			wg.Add(1)
			go func() {
				defer wg.Done()
				var lateErr error
				if ok {
					time.Sleep(tc.lateAfter)
					lateErr = serve(t, late)
					r.opened = time.Now()
				}
				r.result = <-done
				if r.result.err == nil {
					r.result.err = lateErr
				}
			}()
		}
	}
	wg.Wait()

	for _, r := range runs {
		tc := r.tc
		t.Run(r.name, func(t *testing.T) {
			res := r.result
			if res.err != nil {
				t.Fatal(res.err)
			}
			if res.code != tc.code {
				t.Errorf("exit status %d, want %d; output:\n%s", res.code, tc.code, res.out)
			}
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = expand(w, r.addrs)
			}
			got := normalize(res.out)
			if tc.repeats {
				got = slices.Compact(got)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("output (-want +got), elapsed seconds as #:\n%s\nraw output:\n%s", diff, res.out)
			}
			took := res.end.Sub(r.start)
			if took < tc.min {
				t.Errorf("exited after %v, want at least %v", took, tc.min)
			}
			if tc.max > 0 && took > tc.max {
				t.Errorf("exited after %v, want at most %v", took, tc.max)
			}
			if !r.opened.IsZero() {
				if d := res.end.Sub(r.opened); d < 0 || d > 1500*time.Millisecond {
					t.Errorf("exited %v after the last listener opened, want within 1.5s", d)
				}
			}
		})
	}
}

// expand replaces the address placeholders in s.
func expand(s string, addrs map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(s, func(p string) string { return addrs[p] })
}

// TestScriptTerminated checks that the script, PID 1 of its container, exits
// promptly on SIGTERM through its trap (exit status 143) instead of ignoring
// the signal, as PID 1 does by default, and holding pod deletion for the whole
// grace period. Outside PID 1 a missing trap shows as death by the signal.
func TestScriptTerminated(t *testing.T) {
	_, dir := busybox(t)
	for _, sh := range shells(t) {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{TargetsEnv: freeAddr(t), TimeoutEnv: "0"}
			cmd, done := startScript(sh.argv, dir, env)
			if cmd.Process == nil {
				t.Fatal((<-done).err)
			}
			time.Sleep(500 * time.Millisecond)
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.code != 143 {
				t.Errorf("exit status %d after SIGTERM, want 143 from the trap (-1 is death by the signal); output:\n%s", r.code, r.out)
			}
			if d := r.end.Sub(sent); d > 1500*time.Millisecond {
				t.Errorf("exited %v after SIGTERM, want within 1.5s", d)
			}
		})
	}
}
