package voice

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recordSink records what it plays and catches overlapping plays. When gate
// is set, each Play waits for a value from it (or ctx).
type recordSink struct {
	gate    chan struct{}
	playing atomic.Int32
	mu      sync.Mutex
	names   []string
	wavs    [][]byte
	overlap bool
	played  chan string
	entered chan struct{} // when set, gets a value as each Play starts
}

func (s *recordSink) Play(ctx context.Context, wav []byte, name string) error {
	if s.playing.Add(1) > 1 {
		s.mu.Lock()
		s.overlap = true
		s.mu.Unlock()
	}
	defer s.playing.Add(-1)
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if _, err := DecodeWAV(wav); err != nil {
		return err
	}
	s.mu.Lock()
	s.names = append(s.names, name)
	s.wavs = append(s.wavs, wav)
	s.mu.Unlock()
	if s.played != nil {
		s.played <- name
	}
	return nil
}

func (s *recordSink) got() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.names), s.overlap
}

func newTestAnnouncer(t *testing.T, sink *recordSink, mutate func(*Opts)) *Announcer {
	t.Helper()
	o := DefaultOpts()
	o.Sink = sink
	o.Langs = []string{"en"}
	o.Chime = false
	if mutate != nil {
		mutate(&o)
	}
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func startRun(t *testing.T, a *Announcer) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- a.Run(context.Background()) }()
	return errc
}

func TestAnnouncerOrderNoOverlap(t *testing.T) {
	sink := &recordSink{gate: make(chan struct{})}
	a := newTestAnnouncer(t, sink, nil)
	errc := startRun(t, a)
	var want []string
	for i := range 5 {
		c := Call{Number: fmt.Sprintf("A%03d", i), Counter: "5", Recall: i == 3}
		if !a.Announce(c) {
			t.Fatalf("Announce %d refused", i)
		}
		want = append(want, fmt.Sprintf("A%03d-5", i))
	}
	// A recall of a number already waiting is announced again.
	a.Announce(Call{Number: "A001", Counter: "5", Recall: true})
	want = append(want, "A001-5")
	for range want {
		sink.gate <- struct{}{}
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("Run = %v, want ErrClosed", err)
	}
	names, overlap := sink.got()
	if !slices.Equal(names, want) {
		t.Errorf("played %q, want %q", names, want)
	}
	if overlap {
		t.Error("announcements overlapped")
	}
	st := a.Stats()
	if st.Queued != 6 || st.Played != 6 || st.Dropped != 0 || st.Failed != 0 || st.Pending != 0 {
		t.Errorf("stats = %+v", st)
	}
	if a.Announce(Call{Number: "A9", Counter: "1"}) {
		t.Error("Announce after Close accepted")
	}
}

func TestAnnouncerOverflow(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy Overflow
		want   []string
		oks    []bool
	}{
		{"drop oldest", DropOldest, []string{"A4-1", "A5-1"}, []bool{true, true, true, true, true}},
		{"drop newest", DropNewest, []string{"A1-1", "A2-1"}, []bool{true, true, false, false, false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink := &recordSink{played: make(chan string, 10)}
			a := newTestAnnouncer(t, sink, func(o *Opts) { o.QueueSize = 2; o.Overflow = tt.policy })
			var oks []bool
			for i := 1; i <= 5; i++ { // Run not started yet: the queue fills
				oks = append(oks, a.Announce(Call{Number: fmt.Sprintf("A%d", i), Counter: "1"}))
			}
			if !slices.Equal(oks, tt.oks) {
				t.Errorf("Announce results %v, want %v", oks, tt.oks)
			}
			st := a.Stats()
			if st.Dropped != 3 || st.Pending != 2 {
				t.Errorf("stats before run = %+v, want 3 dropped, 2 pending", st)
			}
			errc := startRun(t, a)
			<-sink.played
			<-sink.played
			if err := a.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			<-errc
			if names, _ := sink.got(); !slices.Equal(names, tt.want) {
				t.Errorf("played %q, want %q", names, tt.want)
			}
		})
	}
}

func TestAnnouncerCloseDeadline(t *testing.T) {
	// The gate never opens: Play blocks until cancelled.
	sink := &recordSink{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	a := newTestAnnouncer(t, sink, nil)
	errc := startRun(t, a)
	a.Announce(Call{Number: "A1", Counter: "1"})
	a.Announce(Call{Number: "A2", Counter: "1"})
	<-sink.entered // Run is playing A1
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := a.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want DeadlineExceeded", err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("Run = %v, want ErrClosed", err)
	}
	st := a.Stats()
	if st.Failed != 1 || st.Dropped != 1 || st.Played != 0 || st.Pending != 0 {
		t.Errorf("stats = %+v, want 1 failed (cancelled), 1 dropped", st)
	}
}

func TestAnnouncerRunContext(t *testing.T) {
	a := newTestAnnouncer(t, &recordSink{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- a.Run(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want Canceled", err)
	}
	if err := a.Run(context.Background()); err == nil {
		t.Error("second Run: no error")
	}
	if err := a.Close(context.Background()); err != nil {
		t.Errorf("Close after Run ended: %v", err)
	}
}

func TestAnnouncerFailureCounted(t *testing.T) {
	sink := &recordSink{played: make(chan string, 1)}
	a := newTestAnnouncer(t, sink, nil)
	errc := startRun(t, a)
	a.Announce(Call{Number: "!!", Counter: "1"}) // nothing to read: render fails
	a.Announce(Call{Number: "A1", Counter: "1", Langs: []string{"zh"}})
	<-sink.played
	a.Close(context.Background())
	<-errc
	if st := a.Stats(); st.Failed != 1 || st.Played != 1 {
		t.Errorf("stats = %+v, want 1 failed, 1 played", st)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*Opts)
	}{
		{"no sink", func(o *Opts) { o.Sink = nil }},
		{"no langs", func(o *Opts) { o.Langs = nil }},
		{"unknown lang", func(o *Opts) { o.Langs = []string{"fr"} }},
		{"bad overflow", func(o *Opts) { o.Overflow = 7 }},
		{"bad language", func(o *Opts) { l := English(); l.Numerals = ""; o.Languages = map[string]Language{"en": l} }},
		{"pack lacks word", func(o *Opts) {
			l := English()
			l.Words["welcome"] = "welcome"
			o.Languages = map[string]Language{"en": l}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOpts()
			o.Sink = &recordSink{}
			o.Langs = []string{"en"}
			tt.mutate(&o)
			if _, err := New(o); err == nil {
				t.Error("New: no error")
			}
		})
	}
}

func TestAnnouncerRenderChime(t *testing.T) {
	render := func(chime bool) int {
		a := newTestAnnouncer(t, &recordSink{}, func(o *Opts) { o.Chime = chime })
		wav, err := a.Render(context.Background(), Call{Number: "A1", Counter: "1"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := DecodeWAV(wav)
		if err != nil {
			t.Fatal(err)
		}
		return len(c.Samples)
	}
	chime, err := EmbeddedPack().Segment("", ChimeToken)
	if err != nil {
		t.Fatal(err)
	}
	with, without := render(true), render(false)
	if want := without + len(chime.Samples) + len(Silence(Rate, chimeGap).Samples); with != want {
		t.Errorf("with chime %d samples, want %d", with, want)
	}
}
