package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/nowserving/nowserving/protocol/wire"
)

// Conn is what the console needs of a connection to the daemon: send one
// request and get its answer. *client.Client implements it (client.Do);
// tests record the requests.
type Conn interface {
	Do(ctx context.Context, m wire.Message) (wire.Message, error)
}

// onceConn is a Conn that can send a request without ever resending it
// (*client.Client's DoOnce). A reprint goes through it when the Conn has
// it, since a resent REPRINT prints again.
type onceConn interface {
	DoOnce(ctx context.Context, m wire.Message) (wire.Message, error)
}

// actionTimeout bounds one action, retries included.
const actionTimeout = 15 * time.Second

// ResultMsg is the daemon's answer to an action, for the status line.
type ResultMsg struct {
	// Site is the index of the site the action was for.
	Site int
	// What names the action, e.g. "call next at counter 1".
	What string
	// Answer is the daemon's answer; nil with Err.
	Answer wire.Message
	// Err is the refusal or failure.
	Err error
}

// do returns the command that sends m on site i's connection.
func do(i int, c Conn, what string, m wire.Message) tea.Cmd {
	return func() tea.Msg {
		if c == nil {
			return ResultMsg{Site: i, What: what, Err: errors.New("not connected")}
		}
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		ans, err := c.Do(ctx, m)
		return ResultMsg{Site: i, What: what, Answer: ans, Err: err}
	}
}

// doOnce is do for a request that must not be resent (REPRINT): through
// DoOnce when c has it.
func doOnce(i int, c Conn, what string, m wire.Message) tea.Cmd {
	oc, ok := c.(onceConn)
	if !ok {
		return do(i, c, what, m)
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		ans, err := oc.DoOnce(ctx, m)
		return ResultMsg{Site: i, What: what, Answer: ans, Err: err}
	}
}

// refresh returns the command that asks for a snapshot of site i.
func refresh(i int, c Conn, code string) tea.Cmd {
	return func() tea.Msg {
		if c == nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		ans, err := c.Do(ctx, &wire.Status{Site: code})
		if err != nil {
			return nil // the subscription goes on; the next reconnect asks again
		}
		if s, ok := ans.(*wire.Snapshot); ok {
			return SnapshotMsg{Site: i, Snapshot: s}
		}
		return nil
	}
}

// describe turns an answer or error into the status line; clock times are
// in loc, the site's zone.
func describe(r ResultMsg, loc *time.Location, t func(string) string) (string, bool) {
	tf := func(format string, args ...any) string { return fmt.Sprintf(t(format), args...) }
	if r.Err != nil {
		var se *wire.StatusError
		if errors.As(r.Err, &se) {
			if se.Code == wire.ErrPrinterFailed.Code {
				// The daemon's message may start with the table's own.
				return tf("%s: printer failed: %s", r.What, strings.TrimPrefix(se.Msg, wire.ErrPrinterFailed.Msg+": ")), false
			}
			// A reason in the protocol's own words (refusal:MSG) is said
			// in the console's; one the daemon worded is its own.
			reason := se.Msg
			if w := t("refusal:" + se.Msg); !strings.HasPrefix(w, "refusal:") {
				reason = w
			}
			if hint, ok := checkInHints[se.Code]; ok {
				return tf("%s: refused: %s (%s)", r.What, reason, hint), false
			}
			return tf("%s: refused: %s", r.What, reason), false
		}
		return tf("%s: failed: %v", r.What, r.Err), false
	}
	switch a := r.Answer.(type) {
	case *wire.Ticket:
		s := fmt.Sprintf("%s: %s %s", r.What, a.Number, t(statusWord(a.Status)))
		if a.Counter != 0 && (a.Status == wire.StatusCalled || a.Status == wire.StatusServing) {
			s += tf(" at counter %d", a.Counter)
		}
		if a.Status == wire.StatusWaiting {
			s += tf(" in %s, %d ahead", a.Service, a.PeopleAhead)
		}
		if a.AppointmentMS != 0 {
			s += ", appointment " + time.UnixMilli(a.AppointmentMS).In(loc).Format("15:04")
			if a.Class != wire.ClassAppointment {
				s += " (late: a normal ticket)"
			}
		}
		return s, true
	case *wire.OK:
		return r.What + t(": ok"), true
	}
	return r.What + t(": done"), true
}

// checkInHints say, for each refusal of a check-in, what the operator can
// do; the daemon's message says the details (when the window opens, the
// booking's state).
var checkInHints = map[uint16]string{
	wire.ErrUnknownBooking.Code:   "no booking of this site has that code: check it against the patient's letter or SMS",
	wire.ErrCheckInEarly.Code:     "the patient comes back when the window opens",
	wire.ErrCheckInLate.Code:      "the window is over: issue a normal ticket if the patient is to be seen",
	wire.ErrBookingNotActive.Code: "cancelled, expired, missed, not confirmed or checked in already",
}

func statusWord(s wire.TicketStatus) string {
	switch s {
	case wire.StatusWaiting:
		return "waiting"
	case wire.StatusCalled:
		return "called"
	case wire.StatusServing:
		return "serving"
	case wire.StatusDone:
		return "done"
	case wire.StatusNoShow:
		return "no-show"
	case wire.StatusCancelled:
		return "cancelled"
	case wire.StatusExpired:
		return "expired"
	}
	return s.String()
}
