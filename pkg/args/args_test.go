package args

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A bare number of seconds large enough to wrap a Duration around used to
// become a short timeout (issue #38, L4): every value over max is an error.
func TestDurationBounds(t *testing.T) {
	const max = 365 * 24 * time.Hour
	for _, tc := range []struct {
		arg     string
		want    time.Duration
		wantErr string
	}{
		{arg: "--t=300", want: 300 * time.Second},
		{arg: "--t=10m", want: 10 * time.Minute},
		{arg: "--t=0", want: 0},
		{arg: "--t=31536000", want: max},
		{arg: "--t=8760h", want: max},
		{arg: "--t=31536001", wantErr: "must be at most 31536000 seconds (8760h0m0s)"},
		{arg: "--t=8760h0m1s", wantErr: "must be at most 8760h0m0s"},
		// 2^63/10^9 + 1 seconds: n*time.Second wraps to a negative number.
		{arg: "--t=9223372037", wantErr: "must be at most 31536000 seconds"},
		// (2^64+10^9)/10^9 seconds wraps to about +1 s.
		{arg: "--t=18446744074", wantErr: "must be at most 31536000 seconds"},
		{arg: "--t=9223372036854775807", wantErr: "must be at most 31536000 seconds"},
		{arg: "--t=-1", wantErr: "must not be negative"},
		{arg: "--t=-5s", wantErr: "must not be negative"},
		{arg: "--t=soon", wantErr: "must be a duration such as 90s or 10m, or a whole number of seconds"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			var d time.Duration
			s := New("p")
			s.Duration(&d, "t", time.Minute, time.Second, max, "")
			errs := s.Parse([]string{tc.arg})
			if tc.wantErr != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr) {
					t.Fatalf("errors %v; want one containing %q", errs, tc.wantErr)
				}
				return
			}
			if len(errs) != 0 {
				t.Fatalf("errors %v", errs)
			}
			if diff := cmp.Diff(tc.want, d); diff != "" {
				t.Errorf("duration (-want +got):\n%s", diff)
			}
		})
	}
}

// Flags describes every flag defined, and Record collects them from a
// parser that makes its own Set, by plugin.
func TestFlagsAndRecord(t *testing.T) {
	parse := func() {
		var name string
		var port int
		var on bool
		var d time.Duration
		s := New("demo")
		s.NonEmpty(&name, "worker", "worker", "the worker task")
		s.Port(&port, "port", 2222, "the port")
		s.Bool(&on, "wait", true, "wait for it")
		s.Duration(&d, "wait-timeout", 10*time.Minute, time.Second, time.Hour, "how long")
		s.Parse(nil)
	}
	got := Record(parse)
	want := map[string][]Flag{"demo": {
		{Name: "port", Kind: "integer, 1 to 65535", Default: "2222", Usage: "the port"},
		{Name: "wait", Kind: "boolean", Default: "true", Usage: "wait for it"},
		{Name: "wait-timeout", Kind: "duration, 0 to 1h0m0s (a bare number: seconds)", Default: "10m0s", Usage: "how long"},
		{Name: "worker", Kind: "string, not empty", Default: "worker", Usage: "the worker task"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Record (-want +got):\n%s", diff)
	}
	// Outside Record nothing is kept.
	parse()
	if got := Record(func() {}); len(got) != 0 {
		t.Errorf("Record of nothing: %v", got)
	}
}
