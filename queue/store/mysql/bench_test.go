package mysql_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

// BenchmarkNextSeqInsert: upsert the day counter, insert a ticket, append
// its event, one durable transaction each, 16 clients.
func BenchmarkNextSeqInsert(b *testing.B) {
	storetest.BenchNextSeqInsert(b, storetest.MySQL(b), 16)
}
