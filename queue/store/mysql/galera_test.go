package mysql_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestGalera runs engines on both nodes of a two-node Galera cluster, one
// database: Open's session settings, a read on one node right after a
// write on the other, the concurrency suite with one engine per node, and
// both engines racing at one counter.
func TestGalera(t *testing.T) {
	g := storetest.StartGalera(t)
	t.Run("session", func(t *testing.T) {
		d1, _ := g.DSNs(t)
		for _, c := range []struct {
			name string
			s    *mysql.Store
			want int
		}{
			{"galera node", openOn(d1)(t).(*mysql.Store), 1},
			{"galera node, DSN sets 0", openOn(d1 + "?wsrep_sync_wait=0")(t).(*mysql.Store), 0},
			{"server without wsrep", storetest.MySQL(t), 0},
		} {
			var got int
			if err := c.s.DB().QueryRowContext(t.Context(), "SELECT @@wsrep_sync_wait").Scan(&got); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got != c.want {
				t.Errorf("%s: wsrep_sync_wait %d, want %d", c.name, got, c.want)
			}
		}
	})
	t.Run("read after write", func(t *testing.T) {
		d1, d2 := g.DSNs(t)
		storetest.RunReadAfterWrite(t, []func(*testing.T) queue.Store{openOn(d1), openOn(d2)}, 300)
	})
	t.Run("concurrency", func(t *testing.T) {
		d1, d2 := g.DSNs(t)
		storetest.RunConcurrencyAcross(t, []func(*testing.T) queue.Store{openOn(d1), openOn(d2)}, 20, 1000, 10)
	})
	t.Run("counter race", func(t *testing.T) {
		d1, d2 := g.DSNs(t)
		storetest.RunCounterRace(t, []func(*testing.T) queue.Store{openOn(d1), openOn(d2)}, 100)
	})
	t.Run("follow", func(t *testing.T) { storetest.RunFollow(t, galeraShared(g)) })
}

// galeraShared is a fresh database of the cluster, daemon i on node i+1.
func galeraShared(g *storetest.Galera) func(tb testing.TB) storetest.Shared {
	return func(tb testing.TB) storetest.Shared { return sharedOn(g.DSNs(tb)) }
}

// BenchmarkGaleraFollowDelay: a call on the daemon of node 1 to the event
// on a quiet subscriber of the daemon of node 2.
func BenchmarkGaleraFollowDelay(b *testing.B) {
	storetest.BenchFollowDelay(b, galeraShared(storetest.StartGalera(b)))
}

// openOn opens a store on dsn, closed when the test ends: several of them
// on one DSN are daemons sharing a database.
func openOn(dsn string) func(t *testing.T) queue.Store {
	return func(t *testing.T) queue.Store {
		s, err := mysql.Open(t.Context(), dsn, mysql.Opts{MaxConns: 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}
