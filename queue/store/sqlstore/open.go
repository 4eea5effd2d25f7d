package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/nowserving/nowserving/internal/positive"
)

// DefaultPoolSize is the connection pool of a server database when
// Opts.MaxConns is not set.
const DefaultPoolSize = 20

// Start builds the Store over its connections and applies the migrations
// unless opts.NoMigrate; on failure it closes them.
func Start(ctx context.Context, d *Dialect, writer, reader *sql.DB, opts Opts) (*Store, error) {
	s := New(d, writer, reader, opts)
	if !opts.NoMigrate {
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Connect sizes the pool of a server database (PostgreSQL, MySQL), checks
// that it answers and starts the Store on it.
func Connect(ctx context.Context, d *Dialect, db *sql.DB, opts Opts) (*Store, error) {
	n := positive.Or(opts.MaxConns, DefaultPoolSize)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: connect: %w", d.Name, d.Err(err))
	}
	return Start(ctx, d, db, db, opts)
}
