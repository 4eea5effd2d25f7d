package ledtest

import (
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led"
)

// Keypads plays wired keypads at the far end of a led.KeypadBus: each
// answers every frame addressed to it with its next pressed key (or no
// key), and keeps the text it was last told to show. It is safe for
// concurrent use.
type Keypads struct {
	mu      sync.Mutex
	keys    map[int][]led.Key
	display map[int]string
	shown   chan struct{} // closed and replaced when a display changes
}

// NewKeypads returns keypads at addrs; other addresses stay silent, as
// keypads that are missing.
func NewKeypads(addrs ...int) *Keypads {
	k := &Keypads{keys: map[int][]led.Key{}, display: map[int]string{}, shown: make(chan struct{})}
	for _, a := range addrs {
		k.display[a] = ""
	}
	return k
}

// Press queues a key on the keypad at addr: its next answer sends it.
func (k *Keypads) Press(addr int, key led.Key) {
	k.mu.Lock()
	k.keys[addr] = append(k.keys[addr], key)
	k.mu.Unlock()
}

// WaitDisplay waits up to 10 s until the keypad at addr shows text.
func (k *Keypads) WaitDisplay(t testing.TB, addr int, text string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		k.mu.Lock()
		got, ch := k.display[addr], k.shown
		k.mu.Unlock()
		if got == text {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("keypad %d shows %q, want %q", addr, got, text)
		}
	}
}

// Answer returns the reply to one frame written to the bus, nil if no
// keypad answers it; it plugs into Recorder.Reply.
func (k *Keypads) Answer(frame []byte) []byte {
	f, n, err := led.DecodeKeypadFrame(frame)
	if n == 0 || err != nil || f.Cmd == 0 {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.display[f.Addr]; !ok {
		return nil
	}
	key := led.KeyNone
	if q := k.keys[f.Addr]; len(q) > 0 {
		key, k.keys[f.Addr] = q[0], q[1:]
	}
	if f.Cmd == 'D' && k.display[f.Addr] != f.Text {
		k.display[f.Addr] = f.Text
		close(k.shown)
		k.shown = make(chan struct{})
	}
	reply, _ := led.EncodeKeypadReply(f.Addr, key)
	return reply
}

// Serve answers the first whole frame of got; it plugs into Line.Serve.
func (k *Keypads) Serve(got []byte) (n int, reply []byte) {
	_, n, _ = led.DecodeKeypadFrame(got)
	if n == 0 {
		return 0, nil
	}
	return n, k.Answer(got[:n])
}
