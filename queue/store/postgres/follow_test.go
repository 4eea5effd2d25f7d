package postgres_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// shared is a fresh schema two daemons share, woken by LISTEN/NOTIFY.
func shared(tb testing.TB) storetest.Shared { return sharedOn(storetest.PostgresDSN(tb)) }

// sharedOn is the database at dsn, each daemon with a pool of 20 and its
// LISTEN/NOTIFY notifier, as the daemon opens them.
func sharedOn(dsn string) storetest.Shared {
	return storetest.Shared{
		Open: func(tb testing.TB, _ int) queue.Store {
			s, err := postgres.Open(tb.Context(), dsn, postgres.Opts{MaxConns: 20})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { s.Close() })
			return s
		},
		Notifier: func(tb testing.TB, _ int) queue.Notifier {
			n := postgres.NewNotifier(dsn)
			tb.Cleanup(func() { n.Close() })
			return n
		},
	}
}

// TestFollow: two daemons on one PostgreSQL database, each woken by the
// other's NOTIFY (see storetest.RunFollow).
func TestFollow(t *testing.T) { storetest.RunFollow(t, shared) }

// BenchmarkFollowDelay: a call on one daemon to the event on a quiet other
// daemon's subscriber, through NOTIFY.
func BenchmarkFollowDelay(b *testing.B) { storetest.BenchFollowDelay(b, shared) }
