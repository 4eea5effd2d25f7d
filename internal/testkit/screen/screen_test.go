package screen

import "testing"

func TestLine(t *testing.T) {
	const s = "Clinic  ● connected\nA  General   1\n1  Counter 1  A001\nA  General   0\n"
	for _, tc := range []struct{ sub, want string }{
		{"A  General", "A  General   1"}, // the first of two
		{"Counter 1", "1  Counter 1  A001"},
		{"●", "Clinic  ● connected"},
		{"B  Business", ""},
		{"1\n1", ""}, // within one line only
	} {
		if got := Line(s, tc.sub); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.sub, got, tc.want)
		}
	}
}
