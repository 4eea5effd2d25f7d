package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/follow"
)

// stream writes Server-Sent Events from a follower of a site's events.
type stream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	fol *follow.Site
	// pingEvent makes the keep-alive an event "ping" that a page's
	// EventSource sees (a comment is invisible to it), so the page can
	// tell a silent dead connection from a quiet hall.
	pingEvent bool
	// wake, when set, ends a wait for events early: each is then called
	// with no events (the site's definitions changed: a reload).
	wake <-chan struct{}
}

// follower follows site for a stream; with o.Resume, after o.After.
func (s *Server) follower(site string, o follow.Opts) *follow.Site {
	o.MinRetry, o.Log, o.Who = time.Second, s.log, "web"
	return follow.New(s.o.Engine, site, o)
}

// startStream answers with the SSE headers and returns the stream of f
// and a context that ends when the client leaves or the server shuts down;
// ok is false (and a problem sent) when the site cannot be followed or too
// many streams are open.
func (s *Server) startStream(w http.ResponseWriter, r *http.Request, f *follow.Site) (st *stream, ctx context.Context, done func(), ok bool) {
	if _, err := s.o.Engine.Site(f.Site()); err != nil {
		writeError(w, s.log, err)
		return nil, nil, nil, false
	}
	if n := s.open.Add(1); n > int64(s.o.MaxStreams) {
		s.open.Add(-1)
		w.Header().Set("Retry-After", "5")
		writeProblem(w, http.StatusServiceUnavailable, "too_many_streams", "too many event streams", fmt.Sprintf("at most %d streams", s.o.MaxStreams))
		return nil, nil, nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives any write timeout
	st = &stream{w: w, rc: rc, fol: f}
	// Tell EventSource to retry after 1 s rather than its default 3 s.
	fmt.Fprint(w, "retry: 1000\n\n")
	_ = rc.Flush()
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.streams, cancel)
	return st, ctx, func() { stop(); cancel(); s.open.Add(-1) }, true
}

// send writes one event; id < 0 writes none, event "" is a default message.
func (st *stream) send(id int64, event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("web: encode event: %w", err)
	}
	var out []byte
	if id >= 0 {
		out = append(out, "id: "...)
		out = strconv.AppendInt(out, id, 10)
		out = append(out, '\n')
	}
	if event != "" {
		out = append(out, "event: "...)
		out = append(out, event...)
		out = append(out, '\n')
	}
	out = append(out, "data: "...)
	out = append(out, b...) // JSON has no raw newlines
	out = append(out, "\n\n"...)
	if _, err := st.w.Write(out); err != nil {
		return err
	}
	return st.rc.Flush()
}

func (st *stream) ping() error {
	msg := ": ping\n\n"
	if st.pingEvent {
		msg = "event: ping\ndata: {}\n\n"
	}
	if _, err := st.w.Write([]byte(msg)); err != nil {
		return err
	}
	return st.rc.Flush()
}

// page is how a page's stream starts: with the event named event carrying
// data (the picture it starts from), and keep-alives it can see.
type page struct {
	event string
	data  any
	// wake is the engine's SitesChanged, taken before the page's site was
	// read: each is called with no events when it closes.
	wake <-chan struct{}
}

// serveEvents streams the updates of f: it starts the stream
// (startStream), for a page (p not nil) sends p's event at f's version and
// makes the keep-alives events, then hands each update of f to each (a
// snapshot after a gap, or events). It returns when the client leaves, the
// server shuts down or each fails (a failed write or read ends the
// stream).
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request, f *follow.Site, p *page, each func(ctx context.Context, st *stream, u follow.Update) error) {
	st, ctx, done, ok := s.startStream(w, r, f)
	if !ok {
		return
	}
	defer done()
	if p != nil {
		st.pingEvent, st.wake = true, p.wake
		if st.send(f.Version(), p.event, p.data) != nil {
			return
		}
	}
	for {
		u, err := s.next(ctx, st)
		if err != nil || each(ctx, st, u) != nil {
			return
		}
	}
}

// next waits for the stream's next update, writing a keep-alive comment
// every heartbeat meanwhile.
func (s *Server) next(ctx context.Context, st *stream) (follow.Update, error) {
	for {
		hctx, cancel := context.WithTimeout(ctx, s.o.Heartbeat)
		woke := st.wakeCancels(hctx, cancel)
		u, err := st.fol.Next(hctx)
		cancel()
		if woke() && err != nil && ctx.Err() == nil {
			return follow.Update{}, nil // no events lost: each reads the new definitions
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			if err := st.ping(); err != nil {
				return follow.Update{}, err
			}
			continue
		}
		return u, err
	}
}

// wakeCancels cancels ctx when st.wake closes first; woke reports, once
// the wait is over, whether it did.
func (st *stream) wakeCancels(ctx context.Context, cancel context.CancelFunc) (woke func() bool) {
	if st.wake == nil {
		return func() bool { return false }
	}
	var fired atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-st.wake:
			fired.Store(true)
			cancel()
		case <-ctx.Done():
		}
	}()
	return func() bool { <-done; return fired.Load() }
}
