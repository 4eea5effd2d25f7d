package sqlite_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

func BenchmarkEngineIssue16(b *testing.B) { storetest.BenchEngineIssue(b, storetest.SQLite(b), 16) }
func BenchmarkEngineIssue64(b *testing.B) { storetest.BenchEngineIssue(b, storetest.SQLite(b), 64) }
func BenchmarkEngineCallNext10(b *testing.B) {
	storetest.BenchEngineCallNext(b, storetest.SQLite(b), 10)
}
