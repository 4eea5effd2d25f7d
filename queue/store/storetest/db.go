package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/nowserving/nowserving/internal/testkit/need"
)

// Default DSNs of the test servers; NOWSERVING_TEST_POSTGRES and
// NOWSERVING_TEST_MYSQL override them.
const (
	DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultMySQLDSN    = "root@tcp(127.0.0.1:3306)/test"
)

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// PostgresDSN creates a fresh schema on the test PostgreSQL server, drops
// it when the test ends, and returns a DSN whose search_path is that schema.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("NOWSERVING_TEST_POSTGRES")
	if base == "" {
		base = DefaultPostgresDSN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres test DSN %q: %v", base, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		need.DB(t, fmt.Sprintf("PostgreSQL at %s unreachable: %v (start it, or set NOWSERVING_TEST_POSTGRES)", base, err))
	}
	schema := randomName("t_")
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		db.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		db.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("postgres test DSN %q must be a URL: %v", base, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// MySQLDSN creates a fresh database on the test MariaDB/MySQL server, drops
// it when the test ends, and returns a DSN naming it.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("NOWSERVING_TEST_MYSQL")
	if base == "" {
		base = DefaultMySQLDSN
	}
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("mysql test DSN %q: %v", base, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := cfg.Clone()
	admin.DBName = ""
	db, err := sql.Open("mysql", admin.FormatDSN())
	if err != nil {
		t.Fatalf("mysql test DSN %q: %v", base, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		need.DB(t, fmt.Sprintf("MySQL/MariaDB at %s unreachable: %v (start it, or set NOWSERVING_TEST_MYSQL)", base, err))
	}
	cfg.DBName = freshMySQLDatabase(ctx, t, db)
	return cfg.FormatDSN()
}

// freshMySQLDatabase creates a database through db and drops it, then
// closes db, when the test ends.
func freshMySQLDatabase(ctx context.Context, t testing.TB, db *sql.DB) string {
	t.Helper()
	name := randomName("nstest_")
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		db.Close()
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE "+name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		db.Close()
	})
	return name
}

// ServerAddr is the host:port of the server dsn, a DSN of driver
// ("postgres" or "mysql"), names, and at gives the same DSN with the
// server at another address (host:port, or several joined by commas) in
// its place: the DSN of the same database through a proxy at it.
func ServerAddr(t testing.TB, driver, dsn string) (addr string, at func(addr string) string) {
	t.Helper()
	switch driver {
	case "postgres":
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("postgres DSN %q: %v", dsn, err)
		}
		return u.Host, func(addr string) string { v := *u; v.Host = addr; return v.String() }
	case "mysql":
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatalf("mysql DSN %q: %v", dsn, err)
		}
		return cfg.Addr, func(addr string) string { v := cfg.Clone(); v.Addr = addr; return v.FormatDSN() }
	}
	t.Fatalf("storetest: no server driver %q", driver)
	return "", nil
}
