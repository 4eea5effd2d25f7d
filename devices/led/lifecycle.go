package led

import (
	"context"
	"sync"
)

// lifecycle is what Port and KeypadBus share about their Run: it may be
// called once, and Close cancels it and waits for it to return. The zero
// value is ready to use.
type lifecycle struct {
	mu      sync.Mutex
	running bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// start marks Run as started and returns a context that stop cancels, or
// false when Run was already started. A started Run must call finish when
// it returns.
func (l *lifecycle) start(ctx context.Context) (context.Context, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running {
		return nil, false
	}
	l.running = true
	l.done = make(chan struct{})
	ctx, l.cancel = context.WithCancel(ctx)
	return ctx, true
}

// finish records that Run has returned.
func (l *lifecycle) finish() { close(l.done) }

// stop cancels a started Run and waits for it to finish; it reports
// whether Run had been started.
func (l *lifecycle) stop() bool {
	l.mu.Lock()
	running, cancel, done := l.running, l.cancel, l.done
	l.mu.Unlock()
	if !running {
		return false
	}
	cancel()
	<-done
	return true
}
