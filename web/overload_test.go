package web

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// blockingStore holds every read transaction while armed, until released.
type blockingStore struct {
	queue.Store
	armed   atomic.Bool
	holding chan struct{} // a read is held
	release chan struct{}
}

func (s *blockingStore) View(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	if s.armed.Load() {
		s.holding <- struct{}{}
		<-s.release
	}
	return s.Store.View(ctx, fn)
}

// TestSlotReadsShed: with http.max_slot_reads 1, a slot list that must be
// read from the store while another is being read is 429 overloaded with
// Retry-After, not 503; once the read ends, lists are served again.
func TestSlotReadsShed(t *testing.T) {
	var st *blockingStore
	e := newEnv(t, func(qo *queue.Opts, wo *Opts) {
		st = &blockingStore{Store: qo.Store, holding: make(chan struct{}, 1), release: make(chan struct{})}
		qo.Store = st
		wo.MaxSlotReads = 1
		sched := queue.Schedule{Open: 10 * time.Hour, Close: 12 * time.Hour, Slot: 15 * time.Minute, Capacity: 1, DaysAhead: 7, OpensAt: 7 * time.Hour}
		qo.Sites[0].Resources = []queue.Resource{{ID: "dr", Service: "A", Schedule: sched}, {ID: "vacc", Service: "A", Schedule: sched}}
	})
	if _, err := e.eng.GenerateSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.armed.Store(true)
	first := make(chan int, 1)
	go func() {
		resp := e.do("GET", "/api/v1/sites/main/slots?resource=dr&date=2026-03-02", "", "")
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-st.holding // dr's list is being read
	st.armed.Store(false)
	resp := e.do("GET", "/api/v1/sites/main/slots?resource=vacc&date=2026-03-02", "", "")
	if p := decode[Problem](t, resp, http.StatusTooManyRequests); p.Code != "overloaded" || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("a second read at once: %+v, Retry-After %q; want 429 overloaded, 1", p, resp.Header.Get("Retry-After"))
	}
	close(st.release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the read held: %d, want 200", code)
	}
	l := decode[slotList](t, e.do("GET", "/api/v1/sites/main/slots?resource=vacc&date=2026-03-02", "", ""), http.StatusOK)
	if len(l.Slots) != 8 {
		t.Errorf("vacc after the read: %d slots, want 8", len(l.Slots))
	}
}
