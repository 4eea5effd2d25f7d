package postgres_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func TestEngine(t *testing.T) {
	storetest.RunEngine(t, func(t *testing.T) queue.Store { return storetest.Postgres(t) })
}
