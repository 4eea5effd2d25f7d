package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// raiseFileLimit lifts the soft limit on open files to the hard limit and
// returns it.
func raiseFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	if r.Cur < r.Max {
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
	}
	return r.Cur
}

// procRSS reads VmRSS of a process from /proc, in bytes.
func procRSS(pid int) (uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: read RSS of pid %d: %w", pid, err)
	}
	defer f.Close()
	return ParseRSS(f)
}

// ParseRSS finds "VmRSS: N kB" in a /proc/PID/status text and returns it
// in bytes.
func ParseRSS(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("bench: parse VmRSS %q: %w", rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("bench: no VmRSS line")
}

// procCPU reads the user and system CPU time a process has used, from
// /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: read CPU time of pid %d: %w", pid, err)
	}
	return ParseCPU(string(b))
}

// ParseCPU reads utime + stime (fields 14 and 15, in clock ticks of
// 1/100 s, the USER_HZ of Linux) from a /proc/PID/stat line. The command
// name (field 2, in parentheses) may hold spaces: fields are counted after
// its closing parenthesis.
func ParseCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("bench: /proc stat line without a command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11].
	if len(f) < 13 {
		return 0, fmt.Errorf("bench: /proc stat line has %d fields after the name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: /proc stat CPU field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / 100), nil
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
