package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// HistoryOpts shape the history History writes.
type HistoryOpts struct {
	// Days is how many finished service days before today to write, the
	// oldest first; PerDay the tickets of each. Today gets PerDay tickets
	// spread over the day so far (those not finished by Now stay waiting).
	Days, PerDay int
	// Today writes today's tickets too.
	Today bool
	Now   time.Time
	Seed  uint64
	// Progress, when set, is told each day once it is written; an error
	// from it stops the history there (bench history purges as it goes).
	Progress func(day string, tickets int) error
}

// HistoryResult counts what History wrote.
type HistoryResult struct {
	Days, Tickets, Events int
}

// historyBatch is how many rows one statement inserts.
const historyBatch = 500

// History writes consistent synthetic history for site straight into st,
// a day a transaction: each ticket issued between 07:30 and 17:30 at a
// kiosk, called at a counter serving its service after a random wait,
// then served (SERVING, DONE), marked no-show (5 %) or cancelled while
// waiting (3 %), with the events the engine writes for that, in version
// order by time. The store's own writes (NextSeq, InsertTickets,
// AppendEvents) keep numbers, versions and days as `nowserving check`
// wants them. The days must be new to the store.
func History(ctx context.Context, st queue.Store, site queue.Site, o HistoryOpts) (HistoryResult, error) {
	var res HistoryResult
	g, err := newHistoryGen(site, o)
	if err != nil {
		return res, err
	}
	today := site.Day(o.Now)
	t, err := time.ParseInLocation(time.DateOnly, today, site.Location)
	if err != nil {
		return res, fmt.Errorf("history: %w", err)
	}
	n := o.Days
	if o.Today {
		n++
	}
	for i := range n {
		day := t.AddDate(0, 0, i-o.Days).Format(time.DateOnly)
		tickets, events := g.day(day, day == today)
		if err := storeDay(ctx, st, site.ID, tickets, events); err != nil {
			return res, fmt.Errorf("history: day %s: %w", day, err)
		}
		res.Days++
		res.Tickets += len(tickets)
		res.Events += len(events)
		if o.Progress != nil {
			if err := o.Progress(day, len(tickets)); err != nil {
				return res, fmt.Errorf("history: after day %s: %w", day, err)
			}
		}
	}
	return res, nil
}

// historyGen makes the tickets and events of a day.
type historyGen struct {
	site     queue.Site
	o        HistoryOpts
	rnd      *rand.Rand
	services []*queue.Service
	counters map[string][]string // service -> counters serving it
}

func newHistoryGen(site queue.Site, o HistoryOpts) (*historyGen, error) {
	g := &historyGen{site: site, o: o, rnd: rand.New(rand.NewPCG(o.Seed, 23)), counters: map[string][]string{}}
	for _, c := range site.Counters {
		for _, cs := range c.Services {
			g.counters[cs.Service] = append(g.counters[cs.Service], c.ID)
		}
	}
	for i := range site.Services {
		if len(g.counters[site.Services[i].Code]) > 0 {
			g.services = append(g.services, &site.Services[i])
		}
	}
	if len(g.services) == 0 {
		return nil, errors.New("history: no service of the site is served by a counter")
	}
	return g, nil
}

// at is the local time hh:mm of service day day.
func (g *historyGen) at(day string, h, m int) time.Time {
	t, _ := time.ParseInLocation(time.DateOnly, day, g.site.Location)
	return time.Date(t.Year(), t.Month(), t.Day(), h, m, 0, 0, g.site.Location)
}

// day makes the tickets of day (today: up to Now) and their events,
// sorted by time; ticket ids are set later.
func (g *historyGen) day(day string, today bool) ([]*queue.Ticket, []*queue.Event) {
	open, closeAt := g.at(day, 7, 30), g.at(day, 17, 30)
	if today {
		if g.o.Now.Before(open.Add(time.Hour)) {
			open = g.o.Now.Add(-time.Hour) // early in the day: its first hour
		}
		closeAt = g.o.Now.Add(-time.Minute)
	}
	span := closeAt.Sub(open)
	times := make([]time.Duration, g.o.PerDay)
	for i := range times {
		times[i] = time.Duration(g.rnd.Int64N(int64(span)))
	}
	slices.Sort(times)
	seqs := map[string]int{}
	var tickets []*queue.Ticket
	var events []*queue.Event
	for _, off := range times {
		sv := g.services[g.rnd.IntN(len(g.services))]
		seqs[sv.Code]++
		t := &queue.Ticket{Site: g.site.ID, Service: sv.Code, Queue: sv.Code, Day: day, Seq: seqs[sv.Code],
			Number: sv.NumberText(seqs[sv.Code]), Class: queue.ClassNormal, Device: "kiosk-1"}
		t.IssuedAt = open.Add(off).Truncate(time.Millisecond)
		t.WaitingSince = t.IssuedAt
		evs := g.life(t, g.counters[sv.Code][g.rnd.IntN(len(g.counters[sv.Code]))], today)
		tickets = append(tickets, t)
		events = append(events, evs...)
	}
	slices.SortStableFunc(events, func(a, b *queue.Event) int { return a.At.Compare(b.At) })
	return tickets, events
}

// life plays ticket t to its end at counter c and returns its events
// (TicketID is filled in once the ticket has its id); today, a ticket
// whose end is after Now stays waiting.
func (g *historyGen) life(t *queue.Ticket, c string, today bool) []*queue.Event {
	ev := func(typ queue.EventType, at time.Time, st, from queue.Status, counter, fromCounter string) *queue.Event {
		return &queue.Event{Site: t.Site, Type: typ, Number: t.Number, Service: t.Queue, Issuer: t.Service, Day: t.Day,
			Class: t.Class, Status: st, From: from, Counter: counter, FromCounter: fromCounter, At: at, Actor: "keypad-" + c}
	}
	issued := ev(queue.EventIssued, t.IssuedAt, queue.StatusWaiting, "", "", "")
	issued.Actor = t.Device
	wait := time.Duration(g.rnd.ExpFloat64()*float64(12*time.Minute)) % (90 * time.Minute)
	wait = wait.Truncate(time.Millisecond)
	call := t.IssuedAt.Add(wait)
	service := time.Duration(120+g.rnd.IntN(480)) * time.Second
	r := g.rnd.Float64()
	end := call.Add(30 * time.Second).Add(service)
	if today && end.After(g.o.Now) {
		t.Status = queue.StatusWaiting
		return []*queue.Event{issued}
	}
	if r < 0.03 { // cancelled while waiting
		t.Status, t.FinishedAt = queue.StatusCancelled, t.IssuedAt.Add(wait/2)
		e := ev(queue.EventCancelled, t.FinishedAt, queue.StatusCancelled, queue.StatusWaiting, "", "")
		e.FromQueue, e.Actor = t.Queue, t.Device
		return []*queue.Event{issued, e}
	}
	t.Counter, t.CallCount, t.CalledAt, t.FirstCalledAt = c, 1, call, call
	called := ev(queue.EventCalled, call, queue.StatusCalled, queue.StatusWaiting, c, "")
	called.FromQueue, called.CallCount, called.Waited = t.Queue, 1, wait
	if r < 0.08 { // no-show
		t.Status, t.NoShowCount, t.FinishedAt = queue.StatusNoShow, 1, call.Add(3*time.Minute)
		e := ev(queue.EventNoShow, t.FinishedAt, queue.StatusNoShow, queue.StatusCalled, c, c)
		e.FromQueue, e.CallCount = t.Queue, 1
		return []*queue.Event{issued, called, e}
	}
	t.Status, t.ServingAt, t.FinishedAt = queue.StatusDone, call.Add(30*time.Second), end
	serving := ev(queue.EventServing, t.ServingAt, queue.StatusServing, queue.StatusCalled, c, c)
	done := ev(queue.EventDone, end, queue.StatusDone, queue.StatusServing, c, c)
	serving.FromQueue, serving.CallCount, done.FromQueue, done.CallCount, done.ServiceTime = t.Queue, 1, t.Queue, 1, service
	return []*queue.Event{issued, called, serving, done}
}

// storeDay stores a day's tickets and events in one transaction.
func storeDay(ctx context.Context, st queue.Store, site string, tickets []*queue.Ticket, events []*queue.Event) error {
	if len(tickets) == 0 {
		return nil
	}
	return st.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
		if err := tx.LockSites(ctx, []string{site}); err != nil {
			return err
		}
		counts := map[string]int{}
		for _, t := range tickets {
			counts[t.Service]++
		}
		for _, sv := range slices.Sorted(maps.Keys(counts)) {
			if _, err := tx.NextSeq(ctx, queue.DayKey{Site: site, Service: sv, Day: tickets[0].Day}, counts[sv]); err != nil {
				return err
			}
		}
		if err := insertTickets(ctx, tx, tickets); err != nil {
			return err
		}
		byNumber := map[string]int64{}
		for _, t := range tickets {
			byNumber[t.Number] = t.ID
		}
		for _, e := range events {
			e.TicketID = byNumber[e.Number]
		}
		for b := range slices.Chunk(events, historyBatch) {
			if err := tx.AppendEvents(ctx, site, b); err != nil {
				return err
			}
		}
		return nil
	})
}

// insertTickets inserts the tickets in batches, or one by one where the
// store gives ids only as it inserts.
func insertTickets(ctx context.Context, tx queue.Tx, tickets []*queue.Ticket) error {
	for b := range slices.Chunk(tickets, historyBatch) {
		ids, err := tx.TicketIDs(ctx, len(b))
		if errors.Is(err, errors.ErrUnsupported) {
			for _, t := range b {
				if err := tx.InsertTicket(ctx, t); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			return err
		}
		for i, t := range b {
			t.ID = ids[i]
		}
		if err := tx.InsertTickets(ctx, b); err != nil {
			return err
		}
	}
	return nil
}
