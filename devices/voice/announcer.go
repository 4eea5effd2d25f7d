package voice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Overflow says which call an [Announcer] drops when its queue is full.
type Overflow int

const (
	// DropOldest drops the oldest waiting call to make room for the new one.
	DropOldest Overflow = iota
	// DropNewest refuses the new call.
	DropNewest
)

// Pauses in a rendered announcement.
const (
	chimeGap  = 250 * time.Millisecond
	langGap   = 600 * time.Millisecond
	repeatGap = time.Second
	tailGap   = 100 * time.Millisecond
)

// Opts configures an [Announcer].
type Opts struct {
	// Engine renders phrases; nil means [EmbeddedPack].
	Engine Engine
	// Sink plays announcements; required.
	Sink Sink
	// Languages holds the phrase rules by code; nil means [DefaultLanguages].
	Languages map[string]Language
	// Langs are the languages of each announcement, in speaking order.
	Langs []string
	// Chime plays the pack's chime before each announcement.
	Chime bool
	// Repeat is how many times the phrases are spoken in one announcement;
	// less than 1 means 1.
	Repeat int
	// QueueSize bounds the calls waiting to be announced; less than 1 means 1.
	QueueSize int
	// Overflow says which call is dropped when the queue is full.
	Overflow Overflow
	// Timeout bounds rendering plus playing one announcement; 0 means none.
	Timeout time.Duration
	// Logger receives one record per failed announcement; nil discards.
	Logger *slog.Logger
}

// DefaultOpts returns English then Mandarin, a chime, spoken once, a queue
// of 16 dropping the oldest, and 30 s per announcement. Sink must be set.
func DefaultOpts() Opts {
	return Opts{
		Langs:     []string{"en", "zh"},
		Chime:     true,
		Repeat:    1,
		QueueSize: 16,
		Overflow:  DropOldest,
		Timeout:   30 * time.Second,
	}
}

// Stats are an [Announcer]'s counters since it was made.
type Stats struct {
	// Queued counts calls accepted into the queue.
	Queued uint64
	// Dropped counts calls dropped: on overflow, or left waiting at Close.
	Dropped uint64
	// Played counts announcements the sink played.
	Played uint64
	// Failed counts announcements that failed to render or play.
	Failed uint64
	// Pending is the number of calls waiting now.
	Pending int
}

// Announcer announces calls for one zone: one at a time, in the order they
// were queued, never overlapping. [Announcer.Announce] never blocks; a
// single goroutine, [Announcer.Run], renders and plays.
type Announcer struct {
	opts   Opts
	chime  *Clip
	logger *slog.Logger

	wake   chan struct{}      // cap 1: something was queued, or Close was called
	abort  context.Context    // cancelled (by giveUp) when Close stops waiting for the drain
	giveUp context.CancelFunc // cancels abort; safe to call more than once
	done   chan struct{}      // closed when Run returns

	mu      sync.Mutex
	queue   []Call
	closed  bool
	started bool
	stats   Stats
}

// New checks opts and returns an announcer; start it with [Announcer.Run].
func New(opts Opts) (*Announcer, error) {
	if opts.Sink == nil {
		return nil, fmt.Errorf("voice: announcer: sink: required")
	}
	if opts.Engine == nil {
		opts.Engine = EmbeddedPack()
	}
	if opts.Languages == nil {
		opts.Languages = DefaultLanguages()
	}
	if len(opts.Langs) == 0 {
		return nil, fmt.Errorf("voice: announcer: langs: required")
	}
	opts.Repeat = max(opts.Repeat, 1)
	opts.QueueSize = max(opts.QueueSize, 1)
	if opts.Overflow != DropOldest && opts.Overflow != DropNewest {
		return nil, fmt.Errorf("voice: announcer: overflow: unknown policy %d", opts.Overflow)
	}
	for _, code := range opts.Langs {
		l, ok := opts.Languages[code]
		if !ok {
			return nil, fmt.Errorf("voice: announcer: langs: %w %q", ErrUnknownLang, code)
		}
		if err := l.Validate(); err != nil {
			return nil, fmt.Errorf("voice: announcer: %w", err)
		}
		if p, ok := opts.Engine.(*Pack); ok {
			if err := p.Check(l); err != nil {
				return nil, fmt.Errorf("voice: announcer: %w", err)
			}
		}
	}
	a := &Announcer{
		opts:   opts,
		logger: opts.Logger,
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	a.abort, a.giveUp = context.WithCancel(context.Background())
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	if opts.Chime {
		chime, err := a.loadChime()
		if err != nil {
			return nil, fmt.Errorf("voice: announcer: chime: %w", err)
		}
		a.chime = chime
	}
	return a, nil
}

func (a *Announcer) loadChime() (*Clip, error) {
	if p, ok := a.opts.Engine.(*Pack); ok {
		if c, err := p.Segment("", ChimeToken); err == nil {
			return c, nil
		}
	}
	return EmbeddedPack().Segment("", ChimeToken)
}

// Announce queues c and returns at once. It reports whether c was queued:
// false when the queue is full under [DropNewest] or the announcer is
// closed. Under [DropOldest] a full queue drops its oldest call instead.
// Every drop is counted in [Stats].Dropped. A recall is queued like any
// call, even when the same number is already waiting.
func (a *Announcer) Announce(c Call) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.stats.Dropped++
		return false
	}
	if len(a.queue) >= a.opts.QueueSize {
		a.stats.Dropped++
		if a.opts.Overflow == DropNewest {
			return false
		}
		a.queue = append(a.queue[:0], a.queue[1:]...)
	}
	a.queue = append(a.queue, c)
	a.stats.Queued++
	select {
	case a.wake <- struct{}{}:
	default:
	}
	return true
}

// Stats returns the counters.
func (a *Announcer) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.stats
	s.Pending = len(a.queue)
	return s
}

// Run announces queued calls one after another until ctx ends (it returns
// ctx's error) or [Announcer.Close] has drained the queue (it returns
// [ErrClosed]). Run may be called once.
func (a *Announcer) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return fmt.Errorf("voice: announcer: run called twice")
	}
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	a.started = true
	a.mu.Unlock()
	defer close(a.done)

	// work is ctx, also cancelled when Close stops waiting for the drain.
	work, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(a.abort, cancel)()

	for {
		if err := work.Err(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return ErrClosed
		}
		a.mu.Lock()
		if len(a.queue) > 0 {
			c := a.queue[0]
			a.queue = a.queue[1:]
			a.mu.Unlock()
			a.announce(work, c)
			continue
		}
		closed := a.closed
		a.mu.Unlock()
		if closed {
			return ErrClosed
		}
		select {
		case <-a.wake:
		case <-work.Done():
		}
	}
}

// Close stops accepting calls and waits for Run to announce those already
// queued. When ctx ends first, the announcement under way is cancelled, the
// rest are dropped, and ctx's error is returned. Close without Run drops
// the queue and returns nil.
func (a *Announcer) Close(ctx context.Context) error {
	a.mu.Lock()
	a.closed = true
	started := a.started
	if !started {
		a.stats.Dropped += uint64(len(a.queue))
		a.queue = nil
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	if !started {
		return nil
	}
	var err error
	select {
	case <-a.done:
	case <-ctx.Done():
		a.giveUp()
		<-a.done
		err = fmt.Errorf("voice: announcer: close: %w", ctx.Err())
	}
	// Calls still waiting (Run gave up, or ended with its ctx) are dropped.
	a.mu.Lock()
	a.stats.Dropped += uint64(len(a.queue))
	a.queue = nil
	a.mu.Unlock()
	return err
}

// announce renders and plays c, counting the outcome.
func (a *Announcer) announce(ctx context.Context, c Call) {
	if a.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.opts.Timeout)
		defer cancel()
	}
	wav, err := a.Render(ctx, c)
	if err == nil {
		err = a.opts.Sink.Play(ctx, wav, safeName(c.Number+"-"+c.Counter))
	}
	a.mu.Lock()
	if err != nil {
		a.stats.Failed++
	} else {
		a.stats.Played++
	}
	a.mu.Unlock()
	if err != nil && !errors.Is(err, context.Canceled) {
		a.logger.Warn("announcement failed", "number", c.Number, "counter", c.Counter,
			"recall", c.Recall, "err", err)
	}
}

// Phrases returns the sentences announcing c, one per language in order.
func (a *Announcer) Phrases(c Call) ([]Phrase, error) {
	langs := a.opts.Langs
	if len(c.Langs) > 0 {
		langs = c.Langs
	}
	out := make([]Phrase, 0, len(langs))
	for _, code := range langs {
		l, ok := a.opts.Languages[code]
		if !ok {
			return nil, fmt.Errorf("voice: announce %s: %w %q", c.Number, ErrUnknownLang, code)
		}
		ph, err := l.Phrase(c)
		if err != nil {
			return nil, err
		}
		out = append(out, ph)
	}
	return out, nil
}

// Render returns the WAV (PCM 16-bit mono at [Rate]) that announces c: the
// chime, then the phrases in each language, Repeat times.
func (a *Announcer) Render(ctx context.Context, c Call) ([]byte, error) {
	phrases, err := a.Phrases(c)
	if err != nil {
		return nil, err
	}
	spoken := make([]*Clip, len(phrases))
	for i, ph := range phrases {
		if spoken[i], err = a.opts.Engine.Render(ctx, ph); err != nil {
			return nil, fmt.Errorf("voice: announce %s: %w", c.Number, err)
		}
	}
	var parts []*Clip
	if a.chime != nil {
		parts = append(parts, a.chime, Silence(Rate, chimeGap))
	}
	for r := range a.opts.Repeat {
		if r > 0 {
			parts = append(parts, Silence(Rate, repeatGap))
		}
		for i, s := range spoken {
			if i > 0 {
				parts = append(parts, Silence(Rate, langGap))
			}
			parts = append(parts, s)
		}
	}
	parts = append(parts, Silence(Rate, tailGap))
	return Concat(Rate, parts...).WAV(), nil
}
