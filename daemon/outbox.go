package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

var _ notify.Store = (*PendingStore)(nil)

// onStore runs f on the store, or fails as unavailable before it opens
// (the worker tries again at its next poll).
func onStore[T any](p *PendingStore, f func(st *sqlstore.Store) (T, error)) (T, error) {
	st, _ := p.Store()
	if st == nil {
		var zero T
		return zero, p.errConnecting()
	}
	return f(st)
}

// ClaimOutbox claims on the store.
func (p *PendingStore) ClaimOutbox(ctx context.Context, c sqlstore.OutboxClaim) ([]sqlstore.OutboxMessage, error) {
	return onStore(p, func(st *sqlstore.Store) ([]sqlstore.OutboxMessage, error) { return st.ClaimOutbox(ctx, c) })
}

// FinishOutbox records outcomes on the store.
func (p *PendingStore) FinishOutbox(ctx context.Context, rs []sqlstore.OutboxResult) error {
	_, err := onStore(p, func(st *sqlstore.Store) (struct{}, error) { return struct{}{}, st.FinishOutbox(ctx, rs) })
	return err
}

// OutboxStatus reads the outbox's counts on the store.
func (p *PendingStore) OutboxStatus(ctx context.Context, lastDead int) (sqlstore.OutboxStatus, error) {
	return onStore(p, func(st *sqlstore.Store) (sqlstore.OutboxStatus, error) { return st.OutboxStatus(ctx, lastDead) })
}

// OutboxSource turns the worker's stats into the metrics' (ages measured
// with now at scrape time).
func OutboxSource(w *notify.Worker, now func() time.Time) func() metrics.Outbox {
	return func() metrics.Outbox {
		st := w.Stats()
		o := metrics.Outbox{Known: !st.StatusAt.IsZero(), Pending: st.Outbox.Pending, Dead: st.Outbox.Dead}
		if !st.Outbox.OldestPending.IsZero() {
			o.OldestPending = max(0, now().Sub(st.Outbox.OldestPending))
		}
		for _, r := range st.Receivers {
			o.Receivers = append(o.Receivers, metrics.OutboxReceiver{Name: r.Name, Delivered: r.Delivered, Failed: r.Failed, Dead: r.Dead})
		}
		return o
	}
}

// outboxLate is how old the oldest pending notification may be before the
// console is told: below it the outbox is only busy.
const outboxLate = time.Minute

// OutboxHealth reports the outbox to the console as one entry of its
// devices (kind "notify", id "outbox"), the same on every site: offline
// while dead notifications wait for an operator (`nowserving notify
// status`), with a detail while pending ones are older than a minute;
// nothing to say otherwise.
func OutboxHealth(w *notify.Worker, now func() time.Time) protocol.HealthFunc {
	return func(string) []wire.DeviceInfo {
		st := w.Stats()
		if st.StatusAt.IsZero() {
			return nil
		}
		o := st.Outbox
		di := wire.DeviceInfo{ID: "outbox", Kind: "notify", Online: o.Dead == 0}
		late := !o.OldestPending.IsZero() && now().Sub(o.OldestPending) > outboxLate
		switch {
		case o.Dead > 0:
			di.Detail = fmt.Sprintf("%d dead, %d pending", o.Dead, o.Pending)
		case late:
			di.Detail = fmt.Sprintf("%d pending, oldest %s", o.Pending, now().Sub(o.OldestPending).Round(time.Second))
		}
		return []wire.DeviceInfo{di}
	}
}

// Health reports what every one of hs reports, in order.
func Health(hs ...protocol.HealthFunc) protocol.HealthFunc {
	return func(site string) []wire.DeviceInfo {
		var out []wire.DeviceInfo
		for _, h := range hs {
			out = append(out, h(site)...)
		}
		return out
	}
}
