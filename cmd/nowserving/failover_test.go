package main

import (
	"net/url"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// TestReleaseDevices: two daemons share a MariaDB database; a kiosk knows
// both. Daemon A's database goes away (its proxy closes every connection
// and refuses new ones): the kiosk is answered 0x41 until A, its store
// down for store.release_after (3 s), closes the session, and then takes
// its next ticket from B — within 5 s of the loss, the number following
// the last A gave (issue 21: devices are not held captive).
func TestReleaseDevices(t *testing.T) {
	proxy, dsnA := proxiedMySQL(t, false)
	cfg, err := mysql.ParseDSN(dsnA)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = proxy.target
	a := startServe(t, "mysql", dsnA)
	b := startServe(t, "mysql", cfg.FormatDSN())
	k := kiosk(t, a.protocol+","+b.protocol)
	if tk, se := take(t, k); se != nil || k.Addr() != a.protocol {
		t.Fatalf("first ticket: %v %v on %s, want it from A", tk, se, k.Addr())
	}

	proxy.close() // A's database is gone
	took, codes := nextTicket(t, k, "A002", 10*time.Second, 100*time.Millisecond)
	t.Logf("A's database gone: ticket from %s after %s; errors before it: %v", k.Addr(), took.Round(time.Millisecond), codes)
	if k.Addr() != b.protocol {
		t.Errorf("kiosk on %s, want B %s", k.Addr(), b.protocol)
	}
	if took > 5*time.Second {
		t.Errorf("ticket from B %s after the loss, want within 5 s", took)
	}
}

// TestHungFirstHost: a daemon whose DSN lists two hosts, the first a proxy
// to the test database and the second the database itself, as a primary
// and its promoted standby. The proxy freezes (as a SIGSTOPped primary):
// the request in flight fails with 0x41 at the store deadline (2 s here),
// the connections to the frozen host are dropped, and the next request
// reaches the second host past the default connect time-out (a third of
// store.timeout) on the first, with nothing set in the DSN: tickets flow
// again within 5 s of the freeze, and the numbers go on (issue 21).
func TestHungFirstHost(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		proxy, dsn := proxiedPostgres(t)
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		u.Host = proxy.addr + "," + proxy.target
		q := u.Query()
		q.Set("target_session_attrs", "read-write")
		u.RawQuery = q.Encode()
		hungFirstHost(t, proxy, "postgres", u.String())
	})
	t.Run("mysql", func(t *testing.T) {
		proxy, dsn := proxiedMySQL(t, false)
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Timeout = 0 // the default connect time-out
		cfg.Addr = proxy.addr + "," + proxy.target
		hungFirstHost(t, proxy, "mysql", cfg.FormatDSN())
	})
}

func hungFirstHost(t *testing.T, proxy *dbProxy, driver, dsn string) {
	d := startServe(t, driver, dsn)
	k := kiosk(t, d.protocol)
	if tk, se := take(t, k); se != nil || tk.Number != "A001" {
		t.Fatalf("before the freeze: %v %v, want A001", tk, se)
	}
	proxy.freeze()
	took, codes := nextTicket(t, k, "A002", 15*time.Second, 0)
	t.Logf("first host frozen: next ticket after %s; errors before it: %v", took.Round(time.Millisecond), codes)
	if took > 5*time.Second {
		t.Errorf("ticket %s after the freeze, want within 5 s", took)
	}
}

// nextTicket takes tickets at k, pausing between refusals, until one is
// given (it must be number want) or limit passes; it returns how long that
// took and the refusals' codes, which must all be 0x41 (store unavailable).
func nextTicket(t *testing.T, k *client.Client, want string, limit, pause time.Duration) (time.Duration, map[uint16]int) {
	t.Helper()
	start := time.Now()
	codes := map[uint16]int{}
	if !poll.Within(limit, pause, func() bool {
		tk, se := take(t, k)
		if se != nil {
			codes[se.Code]++
			return false
		}
		if tk.Number != want {
			t.Errorf("ticket %s, want %s", tk.Number, want)
		}
		return true
	}) {
		t.Fatalf("no ticket %s after the failure (errors %v)", limit, codes)
	}
	for code := range codes {
		if code != wire.ErrStoreUnavailable.Code {
			t.Errorf("kiosk saw ERROR 0x%02x, want only 0x41", code)
		}
	}
	return time.Since(start), codes
}
