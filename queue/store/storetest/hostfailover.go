package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// HostFailover is a store given two independent servers of the test's own
// in one multi-host DSN (a first, then b), and what RunHostFailover does to
// them.
type HostFailover struct {
	Store *sqlstore.Store
	// PortQuery answers, in one integer, the port of the server the
	// connection that runs it reached.
	PortQuery    string
	APort, BPort int
	// ReadOnlyA turns a read-only (on) or writable again, and returns when
	// new transactions on it see the change.
	ReadOnlyA func(t *testing.T, on bool)
	// FreezeB stops every process of b (SIGSTOP); the caller thaws it.
	FreezeB func(t *testing.T)
	// Connect is the store's connect time-out.
	Connect time.Duration
}

// port is the port of the server the store writes on.
func (h HostFailover) port(t *testing.T) int {
	t.Helper()
	var p int
	if err := h.Store.DB().QueryRowContext(t.Context(), h.PortQuery).Scan(&p); err != nil {
		t.Fatalf("%s: %v", h.PortQuery, err)
	}
	return p
}

// RunHostFailover: the store writes on a; when a turns read-only (as a
// failover tool demotes a server) the write that meets it
// (queue.ErrReadOnly) is retried on a new connection, which reaches the
// writable b: the write succeeds, well within 2 s; when b then freezes, a
// write times out and the next one reaches a again, writable by then,
// without waiting on the frozen one longer than the connect time-out.
// Health counts both failovers.
func RunHostFailover(t *testing.T, h HostFailover) {
	ctx := t.Context()
	// write takes the next number of a day counter, as a kiosk's ticket
	// does, within the deadline d.
	write := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return h.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
			_, err := tx.NextSeq(ctx, queue.DayKey{Site: "s", Service: "A", Day: "2026-12-01"}, 1)
			return err
		})
	}
	for range 8 { // fill the pool with connections to a
		if err := write(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.port(t); got != h.APort {
		t.Fatalf("writing on port %d, want a's %d", got, h.APort)
	}
	h.ReadOnlyA(t, true)
	// The write that meets the read-only server is retried on a new
	// connection, which finds the writable one: the caller sees nothing.
	start := time.Now()
	if err := write(time.Second); err != nil {
		t.Fatalf("first write after a turned read-only: %v", err)
	}
	took := time.Since(start)
	t.Logf("a read-only: the next write landed on b after %s", took)
	if took > 2*time.Second {
		t.Errorf("reached the writable server after %s, want under 2 s", took)
	}
	if got := h.port(t); got != h.BPort {
		t.Errorf("writing on port %d, want b's %d", got, h.BPort)
	}
	if hl := h.Store.Health(); hl.ReadOnly != 1 || !hl.Down.IsZero() {
		t.Errorf("health %+v, want one read-only failover and the store up", hl)
	}

	h.ReadOnlyA(t, false)
	h.FreezeB(t)
	const deadline = time.Second
	start = time.Now()
	var failed []error
	for {
		err := write(deadline)
		if err == nil {
			break
		}
		failed = append(failed, err)
		if len(failed) > 3 {
			t.Fatalf("still failing after %d writes: %v", len(failed), failed)
		}
	}
	took = time.Since(start)
	t.Logf("b frozen: writable again on a after %s (failed writes: %v)", took, failed)
	if limit := deadline + 2*h.Connect + time.Second; took > limit {
		t.Errorf("reached the writable server after %s, want under %s", took, limit)
	}
	if got := h.port(t); got != h.APort {
		t.Errorf("writing on port %d, want a's %d", got, h.APort)
	}
	if hl := h.Store.Health(); hl.NotAnswering != 1 {
		t.Errorf("health %+v, want one not-answering failover", hl)
	}
}
