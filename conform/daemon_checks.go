package conform

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// The checks of a daemon, one method per part of the document.

// fresh returns a new boot nonce for a session of the run.
func (c *checker) fresh() uint64 {
	c.boot++
	return uint64(time.Now().UnixNano())<<8 | c.boot&0xff
}

// session logs in as the first device with one of roles, recording a
// failure of check name when it cannot; ok false when no device has the
// role (the check is skipped).
func (c *checker) session(s Section, name string, roles ...wire.Role) (*dconn, bool) {
	cred, ok := c.role(roles...)
	if !ok {
		names := make([]string, len(roles))
		for i, r := range roles {
			names[i] = r.String()
		}
		c.rep.Skip(s, name, fmt.Sprintf("no %s device given", strings.Join(names, " or ")))
		return nil, false
	}
	d, err := c.login(cred, c.fresh())
	if err != nil {
		c.rep.Fail(s, name, "%v", err)
		return nil, false
	}
	return d, true
}

func (c *checker) checkHandshake() {
	cred := c.o.Devices[0]
	d, err := c.dial()
	if err != nil {
		c.rep.Fail(Session, "HELLO is answered with CHALLENGE", "%v", err)
		return
	}
	defer d.close()
	d.cred = cred
	f, err := d.exchange(0, &wire.Hello{DeviceID: cred.ID, Role: cred.Role, ProtocolVersion: 1, BootNonce: c.fresh()})
	var ch wire.Challenge
	if err == nil {
		err = d.decode(f, &ch)
	}
	c.rep.Check(Session, "HELLO is answered with CHALLENGE", err == nil && len(ch.Nonce) == wire.NonceSize && f.RequestID == 1,
		fmt.Sprintf("%s request id %d, nonce of %d bytes, %v", f.Type, f.RequestID, len(ch.Nonce), err))
	if err != nil {
		return
	}
	f, err = d.exchange(0, &wire.Auth{MAC: wire.ComputeMAC(cred.Secret, ch.Nonce, cred.ID)})
	var w wire.Welcome
	if err == nil {
		err = d.decode(f, &w)
	}
	allowed := wire.RoleActions(cred.Role)
	c.rep.Check(Session, "AUTH with the right MAC is answered with WELCOME for the device's role",
		err == nil && w.Role == cred.Role && w.Allowed != 0 && w.Allowed&^allowed == 0 && w.HeartbeatMS > 0,
		fmt.Sprintf("role %s, Allowed %#x (role's %#x), HeartbeatMS %d, %v", w.Role, uint32(w.Allowed), uint32(allowed), w.HeartbeatMS, err))
	if cred.Role == wire.RoleKeypad {
		c.rep.Check(Session, "a keypad's WELCOME names its counter", w.Counter != 0, "Counter 0")
	}
}

func (c *checker) checkHelloRefusals() {
	cred := c.o.Devices[0]
	cases := []struct {
		s     Section
		name  string
		hello *wire.Hello
		code  uint16
	}{
		{Requests, "HELLO without DeviceID gets ERROR 0x04, no CHALLENGE", &wire.Hello{Role: cred.Role, ProtocolVersion: 1, BootNonce: 1}, 0x04},
		{Requests, "HELLO without Role gets ERROR 0x04, no CHALLENGE", &wire.Hello{DeviceID: cred.ID, ProtocolVersion: 1, BootNonce: 1}, 0x04},
		{Session, "HELLO with ProtocolVersion 0 gets ERROR 0x02", &wire.Hello{DeviceID: cred.ID, Role: cred.Role, BootNonce: 1}, 0x02},
	}
	for _, tc := range cases {
		d, err := c.dial()
		if err != nil {
			c.rep.Fail(tc.s, tc.name, "%v", err)
			continue
		}
		f, err := d.exchange(0, tc.hello)
		d.wantError(tc.s, tc.name, f, err, tc.code, true)
		d.close()
	}
	d, err := c.dial()
	if err != nil {
		return
	}
	defer d.close()
	f, err := d.exchange(0, &wire.Status{})
	d.wantError(Session, "a request before HELLO gets ERROR 0x11 and a close", f, err, 0x11, true)
}

// badFrames are frames the daemon must refuse and close on (section 2).
func badFrames() []struct {
	name string
	b    []byte
	code uint16
} {
	good := encode(1, 0, &wire.Hello{DeviceID: "x", Role: wire.RoleKiosk, ProtocolVersion: 1})
	crc := append([]byte(nil), good...)
	crc[len(crc)-1] ^= 0xFF
	magic := append([]byte(nil), good...)
	magic[0] = 'X'
	version := append([]byte(nil), good...)
	version[2] = 2
	long := append([]byte(nil), good[:wire.HeaderSize]...)
	binary.BigEndian.PutUint32(long[9:], wire.MaxPayload+1)
	return []struct {
		name string
		b    []byte
		code uint16
	}{
		{"a bad CRC-32 gets ERROR 0x01 (request id 0) and a close", crc, 0x01},
		{"a bad magic gets ERROR 0x01 and a close", magic, 0x01},
		{"a frame version other than 1 gets ERROR 0x02 and a close", version, 0x02},
		{"a payload length over 65,536 gets ERROR 0x01 before the payload, and a close", long, 0x01},
	}
}

func (c *checker) checkBadFrames() {
	for _, bf := range badFrames() {
		d, err := c.dial()
		if err != nil {
			c.rep.Fail(Frame, bf.name, "%v", err)
			continue
		}
		f, err := d.rawExchange(0, bf.b)
		d.wantError(Frame, bf.name, f, err, bf.code, true)
		if err == nil && f.Type == wire.TypeError {
			c.rep.Check(Frame, "an ERROR before a close carries request id 0", f.RequestID == 0, fmt.Sprintf("request id %d", f.RequestID))
		}
		d.close()
	}
	d, ok := c.session(Frame, "an unknown type gets ERROR 0x03, the connection stays open", c.o.Devices[0].Role)
	if !ok {
		return
	}
	defer d.close()
	d.nextID++
	f, err := d.rawExchange(d.nextID, wire.AppendFrame(nil, wire.Frame{Type: 0x7F, RequestID: d.nextID}))
	d.wantError(Frame, "an unknown type gets ERROR 0x03, the connection stays open", f, err, 0x03, false)
}

// withField returns the frame of m (request id id) with one field appended.
func withField(id uint32, m wire.Message, tag, wt uint8, value []byte) []byte {
	p, _ := m.AppendBinary(nil)
	p = append(p, tag, wt, byte(len(value)>>8), byte(len(value)))
	p = append(p, value...)
	return wire.AppendFrame(nil, wire.Frame{Type: m.Type(), RequestID: id, Payload: p})
}

func (c *checker) checkPayloads() {
	d, ok := c.session(Payload, "an unknown tag is skipped", c.o.Devices[0].Role)
	if !ok {
		return
	}
	defer d.close()
	d.nextID++
	f, err := d.rawExchange(d.nextID, withField(d.nextID, &wire.Status{}, 200, 3, []byte("new")))
	c.rep.Check(Payload, "an unknown tag is skipped", err == nil && f.Type == wire.TypeSnapshot, fmt.Sprintf("STATUS with tag 200 got %s %s %v", f.Type, describe(f), err))
	d.nextID++
	f, err = d.rawExchange(d.nextID, withField(d.nextID, &wire.Status{}, 2, 3, []byte("1")))
	d.wantError(Payload, "a field of the wrong wire type gets ERROR 0x04", f, err, 0x04, false)
	var bool2 wire.Message = &wire.Subscribe{}
	tag := uint8(13)
	if wire.RoleActions(d.cred.Role).Allows(wire.TypeTakeTicket) {
		bool2, tag = &wire.TakeTicket{Service: c.service(), IdemKey: fmt.Sprintf("conform-bool-%d", c.fresh())}, 8
	}
	d.nextID++
	f, err = d.rawExchange(d.nextID, withField(d.nextID, bool2, tag, 0, []byte{2}))
	d.wantError(Payload, "a boolean of 2 gets ERROR 0x04", f, err, 0x04, false)
}

// service is the service the run takes tickets of: the first of WELCOME.
func (c *checker) service() string {
	if len(c.welcome.Services) > 0 {
		return c.welcome.Services[0].Code
	}
	return "A"
}
