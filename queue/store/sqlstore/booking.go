package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// maxSlotRows bounds the rows of one slot insert, well inside every
// engine's limit on bound parameters.
const maxSlotRows = 500

// InsertSlots creates the slots not there yet, in statements of at most
// maxSlotRows rows, and returns how many it created.
func (t *tx) InsertSlots(ctx context.Context, slots []queue.Slot) (int, error) {
	total := 0
	for len(slots) > 0 {
		part := slots[:min(len(slots), maxSlotRows)]
		slots = slots[len(part):]
		res, err := t.execText(ctx, t.s.q.insertSlots(part))
		if err != nil {
			return total, t.wrap("insert slots", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, t.wrap("insert slots", err)
		}
		total += int(n)
	}
	return total, nil
}

func scanSlot(r scanner, sl *queue.Slot) error { return scanSlotAnd(r, sl) }

// scanSlotAnd reads a slot's columns, then more, the columns after them.
func scanSlotAnd(r scanner, sl *queue.Slot, more ...any) error {
	var start, end int64
	var closed int
	if err := r.Scan(append([]any{&sl.ID, &sl.Site, &sl.Resource, &start, &end, &sl.Capacity, &sl.Booked, &closed}, more...)...); err != nil {
		return err
	}
	sl.Start, sl.End, sl.Closed = at(start), at(end), closed != 0
	return nil
}

// Slots lists the slots q selects, by start and resource.
func (t *tx) Slots(ctx context.Context, q queue.SlotQuery) ([]queue.Slot, error) {
	return rowsOf(ctx, t, "list slots", t.s.q.slots(q), scanSlot)
}

// scanOne reads the one row of a query; notFound when there is none.
func scanOne[T any](t *tx, ctx context.Context, action string, st Stmt, scan func(scanner, *T) error, notFound error) (*T, error) {
	v, err := atMostOne(ctx, t, action, st, scan)
	if err == nil && v == nil {
		return nil, fmt.Errorf("%s: %s: %w", t.s.d.Name, action, notFound)
	}
	return v, err
}

// Slot reads one slot.
func (t *tx) Slot(ctx context.Context, id int64) (*queue.Slot, error) {
	return scanOne(t, ctx, fmt.Sprintf("read slot %d", id), t.s.q.slot(id), scanSlot, queue.ErrSlotNotFound)
}

// changed runs a statement and reports whether it changed a row.
func (t *tx) changed(ctx context.Context, action string, st Stmt) (bool, error) {
	res, err := t.exec(ctx, st)
	if err != nil {
		return false, t.wrap(action, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, t.wrap(action, err)
	}
	return n > 0, nil
}

// ReshapeSlot sets a slot's capacity and closed flag unless the capacity
// would fall below its bookings.
func (t *tx) ReshapeSlot(ctx context.Context, sl queue.Slot) (bool, error) {
	return t.changed(ctx, fmt.Sprintf("reshape slot %d", sl.ID), t.s.q.reshapeSlot(sl))
}

// TakePlace is the conditional UPDATE that books a place.
func (t *tx) TakePlace(ctx context.Context, slot int64, now time.Time) (bool, error) {
	return t.changed(ctx, fmt.Sprintf("take a place in slot %d", slot), t.s.q.takePlace(slot, now))
}

// TakeSlot reads a slot and takes a place in it when it is k.Site's and
// the read shows one free, then the patient's lock: where the dialect
// merges writes, in one statement (the read sees the slot as it stood
// before its UPDATE, which decides on the row as it stands then; the lock
// row is written from the UPDATE's answer, so only when it took a place);
// elsewhere the read, TakePlace, then LockPatient.
func (t *tx) TakeSlot(ctx context.Context, k queue.PatientKey, slot int64, now time.Time) (*queue.Slot, bool, error) {
	action := fmt.Sprintf("take a place in slot %d", slot)
	if !t.s.d.MergeWrites {
		sl, err := t.Slot(ctx, slot)
		if err != nil || sl.Site != k.Site || sl.Closed || !sl.Start.After(now) || sl.Booked >= sl.Capacity {
			return sl, false, err
		}
		ok, err := t.TakePlace(ctx, slot, now)
		if err == nil && ok {
			err = t.LockPatient(ctx, k, now)
		}
		return sl, ok, err
	}
	type taken struct {
		queue.Slot
		ok bool
	}
	v, err := scanOne(t, ctx, action, t.s.q.takeSlot(k, slot, now), func(r scanner, v *taken) error {
		return scanSlotAnd(r, &v.Slot, &v.ok)
	}, queue.ErrSlotNotFound)
	if err != nil {
		return nil, false, err
	}
	return &v.Slot, v.ok, nil
}

// ReleasePlace gives a place back; a slot with none booked is an error
// (its count would disagree with its bookings).
func (t *tx) ReleasePlace(ctx context.Context, slot int64) error {
	ok, err := t.changed(ctx, fmt.Sprintf("release a place of slot %d", slot), t.s.q.releasePlace(slot))
	if err == nil && !ok {
		err = fmt.Errorf("%s: release a place of slot %d: none booked", t.s.d.Name, slot)
	}
	return err
}

// LockPatient upserts the patient's row, which locks it until the end of
// the transaction (SQLite has one writer: nothing to lock).
func (t *tx) LockPatient(ctx context.Context, k queue.PatientKey, now time.Time) error {
	if _, err := t.exec(ctx, t.s.q.lockPatient(k, now)); err != nil {
		return t.wrap("lock patient", err)
	}
	return nil
}

// InsertBooking stores a new booking and sets its ID.
func (t *tx) InsertBooking(ctx context.Context, b *queue.Booking) error {
	st := t.s.q.insertBooking(b)
	action := fmt.Sprintf("insert booking in slot %d", b.Slot)
	if t.s.d.ReturningID {
		if err := t.queryRow(ctx, st).Scan(&b.ID); err != nil {
			return t.wrap(action, err)
		}
		return nil
	}
	res, err := t.exec(ctx, st)
	if err != nil {
		return t.wrap(action, err)
	}
	if b.ID, err = res.LastInsertId(); err != nil {
		return t.wrap(action, err)
	}
	return nil
}

// UpdateBooking writes b if its stored status is still from.
func (t *tx) UpdateBooking(ctx context.Context, b *queue.Booking, from queue.BookingStatus) error {
	ok, err := t.changed(ctx, fmt.Sprintf("update booking %d", b.ID), t.s.q.updateBooking(b, from))
	if err == nil && !ok {
		err = fmt.Errorf("%s: update booking %d: no longer %s: %w", t.s.d.Name, b.ID, from, queue.ErrConflict)
	}
	return err
}

func scanBooking(r scanner, b *queue.Booking) error {
	var start, end, held, created, updated int64
	var status string
	err := r.Scan(&b.ID, &b.Site, &b.Resource, &b.Slot, &start, &end, &b.Patient, &b.Code, &status, &held,
		&b.TicketID, &b.Number, &created, &updated, &b.Device, &b.IdemKey)
	if err != nil {
		return err
	}
	b.Status = queue.BookingStatus(status)
	b.Start, b.End, b.HeldUntil, b.CreatedAt, b.UpdatedAt = at(start), at(end), at(held), at(created), at(updated)
	return nil
}

// Booking reads one booking by id.
func (t *tx) Booking(ctx context.Context, id int64) (*queue.Booking, error) {
	return scanOne(t, ctx, fmt.Sprintf("read booking %d", id), t.s.q.booking(id), scanBooking, queue.ErrBookingNotFound)
}

// BookingByCode reads the booking of a site with this code.
func (t *tx) BookingByCode(ctx context.Context, site, code string) (*queue.Booking, error) {
	return scanOne(t, ctx, "read booking by code", t.s.q.bookingByCode(site, code), scanBooking, queue.ErrBookingNotFound)
}

// FindBookings lists the bookings f selects, by id.
func (t *tx) FindBookings(ctx context.Context, f queue.BookingFilter) ([]queue.Booking, error) {
	return rowsOf(ctx, t, "find bookings", t.s.q.findBookings(f), scanBooking)
}
