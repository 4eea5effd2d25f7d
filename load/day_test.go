package load

import (
	"context"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/sim"
	"github.com/nowserving/nowserving/sim/simtest"
)

// TestConsoleOutlivesItsCaller: a console attached at a checkpoint is
// attached on the goroutine of the kiosk that reached it, whose context
// ends with the day's play, before finish waits for the consoles to reach
// the daemon's last version. The console follows the site until the day
// closes its client: an event committed after that context ended still
// reaches it. (Its subscription ended with the context: TestBenchDay's
// second console stayed at version 8105 of 8106, the day's last event on
// its way when play returned.)
func TestConsoleOutlivesItsCaller(t *testing.T) {
	sd := simtest.Start(t)
	e, err := sim.New(sim.Opts{Config: sd.Config, Timeout: 5 * time.Second, Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDay(e, DefaultDayOpts())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAll(d.clients) })
	d.start = time.Now()
	kiosk, cancel := context.WithCancel(t.Context())
	w, err := d.attach(kiosk)
	if err != nil {
		t.Fatal(err)
	}
	cancel() // play returned: the kiosk's goroutine is done
	if _, err := sd.Engine.Issue(t.Context(), queue.IssueRequest{
		Request: queue.Request{Site: "clinic", Device: "test", Key: "after"}, Service: "A"}); err != nil {
		t.Fatal(err)
	}
	last, err := sd.Engine.LastVersion(t.Context(), "clinic")
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the console to read the event or its subscription to end", func() bool {
		return w.version.Load() >= uint64(last) || w.ended()
	})
	if v := w.version.Load(); v < uint64(last) {
		t.Fatalf("the console's subscription ended with its caller's context, at version %d of %d", v, last)
	}
	closeAll(d.clients)
	poll.Until(t, "the console's subscription to end with its client", w.ended)
}
