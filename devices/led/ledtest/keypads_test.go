package ledtest

import (
	"bytes"
	"testing"

	"github.com/nowserving/nowserving/devices/led"
)

// TestKeypads: a present keypad answers a poll with its pressed keys in
// order, then with no key; it keeps what a display frame tells it; a
// missing keypad and a partial frame get no answer.
func TestKeypads(t *testing.T) {
	encode := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	k := NewKeypads(2)
	k.Press(2, led.KeyCallNext)
	k.Press(2, led.KeyNoShow)
	poll := encode(led.EncodeKeypadPoll(2))
	for _, want := range []led.Key{led.KeyCallNext, led.KeyNoShow, led.KeyNone} {
		if got, want := k.Answer(poll), encode(led.EncodeKeypadReply(2, want)); !bytes.Equal(got, want) {
			t.Errorf("answer to poll = % x, want % x", got, want)
		}
	}
	if got := k.Answer(encode(led.EncodeKeypadPoll(3))); got != nil {
		t.Errorf("missing keypad 3 answered % x", got)
	}
	show := encode(led.EncodeKeypadDisplay(2, "A23"))
	n, reply := k.Serve(append(show[:len(show):len(show)], poll[:2]...))
	if n != len(show) || reply == nil {
		t.Errorf("Serve of a display frame and part of a poll = %d, % x; want %d and a reply", n, reply, len(show))
	}
	k.WaitDisplay(t, 2, "A23")
	if n, reply := k.Serve(poll[:2]); n != 0 || reply != nil {
		t.Errorf("Serve of part of a frame = %d, % x; want 0, nil", n, reply)
	}
}
