// Package logtest holds the loggers tests give the parts they run: New,
// silent unless NOWSERVING_TEST_LOG is set, and a Buffer that goroutines
// may write to while the test reads it.
package logtest

import (
	"bytes"
	"log/slog"
	"os"
	"sync"
)

// New returns a logger that drops everything, or, when the environment
// sets NOWSERVING_TEST_LOG, writes every level to standard error (to see
// what a failing test's server did).
func New() *slog.Logger {
	if os.Getenv("NOWSERVING_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// Buffer is a bytes.Buffer safe for concurrent writers and readers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Logger returns a text logger writing to b, at slog's default level.
func (b *Buffer) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }
