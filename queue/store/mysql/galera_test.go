package mysql_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestGalera runs engines on both nodes of a two-node Galera cluster, one
// database: Open's session settings, a read on one node right after a
// write on the other, the concurrency suite with one engine per node, and
// both engines racing at one counter. Not parallel: beside the package's
// other parallel tests (the concurrency suites, the store suite) on 2 CPUs,
// a node of its cluster once failed to apply a write set of the concurrency
// case ("Duplicate entry 'load-1' for key 'PRIMARY'", then "Inconsistency
// detected" and the node left the primary component), which no run alone
// has shown.
func TestGalera(t *testing.T) {
	g := storetest.StartGalera(t)
	// Each case has a database of its own on the cluster: they run side
	// by side, and together end before the timed follow and the desync of
	// node 1 (several nodes) begin.
	t.Run("side by side", func(t *testing.T) {
		t.Run("session", func(t *testing.T) {
			t.Parallel()
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
			t.Parallel()
			d1, d2 := g.DSNs(t)
			storetest.RunReadAfterWrite(t, []func(*testing.T) queue.Store{openOn(d1), openOn(d2)}, 300)
		})
		t.Run("concurrency", func(t *testing.T) {
			t.Parallel()
			d1, d2 := g.DSNs(t)
			storetest.RunConcurrencyAcross(t, []func(*testing.T) queue.Store{openOn(d1), openOn(d2)}, 20, 1000, 10)
		})
		t.Run("counter race", func(t *testing.T) {
			t.Parallel()
			d1, d2 := g.DSNs(t)
			storetest.RunCounterRace(t, []func(*testing.T) queue.Store{openOn(d1), openOn(d2)}, 100)
		})
	})
	t.Run("follow", func(t *testing.T) { storetest.RunFollow(t, galeraShared(g)) })
	t.Run("several nodes", func(t *testing.T) { severalNodes(t, g) })
}

// severalNodes: a store given both nodes connects to the first; once that
// node is no longer Synced (wsrep_desync, as during a state transfer it
// donates), a new connection skips it for the second.
func severalNodes(t *testing.T, g *storetest.Galera) {
	d1, _ := g.DSNs(t)
	cfg, err := gomysql.ParseDSN(d1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s, err := mysql.Open(ctx, strings.Replace(d1, cfg.Addr, g.Nodes[0]+","+g.Nodes[1], 1), mysql.Opts{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	node := func() string {
		var port string
		if err := s.DB().QueryRowContext(ctx, "SELECT @@port").Scan(&port); err != nil {
			t.Fatal(err)
		}
		return "127.0.0.1:" + port
	}
	if got := node(); got != g.Nodes[0] {
		t.Fatalf("connected to %s, want the first node %s", got, g.Nodes[0])
	}
	n1, err := sql.Open("mysql", d1)
	if err != nil {
		t.Fatal(err)
	}
	defer n1.Close()
	if _, err := n1.ExecContext(ctx, "SET GLOBAL wsrep_desync = ON"); err != nil {
		t.Fatal(err)
	}
	defer n1.ExecContext(context.Background(), "SET GLOBAL wsrep_desync = OFF")
	var name, state string
	if err := n1.QueryRowContext(ctx, "SHOW STATUS LIKE 'wsrep_local_state_comment'").Scan(&name, &state); err != nil || state == "Synced" {
		t.Fatalf("node 1 after wsrep_desync: %s %v", state, err)
	}
	// What the store does after a connection met a lost node: the idle
	// ones go, the next transaction dials.
	s.DB().SetMaxIdleConns(-1)
	s.DB().SetMaxIdleConns(4)
	if err := s.Probe(ctx, "several nodes"); err != nil {
		t.Fatal(err)
	}
	if got := node(); got != g.Nodes[1] {
		t.Errorf("connected to %s with node 1 %s, want the second node %s", got, state, g.Nodes[1])
	}
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
