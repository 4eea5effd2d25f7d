package ledtest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led"
)

func TestRecorder(t *testing.T) {
	r := New()
	r.Reply(func(f []byte) []byte { return append([]byte("ok:"), f...) })
	l, err := r.Dial(led.PortOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := l.ReadTimeout(buf, time.Second)
	if err != nil || string(buf[:n]) != "ok:a" {
		t.Errorf("reply %q, %v; want \"ok:a\"", buf[:n], err)
	}
	n, _ = l.ReadTimeout(buf, time.Millisecond)
	if n != 0 {
		t.Errorf("second read got %q, want nothing", buf[:n])
	}
	r.Unplug()
	if _, err := l.Write([]byte("b")); !errors.Is(err, ErrUnplugged) {
		t.Errorf("write unplugged: %v", err)
	}
	if _, err := r.Dial(led.PortOpts{}); !errors.Is(err, ErrUnplugged) {
		t.Errorf("dial unplugged: %v", err)
	}
	r.Plug()
	l.Write([]byte("c"))
	if got := r.Bytes(); !bytes.Equal(got, []byte("ac")) {
		t.Errorf("Bytes() = %q, want \"ac\"", got)
	}
	r.Reset()
	if len(r.Frames()) != 0 {
		t.Error("Reset kept frames")
	}
}
