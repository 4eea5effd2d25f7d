package conform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/protocol/wire"
)

// brokenKiosk is a kiosk written from the document with one fault each,
// to show that the kit names it.
type brokenKiosk struct {
	changeKey     bool // a retry carries a new idempotency key
	noHeartbeat   bool // never sends HEARTBEAT, never drops a silent daemon
	ignoreErrorID bool // takes any ERROR as the answer to its request
	badCRC        bool // every request frame has a wrong CRC-32
	retryAll      bool // retries non-retryable errors too
	noPause       bool // retries at once, whatever RetryAfterMS says
	helloNoWait   bool // reconnects after a refused HELLO without its RetryAfterMS

	nc     net.Conn
	br     *bufio.Reader
	boot   uint64
	nextID uint32
	hb     time.Duration
	sent   time.Time
	recv   time.Time
}

func (k *brokenKiosk) id() uint32 { k.nextID++; return k.nextID }

func (k *brokenKiosk) send(id uint32, fl wire.Flags, m wire.Message) error {
	b := encode(id, fl, m)
	if k.badCRC && m.Type().IsRequest() {
		b[len(b)-1] ^= 0x55
	}
	k.sent = time.Now()
	_, err := k.nc.Write(b)
	return err
}

// read returns the next frame other than HEARTBEAT, sending heartbeats
// and dropping a silent daemon as the document says (unless noHeartbeat).
func (k *brokenKiosk) read(ctx context.Context, d time.Duration) (wire.Frame, error) {
	end := time.Now().Add(d)
	for ctx.Err() == nil && time.Now().Before(end) {
		_ = k.nc.SetReadDeadline(time.Now().Add(k.hb / 4))
		f, err := wire.ReadFrame(k.br, 0)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			if k.noHeartbeat {
				continue
			}
			if time.Since(k.recv) > 3*k.hb {
				return f, errors.New("daemon silent")
			}
			if time.Since(k.sent) >= k.hb*3/4 {
				_ = k.send(0, 0, &wire.Heartbeat{TimeMS: time.Now().UnixMilli()})
			}
			continue
		case err != nil:
			return f, err
		}
		k.recv = time.Now()
		if f.Type != wire.TypeHeartbeat {
			return f, nil
		}
	}
	return wire.Frame{}, errors.New("no answer")
}

func (k *brokenKiosk) connect(ctx context.Context, addr string) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	k.nc, k.br, k.hb, k.recv = nc, bufio.NewReader(nc), time.Second, time.Now()
	if err := k.send(k.id(), 0, &wire.Hello{DeviceID: "dut-1", Role: wire.RoleKiosk, ProtocolVersion: 1, BootNonce: k.boot}); err != nil {
		return err
	}
	f, err := k.read(ctx, 3*time.Second)
	var ch wire.Challenge
	var e wire.ErrorMsg
	if err == nil && f.Type == wire.TypeError && e.Decode(f.Payload) == nil && e.RetryAfterMS > 0 && !k.helloNoWait {
		return waitFor(time.Duration(e.RetryAfterMS) * time.Millisecond)
	}
	if err != nil || f.Type != wire.TypeChallenge || ch.Decode(f.Payload) != nil {
		return fmt.Errorf("no challenge: %v", err)
	}
	if err := k.send(k.id(), 0, &wire.Auth{MAC: wire.ComputeMAC(secret, ch.Nonce, "dut-1")}); err != nil {
		return err
	}
	var w wire.Welcome
	if f, err = k.read(ctx, 3*time.Second); err != nil || w.Decode(f.Payload) != nil {
		return fmt.Errorf("no welcome: %v", err)
	}
	k.hb = time.Duration(w.HeartbeatMS) * time.Millisecond
	return nil
}

// take takes one ticket, retrying (as configured) until it has an answer.
func (k *brokenKiosk) take(ctx context.Context, addr string) {
	id := k.id()
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if k.nc == nil {
			if err := k.connect(ctx, addr); err != nil {
				k.drop()
				pause := 300 * time.Millisecond
				if w, ok := err.(waitFor); ok {
					pause = max(pause, time.Duration(w))
				}
				_ = backoff.Sleep(ctx, pause)
				continue
			}
		}
		m := &wire.TakeTicket{IdemKey: fmt.Sprintf("key-%d", id), Service: "A"}
		fl := wire.Flags(0)
		if attempt > 0 {
			fl = wire.FlagRetry
			if k.changeKey {
				m.IdemKey = fmt.Sprintf("key-%d-%d", id, attempt)
			}
		}
		if err := k.send(id, fl, m); err != nil {
			k.drop()
			continue
		}
		if k.answer(ctx, id) {
			return
		}
	}
}

// answer waits for the answer to request id: true when it is final.
func (k *brokenKiosk) answer(ctx context.Context, id uint32) bool {
	for {
		f, err := k.read(ctx, 5*time.Second)
		if err != nil {
			k.drop()
			_ = backoff.Sleep(ctx, 300*time.Millisecond)
			return false
		}
		if f.RequestID != id && !(k.ignoreErrorID && f.Type == wire.TypeError) {
			continue
		}
		if f.Type != wire.TypeError {
			return true
		}
		var e wire.ErrorMsg
		_ = e.Decode(f.Payload)
		if !e.Retryable && !k.retryAll {
			return true
		}
		if !k.noPause {
			_ = backoff.Sleep(ctx, time.Duration(max(e.RetryAfterMS, 100))*time.Millisecond)
		}
		return false
	}
}

// waitFor is a HELLO refused with RetryAfterMS: the pause it asks for.
type waitFor time.Duration

func (w waitFor) Error() string { return fmt.Sprintf("refused, retry after %s", time.Duration(w)) }

func (k *brokenKiosk) drop() {
	if k.nc != nil {
		k.nc.Close()
		k.nc = nil
	}
}

func TestBrokenKiosks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		k     *brokenKiosk
		fails []string // checks that must fail, by name
	}{
		{"conforming", &brokenKiosk{}, nil},
		{"changes its key on retry", &brokenKiosk{changeKey: true}, []string{"a retry has the same request id, fields and idempotency key"}},
		{"never heartbeats", &brokenKiosk{noHeartbeat: true}, []string{"an idle device sends HEARTBEAT every interval", "a daemon silent for 3 intervals is dropped"}},
		{"ignores the ERROR request id", &brokenKiosk{ignoreErrorID: true}, []string{"an ERROR for another request id is not taken as the answer"}},
		{"sends a bad checksum", &brokenKiosk{badCRC: true}, []string{"frames are sound (magic, version, length, CRC-32)"}},
		{"retries what is not retryable", &brokenKiosk{retryAll: true}, []string{"a request refused without Retryable (0x21) is not retried"}},
		{"ignores RetryAfterMS", &brokenKiosk{noPause: true}, []string{"after ERROR 0x30 the retry waits RetryAfterMS"}},
		{"reconnects at once after 0x30 to HELLO", &brokenKiosk{helloNoWait: true}, []string{"a HELLO refused with 0x30 is followed by RetryAfterMS before reconnecting"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.k.boot = uint64(time.Now().UnixNano())
			rep := runDevice(t, wire.RoleKiosk, func(ctx context.Context, addr string) {
				for ctx.Err() == nil {
					c.k.take(ctx, addr)
				}
				c.k.drop()
			})
			got := rep.Failures()
			t.Logf("failures:\n%s", got)
			for _, name := range c.fails {
				if !strings.Contains(got, " "+name+": ") {
					t.Errorf("the report does not fail %q; its failures:\n%s", name, got)
				}
			}
			if c.fails == nil && got != "" {
				t.Errorf("a conforming kiosk fails:\n%s", got)
			}
		})
	}
}
