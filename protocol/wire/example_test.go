package wire_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"

	"github.com/nowserving/nowserving/protocol/wire"
)

func Example() {
	// A kiosk asks for a ticket...
	frame, err := wire.EncodeMessage(nil, 3, 0, &wire.TakeTicket{IdemKey: "k1-0003", Service: "A"})
	if err != nil {
		panic(err)
	}
	// ...and the daemon reads it from its connection.
	f, err := wire.ReadFrame(bufio.NewReader(bytes.NewReader(frame)), 0)
	if err != nil {
		panic(err)
	}
	m, err := wire.DecodeMessage(f)
	if err != nil {
		panic(err)
	}
	req := m.(*wire.TakeTicket)
	fmt.Println(f.Type, f.RequestID, req.Service, req.IdemKey)

	// Refusals are status errors with stable codes.
	reply := wire.ErrServiceFull.Reply(f.RequestID)
	out, _ := wire.EncodeMessage(nil, f.RequestID, wire.FlagResponse, reply)
	fmt.Printf("% x\n", out[:13])
	// Output:
	// TAKE_TICKET 3 A k1-0003
	// 4e 53 01 06 01 00 00 00 03 00 00 00 24
}

func ExampleDecodeFrame() {
	stream, _ := wire.EncodeMessage(nil, 0, 0, &wire.Heartbeat{TimeMS: 1})
	// Bytes arrive in pieces: DecodeFrame asks for more until the frame is whole.
	var buf []byte
	for _, c := range stream {
		buf = append(buf, c)
		f, n, err := wire.DecodeFrame(buf)
		if errors.Is(err, wire.ErrTruncated) {
			continue
		}
		if err != nil {
			fmt.Println("close connection:", err)
			return
		}
		fmt.Println(f.Type, n, "bytes")
		buf = buf[n:]
	}
	// Output:
	// HEARTBEAT 29 bytes
}

func ExampleStatusOf() {
	err := fmt.Errorf("queue: take ticket A: %w", wire.ErrServiceFull.WithMsg("service full today: A"))
	se := wire.StatusOf(err)
	fmt.Printf("0x%02x %q retryable=%v\n", se.Code, se.Msg, se.Retryable)
	// Output:
	// 0x21 "service full today: A" retryable=false
}
