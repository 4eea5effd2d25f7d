package daemon

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestOutboxBeforeOpen: the notify worker runs on the daemon's store from
// the start; before the store opens its calls fail as unavailable, then
// they reach the store, and the metrics show the outbox.
func TestOutboxBeforeOpen(t *testing.T) {
	ps := &PendingStore{}
	if _, err := ps.ClaimOutbox(t.Context(), sqlstore.OutboxClaim{Now: time.Now(), Lease: time.Minute, N: 1}); !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("claim before the store opened: %v", err)
	}
	if err := ps.FinishOutbox(t.Context(), []sqlstore.OutboxResult{{ID: 1}}); !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("finish before the store opened: %v", err)
	}
	rs := []notify.Receiver{{Name: "sms", Deliverer: &notify.Command{Run: "cat >/dev/null"}}}
	w, err := notify.New(notify.Opts{Store: ps, Receivers: rs, Poll: 10 * time.Millisecond, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	src := OutboxSource(w, time.Now)
	if o := src(); o.Known || len(o.Receivers) != 1 {
		t.Errorf("before a read: %+v", o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); _ = w.Shutdown(context.Background()); <-done }()

	// Rows for "gone" too, a receiver this daemon does not have: dead at
	// their first attempt.
	gone := notify.Receiver{Name: "gone", Events: []string{"BOOKING_*"}}
	s := storetest.SQLite(t, sqlstore.Opts{Outbox: notify.Routes(append(rs, gone))})
	if h := OutboxHealth(w, time.Now)("s1"); h != nil {
		t.Errorf("console health before a read: %+v", h)
	}
	err = s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		return tx.AppendEvents(ctx, "s1", []*queue.Event{{Type: "BOOKING_BOOKED", At: time.Now()}})
	})
	if err != nil {
		t.Fatal(err)
	}
	ps.opened(s.Store)
	poll.Until(t, "the delivery", func() bool {
		o := src()
		return o.Known && o.Pending == 0 && o.Dead == 1 && o.Receivers[0] == metrics.OutboxReceiver{Name: "sms", Delivered: 1}
	})
	want := []wire.DeviceInfo{{ID: "outbox", Kind: "notify", Detail: "1 dead, 0 pending"}}
	if h := Health(OutboxHealth(w, time.Now), OutboxHealth(w, time.Now))("s1"); len(h) != 2 || h[0] != want[0] || h[1] != want[0] {
		t.Errorf("console health = %+v, want %+v twice", h, want)
	}
}
