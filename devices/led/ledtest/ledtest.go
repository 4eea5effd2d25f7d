// Package ledtest records what a led.Port writes, for tests of packages that
// drive LED boards without hardware: a Recorder is a fake serial line whose
// Dial plugs into led.PortOpts.Dial, which keeps every frame written and
// plays back scripted replies.
package ledtest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nowserving/nowserving/devices/led"
)

// ErrUnplugged is returned by Dial and Write while the Recorder is unplugged.
var ErrUnplugged = errors.New("ledtest: unplugged")

// Recorder is an in-memory led.Link. It is safe for concurrent use.
type Recorder struct {
	mu        sync.Mutex
	frames    [][]byte
	reply     func(frame []byte) []byte
	pending   []byte
	unplugged bool
	changed   chan struct{}
}

var _ led.Link = (*Recorder)(nil)

// New returns an empty, plugged-in Recorder.
func New() *Recorder { return &Recorder{changed: make(chan struct{})} }

// Dial is a led.PortOpts.Dial that returns r itself.
func (r *Recorder) Dial(led.PortOpts) (led.Link, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unplugged {
		return nil, ErrUnplugged
	}
	return r, nil
}

// Reply sets the playback: after each frame written, fn's result (if not
// empty) becomes readable. fn nil means no replies.
func (r *Recorder) Reply(fn func(frame []byte) []byte) {
	r.mu.Lock()
	r.reply = fn
	r.mu.Unlock()
}

// Unplug makes Dial and Write fail until Plug.
func (r *Recorder) Unplug() {
	r.mu.Lock()
	r.unplugged = true
	r.mu.Unlock()
}

// Plug undoes Unplug.
func (r *Recorder) Plug() {
	r.mu.Lock()
	r.unplugged = false
	r.mu.Unlock()
}

// Write records p as one frame.
func (r *Recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unplugged {
		return 0, ErrUnplugged
	}
	r.frames = append(r.frames, bytes.Clone(p))
	if r.reply != nil {
		r.pending = append(r.pending, r.reply(p)...)
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return len(p), nil
}

// ReadTimeout returns scripted reply bytes, waiting up to d for them.
func (r *Recorder) ReadTimeout(p []byte, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		r.mu.Lock()
		if len(r.pending) > 0 {
			n := copy(p, r.pending)
			r.pending = r.pending[n:]
			r.mu.Unlock()
			return n, nil
		}
		ch := r.changed
		r.mu.Unlock()
		left := time.Until(deadline)
		if left <= 0 {
			return 0, nil
		}
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// Close does nothing: the Recorder outlives the line it plays.
func (r *Recorder) Close() error { return nil }

// Frames returns a copy of every frame written so far.
func (r *Recorder) Frames() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]byte, len(r.frames))
	for i, f := range r.frames {
		out[i] = bytes.Clone(f)
	}
	return out
}

// Bytes returns every byte written so far.
func (r *Recorder) Bytes() []byte {
	return bytes.Join(r.Frames(), nil)
}

// Reset forgets the frames written so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.frames = nil
	r.mu.Unlock()
}

// WaitFor waits until a written frame satisfies match and returns it.
func (r *Recorder) WaitFor(ctx context.Context, match func(frame []byte) bool) ([]byte, error) {
	for {
		r.mu.Lock()
		for _, f := range r.frames {
			if match(f) {
				r.mu.Unlock()
				return bytes.Clone(f), nil
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
