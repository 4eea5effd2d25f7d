package sqlstore

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// NamedStmt is one entry of a dialect's catalog of statements.
type NamedStmt struct {
	// Name is the queue.Tx method that sends the statement, with the
	// optional fields of its parameters that are set: "Head{Service, Classes[2], Lock}".
	// A suffix after a colon tells apart the statements of one call.
	Name string
	// Use, when set, says which Engine operation sends this variant.
	Use string
	Stmt
}

// Catalog lists every statement a transaction of d sends, each built from
// example parameters by the builder the transaction itself calls: the fixed
// statements once each; Head and Find once per optional field of
// queue.HeadQuery and queue.Filter, then in the combinations the Engine
// sends, then with every field set; the multi-row statements with two rows.
// (Check, Migrate and the outbox's claims send statements of their own,
// outside queue.Tx; the retention purge's, also outside it, are listed
// last.)
//
// testdata/catalog.sql holds the catalog of every dialect for review; the
// plan tests of the postgres and mysql packages EXPLAIN its queries.
func (d *Dialect) Catalog() []NamedStmt {
	q := newQueries(d)
	const site, day, service = "s1", "2026-03-02", "A"
	before := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()
	tk := exampleTicket()
	var out []NamedStmt
	add := func(name, use string, st Stmt) { out = append(out, NamedStmt{name, use, st}) }

	add("Savepoint", "", q.savepoint("SAVEPOINT", "r1"))
	add("RollbackTo", "", q.savepoint("ROLLBACK TO SAVEPOINT", "r1"))
	add("Release", "", q.savepoint("RELEASE SAVEPOINT", "r1"))
	add("LookupRequests: 2 keys", "", q.lookupRequests([]queue.RequestKey{{Device: "k1", Key: "x1"}, {Device: "k2", Key: "x2"}}))
	add("SaveRequests: 2 rows", "", q.saveRequests([]queue.SavedRequest{
		{RequestKey: queue.RequestKey{Device: "k1", Key: "x1"}, Op: "issue A", Result: []byte("r1"), AtMs: before},
		{RequestKey: queue.RequestKey{Device: "k2", Key: "x2"}, Op: "next c1", AtMs: before}}))
	add("NextSeq", "", q.nextSeq(queue.DayKey{Site: site, Service: service, Day: day}, 1))
	add("GiveBackSeq", "a batch's kiosks took more numbers than they used", q.giveBackSeq(queue.DayKey{Site: site, Service: service, Day: day}, 2))
	add("InsertTicket", "", q.insertTicket(tk))
	if d.IDs != IDsOnInsert {
		add("TicketIDs", "a batch's kiosks", q.ticketIDs(3))
		if d.IDs == IDsSequence {
			add("NextSeqIDs", "the first kiosk of a batch", q.nextSeqIDs(queue.DayKey{Site: site, Service: service, Day: day}, 3, 3))
		}
		tk2 := *tk
		tk2.ID, tk2.Seq, tk2.Number = tk2.ID+1, tk2.Seq+1, "A013"
		add("InsertTickets: 2 rows", "a batch's kiosks", q.insertTickets([]*queue.Ticket{tk, &tk2}))
	}
	add("UpdateTicket", "", q.updateTicket(tk, queue.StatusWaiting))
	add("Ticket", "", q.ticket(tk.ID))
	add("TicketByNumber", "", q.ticketByNumber(queue.NumberKey{Site: site, Day: day, Number: tk.Number}))

	for _, h := range exampleHeads(service, before) {
		hq := h.q
		hq.Site, hq.Day = site, day
		add("Head"+setFields(hq, "Site", "Day"), h.use, q.head(hq, hq.Lock))
	}

	add("Waiting{Limit}", "place a revisit or re-entered ticket n places back", q.waiting(queue.WaitingQuery{Site: site, Day: day, Service: service, Rank: 20, Limit: 4}))
	add("Waiting", "place: renumber a rank with no gap left", q.waiting(queue.WaitingQuery{Site: site, Day: day, Service: service, Rank: 20}))
	add("Ahead", "", q.ahead(tk))
	add("SetSortKey", "", q.setSortKey(tk.ID, tk.SortKey))

	for _, f := range exampleFinds(day, service, before) {
		flt := f.q
		flt.Site = site
		add("Find"+setFields(flt, "Site"), f.use, q.find(flt))
	}

	add("Stats", "", q.stats(queue.SiteDay{Site: site, Day: day}))
	c := queue.CounterKey{Site: site, ID: "c1"}
	add("Counter", "", q.counter(c, false))
	if d.RowLocks {
		add("Counter: in Update, lock the row", "", q.counter(c, true))
		add("Counter: in Update, create the missing row", "", q.ensureCounter(c))
	}
	add("PutCounter", "", q.putCounter(queue.CounterState{Site: site, ID: "c1", Mode: queue.CounterOpen, TicketID: tk.ID, Since: tk.CalledAt}))
	add("Counters", "", q.counters(site))
	add("Streak", "", q.streak(queue.ServiceKey{Site: site, Service: service}))
	add("SetStreak", "", q.setStreak(queue.ServiceKey{Site: site, Service: service}, 2))
	add("LockSites: 2 sites", "several daemons: first in every write", q.lockSites([]string{"s1", "s2"}, d.MergeWrites))
	add("AppendEvents: next versions", "", q.nextVersions(site, 2))
	add("AppendEvents: 2 rows", "", q.insertEvents(exampleEvents(tk)))
	if d.MergeWrites {
		mergedCatalog(q, add, site, tk, before)
	}
	ev := exampleEvents(tk)[0]
	add("AppendEvents: outbox rows, 1 event to 2 receivers", "", q.insertOutbox([]outboxRow{
		{"7d44b6a2-5a3e-4c1e-9f00-0123456789ab", "his", ev, []byte(`{"id":"..."}`)},
		{"7d44b6a2-5a3e-4c1e-9f00-0123456789ab", "sms", ev, []byte(`{"id":"..."}`)}}))
	add("Events{After, Limit}", "", q.events(queue.EventsQuery{Site: site, After: 41, Limit: 100}))
	add("Events{After}", "", q.events(queue.EventsQuery{Site: site, After: 41}))
	add("LastVersion", "", q.lastVersion(site))
	bookingCatalog(q, add)
	add("LastVersions", "follow other daemons' events", q.lastVersions())
	retentionCatalog(q, add)
	return out
}

// mergedCatalog adds the writes an engine transaction holds back
// (Tx.DeferWrites) and the one statement they go as.
func mergedCatalog(q *queries, add func(name, use string, st Stmt), site string, tk *queue.Ticket, before int64) {
	bump := q.bumpVersion(site, 2)
	add("AppendEvents: next versions of a locked site", "merged with the transaction's other writes", bump)
	m, _ := merged([]pendingWrite{{st: bump}, {st: q.insertEvents(exampleEvents(tk))},
		{st: q.saveRequests([]queue.SavedRequest{{RequestKey: queue.RequestKey{Device: "k1", Key: "x1"}, Op: "issue A", AtMs: before}})}})
	add("merged writes: a version, 2 events, 1 saved result", "the writes waiting at COMMIT", m)
}

// retentionCatalog adds the purge's statements (Store.PurgeRequests and
// the others, outside queue.Tx) for review: a pass with nothing due must
// not read a table whole (on SQLite, EXPLAIN QUERY PLAN of PurgeRequests
// and PurgeTickets reads requests_at and tickets_number).
func retentionCatalog(q *queries, add func(name, use string, st Stmt)) {
	before := time.Date(2026, 2, 28, 4, 0, 0, 0, time.UTC).UnixMilli()
	const use = "purge"
	add("PurgeRequests", use, q.purgeRequests(before, 500))
	add("PurgeOutbox", use, q.purgeOutbox(before, 500))
	add("BlankPatients", use, q.blankPatients(before, 500))
	add("PurgePatientLocks", use, q.purgePatientLocks(before, 500))
	add("PurgeEvents: the oldest", use, q.oldestEvents("s1", 41, 500))
	add("PurgeEvents", use, q.deleteEventsTo("s1", 41))
	add("PurgeTickets", use, q.purgeTickets("s1", "2026-02-28", before, 500))
	add("PurgeTickets: day counters", use, q.purgeDayCounters("s1", "2026-02-28", 500))
	add("PurgeBookings: slots", use, q.oldSlots(before, 500))
	add("PurgeBookings", use, q.deleteByIDs("bookings", "slot_id", []int64{5, 6}))
}

// bookingCatalog adds the statements of queue.BookingTx.
func bookingCatalog(q *queries, add func(name, use string, st Stmt)) {
	b := exampleBooking()
	sl := queue.Slot{ID: b.Slot, Site: b.Site, Resource: b.Resource, Start: b.Start, End: b.End, Capacity: 10, Booked: 3}
	next := sl
	next.Start, next.End = sl.Start.Add(15*time.Minute), sl.End.Add(15*time.Minute)
	add("InsertSlots: 2 rows", "", q.insertSlots([]queue.Slot{sl, next}))
	day := queue.SlotQuery{Site: b.Site, From: b.Start.Truncate(24 * time.Hour), To: b.Start.Truncate(24 * time.Hour).Add(24 * time.Hour)}
	add("Slots", "free slots of a day, every resource", q.slots(day))
	day.Resource = b.Resource
	add("Slots{Resource}", "free slots of a day; slot generation", q.slots(day))
	add("Slot", "", q.slot(sl.ID))
	add("ReshapeSlot", "slot generation after a schedule change", q.reshapeSlot(sl))
	add("TakePlace", "", q.takePlace(sl.ID, b.CreatedAt))
	if q.d.MergeWrites {
		add("TakeSlot", "a booking", q.takeSlot(queue.PatientKey{Site: sl.Site, Patient: b.Patient}, sl.ID, b.CreatedAt))
	}
	add("ReleasePlace", "", q.releasePlace(sl.ID))
	add("LockPatient", "", q.lockPatient(queue.PatientKey{Site: b.Site, Patient: b.Patient}, b.CreatedAt))
	add("InsertBooking", "", q.insertBooking(b))
	add("UpdateBooking", "", q.updateBooking(b, queue.BookingHeld))
	add("Booking", "", q.booking(b.ID))
	add("BookingByCode", "", q.bookingByCode(b.Site, b.Code))
	active := []queue.BookingStatus{queue.BookingHeld, queue.BookingBooked}
	for _, f := range []example[queue.BookingFilter]{
		{"", queue.BookingFilter{}},
		{"book: the patient's overlapping bookings", queue.BookingFilter{Patient: b.Patient, Statuses: active, StartBefore: b.End, EndAfter: b.Start, Limit: 1}},
		{"sweep: bookings missed", queue.BookingFilter{Statuses: []queue.BookingStatus{queue.BookingBooked}, EndBefore: b.Start, Limit: 1000}},
		{"sweep: holds run out", queue.BookingFilter{Statuses: []queue.BookingStatus{queue.BookingHeld}, HeldBefore: b.Start, Limit: 1000}},
		{"", queue.BookingFilter{Slot: b.Slot, Resource: b.Resource}},
		{"snapshot: the bookings of today's slots and later ones", queue.BookingFilter{Statuses: []queue.BookingStatus{queue.BookingHeld,
			queue.BookingBooked, queue.BookingCancelled, queue.BookingCheckedIn, queue.BookingMissed, queue.BookingExpired}, EndAfter: b.Start}},
	} {
		flt := f.q
		flt.Site = b.Site
		add("FindBookings"+setFields(flt, "Site"), f.use, q.findBookings(flt))
	}
}

// exampleBooking is a held booking with every field set.
func exampleBooking() *queue.Booking {
	t0 := time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC)
	return &queue.Booking{ID: 9, Site: "s1", Resource: "dr-li", Slot: 5, Start: t0, End: t0.Add(15 * time.Minute), Patient: "p-123",
		Code: "K7P3X9QM", Status: queue.BookingHeld, HeldUntil: t0.Add(-time.Hour), TicketID: 7, Number: "A012",
		CreatedAt: t0.Add(-2 * time.Hour), UpdatedAt: t0.Add(-time.Hour), Device: "api:hospital", IdemKey: "x9"}
}

// example is one variant of a query in the catalog: use names the Engine
// operation that sends it, if one does.
type example[Q any] struct {
	use string
	q   Q
}

// exampleHeads are the variants of Head in the catalog (Site and Day are
// set by the caller).
func exampleHeads(service string, before int64) []example[queue.HeadQuery] {
	priority := []queue.Class{queue.ClassEmergency, queue.ClassVIP}
	return []example[queue.HeadQuery]{
		{"", queue.HeadQuery{}},
		{"", queue.HeadQuery{Service: service}},
		{"", queue.HeadQuery{Counter: "c1"}},
		{"", queue.HeadQuery{Classes: priority}},
		{"", queue.HeadQuery{NotClasses: priority}},
		{"", queue.HeadQuery{WaitingBefore: before}},
		{"", queue.HeadQuery{ByWait: true}},
		{"", queue.HeadQuery{Lock: true}},
		{"call next: the queue of a service", queue.HeadQuery{Service: service, Lock: true}},
		{"call next: a ratio's priority tickets", queue.HeadQuery{Service: service, Classes: priority, Lock: true}},
		{"call next: a ratio's other tickets", queue.HeadQuery{Service: service, NotClasses: priority, Lock: true}},
		{"call next: tickets transferred to the counter", queue.HeadQuery{Counter: "c1", Lock: true}},
		{"call next: tickets over the service's maximum wait", queue.HeadQuery{Service: service, WaitingBefore: before, ByWait: true}},
		{"", queue.HeadQuery{Service: service, Counter: "c1", Classes: priority, NotClasses: []queue.Class{queue.ClassRevisit},
			WaitingBefore: before, ByWait: true, Lock: true}},
	}
}

// exampleFinds are the variants of Find in the catalog (Site is set by the
// caller).
func exampleFinds(day, service string, before int64) []example[queue.Filter] {
	statuses := []queue.Status{queue.StatusCalled, queue.StatusServing}
	return []example[queue.Filter]{
		{"", queue.Filter{}},
		{"", queue.Filter{Service: service}},
		{"", queue.Filter{Day: day}},
		{"", queue.Filter{BeforeDay: day}},
		{"", queue.Filter{Statuses: statuses}},
		{"", queue.Filter{CalledBefore: before}},
		{"", queue.Filter{Limit: 1000}},
		{"sweep: expire the waiting tickets of past days",
			queue.Filter{BeforeDay: day, Statuses: []queue.Status{queue.StatusWaiting}, Limit: 1000}},
		{"sweep: expire the tickets counters still hold after the rollover", queue.Filter{BeforeDay: day, Statuses: statuses, Limit: 1000}},
		{"sweep: call time-outs",
			queue.Filter{Service: service, Day: day, Statuses: []queue.Status{queue.StatusCalled}, CalledBefore: before, Limit: 1000}},
		{"", queue.Filter{Service: service, Day: day, BeforeDay: "2026-03-03", Statuses: statuses, CalledBefore: before, Limit: 1000}},
	}
}

// setFields names the fields of the struct v that are not zero, skip
// aside, with the length of a slice (the text of a statement depends on
// it): "{Service, Classes[2], Lock}", or "" when none is.
func setFields(v any, skip ...string) string {
	rv := reflect.ValueOf(v)
	var names []string
	for i := range rv.NumField() {
		name := rv.Type().Field(i).Name
		f := rv.Field(i)
		switch {
		case f.IsZero() || slices.Contains(skip, name):
		case f.Kind() == reflect.Slice:
			names = append(names, fmt.Sprintf("%s[%d]", name, f.Len()))
		default:
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// exampleTicket is a called ticket with every field set, so each argument
// of a statement shows which field it comes from.
func exampleTicket() *queue.Ticket {
	t0 := time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC)
	return &queue.Ticket{
		ID: 7, Site: "s1", Service: "A", Queue: "B", Day: "2026-03-02", Seq: 12, Number: "A012",
		Class: queue.ClassVIP, Status: queue.StatusCalled, Rank: 10, SortKey: 4096,
		Counter: "c1", TargetCounter: "c2", CallCount: 2, NoShowCount: 1,
		IssuedAt: t0, WaitingSince: t0.Add(time.Minute), CalledAt: t0.Add(3 * time.Minute),
		FirstCalledAt: t0.Add(2 * time.Minute), Device: "kiosk1", IdemKey: "x1",
	}
}

// exampleEvents are two events of tk with their versions given.
func exampleEvents(tk *queue.Ticket) []*queue.Event {
	evs := make([]*queue.Event, 2)
	for i := range evs {
		evs[i] = &queue.Event{
			Site: tk.Site, Version: int64(42 + i), Type: queue.EventCalled, TicketID: tk.ID, Number: tk.Number,
			Service: tk.Queue, Issuer: tk.Service, Day: tk.Day, Class: tk.Class, Status: tk.Status,
			Counter: tk.Counter, Actor: "keypad1", Detail: fmt.Sprint("call ", i+1), At: tk.CalledAt, CallCount: i + 1,
			From: queue.StatusWaiting, FromQueue: tk.Queue, Waited: 2 * time.Minute,
		}
	}
	return evs
}
