package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Backup writes a consistent copy of the database file named by dsn to the
// new file to, while a running daemon keeps writing to it: VACUUM INTO
// reads one snapshot of the database in a read transaction (in WAL mode
// writers go on meanwhile) and writes it compacted, with nothing of the
// write-ahead log left to replay. The copy is then checked (PRAGMA
// integrity_check). to must not exist; a failed backup removes it.
func Backup(ctx context.Context, dsn, to string) (err error) {
	path := strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "file:")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: backup %s: %w", path, err)
	}
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("sqlite: backup to %s: %w", to, os.ErrExist)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sqlite: backup to %s: %w", to, err)
	}
	src, err := sql.Open("sqlite", path+"?"+url.Values{"_busy_timeout": {fmt.Sprint(BusyTimeoutMs)}}.Encode())
	if err != nil {
		return fmt.Errorf("sqlite: backup %s: %w", path, err)
	}
	defer src.Close()
	defer func() {
		if err != nil {
			_ = os.Remove(to)
		}
	}()
	if _, err := src.ExecContext(ctx, "VACUUM INTO ?", to); err != nil {
		return fmt.Errorf("sqlite: backup %s to %s: %w", path, to, Dialect().Err(err))
	}
	return checkCopy(ctx, to)
}

// checkCopy runs SQLite's integrity check on the backup file.
func checkCopy(ctx context.Context, file string) error {
	db, err := sql.Open("sqlite", file+"?_query_only=1")
	if err != nil {
		return fmt.Errorf("sqlite: check backup %s: %w", file, err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("sqlite: check backup %s: %w", file, err)
	}
	if res != "ok" {
		return fmt.Errorf("sqlite: check backup %s: integrity check says %q", file, res)
	}
	return nil
}
