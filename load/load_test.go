package load

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{"5/s", 5, false}, {"5", 5, false}, {"120/m", 2, false}, {"3600/h", 1, false},
		{"0/s", 0, true}, {"x/s", 0, true}, {"5/d", 0, true}, {"-1", 0, true},
	} {
		got, err := ParseRate(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseRSS(t *testing.T) {
	got, err := ParseRSS(strings.NewReader("Name:\tnowserving\nVmPeak:\t 9 kB\nVmRSS:\t   12345 kB\nThreads: 4\n"))
	if err != nil || got != 12345*1024 {
		t.Errorf("ParseRSS = %d, %v; want %d", got, err, 12345*1024)
	}
	if _, err := ParseRSS(strings.NewReader("Name: x\n")); err == nil {
		t.Error("ParseRSS without VmRSS: want an error")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 51 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond, 0: time.Millisecond} {
		if got := Percentile(d, p); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("Percentile of nothing should be 0")
	}
}

func TestParseCPU(t *testing.T) {
	got, err := ParseCPU("4242 (now serving) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 12 0 100 0 0\n")
	if err != nil || got != 3*time.Second {
		t.Errorf("ParseCPU = %v, %v; want 3s (250+50 ticks)", got, err)
	}
	if _, err := ParseCPU("4242 (x) S 1 2"); err == nil {
		t.Error("ParseCPU of a short line: want an error")
	}
}
