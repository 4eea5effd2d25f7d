package led

import (
	"bytes"
	"errors"
	"testing"
)

// keypadFrames is the table of canonical keypad frames: bytes ↔ struct. It
// drives the encode, decode and split tests and seeds the fuzzer.
var keypadFrames = []struct {
	name  string
	frame KeypadFrame
	bytes []byte
}{
	{"poll 1", KeypadFrame{Addr: 1, Cmd: 'P'}, []byte{0x01, 0x01, 0x50, 0x07}},
	{"poll 7", KeypadFrame{Addr: 7, Cmd: 'P'}, []byte{0x01, 0x07, 0x50, 0x07}},
	{"display", KeypadFrame{Addr: 12, Cmd: 'D', Text: "023"}, []byte{0x01, 0x0C, 0x44, '0', '2', '3', 0x07}},
	{"reply none", KeypadFrame{Addr: 12, Key: KeyNone}, []byte{0x01, 0x0C, '0', 0x07}},
	{"reply call", KeypadFrame{Addr: 254, Key: KeyCallNext}, []byte{0x01, 0xFE, '1', 0x07}},
	{"reply start", KeypadFrame{Addr: 3, Key: KeyStart}, []byte{0x01, 0x03, '2', 0x07}},
	{"reply redirect", KeypadFrame{Addr: 3, Key: KeyRedirect}, []byte{0x01, 0x03, '3', 0x07}},
	{"reply no-show", KeypadFrame{Addr: 1, Key: KeyNoShow}, []byte{0x01, 0x01, '4', 0x07}},
}

func encodeKeypadFrame(f KeypadFrame) ([]byte, error) {
	switch f.Cmd {
	case 'P':
		return EncodeKeypadPoll(f.Addr)
	case 'D':
		return EncodeKeypadDisplay(f.Addr, f.Text)
	default:
		return EncodeKeypadReply(f.Addr, f.Key)
	}
}

func TestKeypadFrames(t *testing.T) {
	for _, tt := range keypadFrames {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeKeypadFrame(tt.frame)
			if err != nil || !bytes.Equal(got, tt.bytes) {
				t.Fatalf("encode = % x, %v; want % x", got, err, tt.bytes)
			}
			f, n, err := DecodeKeypadFrame(tt.bytes)
			if err != nil || n != len(tt.bytes) || f != tt.frame {
				t.Fatalf("decode = %+v, %d, %v; want %+v, %d", f, n, err, tt.frame, len(tt.bytes))
			}
			// Every proper prefix asks for more bytes.
			for i := range len(tt.bytes) {
				if _, n, err := DecodeKeypadFrame(tt.bytes[:i]); n != 0 || err != nil {
					t.Errorf("prefix %d: n=%d err=%v, want need more", i, n, err)
				}
			}
		})
	}
}

// TestKeypadStream decodes a stream with noise and every frame, split at
// every offset, as a reader fed in two reads would.
func TestKeypadStream(t *testing.T) {
	var stream []byte
	stream = append(stream, 0xFF, 0x00) // line noise
	for _, tt := range keypadFrames {
		stream = append(stream, tt.bytes...)
	}
	stream = append(stream, 0x01, 0x05, 'Z', 0x07) // bad command
	stream = append(stream, 0x01, 0x05, '1', 0x08) // bad end
	stream = append(stream, keypadFrames[4].bytes...)
	want := len(keypadFrames) + 1
	for split := range len(stream) + 1 {
		var got []KeypadFrame
		var buf []byte
		for _, part := range [][]byte{stream[:split], stream[split:]} {
			buf = append(buf, part...)
			for {
				f, n, err := DecodeKeypadFrame(buf)
				if n == 0 && err == nil {
					break
				}
				buf = buf[n:]
				if err == nil {
					got = append(got, f)
				} else if !errors.Is(err, ErrKeypadFrame) {
					t.Fatalf("split %d: err %v is not ErrKeypadFrame", split, err)
				}
			}
		}
		if len(got) != want {
			t.Fatalf("split %d: decoded %d frames, want %d: %+v", split, len(got), want, got)
		}
	}
}

func TestKeypadEncodeErrors(t *testing.T) {
	if _, err := EncodeKeypadPoll(0); !errors.Is(err, ErrAddress) {
		t.Errorf("poll 0: %v", err)
	}
	if _, err := EncodeKeypadPoll(255); !errors.Is(err, ErrAddress) {
		t.Errorf("poll 255: %v", err)
	}
	if _, err := EncodeKeypadReply(1, 'x'); !errors.Is(err, ErrKeypadFrame) {
		t.Errorf("reply key x: %v", err)
	}
	got, _ := EncodeKeypadDisplay(1, "号12345")
	if string(got[3:6]) != "?12" {
		t.Errorf("display text %q, want \"?12\"", got[3:6])
	}
	got, _ = EncodeKeypadDisplay(1, "5")
	if string(got[3:6]) != "5  " {
		t.Errorf("display text %q, want \"5  \"", got[3:6])
	}
}

func FuzzDecodeKeypadFrame(f *testing.F) {
	for _, tt := range keypadFrames {
		f.Add(tt.bytes)
	}
	f.Add([]byte{0x01, 0x00, '1', 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := DecodeKeypadFrame(b)
		if n < 0 || n > len(b) {
			t.Fatalf("n = %d for %d bytes", n, len(b))
		}
		if err != nil && n == 0 {
			t.Fatalf("error without progress: %v", err)
		}
		if err == nil && n > 0 {
			re, err := encodeKeypadFrame(fr)
			if err != nil || !bytes.Equal(re, b[:n]) {
				t.Fatalf("re-encode of %+v = % x, %v; want % x", fr, re, err, b[:n])
			}
		}
	})
}

func FuzzParseModbusReply(f *testing.F) {
	req := []byte{0x01, 0x10, 0x00, 0x00, 0x00, 0x02, 0x04, 'A', '0', '2', '3', 0xb2, 0xe9}
	ok := appendCRC16Modbus([]byte{0x01, 0x10, 0x00, 0x00, 0x00, 0x02})
	f.Add(req, ok)
	f.Add(req, appendCRC16Modbus([]byte{0x01, 0x90, 0x02}))
	f.Add([]byte{0x01, 0x06, 0, 1, 0, 3, 0x98, 0x0b}, []byte{0x01, 0x06, 0, 1, 0, 3, 0x98, 0x0b})
	f.Fuzz(func(t *testing.T, req, buf []byte) {
		done, err := ParseModbusReply(req, buf)
		if done && err == nil {
			// A valid reply is exactly 8 bytes with a good CRC.
			if len(buf) != 8 || CRC16Modbus(buf[:6]) != uint16(buf[6])|uint16(buf[7])<<8 {
				t.Fatalf("accepted % x for % x", buf, req)
			}
		}
	})
}

func FuzzDecodeOnbonFrame(f *testing.F) {
	d, err := NewOnbon(OnbonOpts{Width: 64, Height: 16})
	if err != nil {
		f.Fatal(err)
	}
	frames, _ := d.Encode(1, Content{Number: "A023", Counter: "5"})
	f.Add(frames[0])
	f.Add(OnbonFrame(1, make([]byte, 16)))
	f.Add([]byte{0xA5, 0xA6, 0x5A})
	f.Fuzz(func(t *testing.T, b []byte) {
		pkt, n, err := DecodeOnbonFrame(b)
		if n < 0 || n > len(b) {
			t.Fatalf("n = %d for %d bytes", n, len(b))
		}
		if err == nil && n > 0 {
			// Re-framing the packet gives a frame that decodes to it.
			again, _, err := DecodeOnbonFrame(OnbonFrame(1, pkt))
			if err != nil || !bytes.Equal(again, pkt) {
				t.Fatalf("round trip of % x: % x, %v", pkt, again, err)
			}
		}
		_, _ = d.ParseReply(frames[0], b)
	})
}

// TestKeyString: every key has its name; a byte that is no key is shown
// in hex.
func TestKeyString(t *testing.T) {
	for k, want := range map[Key]string{
		KeyNone: "none", KeyCallNext: "call_next", KeyStart: "start", KeyRedirect: "redirect", KeyNoShow: "no_show",
		'5': "key(0x35)", '/': "key(0x2f)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Key(%#02x).String() = %q, want %q", byte(k), got, want)
		}
	}
}
