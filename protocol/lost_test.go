package protocol_test

import (
	"testing"

	"github.com/nowserving/nowserving/protocol/wire"
)

// TestHelloAheadIsLostWork: a display whose HELLO says it has seen events
// beyond the store's last version (the store lost them: a standby promoted
// before it had them, a restore from a backup) is evidence of lost work
// (issue 21): the daemon counts the loss and gives the next ticket a
// version after the display's, so no version the display holds is given
// to another event.
func TestHelloAheadIsLostWork(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	first := kiosk.ticket(&wire.TakeTicket{Service: "A", IdemKey: "lost-1"})
	seen := first.Version + 50
	display := en.dial()
	display.lastVersion = seen
	if _, err := display.auth("display-1", wire.RoleDisplay, 1, secretOf("display-1")); err != nil {
		t.Fatalf("display with LastVersion %d: %v", seen, err)
	}
	next := kiosk.ticket(&wire.TakeTicket{Service: "A", IdemKey: "lost-2"})
	if next.Version <= seen {
		t.Errorf("ticket %s got version %d after a display reported %d: a version it holds given to another event", next.Number, next.Version, seen)
	}
	if next.Number == first.Number {
		t.Errorf("ticket %s given twice", next.Number)
	}
	if s := en.Engine.Losses(); s.Found < 1 {
		t.Errorf("Losses() = %+v, want the display's evidence found", s)
	}
}
