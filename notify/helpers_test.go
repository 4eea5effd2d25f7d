package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// backend is one of the three databases: db makes a fresh database and
// returns how to open stores on it (several, as several daemons do).
type backend struct {
	name string
	db   func(t testing.TB) (open func(o sqlstore.Opts) *sqlstore.Store)
}

// pool gives o a pool of 8 connections unless it sets one.
func pool(o sqlstore.Opts) sqlstore.Opts {
	if o.MaxConns == 0 {
		o.MaxConns = 8
	}
	return o
}

var backends = []backend{
	{"sqlite", func(t testing.TB) func(sqlstore.Opts) *sqlstore.Store {
		dsn := filepath.Join(t.TempDir(), "notify.db")
		return func(o sqlstore.Opts) *sqlstore.Store { return storetest.At(t, sqlite.Open, dsn, pool(o)).Store }
	}},
	{"postgres", func(t testing.TB) func(sqlstore.Opts) *sqlstore.Store {
		dsn := storetest.PostgresDSN(t)
		return func(o sqlstore.Opts) *sqlstore.Store { return storetest.At(t, postgres.Open, dsn, pool(o)).Store }
	}},
	{"mysql", func(t testing.TB) func(sqlstore.Opts) *sqlstore.Store {
		dsn := storetest.MySQLDSN(t)
		return func(o sqlstore.Opts) *sqlstore.Store { return storetest.At(t, mysql.Open, dsn, pool(o)).Store }
	}},
}

// each runs f on each backend, in parallel subtests.
func each(t *testing.T, f func(t *testing.T, open func(o sqlstore.Opts) *sqlstore.Store)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, b.db(t))
		})
	}
}

// routes are outbox routes of receivers taking the given patterns.
func routes(byName map[string][]string) []sqlstore.OutboxRoute {
	var rs []notify.Receiver
	for name, ps := range byName {
		rs = append(rs, notify.Receiver{Name: name, Events: ps})
	}
	return notify.Routes(rs)
}

var t0 = time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)

// appendEvents commits n events of type typ at site s1, at t0.
func appendEvents(t testing.TB, s *sqlstore.Store, typ queue.EventType, n int) {
	t.Helper()
	err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		evs := make([]*queue.Event, n)
		for i := range evs {
			evs[i] = &queue.Event{Type: typ, Number: fmt.Sprintf("A%03d", i+1), At: t0}
		}
		return tx.AppendEvents(ctx, "s1", evs)
	})
	if err != nil {
		t.Fatalf("append %d %s events: %v", n, typ, err)
	}
}

// status reads the outbox's status.
func status(t testing.TB, s *sqlstore.Store, lastDead int) sqlstore.OutboxStatus {
	t.Helper()
	st, err := s.OutboxStatus(t.Context(), lastDead)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// delivery is one request a hook received.
type delivery struct {
	EventID string
	Type    string
	Attempt int
	Body    []byte
}

// hook is a webhook receiver on loopback that checks each request's
// signature and answers what answer says (200 when nil).
type hook struct {
	t      testing.TB
	secret []byte
	srv    *httptest.Server

	mu     sync.Mutex
	got    []delivery
	answer func(n int, d delivery) int // status for the nth request (from 0)
}

func newHook(t testing.TB, secret string) *hook {
	h := &hook{t: t, secret: []byte(secret)}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		h.t.Errorf("hook: read body: %v", err)
		return
	}
	if !notify.Verify(h.secret, body, r.Header.Get(notify.HeaderSignature)) {
		h.t.Errorf("hook: bad signature %q for %s", r.Header.Get(notify.HeaderSignature), body)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var doc struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || r.Header.Get("Content-Type") != "application/json" {
		h.t.Errorf("hook: body %s (%s): %v", body, r.Header.Get("Content-Type"), err)
	}
	d := delivery{EventID: r.Header.Get(notify.HeaderEventID), Type: r.Header.Get(notify.HeaderEventType), Body: body}
	d.Attempt, _ = strconv.Atoi(r.Header.Get(notify.HeaderAttempt))
	if d.EventID != doc.ID || d.Type != doc.Type {
		h.t.Errorf("hook: headers say %s %s, body %s", d.EventID, d.Type, body)
	}
	h.mu.Lock()
	n := len(h.got)
	h.got = append(h.got, d)
	answer := h.answer
	h.mu.Unlock()
	code := http.StatusOK
	if answer != nil {
		code = answer(n, d)
	}
	w.WriteHeader(code)
	fmt.Fprintf(w, "answer %d", code)
}

func (h *hook) deliveries() []delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]delivery(nil), h.got...)
}

// receiver is the hook as a notify.Receiver named name.
func (h *hook) receiver(name string, events ...string) notify.Receiver {
	return notify.Receiver{Name: name, Events: events, Deliverer: &notify.Webhook{URL: h.srv.URL + "/hook?token=x", Secret: h.secret}}
}

// start runs a worker of o until the test ends.
func start(t testing.TB, o notify.Opts) *notify.Worker {
	t.Helper()
	w, err := notify.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	parttest.Start(t, ctx, w)
	t.Cleanup(cancel) // before Start's stop: cleanups run last first
	return w
}
