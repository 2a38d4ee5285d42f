package training

import "testing"

func TestUnstamped(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"2026-11-26T08:25:17.123456789Z rank 0 of 3 joined on a\n", "rank 0 of 3 joined on a\n"},
		{"2026-11-26T08:25:17Z one two\n2026-11-26T08:25:18Z \n2026-11-26T08:25:19Z last", "one two\n\nlast\n"},
	} {
		if got := Unstamped(tc.in); got != tc.want {
			t.Errorf("Unstamped(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
