package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func engineBenchStore(b *testing.B) *sqlite.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), sqlite.Opts{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkEngineIssue16(b *testing.B) { storetest.BenchEngineIssue(b, engineBenchStore(b), 16) }
func BenchmarkEngineIssue64(b *testing.B) { storetest.BenchEngineIssue(b, engineBenchStore(b), 64) }
func BenchmarkEngineCallNext10(b *testing.B) {
	storetest.BenchEngineCallNext(b, engineBenchStore(b), 10)
}
