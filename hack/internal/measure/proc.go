package measure

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Named periods and thresholds of "idle".
const (
	// QuietWindow and QuietCPU define "the controller is idle": it used
	// less than QuietCPU of CPU during the last QuietWindow.
	QuietWindow = 2 * time.Second
	QuietCPU    = 100 * time.Millisecond
	// QuietTimeout bounds a wait for idle processes.
	QuietTimeout = 3 * time.Minute
	// ClusterQuietCPU is "the whole cluster is idle": all its processes
	// together used less than this during the last QuietWindow (30% of one
	// core; 100 KWOK nodes keep a cluster at a few percent). Each
	// measurement starts on an idle cluster, so that the cluster's own start
	// (nodes registering, leader elections, the first informer lists) does
	// not slow it.
	ClusterQuietCPU = 600 * time.Millisecond
)

// WaitIdle waits until the processes together used less than quiet CPU
// time during QuietWindow and returns their CPU time then. After
// QuietTimeout it prints a warning and returns their CPU time as it is. It
// returns an error when a process is gone or ctx ends.
func WaitIdle(ctx context.Context, pids []int, quiet time.Duration) (time.Duration, error) {
	start := time.Now()
	last, err := ProcessesCPU(pids)
	if err != nil {
		return 0, err
	}
	for {
		select {
		case <-time.After(QuietWindow):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		now, err := ProcessesCPU(pids)
		if err != nil {
			return 0, err
		}
		if now-last < quiet {
			return now, nil
		}
		if time.Since(start) > QuietTimeout {
			fmt.Printf("    warning: processes %v still busy after %s (%.2fs CPU in the last %s, idle is below %.2fs); going on\n",
				pids, QuietTimeout, (now - last).Seconds(), QuietWindow, quiet.Seconds())
			return now, nil
		}
		last = now
	}
}

// ProcessesCPU returns the CPU time the processes have used in all (see ProcessCPU).
func ProcessesCPU(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		t, err := ProcessCPU(pid)
		if err != nil {
			return 0, err
		}
		sum += t
	}
	return sum, nil
}

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which the Linux ABI fixes at 100 per second on every architecture Go
// supports (proc(5), sysconf(_SC_CLK_TCK)).
const clockTick = 10 * time.Millisecond

// ProcessCPU returns the user plus system CPU time the process has used, read
// from /proc/<pid>/stat (fields 14 and 15, in clock ticks). It returns an
// error if the process does not exist or the file cannot be parsed.
func ProcessCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(data))
}

// parseStatCPU parses the content of /proc/<pid>/stat. The command name
// (field 2) is in parentheses and may itself hold spaces or parentheses, so
// the fields are counted from the last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat %.40q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: cpu time %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// PeakRSS returns the process's peak resident set size in bytes, from VmHWM
// in /proc/<pid>/status (reported in kB).
func PeakRSS(pid int) (int64, error) { return ProcStatusBytes(pid, "VmHWM:") }

// ProcStatusBytes returns the field of /proc/<pid>/status (a "kB" figure
// such as VmHWM or VmRSS, named with its colon) in bytes.
func ProcStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %q: %w", field, v, err)
			}
			return kb << 10, nil
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", pid, field)
}
