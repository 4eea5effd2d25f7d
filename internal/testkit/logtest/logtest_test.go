package logtest

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestBufferConcurrent: many goroutines log while the test reads; under
// -race a plain bytes.Buffer fails this test.
func TestNew(t *testing.T) {
	t.Setenv("NOWSERVING_TEST_LOG", "")
	if New().Enabled(t.Context(), slog.LevelError) {
		t.Error("New logs without NOWSERVING_TEST_LOG")
	}
	t.Setenv("NOWSERVING_TEST_LOG", "1")
	if !New().Enabled(t.Context(), slog.LevelDebug) {
		t.Error("New with NOWSERVING_TEST_LOG=1 does not log debug lines")
	}
}

func TestBufferConcurrent(t *testing.T) {
	var b Buffer
	log := b.Logger()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				log.Info("tick", "writer", i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "msg=tick"); n != 8*50 {
		t.Errorf("%d lines logged, want %d", n, 8*50)
	}
	log.Debug("hidden")
	if strings.Contains(b.String(), "hidden") {
		t.Error("a debug line was logged at the default level")
	}
}
