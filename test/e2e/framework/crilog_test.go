package framework

import "testing"

func TestCRILogText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"full lines", "2026-11-27T13:40:30.742925219Z stdout F rank 1 of 3 joined on h\n2026-11-27T13:40:31Z stderr F warn\n", "rank 1 of 3 joined on h\nwarn\n"},
		{"a line in parts", "2026-11-27T13:40:30Z stdout P abc\n2026-11-27T13:40:30Z stdout F def\n", "abcdef\n"},
		{"empty line", "2026-11-27T13:40:30Z stdout F \n", "\n"},
		{"empty line without the space", "2026-11-27T13:40:30Z stdout F\n", "\n"},
		{"not CRI", "plain text\n", "plain text\n"},
		{"last line unterminated", "2026-11-27T13:40:30Z stdout F x", "x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CRILogText([]byte(tc.in)); got != tc.want {
				t.Errorf("CRILogText(%q) = %q; want %q", tc.in, got, tc.want)
			}
		})
	}
}
