package web

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
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

// TestFullSlotAnsweredWithoutPermit: while every permit of the front is
// taken (http.max_running 1, held here), a booking on a slot known full
// is answered 409 slot_full from memory at once, not shed as 429 after
// http.booking_wait, and a booking of a free slot is still shed.
func TestFullSlotAnsweredWithoutPermit(t *testing.T) {
	e := newEnv(t, func(qo *queue.Opts, wo *Opts) {
		wo.MaxRunning, wo.BookingWait = 1, time.Nanosecond
		sched := queue.Schedule{Open: 10 * time.Hour, Close: 12 * time.Hour, Slot: 15 * time.Minute, Capacity: 1, DaysAhead: 7, OpensAt: 7 * time.Hour}
		qo.Sites[0].Resources = []queue.Resource{{ID: "dr", Service: "A", Schedule: sched}}
	})
	if _, err := e.eng.GenerateSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	parttest.Until(t, context.Background(), e.srv.front.Follow)
	dr := e.slotIDs(t, "dr")
	book := func(slot int64, patient string) int {
		resp := e.do("POST", "/api/v1/sites/main/appointments", "", fmt.Sprintf(`{"slot": %d, "patient": %q}`, slot, patient), "Idempotency-Key", "k-"+patient)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := book(dr[0], "p-0"); code != http.StatusCreated {
		t.Fatalf("first booking: %d", code)
	}
	n := 0
	poll.Until(t, "a booking on the full slot answered 409 with every permit taken", func() bool {
		n++
		book(dr[0], fmt.Sprintf("p-%d-free", n)) // learns the slot full, and its holders, with the permit free
		_, done, err := e.srv.front.Admit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer done()
		return book(dr[0], fmt.Sprintf("p-%d-held", n)) == http.StatusConflict
	})
	_, done, err := e.srv.front.Admit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if code := book(dr[1], "p-other"); code != http.StatusTooManyRequests {
		t.Errorf("a free slot with every permit taken: %d, want 429", code)
	}
}
