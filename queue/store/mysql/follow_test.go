package mysql_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// sharedOn is a database two daemons share, daemon i on dsns[i mod n]
// (the nodes of a cluster, or one server); they poll, as MySQL has no
// LISTEN.
func sharedOn(dsns ...string) storetest.Shared {
	return storetest.Shared{Open: func(tb testing.TB, i int) queue.Store {
		s, err := mysql.Open(tb.Context(), dsns[i%len(dsns)], mysql.Opts{MaxConns: 20})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	}}
}

func shared(tb testing.TB) storetest.Shared { return sharedOn(storetest.MySQLDSN(tb)) }

// TestFollow: two daemons on one MariaDB database, following each other
// by the adaptive poll (see storetest.RunFollow).
func TestFollow(t *testing.T) { storetest.RunFollow(t, shared) }

// BenchmarkFollowDelay: a call on one daemon to the event on a quiet other
// daemon's subscriber, through the poll.
func BenchmarkFollowDelay(b *testing.B) { storetest.BenchFollowDelay(b, shared) }
