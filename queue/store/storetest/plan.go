package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// FillForPlans stores a week of two busy sites' tickets, so that a plan
// test's EXPLAIN shows what the planner does with real tables: on empty
// ones MariaDB picks among the indexes almost at random. Today
// (2026-03-02, the day of sqlstore.Dialect.Catalog) has waiting, called
// and transferred tickets in six queues; earlier days are finished.
func FillForPlans(t testing.TB, s queue.Store) {
	t.Helper()
	const perQueue = 60
	services := []string{"A", "B", "C", "D", "E", "F"}
	for _, site := range []string{"s1", "s2"} {
		for d := 6; d >= 0; d-- {
			day := txBase.AddDate(0, 0, -d)
			err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
				for _, sv := range services {
					for seq := 1; seq <= perQueue; seq++ {
						tk := planTicket(site, sv, day, seq, d == 0)
						if err := tx.InsertTicket(ctx, tk); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("fill %s %s: %v", site, day.Format(time.DateOnly), err)
			}
		}
	}
}

// planTicket is ticket seq of a service on a day: on earlier days done (a
// few no-shows), today the first two thirds done, then a called one, then
// waiting, one in ten VIP and one in twenty transferred to a counter.
func planTicket(site, service string, day time.Time, seq int, today bool) *queue.Ticket {
	at := day.Add(time.Duration(seq) * 30 * time.Second)
	tk := &queue.Ticket{
		Site: site, Service: service, Queue: service, Day: day.Format(time.DateOnly), Seq: seq,
		Number: fmt.Sprintf("%s%03d", service, seq), Class: queue.ClassNormal, Rank: 20, SortKey: int64(seq) * 1024,
		IssuedAt: at, WaitingSince: at, Device: "kiosk-1", IdemKey: fmt.Sprintf("%s-%s-%s-%d", site, service, day.Format(time.DateOnly), seq),
	}
	if seq%10 == 0 {
		tk.Class, tk.Rank = queue.ClassVIP, 10
	}
	done := !today || seq <= 40
	switch {
	case done:
		tk.Status, tk.Counter, tk.CallCount = queue.StatusDone, "c1", 1
		tk.CalledAt, tk.FirstCalledAt, tk.ServingAt = at.Add(5*time.Minute), at.Add(5*time.Minute), at.Add(6*time.Minute)
		tk.FinishedAt = at.Add(10 * time.Minute)
		if seq%17 == 0 {
			tk.Status, tk.ServingAt, tk.NoShowCount = queue.StatusNoShow, time.Time{}, 1
		}
	case seq == 41:
		tk.Status, tk.Counter, tk.CallCount = queue.StatusCalled, "c2", 1
		tk.CalledAt, tk.FirstCalledAt = at.Add(5*time.Minute), at.Add(5*time.Minute)
	default:
		tk.Status = queue.StatusWaiting
		if seq%20 == 5 {
			tk.TargetCounter = "c1"
		}
	}
	return tk
}

// Plan is what a plan test reads off EXPLAIN for one statement.
type Plan struct {
	Indexes []string // the indexes it reads, "" for a full table scan
	Sorts   bool     // it sorts rows (no index gives the order)
}

// PlanReader reads one row of EXPLAIN's output, by column name, into p.
type PlanReader func(row map[string]string, p *Plan)

// planWants are the statements of the catalog whose plan the Engine
// depends on, by catalog name: the indexes each may read (any one of
// them; an index made for it where there is one) and whether it must read
// its rows in index order. Call-next locks what it scans, so its Heads
// must walk the index made for them and stop at the first row.
var planWants = []struct {
	name    string
	indexes []string
	inOrder bool
}{
	{"Head{Service}", []string{"tickets_head"}, true},
	{"Head{Service, Lock}", []string{"tickets_head"}, true},
	{"Head{Service, Classes[2], Lock}", []string{"tickets_head"}, true},
	{"Head{Service, NotClasses[2], Lock}", []string{"tickets_head"}, true},
	{"Head{Counter, Lock}", []string{"tickets_target"}, true},
	{"Head{Service, WaitingBefore, ByWait}", []string{"tickets_wait"}, true},
	{"Waiting{Limit}", []string{"tickets_head"}, true},
	{"Waiting", []string{"tickets_head"}, true},
	{"Ahead", []string{"tickets_head", "tickets_wait", "tickets_target"}, false},
	{"TicketByNumber", []string{"tickets_number"}, false},
	{"Find{BeforeDay, Statuses[1], Limit}", []string{"tickets_status"}, false},
	{"Find{BeforeDay, Statuses[2], Limit}", []string{"tickets_status"}, false},
	{"Find{Service, Day, Statuses[1], CalledBefore, Limit}", []string{"tickets_head", "tickets_status"}, false},
	{"Stats", []string{"tickets_head", "tickets_wait", "tickets_number", "tickets_status", "tickets_target"}, false},
}

// CheckPlans runs explain (the dialect's "EXPLAIN ") on the statements of
// catalog (the dialect's sqlstore.Dialect.Catalog: the text the store
// really sends, with example arguments) whose plan the Engine depends on,
// reads each row of the output with read, and checks that each statement
// reads an index made for it, in order where it must. Fill the tables
// first (FillForPlans) and refresh the planner's statistics.
func CheckPlans(t *testing.T, db *sql.DB, explain string, catalog []sqlstore.NamedStmt, read PlanReader) {
	t.Helper()
	byName := map[string]sqlstore.Stmt{}
	for _, st := range catalog {
		byName[st.Name] = st.Stmt
	}
	for _, w := range planWants {
		st, ok := byName[w.name]
		if !ok {
			t.Errorf("%s: not in the catalog (renamed? update planWants)", w.name)
			continue
		}
		p, text, err := explainStmt(t.Context(), db, explain, st, read)
		if err != nil {
			t.Errorf("%s: explain: %v", w.name, err)
			continue
		}
		if len(p.Indexes) == 0 {
			t.Errorf("%s: no plan read:\n%s", w.name, text)
			continue
		}
		for _, idx := range p.Indexes {
			if !slices.Contains(w.indexes, idx) {
				t.Errorf("%s reads %q, want one of %q:\n%s\n%s", w.name, idx, w.indexes, st.SQL, text)
			}
		}
		if w.inOrder && p.Sorts {
			t.Errorf("%s sorts its rows instead of reading them in index order:\n%s\n%s", w.name, st.SQL, text)
		}
	}
}

// explainStmt runs explain+st and reads its rows into a Plan; text is the
// output, a line per row.
func explainStmt(ctx context.Context, db *sql.DB, explain string, st sqlstore.Stmt, read PlanReader) (p Plan, text string, err error) {
	rows, err := db.QueryContext(ctx, explain+st.SQL, st.Args...)
	if err != nil {
		return p, "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return p, "", err
	}
	var b strings.Builder
	for rows.Next() {
		vals, err := sqlstore.ScanText(rows, len(cols))
		if err != nil {
			return p, "", err
		}
		row := make(map[string]string, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
			fmt.Fprintf(&b, "%s=%s ", c, vals[i])
		}
		b.WriteString("\n")
		read(row, &p)
	}
	return p, b.String(), rows.Err()
}

// PlanStore is a dialect's store (sqlite, postgres, mysql): what RunPlans
// needs of it.
type PlanStore interface {
	queue.Store
	DB() *sql.DB
	Dialect() *sqlstore.Dialect
}

// RunPlans is a dialect's plan test: it fills s (FillForPlans), refreshes
// the planner's statistics with analyze (read as a query to its end, since
// MySQL's ANALYZE TABLE answers with rows) and checks the catalog's plans
// with explain and read (CheckPlans).
func RunPlans(t *testing.T, s PlanStore, analyze, explain string, read PlanReader) {
	t.Helper()
	FillForPlans(t, s)
	rows, err := s.DB().QueryContext(t.Context(), analyze)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	CheckPlans(t, s.DB(), explain, s.Dialect().Catalog(), read)
}
