package sqlstore

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/nowserving/nowserving/queue"
)

func TestRebind(t *testing.T) {
	pg, my := &Dialect{Dollar: true}, &Dialect{}
	cases := []struct{ in, pg string }{
		{"SELECT 1", "SELECT 1"},
		{"a = ? AND b = ?", "a = $1 AND b = $2"},
		{"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
	}
	for _, c := range cases {
		if got := pg.Rebind(c.in); got != c.pg {
			t.Errorf("postgres Rebind(%q) = %q, want %q", c.in, got, c.pg)
		}
		if got := my.Rebind(c.in); got != c.in {
			t.Errorf("mysql Rebind(%q) = %q, want it unchanged", c.in, got)
		}
	}
}

func TestUpsertStatements(t *testing.T) {
	pg, my := &Dialect{Dollar: true}, &Dialect{Upsert: OnDuplicateKey}
	cases := []struct{ name, got, want string }{
		{"pg upsert", pg.upsert("t", []string{"a", "b"}, []string{"c"}),
			"INSERT INTO t (a, b, c) VALUES ($1, $2, $3) ON CONFLICT (a, b) DO UPDATE SET c = excluded.c"},
		{"mysql upsert", my.upsert("t", []string{"a"}, []string{"b", "c"}),
			"INSERT INTO t (a, b, c) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE b = VALUES(b), c = VALUES(c)"},
		{"pg increment", pg.increment("day_counters", []string{"site", "service", "day"}, "last"),
			"INSERT INTO day_counters (site, service, day, last) VALUES ($1, $2, $3, $4) ON CONFLICT (site, service, day) DO UPDATE SET last = day_counters.last + $5 RETURNING last"},
		{"mysql increment", my.increment("site_versions", []string{"site"}, "version"),
			"INSERT INTO site_versions (site, version) VALUES (?, LAST_INSERT_ID(?)) ON DUPLICATE KEY UPDATE version = LAST_INSERT_ID(version + ?)"},
		{"pg insert if missing", pg.insertIfMissing("c", []string{"a", "b"}),
			"INSERT INTO c (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING"},
		{"mysql insert if missing", my.insertIfMissing("c", []string{"a", "b"}),
			"INSERT INTO c (a, b) VALUES (?, ?)"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}

func TestStatements(t *testing.T) {
	src := "-- a comment\nCREATE TABLE a (\n  x INT -- inline\n);\n\n-- another\nCREATE INDEX i ON a (x);\nSELECT 1"
	want := []string{"CREATE TABLE a (\n  x INT -- inline\n)", "CREATE INDEX i ON a (x)", "SELECT 1"}
	if got := Statements(src); !reflect.DeepEqual(got, want) {
		t.Errorf("Statements = %q, want %q", got, want)
	}
	if got := Statements("-- only a comment\n\n"); len(got) != 0 {
		t.Errorf("Statements(comment) = %q", got)
	}
}

func TestMigrations(t *testing.T) {
	good := fstest.MapFS{
		"0002_more.sql": {Data: []byte("B;")},
		"0001_init.sql": {Data: []byte("A;")},
		"README.md":     {Data: []byte("not a migration")},
	}
	ms, err := Migrations(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Version != 1 || ms[1].Version != 2 || ms[1].SQL != "B;" {
		t.Errorf("Migrations = %+v", ms)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no number": {"init.sql": {Data: []byte("A;")}},
		"zero":      {"0000_x.sql": {Data: []byte("A;")}},
		"duplicate": {"0001_a.sql": {Data: []byte("A;")}, "1_b.sql": {Data: []byte("B;")}},
	} {
		if _, err := Migrations(fsys); err == nil {
			t.Errorf("%s: Migrations accepted %v", name, fsys)
		}
	}
}

// TestWithPortable: a dialect's own file replaces the portable one of the
// same name, the other portable files are added, and versions come out in
// order with the names they were applied under.
func TestWithPortable(t *testing.T) {
	own := fstest.MapFS{
		"0001_init.sql":          {Data: []byte("own init;")},
		"0005_event_context.sql": {Data: []byte("own context;")},
	}
	ms, err := Migrations(WithPortable(own))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Name)
	}
	want := []string{"0001_init.sql", "0002_event_call_count.sql", "0003_target_index.sql", "0004_health.sql", "0005_event_context.sql", "0006_appointments.sql", "0008_retention.sql", "0009_lost_work.sql", "0010_accounts.sql"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("names = %q, want %q", got, want)
	}
	if ms[0].SQL != "own init;" || ms[4].SQL != "own context;" {
		t.Errorf("own files not kept: %q, %q", ms[0].SQL, ms[4].SQL)
	}
	if !strings.Contains(ms[1].SQL, "call_count") {
		t.Errorf("portable 0002 = %q", ms[1].SQL)
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"r1": true, "_x": true, "Req_12": true, "": false, "1r": false, "a-b": false, "a b": false,
		"a;DROP": false, "é": false, string(make([]byte, 64)): false,
	} {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzStatements(f *testing.F) {
	f.Add("CREATE TABLE a (x INT);\nCREATE INDEX i ON a (x);")
	f.Add("-- c\n;\n;;\n")
	f.Fuzz(func(t *testing.T, src string) {
		for _, s := range Statements(src) {
			if s == "" {
				t.Errorf("empty statement from %q", src)
			}
		}
	})
}

// TestBuildersEveryVariant: Head and Find build a statement for every
// combination of the optional fields of their parameters; each binds as
// many arguments as it has placeholders, and the row lock adds only its
// clause. (The catalog lists a few combinations; this covers them all.)
func TestBuildersEveryVariant(t *testing.T) {
	for _, d := range []*Dialect{
		{Name: "dollar", Dollar: true, RowLocks: true, SkipLocked: true},
		{Name: "question", RowLocks: true},
		{Name: "nolocks"},
	} {
		q := newQueries(d)
		for mask := range 1 << 6 {
			on := func(bit int) bool { return mask&(1<<bit) != 0 }
			hq := queue.HeadQuery{Site: "s", Day: "d"}
			f := queue.Filter{Site: "s"}
			if on(0) {
				hq.Service, f.Service = "A", "A"
			}
			if on(1) {
				hq.Counter, f.Day = "c1", "d"
			}
			if on(2) {
				hq.Classes, f.BeforeDay = []queue.Class{"vip", "emergency"}, "d"
			}
			if on(3) {
				hq.NotClasses, f.Statuses = []queue.Class{"vip"}, []queue.Status{"CALLED", "SERVING", "WAITING"}
			}
			if on(4) {
				hq.WaitingBefore, f.CalledBefore = 5, 5
			}
			if on(5) {
				hq.ByWait, f.Limit = true, 10
			}
			plain, locked, find := q.head(hq, false), q.head(hq, true), q.find(f)
			for _, st := range []Stmt{plain, locked, find} {
				if n := countPlaceholders(d, st.SQL); n != len(st.Args) {
					t.Errorf("%s %v: %d placeholders, %d arguments: %s", d.Name, mask, n, len(st.Args), st.SQL)
				}
			}
			want := plain.SQL
			if d.RowLocks {
				want += " FOR UPDATE"
			}
			if d.SkipLocked {
				want += " SKIP LOCKED"
			}
			if locked.SQL != want {
				t.Errorf("%s %v: locking head\n got %s\nwant %s", d.Name, mask, locked.SQL, want)
			}
		}
	}
}

func countPlaceholders(d *Dialect, q string) int {
	if d.Dollar {
		return strings.Count(q, "$")
	}
	return strings.Count(q, "?")
}

func TestExpand(t *testing.T) {
	words := map[string]string{"id": "INTEGER PRIMARY KEY", "none": ""}
	got, err := Expand("CREATE TABLE t (id {{id}}){{none}};\n-- {{id}}\n", words)
	if want := "CREATE TABLE t (id INTEGER PRIMARY KEY);\n-- INTEGER PRIMARY KEY\n"; err != nil || got != want {
		t.Errorf("Expand = %q, %v; want %q", got, err, want)
	}
	for _, src := range []string{"x {{other}} y", "x {{id y", "{{}}"} {
		if got, err := Expand(src, words); err == nil {
			t.Errorf("Expand(%q) = %q, want an error", src, got)
		}
	}
}

// TestCheckFormats: a check printed by format has a verb for each of its
// columns and prints nothing amiss.
func TestCheckFormats(t *testing.T) {
	for _, c := range slices.Concat(checks, eventChecks, bookingChecks) {
		if c.format == "" {
			continue
		}
		v := make([]string, c.cols)
		for i := range v {
			v[i] = fmt.Sprint("v", i)
		}
		got := c.text(v)
		if strings.Contains(got, "%!") {
			t.Errorf("%s: %d columns print as %q", c.name, c.cols, got)
		}
		for _, x := range v {
			if !strings.Contains(got, x) {
				t.Errorf("%s: %q does not print column %s", c.name, got, x)
			}
		}
	}
}
