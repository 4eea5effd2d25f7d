package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// stages times each call of BenchmarkCounterCall at the points on its way
// from the click to the hall display, so that a slow call can be told
// apart: waiting for its counter's turn or a connection (sent), the
// request reaching the handler (in), the session's check (session), the
// batch it was committed in (its wait for the writer, its statements and
// its COMMIT with the fsync), the feed's publication (feed: an
// in-process subscriber's stamp) and the display's stream (seen).
type stages struct {
	mu      sync.Mutex
	byKey   map[string]*callStages
	fed     map[string]time.Time // number → when the feed delivered its call
	batches []batchStages
}

type callStages struct {
	due, sent, in, session, out, seen time.Time
	number                            string
}

// batchStages is one Update of the store: asked (the batch is ready),
// begun (the writer connection taken, BEGIN done), applied (the requests'
// statements run), ended (committed).
type batchStages struct{ asked, begun, applied, ended time.Time }

func newStages() *stages {
	return &stages{byKey: map[string]*callStages{}, fed: map[string]time.Time{}}
}

type stagesKey struct{}

// call returns the record of the call with idempotency key key.
func (st *stages) call(key string) *callStages {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.byKey[key]
	if c == nil {
		c = &callStages{}
		st.byKey[key] = c
	}
	return c
}

func (st *stages) stamp(at *time.Time) {
	now := time.Now()
	st.mu.Lock()
	*at = now
	st.mu.Unlock()
}

// handler stamps a "next" action's arrival and answer, and puts its record
// in the request's context for the session's account read.
func (st *stages) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || !strings.HasSuffix(r.URL.Path, "/next") {
			next.ServeHTTP(w, r)
			return
		}
		in := time.Now()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var b struct{ Key string }
		_ = json.Unmarshal(body, &b)
		c := st.call(b.Key)
		st.mu.Lock()
		c.in = in
		st.mu.Unlock()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), stagesKey{}, c)))
		st.stamp(&c.out)
	})
}

// accounts stamps the session's account read of a timed request.
type accounts struct {
	queue.AccountStore
	st *stages
}

func (a accounts) Account(ctx context.Context, name string) (queue.Account, error) {
	acc, err := a.AccountStore.Account(ctx, name)
	if c, ok := ctx.Value(stagesKey{}).(*callStages); ok {
		a.st.stamp(&c.session)
	}
	return acc, err
}

// timedStore records each Update's stages.
type timedStore struct {
	*sqlite.Store
	st *stages
}

func (t *timedStore) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	b := batchStages{asked: time.Now()}
	err := t.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
		b.begun = time.Now()
		err := fn(ctx, tx)
		b.applied = time.Now()
		return err
	})
	b.ended = time.Now()
	t.st.mu.Lock()
	t.st.batches = append(t.st.batches, b)
	t.st.mu.Unlock()
	return err
}

// subscribe stamps each call as the engine's feed delivers it.
func (st *stages) subscribe(b *testing.B, e *queue.Engine) {
	storetest.Watch(b, e, "main", func(evs []queue.Event) {
		now := time.Now()
		st.mu.Lock()
		for _, ev := range evs {
			if ev.Type == queue.EventCalled {
				st.fed[ev.Number] = now
			}
		}
		st.mu.Unlock()
	})
}

// stageNames are the stages report reports, each the time from the one
// before: "turn" from the call's due time to its request being sent.
var stageNames = []string{"turn", "to-handler", "session", "writer-wait", "apply", "commit", "to-feed", "to-display"}

// split returns each stage's duration of a call that the display saw,
// ok false for one not seen or not timed.
func (st *stages) split(c *callStages) (d []time.Duration, ok bool) {
	fed, okf := st.fed[c.number]
	if !okf || c.seen.IsZero() || c.in.IsZero() || c.session.IsZero() {
		return nil, false
	}
	// The batch is the last one that ended before the feed had the call.
	i := slices.IndexFunc(st.batches, func(b batchStages) bool { return b.ended.After(fed) })
	if i < 0 {
		i = len(st.batches)
	}
	if i == 0 {
		return nil, false
	}
	b := st.batches[i-1]
	asked := b.asked
	if asked.Before(c.session) {
		asked = c.session // the batch was asked for before this call joined it
	}
	pts := []time.Time{c.due, c.sent, c.in, c.session, asked, b.begun, b.applied, b.ended, fed, c.seen}
	for k := 1; k < len(pts); k++ {
		if k == 4 {
			continue // the wait for a batch is part of the writer's wait
		}
		d = append(d, max(0, pts[k].Sub(pts[k-1])))
	}
	d[3] += max(0, asked.Sub(c.session))
	return d, true
}

// report adds each stage's p50 and p99 over the calls to b's metrics, and
// logs the slowest calls' stages and whether a GC ran during them.
func (st *stages) report(b *testing.B, label string, keys []string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	per := make([][]time.Duration, len(stageNames))
	type slow struct {
		total time.Duration
		d     []time.Duration
		c     *callStages
	}
	var all []slow
	for _, k := range keys {
		c := st.byKey[k]
		d, ok := st.split(c)
		if !ok {
			continue
		}
		for i := range d {
			per[i] = append(per[i], d[i])
		}
		all = append(all, slow{c.seen.Sub(c.due), d, c})
	}
	for i, n := range stageNames {
		b.ReportMetric(ms(quantile(per[i], 99)), "p99-"+label+"-"+n+"-ms")
	}
	slices.SortFunc(all, func(x, y slow) int { return int(y.total - x.total) })
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, s := range all[:min(3, len(all))] {
		var parts []string
		for i, d := range s.d {
			parts = append(parts, fmt.Sprintf("%s %.1f", stageNames[i], float64(d)/1e6))
		}
		b.Logf("%s slowest %s %.1f ms: %s; gc %s", label, s.c.number, float64(s.total)/1e6, strings.Join(parts, ", "), gcDuring(&ms, s.c.due, s.c.seen))
	}
}

// gcDuring sums the stop-the-world pauses of the collections that ended
// between from and to (of the last 256).
func gcDuring(ms *runtime.MemStats, from, to time.Time) string {
	var n int
	var p time.Duration
	for i := range ms.PauseEnd {
		end := time.Unix(0, int64(ms.PauseEnd[i]))
		if ms.PauseEnd[i] != 0 && end.After(from) && end.Before(to) {
			n++
			p += time.Duration(ms.PauseNs[i])
		}
	}
	return fmt.Sprintf("%d collections, %.2f ms paused", n, float64(p)/1e6)
}
