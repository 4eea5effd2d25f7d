package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// A kiosk takes a ticket. A dropped connection or a daemon restart between
// the request and the answer is retried under the same request id: the
// kiosk gets the ticket it was given, never a second one. (Not run: it
// needs a daemon, e.g. `make run`.)
func Example_kiosk() {
	ctx := context.Background()
	c, err := client.Dial(ctx, "127.0.0.1:7400", client.Opts{
		DeviceID: "kiosk-1", Secret: []byte("demo-only-kiosk-1-secret"), Role: wire.RoleKiosk,
	})
	if err != nil {
		log.Fatal(err) // errors.Is(err, client.ErrUnreachable), wire.ErrAuthFailed...
	}
	defer c.Close()
	t, err := c.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	switch {
	case errors.Is(err, wire.ErrServiceFull):
		fmt.Println("sorry, no more tickets today")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("%s, %d ahead, about %d min\n", t.Number, t.PeopleAhead, t.WaitSeconds/60)
	}
}

// A console follows the site live and acts on a counter. The subscription
// resumes by itself after a reconnection; a SNAPSHOT comes first (and again
// when the daemon cannot replay a long gap).
func Example_console() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, "127.0.0.1:7400", client.Opts{
		DeviceID: "console-1", Secret: []byte("demo-only-console-1-secret"), Role: wire.RoleConsole,
		OnState: func(s client.State, err error) { log.Printf("connection %s (%v)", s, err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, client.Filter{Snapshot: true})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if t, err := c.CallNext(ctx, 5); err == nil { // a console names the counter
			log.Printf("called %s to counter %d", t.Number, t.Counter)
		}
	}()
	for u := range sub.Updates() {
		switch {
		case u.Snapshot != nil:
			fmt.Println("state at version", u.Snapshot.Version)
		case u.Event != nil:
			fmt.Println("v", u.Event.Version, u.Event.Kind, u.Event.Number)
		}
	}
}
