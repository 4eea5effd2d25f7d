package mysql_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

func BenchmarkEngineIssue16(b *testing.B) { storetest.BenchEngineIssue(b, storetest.MySQL(b), 16) }
func BenchmarkEngineCallNext10(b *testing.B) {
	storetest.BenchEngineCallNext(b, storetest.MySQL(b), 10)
}
