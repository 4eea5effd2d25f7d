package mysql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// galeraSuspect is the failover cluster's evs.suspect_timeout: how long
// the surviving nodes take to drop a node that died, during which the
// cluster commits nothing (Galera's default is 5 s). Every device must
// print again within galeraFlow of the kill beyond it.
const (
	galeraSuspect = 3 * time.Second
	galeraFlow    = 5 * time.Second
)

// galeraDaemonDSN is the store.dsn of daemon i on a cluster whose nodes
// are dsns: every node, node i first, as README's Galera recipe gives them.
func galeraDaemonDSN(dsns []string, i int) string {
	addr := func(d string) (from, to int) {
		from = strings.Index(d, "tcp(") + len("tcp(")
		return from, from + strings.Index(d[from:], ")")
	}
	from, to := addr(dsns[i])
	hosts := []string{dsns[i][from:to]}
	for j, d := range dsns {
		if j != i {
			f, t := addr(d)
			hosts = append(hosts, d[f:t])
		}
	}
	return dsns[i][:from] + strings.Join(hosts, ",") + dsns[i][to:]
}

// TestGaleraFailover: a three-node Galera cluster, daemon 1 on node 1 and
// daemon 2 on node 2, 30 kiosks and 5 keypads spread over both; node 2 is
// killed with -9 under load. Nothing acknowledged may be lost or given
// twice, and every kiosk, those of daemon 2 too, must print again within
// 5 s of the kill beyond the cluster's own detection of the dead node.
func TestGaleraFailover(t *testing.T) {
	g := storetest.StartGaleraOpts(t, storetest.GaleraOpts{Nodes: 3, SuspectTimeout: galeraSuspect})
	dsns := g.NodeDSNs(t)
	const killed = 1 // node 2, daemon 2's
	r := storetest.RunFailover(t, storetest.Failover{
		Daemons:  2,
		DB:       sharedOn(galeraDaemonDSN(dsns, 0), galeraDaemonDSN(dsns, 1)),
		Fail:     func(testing.TB) { g.Kill9(killed) },
		After:    galeraSuspect + galeraFlow + 2*time.Second,
		Survivor: func(t *testing.T) *sqlstore.Store { return openNode(t, dsns[0]) },
	})
	r.Log(t)
	// The other survivor holds the same.
	n3, err := openNode(t, dsns[2]).Check(t.Context(), sqlstore.CheckOpts{})
	if err != nil {
		t.Fatalf("check node 3: %v", err)
	}
	if n3.Tickets != r.Check.Tickets || n3.Events != r.Check.Events || !n3.OK() {
		t.Errorf("node 3 holds %d tickets and %d events (%d violations), node 1 %d and %d",
			n3.Tickets, n3.Events, len(n3.Violations), r.Check.Tickets, r.Check.Events)
	}
	r.NoneTwice(t)
	r.NoneLost(t)
	r.Flowing(t, galeraSuspect+galeraFlow)
}

// openNode opens the store of a node as `check` does (no migrations),
// closed when the test ends.
func openNode(t *testing.T, dsn string) *sqlstore.Store {
	t.Helper()
	s, err := mysql.Open(t.Context(), dsn, mysql.Opts{NoMigrate: true})
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Store
}
