package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// TestBenchRaw: bench raw's line counts the tickets its clients took, and
// the file holds them, numbered 1 to n without a gap.
func TestBenchRaw(t *testing.T) {
	db := filepath.Join(t.TempDir(), "raw.db")
	out, err := runCmd(t, "bench", "raw", "--db", db, "--clients", "3", "--duration", "300ms")
	if err != nil {
		t.Fatalf("bench raw: %v\n%s", err, out)
	}
	var clients, n int
	var secs, rate float64
	if _, err := fmt.Sscanf(out, "sqlite-full clients %d tx %d seconds %f tx/s %f\n", &clients, &n, &secs, &rate); err != nil || clients != 3 || n < 1 || rate <= 0 {
		t.Fatalf("bench raw printed %q (%v)", out, err)
	}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var count, most int
	if err := conn.QueryRow("SELECT COUNT(*), MAX(seq) FROM tickets WHERE site = 'bench'").Scan(&count, &most); err != nil || count != n || most != n {
		t.Errorf("tickets in the file: %d, numbered up to %d (%v); want %d", count, most, err, n)
	}
}
