package sim

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// KeypadOpts is one key press of a counter keypad.
type KeypadOpts struct {
	Counter string // the counter acted for; required except to cancel
	Action  string // next, call, recall, noshow, start, done, transfer, pause, resume, reenter, cancel
	Arg     string // the ticket number (the pause reason); "": the ticket the counter handles
	IdemKey string // the same key twice makes one change

	ToService, ToCounter string // where transfer sends the ticket
}

// keypadArgs says which actions need a ticket number and which take none.
var keypadArgs = map[string]struct{ need, none bool }{
	"call": {need: true}, "reenter": {need: true}, "cancel": {need: true},
	"next": {none: true}, "resume": {none: true},
}

// ticketAction is a keypad action answered with a ticket.
type ticketAction func(c *client.Client, ctx context.Context, counter uint32, number string, opts ...client.ReqOpt) (*wire.Ticket, error)

// ticketActions are the keypad actions answered with a ticket, but for
// transfer; pause and resume are answered with OK.
var ticketActions = map[string]ticketAction{
	"next": func(c *client.Client, ctx context.Context, counter uint32, _ string, opts ...client.ReqOpt) (*wire.Ticket, error) {
		return c.CallNext(ctx, counter, opts...)
	},
	"call":     (*client.Client).CallNumber,
	"recall":   (*client.Client).Recall,
	"noshow":   (*client.Client).NoShow,
	"no-show":  (*client.Client).NoShow,
	"start":    (*client.Client).Start,
	"done":     (*client.Client).Complete,
	"complete": (*client.Client).Complete,
	"reenter":  (*client.Client).Reenter,
	"cancel":   (*client.Client).Cancel,
}

// Keypad presses a key for a counter, as its keypad (or a console) would,
// and writes the answer, with the keypad's LCD lines, to out.
func (e *Env) Keypad(ctx context.Context, k KeypadOpts, out io.Writer) error {
	if k.Counter == "" && k.Action != "cancel" {
		return errors.New("sim: keypad: --counter is required")
	}
	num, err := CounterNum(k.Counter)
	if err != nil {
		return err
	}
	switch a := keypadArgs[k.Action]; {
	case a.need && k.Arg == "":
		return fmt.Errorf("sim: keypad %s: give the ticket number, e.g. %s A001", k.Action, k.Action)
	case a.none && k.Arg != "":
		return fmt.Errorf("sim: keypad %s takes no argument", k.Action)
	}
	roles := []wire.Role{wire.RoleKeypad, wire.RoleConsole}
	if k.Action == "cancel" {
		// A keypad may not cancel (PROTOCOL.md §4): a supervisor does.
		roles = []wire.Role{wire.RoleConsole, wire.RoleKeypad}
	}
	d, err := e.Device(k.Counter, roles...)
	if err != nil {
		return err
	}
	forCounter := num
	if d.Role == wire.RoleKeypad {
		forCounter = 0 // the keypad's own counter
	}
	c, err := e.Dial(ctx, d, e.ClientOpts(d))
	if err != nil {
		return err
	}
	defer c.Close()
	t, ok, err := press(ctx, c, forCounter, k)
	if err != nil {
		return e.Explain(err, d) // leaves press's own errors as they are
	}
	var lcd []string
	if t != nil {
		fmt.Fprintln(out, TicketLine(t))
		lcd = t.LCD
	} else {
		state := "paused"
		if k.Action == "resume" {
			state = "open"
		}
		fmt.Fprintf(out, "counter %s %s\n", k.Counter, state)
		lcd = ok.LCD
	}
	for _, l := range lcd {
		fmt.Fprintf(out, "lcd: %s\n", l)
	}
	return nil
}

// press sends the keypad's request for counter (0: its own).
func press(ctx context.Context, c *client.Client, counter uint32, k KeypadOpts) (*wire.Ticket, *wire.OK, error) {
	var opts []client.ReqOpt
	if k.IdemKey != "" {
		opts = append(opts, client.WithIdemKey(k.IdemKey))
	}
	if act, ok := ticketActions[k.Action]; ok {
		t, err := act(c, ctx, counter, k.Arg, opts...)
		return t, nil, err
	}
	switch k.Action {
	case "transfer":
		to := client.Target{Service: k.ToService}
		var err error
		if to.Counter, err = CounterNum(k.ToCounter); err != nil {
			return nil, nil, err
		}
		if to.Service == "" && to.Counter == 0 {
			return nil, nil, errors.New("sim: keypad transfer: give --to-service or --to-counter")
		}
		t, err := c.Transfer(ctx, counter, k.Arg, to, opts...)
		return t, nil, err
	case "pause":
		ok, err := c.Pause(ctx, counter, k.Arg, opts...)
		return nil, ok, err
	case "resume":
		ok, err := c.Resume(ctx, counter, opts...)
		return nil, ok, err
	}
	return nil, nil, fmt.Errorf("sim: keypad: unknown action %q (see nowserving sim keypad --help)", k.Action)
}
