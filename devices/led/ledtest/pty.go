package ledtest

import (
	"os"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// OpenPTY opens a pseudo-terminal pair for a serial-line test: the slave's
// name is the "serial port" a driver opens, the master is the far end. The
// master is registered with Go's poller, so closing it interrupts a pending
// Read and really hangs up the line (an unplugged cable).
func OpenPTY(t testing.TB) (master, slave *os.File) {
	t.Helper()
	m, s, err := pty.Open()
	if err != nil {
		t.Fatalf("pty.Open: %v", err)
	}
	fd, err := syscall.Dup(int(m.Fd()))
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), s
}
