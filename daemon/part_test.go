package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestSweeperSweepsAtStart: the sweeper's first sweep runs when it starts,
// not one period later, so a daemon started on a fresh database has its
// slots to book at once (an hour's period here: only the first sweep can
// have made them). The test waits for the sweep's log line, so that it
// ends with no sweep in flight.
func TestSweeperSweepsAtStart(t *testing.T) {
	site := storetest.BookingSite()
	clock := storetest.FixedClock(time.Date(2026, 11, 30, 9, 0, 0, 0, site.Location))
	eng := storetest.StartEngine(t, queue.Opts{Store: storetest.SQLite(t), Sites: []queue.Site{site}, Clock: clock.Now})
	var log logtest.Buffer
	parttest.Until(t, context.Background(), NewSweeper(eng, time.Hour, log.Logger()).Run)
	poll.Until(t, "the first sweep", func() bool { return strings.Contains(log.String(), "swept tickets, bookings and slots") })
	l, err := eng.Slots(t.Context(), site.ID, "", "2026-12-01")
	if err != nil || len(l) == 0 {
		t.Errorf("slots after the first sweep: %d, %v", len(l), err)
	}
}
