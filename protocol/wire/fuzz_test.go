package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// addSeeds adds every canonical frame, a message of every type with every
// declared field set (see sample) and a few broken frames; the committed
// corpus under testdata/fuzz holds the same vectors plus any crasher found.
func addSeeds(f *testing.F, payloadOnly bool) {
	msgs := make([]vector, 0, len(vectors)+len(Types()))
	msgs = append(msgs, vectors...)
	for _, ty := range Types() {
		msgs = append(msgs, vector{name: "sample " + ty.String(), msg: sample(ty)})
	}
	for _, v := range msgs {
		b := v.encode(f)
		if payloadOnly {
			b = b[HeaderSize : len(b)-TrailerSize]
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(hx("4e 53 01 05 00 00000000 00010001"))
	f.Add(field(5, FieldRecord, field(1, FieldString, []byte("A"))))
}

// FuzzDecodeFrame checks that DecodeFrame never panics, never claims more
// bytes than it was given, and that a decoded frame re-encodes to exactly the
// bytes it came from.
func FuzzDecodeFrame(f *testing.F) {
	addSeeds(f, false)
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := DecodeFrame(b)
		if err != nil {
			if n != 0 {
				t.Fatalf("error %v with n = %d", err, n)
			}
			if !IsFatal(err) {
				t.Fatalf("frame error %v is not fatal", err)
			}
			return
		}
		if n < Overhead || n > len(b) {
			t.Fatalf("n = %d for %d bytes", n, len(b))
		}
		if got := AppendFrame(nil, fr); !bytes.Equal(got, b[:n]) {
			t.Fatalf("re-encode = %x, want %x", got, b[:n])
		}
		// ReadFrame agrees with DecodeFrame.
		rf, err := ReadFrame(bufio.NewReader(bytes.NewReader(b)), 0)
		if err != nil || !reflect.DeepEqual(rf, fr) {
			t.Fatalf("ReadFrame = %+v, %v; DecodeFrame = %+v", rf, err, fr)
		}
		// Whatever the payload, message decoding must not panic.
		_, _ = DecodeMessage(fr)
	})
}

// FuzzReadFrame checks ReadFrame on arbitrary streams: no panic, and every
// error is a framing error or the clean end of input.
func FuzzReadFrame(f *testing.F) {
	addSeeds(f, false)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(b), 16)
		for {
			fr, err := ReadFrame(r, 0)
			if err == io.EOF {
				return
			}
			if err != nil {
				if !IsFatal(err) {
					t.Fatalf("ReadFrame error %v is not a framing error", err)
				}
				return
			}
			if len(fr.Payload) > MaxPayload {
				t.Fatalf("payload %d bytes", len(fr.Payload))
			}
		}
	})
}

// FuzzDecodeMessage feeds one payload to every message decoder. Whatever
// decodes must survive a round trip: decode(encode(m)) == m.
func FuzzDecodeMessage(f *testing.F) {
	addSeeds(f, true)
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, ty := range Types() {
			m, _ := New(ty)
			if err := m.Decode(p); err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%s: error %v is not ErrMalformed", ty, err)
				}
				continue
			}
			enc, err := m.AppendBinary(nil)
			if err != nil {
				t.Fatalf("%s: re-encode: %v", ty, err)
			}
			m2, _ := New(ty)
			if err := m2.Decode(enc); err != nil {
				t.Fatalf("%s: decode re-encoded %x: %v", ty, enc, err)
			}
			if !reflect.DeepEqual(m, m2) {
				t.Fatalf("%s: round trip\n%#v\n%#v", ty, m, m2)
			}
		}
	})
}
