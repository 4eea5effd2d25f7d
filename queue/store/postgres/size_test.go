package postgres_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestSizeOfSchema: Size counts the store's own schema, not the database
// it shares with other schemas: a new schema's empty tables and indexes
// take well under a megabyte, where pg_database_size counts the system
// catalogs alone at several.
func TestSizeOfSchema(t *testing.T) {
	t.Parallel()
	st := storetest.Postgres(t)
	n, err := st.Size(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 || n > 1<<20 {
		t.Errorf("size of a new schema %d bytes, want 1 byte to 1 MiB", n)
	}
}
