package sqlite_test

import (
	"strconv"
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestAbortDiskFull: the database file may not grow (max_page_count at its
// size: what a full disk does to SQLite) while 120 kiosks take tickets;
// the batches that hit SQLITE_FULL mid-way are rolled back whole, their
// kiosks told to retry, and every retry after the disk has room again gets
// one ticket.
func TestAbortDiskFull(t *testing.T) {
	t.Parallel()
	s := storetest.SQLite(t)
	ctx := t.Context()
	setMax := func(n string) {
		t.Helper()
		// The writer pool has one connection: the pragma holds for every
		// write transaction of the store.
		if _, err := s.DB().ExecContext(ctx, "PRAGMA max_page_count = "+n); err != nil {
			t.Fatal(err)
		}
	}
	storetest.BurstThrough(t, s, func() {
		setMax(strconv.Itoa(pragma[int](t, s, "page_count")))
	}, func() { setMax("1073741823") })
}
