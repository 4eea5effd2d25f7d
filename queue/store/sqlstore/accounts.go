package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// The staff accounts (queue.AccountStore) are read and written outside the
// engine's batches: a login or an admin's command is rare, and never part
// of a ticket's transaction.
var _ queue.AccountStore = (*Store)(nil)

const accountCols = "name, hash, role, sites, counters, disabled, created_at, updated_at"

func joinList(l []string) string { return strings.Join(l, ",") }

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// AddAccount creates a; queue.ErrAccountExists when its name is taken.
func (s *Store) AddAccount(ctx context.Context, a queue.Account) error {
	_, err := s.writer.ExecContext(ctx, s.d.Rebind("INSERT INTO accounts ("+accountCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
		a.Name, a.Hash, string(a.Role), joinList(a.Sites), joinList(a.Counters), boolInt(a.Disabled), ms(a.Created), ms(a.Updated))
	err = s.wrap("add account", err)
	if errors.Is(err, queue.ErrDuplicate) {
		return fmt.Errorf("%w: %q", queue.ErrAccountExists, a.Name)
	}
	return err
}

// SetAccount replaces the account named a.Name (its creation time stays).
func (s *Store) SetAccount(ctx context.Context, a queue.Account) error {
	res, err := s.writer.ExecContext(ctx, s.d.Rebind("UPDATE accounts SET hash = ?, role = ?, sites = ?, counters = ?, disabled = ?, updated_at = ? WHERE name = ?"),
		a.Hash, string(a.Role), joinList(a.Sites), joinList(a.Counters), boolInt(a.Disabled), ms(a.Updated), a.Name)
	if err != nil {
		return s.wrap("set account", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.wrap("set account", err)
	} else if n == 0 {
		return fmt.Errorf("%w: %q", queue.ErrUnknownAccount, a.Name)
	}
	return nil
}

func scanAccount(r interface{ Scan(...any) error }) (queue.Account, error) {
	var a queue.Account
	var role, sites, counters string
	var disabled int
	var created, updated int64
	if err := r.Scan(&a.Name, &a.Hash, &role, &sites, &counters, &disabled, &created, &updated); err != nil {
		return a, err
	}
	a.Role, a.Sites, a.Counters, a.Disabled = queue.Role(role), splitList(sites), splitList(counters), disabled != 0
	a.Created, a.Updated = at(created), at(updated)
	return a, nil
}

// Account reads one account; queue.ErrUnknownAccount when there is none.
// It reads on the reader pool, with the pool's prepared statement: every
// request of a person's page checks its account (staff.Service.Check), and
// on SQLite the writer connection is the engine's, held through each
// batch's commit and its fsync, so a read there waited for the batch and
// held the next one back (BenchmarkCounterCall's stages).
func (s *Store) Account(ctx context.Context, name string) (queue.Account, error) {
	q := s.d.Rebind("SELECT " + accountCols + " FROM accounts WHERE name = ?")
	var a queue.Account
	err := s.readRow(ctx, q, []any{name}, func(r *sql.Row) (err error) {
		a, err = scanAccount(r)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("%w: %q", queue.ErrUnknownAccount, name)
	}
	return a, s.wrap("read account", err)
}

// readRow runs the one-row query q on the reader pool, through its cached
// statement when the dialect caches them, and hands the row to scan.
func (s *Store) readRow(ctx context.Context, q string, args []any, scan func(*sql.Row) error) error {
	if s.rstmts == nil {
		return scan(s.reader.QueryRowContext(ctx, q, args...))
	}
	if st := s.rstmts.get(q); st != nil {
		return scan(st.QueryRowContext(ctx, args...))
	}
	err := scan(s.reader.QueryRowContext(ctx, q, args...))
	s.rstmts.prepare(ctx) // once the row has given its connection back
	return err
}

// Accounts lists every account by name.
func (s *Store) Accounts(ctx context.Context) ([]queue.Account, error) {
	rows, err := s.reader.QueryContext(ctx, "SELECT "+accountCols+" FROM accounts ORDER BY name")
	if err != nil {
		return nil, s.wrap("list accounts", err)
	}
	defer rows.Close()
	var out []queue.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, s.wrap("list accounts", err)
		}
		out = append(out, a)
	}
	return out, s.wrap("list accounts", rows.Err())
}
