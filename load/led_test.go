package load

import (
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led/ledtest"
)

// TestLEDLine: the time of the read that completes the number, whichever
// read it starts in; nothing before the reset counts.
func TestLEDLine(t *testing.T) {
	// The daemon's board writes on the slave; the bench reads the master.
	master, slave := ledtest.OpenPTY(t)
	defer slave.Close()
	l := newLEDLine(master)
	defer l.close()
	slave.Write([]byte("\x01\x01A007 1\x07"))
	if _, ok := l.wait("A007", 2*time.Second); !ok {
		t.Fatal("A007 not seen")
	}
	l.reset()
	if _, ok := l.wait("A007", 50*time.Millisecond); ok {
		t.Fatal("A007 seen again after the reset")
	}
	slave.Write([]byte("\x01\x01A0"))
	if _, ok := l.wait("\x01\x01A0", 2*time.Second); !ok {
		t.Fatal("the first half not seen")
	}
	before := time.Now()
	slave.Write([]byte("08 1\x07"))
	at, ok := l.wait("A008", 2*time.Second)
	if !ok || at.Before(before) {
		t.Fatalf("A008 at %v (ok %v), want after the second half was written (%v)", at, ok, before)
	}
}
