package wire

import (
	"bufio"
	"bytes"
	"testing"
)

func benchTicket() *Ticket {
	for _, v := range vectors {
		if v.name == "ticket_called" {
			return v.msg.(*Ticket)
		}
	}
	panic("no ticket_called vector")
}

func BenchmarkEncodeTicket(b *testing.B) {
	m := benchTicket()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		buf, err = EncodeMessage(buf[:0], 7, FlagResponse, m)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeTicket(b *testing.B) {
	frame, err := EncodeMessage(nil, 7, FlagResponse, benchTicket())
	if err != nil {
		b.Fatal(err)
	}
	var m Ticket
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		f, _, err := DecodeFrame(frame)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Decode(f.Payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFrameTicket(b *testing.B) {
	frame, err := EncodeMessage(nil, 7, FlagResponse, benchTicket())
	if err != nil {
		b.Fatal(err)
	}
	stream := bytes.Repeat(frame, 1000)
	rd := bytes.NewReader(stream)
	r := bufio.NewReader(rd)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			rd.Reset(stream)
			r.Reset(rd)
		}
		if _, err := ReadFrame(r, 0); err != nil {
			b.Fatal(err)
		}
	}
}
