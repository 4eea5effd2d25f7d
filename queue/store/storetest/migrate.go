package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// OpenFunc opens a store on dsn with a pool of at most maxConns.
type OpenFunc func(ctx context.Context, dsn string, maxConns int) (*sqlstore.Store, error)

// MigrateConcurrently opens four stores on one empty database at once, as
// daemons starting together do: every one must succeed, and the schema must
// end at version want.
func MigrateConcurrently(t *testing.T, dsn string, open OpenFunc, want int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := open(context.Background(), dsn, 2)
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := open(t.Context(), dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(t.Context()); err != nil || v != want {
		t.Errorf("schema version %d, %v; want %d", v, err, want)
	}
}
