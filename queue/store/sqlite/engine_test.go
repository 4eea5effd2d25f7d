package sqlite_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func openEngineStore(t *testing.T) queue.Store { return storetest.SQLite(t) }

func TestEngine(t *testing.T) { storetest.RunEngine(t, openEngineStore) }

func TestEngineConcurrency(t *testing.T) {
	storetest.RunConcurrency(t, openEngineStore, 50, 2000, 10)
}
