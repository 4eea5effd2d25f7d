package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func openEngineStore(t *testing.T) queue.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "engine.db"), sqlite.Opts{})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestEngine(t *testing.T) { storetest.RunEngine(t, openEngineStore) }

func TestEngineConcurrency(t *testing.T) {
	storetest.RunConcurrency(t, openEngineStore, 50, 2000, 10)
}
