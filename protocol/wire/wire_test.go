package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestVectorsEncode(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			got, want := v.encode(t), goldenVector(t, v)
			if !bytes.Equal(got, want) {
				t.Errorf("encode:\ngot\n%swant\n%s", hexDump(got), hexDump(want))
			}
			// Appending after existing bytes leaves them alone.
			prefix := []byte("xyz")
			got2, err := EncodeMessage(prefix, v.id, v.flags, v.msg)
			if err != nil || !bytes.Equal(got2[:3], prefix) || !bytes.Equal(got2[3:], want) {
				t.Errorf("EncodeMessage with prefix = %x, %v", got2, err)
			}
			// AppendFrame over the message's own payload gives the same bytes.
			p, err := v.msg.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := AppendFrame(nil, Frame{Type: v.msg.Type(), Flags: v.flags, RequestID: v.id, Payload: p}); !bytes.Equal(got, want) {
				t.Errorf("AppendFrame = %x, want %x", got, want)
			}
		})
	}
}

func checkFrame(t *testing.T, v vector, f Frame) {
	t.Helper()
	if f.Type != v.msg.Type() || f.Flags != v.flags || f.RequestID != v.id {
		t.Errorf("header = %s/%#x/%d, want %s/%#x/%d", f.Type, f.Flags, f.RequestID, v.msg.Type(), v.flags, v.id)
	}
	m, err := DecodeMessage(f)
	if err != nil {
		t.Fatalf("DecodeMessage: %v", err)
	}
	if !reflect.DeepEqual(m, v.msg) {
		t.Errorf("decoded\n%#v\nwant\n%#v", m, v.msg)
	}
}

func TestVectorsDecode(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			b := goldenVector(t, v)
			f, n, err := DecodeFrame(append(b, 0x4E)) // a following frame's first byte
			if err != nil || n != len(b) {
				t.Fatalf("DecodeFrame = n %d, %v; want n %d", n, err, len(b))
			}
			checkFrame(t, v, f)

			r := bufio.NewReader(bytes.NewReader(b))
			f, err = ReadFrame(r, 0)
			if err != nil {
				t.Fatalf("ReadFrame: %v", err)
			}
			checkFrame(t, v, f)
			if _, err := ReadFrame(r, 0); err != io.EOF {
				t.Errorf("ReadFrame at end = %v, want io.EOF", err)
			}
		})
	}
}

// TestVectorsInDoc keeps PROTOCOL.md honest: every vector's bytes, every
// message section and every error code appear in it.
func TestVectorsInDoc(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	for _, v := range vectors {
		if !strings.Contains(s, "```\n"+hexDump(goldenVector(t, v))+"```") {
			t.Errorf("PROTOCOL.md lacks the hex of vector %s (run go test -update)", v.name)
		}
	}
	for _, ty := range Types() {
		if h := fmt.Sprintf("### 0x%02X %s\n", uint8(ty), ty); !strings.Contains(s, h) {
			t.Errorf("PROTOCOL.md lacks section %q", h)
		}
	}
	for _, e := range StatusErrors() {
		row := fmt.Sprintf("| 0x%02X | %s | %s |", e.Code, e.Msg, map[bool]string{true: "yes", false: "no"}[e.Retryable])
		if !strings.Contains(s, row) {
			t.Errorf("PROTOCOL.md lacks error row %q", row)
		}
	}
}

// chunkReader returns its chunks one Read at a time, as a socket would.
type chunkReader struct{ chunks [][]byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func TestSplitAtEveryOffset(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			b := goldenVector(t, v)
			for i := 0; i <= len(b); i++ {
				if i < len(b) {
					if _, n, err := DecodeFrame(b[:i]); !errors.Is(err, ErrTruncated) || n != 0 {
						t.Fatalf("DecodeFrame(first %d bytes) = n %d, %v; want ErrTruncated", i, n, err)
					}
				}
				// Two reads: b[:i] then b[i:].
				r := bufio.NewReaderSize(&chunkReader{chunks: [][]byte{bytes.Clone(b[:i]), bytes.Clone(b[i:])}}, 16)
				f, err := ReadFrame(r, 0)
				if err != nil {
					t.Fatalf("split at %d: ReadFrame: %v", i, err)
				}
				checkFrame(t, v, f)
			}
		})
	}
}

// TestStreamByteByByte feeds every vector, back to back, one byte at a
// time to a DecodeFrame loop, as a connection with a growing buffer would.
func TestStreamByteByByte(t *testing.T) {
	var stream []byte
	for _, v := range vectors {
		stream = append(stream, goldenVector(t, v)...)
	}
	var buf []byte
	got := 0
	for _, c := range stream {
		buf = append(buf, c)
		for {
			f, n, err := DecodeFrame(buf)
			if errors.Is(err, ErrTruncated) {
				break
			}
			if err != nil {
				t.Fatalf("frame %d: %v", got, err)
			}
			checkFrame(t, vectors[got], f)
			got++
			buf = buf[n:]
		}
	}
	if got != len(vectors) || len(buf) != 0 {
		t.Errorf("decoded %d frames, %d bytes left; want %d, 0", got, len(buf), len(vectors))
	}
	// The same stream through one bufio.Reader.
	r := bufio.NewReaderSize(bytes.NewReader(stream), 16)
	for i, v := range vectors {
		f, err := ReadFrame(r, 0)
		if err != nil {
			t.Fatalf("ReadFrame %d: %v", i, err)
		}
		checkFrame(t, v, f)
	}
}

func hx(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func TestDecodeFrameErrors(t *testing.T) {
	good := AppendFrame(nil, Frame{Type: TypeHeartbeat})
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x01; return b }
	oversize := hx("4e 53 01 05 00 00000000 00010001") // declares MaxPayload+1
	tests := []struct {
		name   string
		in     []byte
		want   error
		status *StatusError
	}{
		{"empty", nil, ErrTruncated, ErrBadFrame},
		{"bad magic first byte", []byte("GET / HTTP/1.1\r\n"), ErrBadMagic, ErrBadFrame},
		{"bad magic alone", []byte{0x4F}, ErrBadMagic, ErrBadFrame},
		{"bad magic second byte", hx("4e 54"), ErrBadMagic, ErrBadFrame},
		{"bad version", hx("4e 53 02"), ErrBadVersion, ErrUnsupportedVersion},
		{"oversize before payload arrives", oversize, ErrFrameTooLarge, ErrBadFrame},
		{"max length", hx("4e 53 01 05 00 00000000 ffffffff"), ErrFrameTooLarge, ErrBadFrame},
		{"header only", good[:HeaderSize], ErrTruncated, ErrBadFrame},
		{"crc cut", good[:len(good)-1], ErrTruncated, ErrBadFrame},
		{"bad crc", flip(len(good) - 1), ErrBadChecksum, ErrBadFrame},
		{"flipped type", flip(3), ErrBadChecksum, ErrBadFrame},
		{"flipped request id", flip(8), ErrBadChecksum, ErrBadFrame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, n, err := DecodeFrame(tt.in)
			if !errors.Is(err, tt.want) || n != 0 {
				t.Fatalf("DecodeFrame = n %d, %v; want %v", n, err, tt.want)
			}
			if !IsFatal(err) {
				t.Errorf("IsFatal(%v) = false", err)
			}
			if got := StatusOf(err); !errors.Is(got, tt.status) {
				t.Errorf("StatusOf = %v, want code %#x", got, tt.status.Code)
			}
		})
	}
}

// failAfter reads b, then fails with err (a peer that went silent past
// its deadline).
func failAfter(b []byte, err error) io.Reader {
	return io.MultiReader(bytes.NewReader(b), iotest.ErrReader(err))
}

func TestReadFrameErrors(t *testing.T) {
	good := goldenVector(t, vectors[0])
	timeout := errors.New("i/o timeout")
	tests := []struct {
		name string
		r    io.Reader
		max  int
		want error
	}{
		{"clean eof", bytes.NewReader(nil), 0, io.EOF},
		{"eof in header", bytes.NewReader(good[:5]), 0, ErrTruncated},
		{"eof in payload", bytes.NewReader(good[:HeaderSize+3]), 0, ErrTruncated},
		{"eof in crc", bytes.NewReader(good[:len(good)-2]), 0, ErrTruncated},
		{"short garbage is bad magic", bytes.NewReader([]byte("hi")), 0, ErrBadMagic},
		// A silent peer after one garbage byte is refused at once, not
		// after its deadline.
		{"one garbage byte then silence", failAfter([]byte("G"), timeout), 0, ErrBadMagic},
		{"bad version then silence", failAfter(hx("4e 53 02"), timeout), 0, ErrBadVersion},
		// Only the header is available: the length must be refused without
		// waiting for (or allocating) the payload.
		{"over caller max", failAfter(good[:HeaderSize], timeout), 8, ErrFrameTooLarge},
		{"over MaxPayload", failAfter(hx("4e 53 01 05 00 00000000 00010001"), timeout), 1 << 30, ErrFrameTooLarge},
		{"reader error passes through", failAfter(good[:4], timeout), 0, timeout},
		{"bad crc", bytes.NewReader(append(good[:len(good)-1:len(good)-1], good[len(good)-1]^0xFF)), 0, ErrBadChecksum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFrame(bufio.NewReader(tt.r), tt.max)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadFrame = %v, want %v", err, tt.want)
			}
			if tt.want == timeout && IsFatal(err) {
				t.Errorf("a reader error is not a framing error")
			}
		})
	}
}

func TestCRCCheckValue(t *testing.T) {
	// The check value every CRC-32/ISO-HDLC implementation must produce; the
	// firmware author's first test.
	if got := crc32.ChecksumIEEE([]byte("123456789")); got != 0xCBF43926 {
		t.Errorf("crc = %08x, want cbf43926", got)
	}
	// And the empty heartbeat frame's CRC covers exactly header+payload.
	b := AppendFrame(nil, Frame{Type: TypeHeartbeat})
	if got, want := binary.BigEndian.Uint32(b[HeaderSize:]), crc32.ChecksumIEEE(b[:HeaderSize]); got != want || len(b) != Overhead {
		t.Errorf("heartbeat frame %x: crc %08x, want %08x", b, got, want)
	}
}

// withField inserts raw field bytes at position at of a payload.
func field(tag uint8, wt FieldType, val []byte) []byte {
	return append([]byte{tag, byte(wt), byte(len(val) >> 8), byte(len(val))}, val...)
}

func TestUnknownTagsSkipped(t *testing.T) {
	unknown := bytes.Join([][]byte{
		field(200, FieldUint, hx("0102030405060708")),
		field(201, FieldInt, nil),
		field(202, FieldBytes, []byte{0, 0, 0, 0}),
		field(203, FieldString, []byte("future")),
		field(204, FieldRecord, field(1, FieldUint, []byte{1})),
		field(205, 9, []byte("an unknown wire type is skipped too")),
	}, nil)
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			p, err := v.msg.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range [][]byte{
				append(bytes.Clone(unknown), p...),
				append(bytes.Clone(p), unknown...),
			} {
				m, _ := New(v.msg.Type())
				if err := m.Decode(in); err != nil {
					t.Fatalf("Decode with unknown tags: %v", err)
				}
				if !reflect.DeepEqual(m, v.msg) {
					t.Errorf("decoded %#v, want %#v", m, v.msg)
				}
			}
		})
	}
	// Inside a nested record too.
	in := field(5, FieldRecord, append(field(99, FieldString, []byte("x")), field(1, FieldString, []byte("A"))...))
	var s Snapshot
	if err := s.Decode(in); err != nil || len(s.Services) != 1 || s.Services[0].Code != "A" {
		t.Errorf("nested unknown tag: %+v, %v", s, err)
	}
}

func TestDecodeReplacesMessage(t *testing.T) {
	m := &Ticket{Number: "old", LCD: []string{"old"}}
	if err := m.Decode(nil); err != nil || !reflect.DeepEqual(m, &Ticket{}) {
		t.Errorf("Decode(empty) = %+v, %v; want zero Ticket", m, err)
	}
}

func TestMalformedPayload(t *testing.T) {
	tests := []struct {
		name string
		t    MsgType
		in   []byte
		tag  uint8
	}{
		{"field header cut", TypeHello, hx("01 03 00"), 0},
		{"length beyond payload", TypeHello, hx("01 03 00 05 6b 69"), 1},
		{"tag zero", TypeHello, field(0, FieldString, nil), 0},
		{"string as uint", TypeHello, field(1, FieldUint, []byte{1}), 1},
		{"uint as string", TypeHello, field(2, FieldString, []byte("1")), 2},
		{"uint longer than 8", TypeHello, field(4, FieldUint, make([]byte, 9)), 4},
		{"role does not fit u8", TypeHello, field(2, FieldUint, []byte{1, 0}), 2},
		{"u32 overflow", TypeWelcome, field(5, FieldUint, []byte{1, 0, 0, 0, 0}), 5},
		{"int longer than 8", TypeWelcome, field(1, FieldInt, make([]byte, 9)), 1},
		{"bad utf-8", TypeTakeTicket, field(4, FieldString, []byte{0xff, 0xfe}), 4},
		{"record as string", TypeSnapshot, field(5, FieldString, []byte("A")), 5},
		{"bad field inside record", TypeSnapshot, field(6, FieldRecord, field(1, FieldString, []byte("5"))), 1},
		{"record cut", TypeSnapshot, field(5, FieldRecord, hx("01 03 00 09 41")), 1},
		{"repeated u32 as string", TypeSubscribe, field(2, FieldString, []byte("5")), 2},
		// Booleans are 0 or 1 (section 3); 2 does not fit the field.
		{"boolean 2", TypeTakeTicket, append(field(4, FieldString, []byte("A")), field(8, FieldUint, []byte{2})...), 8},
		{"boolean 256 inside record", TypeSnapshot, field(5, FieldRecord, field(7, FieldUint, []byte{1, 0})), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeMessage(Frame{Type: tt.t, Payload: tt.in})
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("DecodeMessage = %v, want ErrMalformed", err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Tag != tt.tag || fe.Type != tt.t {
				t.Errorf("FieldError = %+v, want type %s tag %d", fe, tt.t, tt.tag)
			}
			if IsFatal(err) {
				t.Error("a malformed payload must not be fatal for the stream")
			}
			if got := StatusOf(err); !errors.Is(got, ErrBadPayload) {
				t.Errorf("StatusOf = %v, want ErrBadPayload", got)
			}
		})
	}
}

func TestLenientIntegers(t *testing.T) {
	var w Welcome
	in := bytes.Join([][]byte{
		field(1, FieldInt, []byte{0xFF}),                  // -1, sign-extended
		field(5, FieldUint, []byte{7}),                    // u32 sent in 1 byte
		field(7, FieldUint, nil),                          // empty uint is 0
		field(8, FieldUint, hx("00000000000000002a")[1:]), // u64 in 8 bytes
	}, nil)
	if err := w.Decode(in); err != nil {
		t.Fatal(err)
	}
	if w.ServerTimeMS != -1 || w.Counter != 7 || w.HeartbeatMS != 0 || w.Version != 42 {
		t.Errorf("got %+v", w)
	}
	var s Subscribe
	if err := s.Decode(field(13, FieldUint, []byte{0, 0, 1})); err != nil || !s.Snapshot {
		t.Errorf("bool 1 in 3 bytes = %v, %v; want true", s.Snapshot, err)
	}
}

func TestRepeatedKeepsEmptyAndZero(t *testing.T) {
	in := &OK{LCD: []string{"", "x", ""}}
	sub := &Subscribe{Counters: []uint32{0, 5}}
	for _, m := range []Message{in, sub} {
		b, err := EncodeMessage(nil, 1, 0, m)
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := DecodeFrame(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeMessage(f)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("round trip = %#v, %v; want %#v", got, err, m)
		}
	}
}

func TestEncodeTooLarge(t *testing.T) {
	tests := []struct {
		name string
		m    Message
	}{
		{"field over 65535", &TakeTicket{Service: strings.Repeat("A", MaxFieldLen+1)}},
		{"bytes over 65535", &Ticket{ESCPOS: make([]byte, MaxFieldLen+1)}},
		{"record over 65535", &Snapshot{Services: []ServiceInfo{{Code: strings.Repeat("A", MaxFieldLen-2)}}}},
		{"payload over MaxPayload", &Ticket{ESCPOS: make([]byte, MaxFieldLen), Number: "A023"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := EncodeMessage(dst, 1, 0, tt.m)
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("EncodeMessage err = %v, want ErrFrameTooLarge", err)
			}
			if string(got) != "keep" {
				t.Errorf("dst = %q after failure, want %q", got, "keep")
			}
		})
	}
	// The largest payload that fits is accepted and decodes.
	m := &Ticket{ESCPOS: make([]byte, MaxPayload-2*FieldHeaderSize-10), LCD: []string{"0123456789"}}
	b, err := EncodeMessage(nil, 1, 0, m)
	if err != nil || len(b) != MaxFrameSize {
		t.Fatalf("max frame: len %d, %v; want %d", len(b), err, MaxFrameSize)
	}
	if _, err := ReadFrame(bufio.NewReader(bytes.NewReader(b)), 0); err != nil {
		t.Errorf("ReadFrame(max frame) = %v", err)
	}
}

func TestStatusError(t *testing.T) {
	full := ErrServiceFull.WithMsg("service full today: A")
	if !errors.Is(full, ErrServiceFull) || errors.Is(full, ErrServiceClosed) {
		t.Error("Is must compare codes")
	}
	if ErrServiceFull.Msg != "service full today" {
		t.Error("WithMsg changed the package variable")
	}
	wrapped := fmt.Errorf("queue: take ticket: %w", full)
	var se *StatusError
	if !errors.As(wrapped, &se) || se.Code != 0x21 {
		t.Errorf("errors.As = %v", se)
	}
	if got := StatusOf(wrapped); got != full {
		t.Errorf("StatusOf(wrapped) = %v, want %v", got, full)
	}
	if got := StatusOf(errors.New("db: connection reset")); got != ErrInternal {
		t.Errorf("StatusOf(other) = %v, want ErrInternal", got)
	}
	if StatusOf(nil) != nil {
		t.Error("StatusOf(nil) != nil")
	}
	if got := StatusOf(fmt.Errorf("x: %w", ErrUnknownType)); !errors.Is(got, ErrUnsupportedType) {
		t.Errorf("StatusOf(unknown type) = %v", got)
	}
	reply := ErrRateLimited.Reply(9)
	if back := reply.Err(); *back != *ErrRateLimited || reply.RequestID != 9 {
		t.Errorf("Reply/Err round trip = %+v, %+v", reply, back)
	}
	seen := map[uint16]bool{}
	last := uint16(0)
	for _, e := range StatusErrors() {
		if seen[e.Code] || e.Code <= last || e.Msg == "" {
			t.Errorf("status %#x duplicated, out of order or without message", e.Code)
		}
		seen[e.Code], last = true, e.Code
		if e.Retryable != (e.Code >= 0x30) {
			t.Errorf("status %#x retryable = %v; codes from 0x30 are the retryable ones", e.Code, e.Retryable)
		}
	}
}

func TestMAC(t *testing.T) {
	// Computed independently: python3 -c 'import hmac,hashlib;
	// print(hmac.new(b"kiosk-1-secret", bytes(range(32))+b"kiosk-1", hashlib.sha256).hexdigest())'
	const want = "abecddd19b147e7f34c975cc108f6a7700dea1006e0c55c9ab085410c5e16fbb"
	mac := ComputeMAC(exampleSecret, exampleNonce, "kiosk-1")
	if got := hex.EncodeToString(mac); got != want {
		t.Errorf("MAC = %s, want %s", got, want)
	}
	if !VerifyMAC(exampleSecret, exampleNonce, "kiosk-1", mac) {
		t.Error("VerifyMAC rejects the right MAC")
	}
	for _, bad := range []struct {
		secret, nonce []byte
		id            string
	}{
		{[]byte("kiosk-1-secreT"), exampleNonce, "kiosk-1"},
		{exampleSecret, exampleNonce[1:], "kiosk-1"},
		{exampleSecret, exampleNonce, "kiosk-2"},
	} {
		if VerifyMAC(bad.secret, bad.nonce, bad.id, mac) {
			t.Errorf("VerifyMAC accepts %q/%x/%s", bad.secret, bad.nonce, bad.id)
		}
	}
}

func TestDerivedKey(t *testing.T) {
	if got, want := DerivedKey("kiosk-1", 0x0123456789ABCDEF, 3), "kiosk-1/0123456789abcdef/3"; got != want {
		t.Errorf("DerivedKey = %q, want %q", got, want)
	}
}

func TestActions(t *testing.T) {
	a := Allow(TypeTakeTicket, TypeStatus, TypeHello)
	if a != 1<<0|1<<12 {
		t.Errorf("Allow = %#x, want %#x", uint32(a), 1<<0|1<<12)
	}
	for _, ty := range Types() {
		want := ty == TypeTakeTicket || ty == TypeStatus
		if a.Allows(ty) != want {
			t.Errorf("Allows(%s) = %v", ty, !want)
		}
	}
}

func TestTypes(t *testing.T) {
	// Which types exist is checked against PROTOCOL.md (TestSpecTables).
	ts := Types()
	if !slices.IsSorted(ts) || len(ts) == 0 {
		t.Errorf("Types() = %v, want ascending", ts)
	}
	for _, ty := range ts {
		m, err := New(ty)
		if err != nil || m.Type() != ty {
			t.Errorf("New(%s) = %v, %v", ty, m, err)
		}
		if strings.HasPrefix(ty.String(), "0x") {
			t.Errorf("type %d has no name", ty)
		}
	}
	if _, err := New(0x7F); !errors.Is(err, ErrUnknownType) {
		t.Errorf("New(0x7f) = %v, want ErrUnknownType", err)
	}
	if _, err := DecodeMessage(Frame{Type: 0x7F}); !errors.Is(err, ErrUnknownType) || IsFatal(err) {
		t.Errorf("DecodeMessage(0x7f) = %v", err)
	}
	if s := MsgType(0x7F).String(); s != "0x7f" {
		t.Errorf("String = %q", s)
	}
	if !TypeCallNext.IsMutating() || TypeStatus.IsMutating() || TypeSubscribe.IsMutating() || TypeTicket.IsRequest() ||
		TypeReprint.IsMutating() || !TypeReprint.IsRequest() {
		t.Error("IsMutating/IsRequest wrong")
	}
	if StatusCalled.String() != "called" || RoleKeypad.String() != "keypad" || EventKind(99).String() != "99" || ClassVIP.String() != "vip" || CounterPaused.String() != "paused" {
		t.Error("enum String wrong")
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("x", MaxIDLen+1)
	bad := []struct {
		name string
		m    Message
		tag  uint8
	}{
		{"hello without id", &Hello{Role: RoleKiosk}, 1},
		{"hello long id", &Hello{DeviceID: long, Role: RoleKiosk}, 1},
		{"hello without role", &Hello{DeviceID: "k"}, 2},
		{"short nonce", &Challenge{Nonce: make([]byte, 31)}, 1},
		{"short mac", &Auth{MAC: make([]byte, 16)}, 1},
		{"take ticket without service", &TakeTicket{IdemKey: "k"}, 4},
		{"take ticket long key", &TakeTicket{IdemKey: long, Service: "A"}, 1},
		{"call number without number", &CallNumber{Counter: 5}, 3},
		{"reenter without number", &Reenter{}, 3},
		{"cancel without number", &Cancel{}, 3},
		{"transfer nowhere", &Transfer{Counter: 5}, 5},
		{"status long number", &Status{Number: long}, 3},
		{"subscribe long service", &Subscribe{Services: []string{"A", long}}, 4},
		{"reprint without number", &Reprint{Printer: "hall-1"}, 3},
		{"reprint long printer", &Reprint{Number: "A023", Printer: long}, 12},
		{"error code 0", &ErrorMsg{Msg: "x"}, 1},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.m)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Tag != tt.tag || !errors.Is(StatusOf(err), ErrBadPayload) {
				t.Errorf("Validate = %v, want a FieldError on tag %d", err, tt.tag)
			}
		})
	}
	for _, v := range vectors {
		if err := Validate(v.msg); err != nil {
			t.Errorf("vector %s: Validate = %v", v.name, err)
		}
	}
}

func TestRoleActions(t *testing.T) {
	tests := []struct {
		role  Role
		allow []MsgType
		deny  []MsgType
	}{
		{RoleKiosk, []MsgType{TypeTakeTicket, TypeStatus, TypeCheckIn}, []MsgType{TypeCallNext, TypeSubscribe, TypeCancel, TypeReprint}},
		{RoleKeypad, []MsgType{TypeCallNext, TypeTransfer, TypePause, TypeSubscribe}, []MsgType{TypeTakeTicket, TypeCancel, TypeReprint}},
		{RoleDisplay, []MsgType{TypeSubscribe, TypeStatus}, []MsgType{TypeCallNext, TypeTakeTicket, TypeReprint}},
		{RoleConsole, []MsgType{TypeTakeTicket, TypeCancel, TypeSubscribe, TypeResume, TypeReprint, TypeCheckIn}, []MsgType{TypeHello, TypeTicket}},
		{Role(9), nil, []MsgType{TypeStatus}},
	}
	for _, tt := range tests {
		a := RoleActions(tt.role)
		for _, ty := range tt.allow {
			if !a.Allows(ty) {
				t.Errorf("%s may not send %s", tt.role, ty)
			}
		}
		for _, ty := range tt.deny {
			if a.Allows(ty) {
				t.Errorf("%s may send %s", tt.role, ty)
			}
		}
	}
	if RoleActions(RoleConsole) != 1<<16-1 {
		t.Errorf("console actions = %#x", uint32(RoleActions(RoleConsole)))
	}
}
