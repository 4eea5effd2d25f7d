package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// DailyMigration is the schema version that creates daily_figures.
const DailyMigration = 11

// DailyRow is one row of the daily figures of a site (see the migration
// 0011_daily_figures.sql): Kind "day" (the site's total, the row that
// marks a day summed; ID empty), "service", "counter" or "booking";
// Figures is its figures as JSON, which package report reads and writes.
type DailyRow struct {
	Day     string
	Kind    string
	ID      string
	Figures []byte
}

// PutDaily writes the daily figures of site's days in one transaction: the
// rows of each day of days replace those stored for it before.
func (s *Store) PutDaily(ctx context.Context, site string, days []string, rows []DailyRow, now time.Time) error {
	del := s.d.Rebind("DELETE FROM daily_figures WHERE site = ? AND day = ?")
	ins := s.d.Rebind("INSERT INTO daily_figures (site, day, kind, id, figures, summed_at) VALUES (?, ?, ?, ?, ?, ?)")
	return s.write(ctx, func(ctx context.Context, t *tx) error {
		for _, d := range days {
			if _, err := t.exec(ctx, Stmt{del, []any{site, d}}); err != nil {
				return t.wrap("daily figures: clear "+d, err)
			}
		}
		for _, r := range rows {
			if _, err := t.exec(ctx, Stmt{ins, []any{site, r.Day, r.Kind, r.ID, string(r.Figures), ms(now)}}); err != nil {
				return t.wrap("daily figures: write "+r.Day, err)
			}
		}
		return nil
	})
}

// DailyRows reads the daily figures of site's days from..to (inclusive),
// by day, kind and id. A day without rows was not summed; on a schema
// before DailyMigration none is.
func (s *Store) DailyRows(ctx context.Context, site, from, to string) ([]DailyRow, error) {
	if v, err := s.Version(ctx); err != nil || v < DailyMigration {
		return nil, err
	}
	var out []DailyRow
	err := s.view(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, t *tx) error {
		var err error
		out, err = rowsOf(ctx, t, "daily figures: read", Stmt{s.d.Rebind("SELECT day, kind, id, figures FROM daily_figures " +
			"WHERE site = ? AND day >= ? AND day <= ? ORDER BY day, kind, id"), []any{site, from, to}},
			func(r scanner, d *DailyRow) error {
				var f string
				err := r.Scan(&d.Day, &d.Kind, &d.ID, &f)
				d.Figures = []byte(f)
				return err
			})
		return err
	})
	return out, err
}

// LastDailyDay is the newest day of site summed into the daily figures,
// "" when none is.
func (s *Store) LastDailyDay(ctx context.Context, site string) (string, error) {
	var day sql.NullString
	err := s.view(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, t *tx) error {
		rows, err := rowsOf(ctx, t, "daily figures: last day", Stmt{s.d.Rebind("SELECT MAX(day) FROM daily_figures WHERE site = ? AND kind = 'day'"),
			[]any{site}}, func(r scanner, d *sql.NullString) error { return r.Scan(d) })
		if len(rows) > 0 {
			day = rows[0]
		}
		return err
	})
	return day.String, err
}

// Size is the size of the database in bytes, as the server counts it
// (SQLite: its pages; PostgreSQL: its schema's tables with their indexes
// and TOAST, not the whole database's, which other schemas share; MySQL:
// the data and indexes of its tables).
func (s *Store) Size(ctx context.Context) (int64, error) {
	q := "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()"
	switch s.d.Name {
	case "sqlite":
		q = "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
	case "postgres":
		q = "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c " +
			"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"
	}
	var n int64
	if err := s.reader.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, s.wrap("database size", err)
	}
	return n, nil
}
