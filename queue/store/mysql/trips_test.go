package mysql_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestRoundTrips: a kiosk's ticket, a batch of them and a booking cost no
// more round trips to the server than counted here.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	storetest.RunTrips(t, "mysql", storetest.Trips{Ticket: 9, Batch: 8, BatchTicket: 1, Book: 12})
}
