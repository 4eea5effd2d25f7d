package protocol_test

import (
	"testing"

	"github.com/nowserving/nowserving/protocol/wire"
)

// FuzzRequest sends any well-formed frame (any type, flags and payload) to
// a welcomed console session, which may send every request: the daemon
// must answer it or ignore it, and the session must go on (a STATUS sent
// after it is answered). Seeds: one valid frame of each request type.
func FuzzRequest(f *testing.F) {
	seeds := []wire.Message{
		&wire.TakeTicket{Service: "A"}, &wire.CallNext{Counter: 1}, &wire.CallNumber{Counter: 1, Number: "A001"},
		&wire.Recall{Counter: 1}, &wire.NoShow{Counter: 1}, &wire.Reenter{Number: "A001"}, &wire.Start{Counter: 1},
		&wire.Complete{Counter: 1}, &wire.Transfer{Counter: 1, ToService: "B"}, &wire.Cancel{Number: "A001"},
		&wire.Pause{Counter: 2}, &wire.Resume{Counter: 2}, &wire.Status{Number: "A001"},
		&wire.Subscribe{FromVersion: 1}, &wire.Heartbeat{}, &wire.Hello{DeviceID: "x"}, &wire.OK{},
	}
	for _, m := range seeds {
		p, err := m.AppendBinary(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(m.Type()), byte(0), p)
	}
	f.Add(byte(0x7f), byte(0xff), []byte{200, 9, 0, 1, 0})
	en := newEnv(f, nil)
	cl, _ := en.login("console-1", 1)
	f.Fuzz(func(t *testing.T, typ, flags byte, payload []byte) {
		if len(payload) > wire.MaxPayload {
			payload = payload[:wire.MaxPayload]
		}
		cl.t = t
		id := cl.next
		cl.next += 2
		cl.raw(wire.AppendFrame(nil, wire.Frame{Type: wire.MsgType(typ), Flags: wire.Flags(flags), RequestID: id, Payload: payload}))
		cl.write(id+1, 0, &wire.Status{})
		if _, ok := cl.await(id + 1).(*wire.Snapshot); !ok {
			t.Fatalf("session broken after type 0x%02x payload %x", typ, payload)
		}
		cl.evs = cl.evs[:0]
		cl.other = cl.other[:0]
	})
}
