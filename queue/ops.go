package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// keyGap is the distance between the sort keys of consecutive numbers, so
// tickets can be inserted between them.
const keyGap int64 = 1 << 20

// opName names an operation with the fields that identify it, so an
// idempotency key reused for a different request (another service, another
// counter) is refused instead of returning the first result.
// The names are stored with each request's result, so their form (a
// trailing space where a field is empty) stays as it is: a retry across an
// upgrade must find its request again. People see them through opText.
func opName(op string, fields ...string) string {
	return op + " " + strings.Join(fields, " ")
}

// opText is an operation's name as a refusal tells it: its words, one
// space apart ("issue A", not "issue A ").
func opText(op string) string {
	return strings.Join(strings.Fields(op), " ")
}

// IssueRequest asks for a new ticket.
type IssueRequest struct {
	Request
	Service string
	Class   Class // empty: normal

	// slot, set by a check-in on time, orders the appointment ticket by
	// its slot's start among the appointments.
	slot time.Time
}

// CounterRequest acts for one counter.
type CounterRequest struct {
	Request
	Counter string
}

// NumberRequest acts on a ticket by its number of today; Counter is the
// counter acting, when one does.
type NumberRequest struct {
	Request
	Counter string
	Number  string
}

// TransferRequest moves the counter's current ticket back to waiting, in
// another service's queue or for a given counter. It keeps its number.
type TransferRequest struct {
	Request
	Counter   string
	ToService string
	ToCounter string
	// Reason, when given, follows the target in the event's detail
	// ("service R: needs an X-ray first").
	Reason string
}

// Issue takes a new number for a service.
func (e *Engine) Issue(ctx context.Context, r IssueRequest) (Ticket, error) {
	return idempotent(ctx, e, r.call(), func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
		return e.issue(ctx, tx, j, s, r)
	})
}

// IssuePosition is Issue that also tells where the new ticket stands, as a
// kiosk prints it: the people ahead and the estimated wait come from the
// waiting order in memory once the ticket's commit is in it, so the answer
// costs no second transaction and no count over the queue (from the store
// only when the order is not available). A retry of an issued request
// (same device and key) gets its ticket as it is now, and where it stands
// now.
func (e *Engine) IssuePosition(ctx context.Context, r IssueRequest) (Position, error) {
	t, again, err := runIdempotent(ctx, e, r.call(), steps[Ticket, Position]{
		run: func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
			return e.issue(ctx, tx, j, s, r)
		},
		again: func(ctx context.Context, tx Tx, s *Site, t Ticket) (Position, error) {
			cur, err := tx.Ticket(ctx, t.ID)
			if err != nil {
				return Position{}, fmt.Errorf("queue: read issued ticket %s: %w", t.Number, err)
			}
			pos, err := e.position(ctx, tx, s, cur)
			pos.Ticket.Version = t.Version
			return pos, err
		},
	})
	if err != nil {
		return Position{}, err
	}
	if again != nil {
		return *again, nil
	}
	// t.Version is that of its ISSUED event: the order has it once the
	// feed has.
	if p, ok := e.feed.position(t.Site, &t, t.Version); ok {
		return p, nil
	}
	s, err := e.Site(t.Site)
	if err != nil {
		return Position{}, err
	}
	p, err := e.storeTicketPosition(ctx, s, t)
	p.Ticket.Version = t.Version
	return p, err
}

// call is r as an idempotent request of the kiosks' lane, telling the
// batch the service it takes a number of; Issue and IssuePosition are the
// same request.
func (r IssueRequest) call() call {
	q := r.Request
	q.number = r.Service
	return call{Request: q, lane: laneIssue, op: opName("issue", r.Service, string(r.Class))}
}

// issue takes the next number of r's service in transaction tx.
func (e *Engine) issue(ctx context.Context, tx Tx, j *job, s *Site, r IssueRequest) (Ticket, error) {
	sv, err := s.service(r.Service)
	if err != nil {
		return Ticket{}, err
	}
	class := r.Class
	if class == "" {
		class = ClassNormal
	}
	if err := s.checkIssueClass(class); err != nil {
		return Ticket{}, err
	}
	now := e.clock()
	if !sv.OpenAt(now, s.Location) {
		return Ticket{}, s.closedError(sv, now)
	}
	day := s.Day(now)
	seq, err := tx.NextSeq(ctx, DayKey{Site: s.ID, Service: sv.Code, Day: day}, 1)
	if err != nil {
		return Ticket{}, fmt.Errorf("queue: issue ticket for %s: next number: %w", sv.Code, err)
	}
	if sv.DailyCap > 0 && seq > sv.DailyCap {
		return Ticket{}, fmt.Errorf("%w: %s issued its %d tickets for %s", ErrServiceFull, sv.Code, sv.DailyCap, day)
	}
	t := Ticket{
		Site: s.ID, Service: sv.Code, Queue: sv.Code, Day: day, Seq: seq, Number: sv.NumberText(seq),
		Class: class, Status: StatusWaiting, Rank: s.rank(class), SortKey: int64(seq) * keyGap,
		IssuedAt: now, WaitingSince: now, Device: r.Device, IdemKey: r.Key,
	}
	if class == ClassAppointment && !r.slot.IsZero() {
		t.SortKey = r.slot.UnixMilli()
	}
	if class == ClassRevisit {
		if err := place(ctx, tx, &t, sv.RevisitAfter); err != nil {
			return Ticket{}, err
		}
	}
	if err := tx.InsertTicket(ctx, &t); err != nil {
		return Ticket{}, fmt.Errorf("queue: issue ticket for %s: %w", sv.Code, err)
	}
	j.emit(ticketEvent(ticketChange{Event: EventIssued, Actor: r.Device, At: now}, nil, &t))
	return t, nil
}

func (s *Site) checkIssueClass(c Class) error {
	switch c {
	case ClassNormal, ClassRevisit:
		return nil
	case ClassReentered:
		return fmt.Errorf("%w: class %s is given by re-entry, not at issue", ErrBadRequest, c)
	}
	ranks := s.Ranks
	if ranks == nil {
		ranks = DefaultRanks()
	}
	if _, ok := ranks[c]; !ok {
		return fmt.Errorf("%w: unknown ticket class %q at site %s", ErrBadRequest, c, s.ID)
	}
	return nil
}

// place gives t a sort key exactly n places after the head of the waiting
// tickets of its queue with its rank ("exactly" by rank, not by time). With
// fewer than n waiting it goes last.
func place(ctx context.Context, tx Tx, t *Ticket, n int) error {
	if n < 0 {
		n = 0
	}
	list, err := tx.Waiting(ctx, WaitingQuery{Site: t.Site, Day: t.Day, Service: t.Queue, Rank: t.Rank, Limit: n + 1})
	if err != nil {
		return fmt.Errorf("queue: place %s: %w", t.Number, err)
	}
	list = slices.DeleteFunc(list, func(w Ticket) bool { return w.ID == t.ID && t.ID != 0 })
	switch {
	case len(list) <= n:
		if len(list) > 0 {
			t.SortKey = max(t.SortKey, list[len(list)-1].SortKey+keyGap)
		}
		return nil
	case n == 0:
		t.SortKey = list[0].SortKey - keyGap
		return nil
	}
	prev, next := list[n-1].SortKey, list[n].SortKey
	if next-prev >= 2 {
		t.SortKey = prev + (next-prev)/2
		return nil
	}
	// No room left between the neighbours: spread the band again, keeping
	// its order, then insert.
	all, err := tx.Waiting(ctx, WaitingQuery{Site: t.Site, Day: t.Day, Service: t.Queue, Rank: t.Rank, Limit: 1 << 30})
	if err != nil {
		return fmt.Errorf("queue: place %s: %w", t.Number, err)
	}
	all = slices.DeleteFunc(all, func(w Ticket) bool { return w.ID == t.ID && t.ID != 0 })
	base := all[0].SortKey
	for i := range all {
		k := base + int64(i)*keyGap
		if i >= n {
			k += keyGap
		}
		if err := tx.SetSortKey(ctx, all[i].ID, k); err != nil {
			return fmt.Errorf("queue: place %s: renumber: %w", t.Number, err)
		}
	}
	t.SortKey = base + int64(n)*keyGap
	return nil
}

// ticketChange says who changed a ticket, where and when: the event's own
// fields beside the ticket's.
type ticketChange struct {
	Event   EventType
	Counter string // the counter it happened at, if any
	Actor   string // the device, person or sweep that made it
	Detail  string // a reason or a note
	At      time.Time
}

// ticketEvent is the event of change c of ticket t, which was before
// before the change (nil for a new ticket).
func ticketEvent(c ticketChange, before, t *Ticket) Event {
	typ, at := c.Event, c.At
	ev := Event{Site: t.Site, Type: typ, TicketID: t.ID, Number: t.Number, Service: t.Queue, Issuer: t.Service, Day: t.Day,
		Class: t.Class, Status: t.Status, Counter: c.Counter, Actor: c.Actor, Detail: c.Detail, At: at, CallCount: t.CallCount,
		Waited: at.Sub(t.IssuedAt)}
	if before != nil {
		ev.From, ev.FromQueue, ev.FromCounter = before.Status, before.Queue, before.Counter
	}
	if typ == EventDone && !t.ServingAt.IsZero() {
		ev.ServiceTime = at.Sub(t.ServingAt)
	}
	return ev
}

// ticketMove is action act on ticket t, with change c: edit sets the
// fields the action changes besides the status (nil: none).
type ticketMove struct {
	t    *Ticket
	act  Action
	c    ticketChange
	edit func(*Ticket)
}

// move applies m to its ticket, writes it with a compare-and-set on its old
// status and appends the event of its change.
func move(ctx context.Context, tx Tx, j *job, m ticketMove) error {
	t := m.t
	to, err := Next(t.Number, t.Status, m.act)
	if err != nil {
		return err
	}
	before := *t
	from := t.Status
	t.Status = to
	if m.edit != nil {
		m.edit(t)
	}
	if err := tx.UpdateTicket(ctx, t, from); err != nil {
		return fmt.Errorf("queue: %s %s: %w", m.act, t.Number, err)
	}
	j.emit(ticketEvent(m.c, &before, t))
	return nil
}

// atCounter is a counter acting in a request: its definition, its stored
// state, the ticket it calls or serves (nil: none), who acts and when.
type atCounter struct {
	c     *Counter
	cs    CounterState
	cur   *Ticket
	actor string
	now   time.Time
}

// change is the ticketChange of event ev at the counter.
func (a atCounter) change(ev EventType) ticketChange {
	return ticketChange{Event: ev, Counter: a.c.ID, Actor: a.actor, At: a.now}
}

// loadCounter loads the counter's definition, state and current ticket;
// the caller sets who acts and when.
func loadCounter(ctx context.Context, tx Tx, s *Site, id string) (atCounter, error) {
	c, err := s.counter(id)
	if err != nil {
		return atCounter{}, err
	}
	cs, err := tx.Counter(ctx, CounterKey{Site: s.ID, ID: id})
	if err != nil {
		return atCounter{}, fmt.Errorf("queue: read counter %s: %w", id, err)
	}
	a := atCounter{c: c, cs: cs}
	if cs.TicketID == 0 {
		return a, nil
	}
	t, err := tx.Ticket(ctx, cs.TicketID)
	if errors.Is(err, ErrNotFound) {
		return a, nil
	}
	if err != nil {
		return atCounter{}, fmt.Errorf("queue: read ticket of counter %s: %w", id, err)
	}
	if t.Status == StatusCalled || t.Status == StatusServing {
		// Otherwise cancelled or expired by someone else: the counter is
		// free.
		a.cur = t
	}
	return a, nil
}

// holding is the counter's state holding ticket (0: none, the counter is
// free) from at on; a counter never written before is open.
func (c CounterState) holding(ticket int64, at time.Time) CounterState {
	c.TicketID, c.Since = ticket, at
	if c.Mode == "" {
		c.Mode = CounterOpen
	}
	return c
}

// putCounter writes a counter's state.
func putCounter(ctx context.Context, tx Tx, cs CounterState) error {
	if err := tx.PutCounter(ctx, cs); err != nil {
		return fmt.Errorf("queue: write counter %s: %w", cs.ID, err)
	}
	return nil
}

// readyToCall completes a ticket the counter is serving (calling next ends
// the current service) and refuses while a ticket is still only called.
func (a atCounter) readyToCall(ctx context.Context, tx Tx, j *job) error {
	if a.cs.Mode == CounterPaused || a.cs.Mode == CounterClosed {
		return fmt.Errorf("%w: counter %s is %s", ErrCounterPaused, a.c.ID, a.cs.Mode)
	}
	if a.cur == nil {
		return nil
	}
	if a.cur.Status == StatusCalled {
		return fmt.Errorf("%w: counter %s is calling %s: start, recall or mark it no-show first", ErrCounterBusy, a.c.ID, a.cur.Number)
	}
	return move(ctx, tx, j, ticketMove{t: a.cur, act: ActComplete, c: a.change(EventDone), edit: func(t *Ticket) { t.FinishedAt = a.now }})
}

// claim calls waiting ticket t to the counter; it returns ErrConflict when
// another transaction took it first.
func (a atCounter) claim(ctx context.Context, tx Tx, j *job, t *Ticket) error {
	err := move(ctx, tx, j, ticketMove{t: t, act: ActCall, c: a.change(EventCalled), edit: func(t *Ticket) {
		t.Counter, t.TargetCounter = a.c.ID, ""
		t.CallCount++
		t.CalledAt = a.now
		if t.FirstCalledAt.IsZero() {
			t.FirstCalledAt = a.now
		}
	}})
	if err != nil {
		return err
	}
	return putCounter(ctx, tx, a.cs.holding(t.ID, a.now))
}

// CallNext calls the next ticket for a counter by its policy.
func (e *Engine) CallNext(ctx context.Context, r CounterRequest) (Ticket, error) {
	return idempotent(ctx, e, r.call("call-next"), func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
		a, err := loadCounter(ctx, tx, s, r.Counter)
		if err != nil {
			return Ticket{}, err
		}
		a.actor, a.now = r.Device, e.clock()
		if err := a.readyToCall(ctx, tx, j); err != nil {
			return Ticket{}, err
		}
		for attempt := 0; attempt < 5; attempt++ {
			p, err := pick(ctx, tx, s, a)
			if err != nil {
				return Ticket{}, err
			}
			if p == nil {
				return Ticket{}, fmt.Errorf("%w: for counter %s", ErrNoneWaiting, a.c.ID)
			}
			err = a.claim(ctx, tx, j, p.t)
			if errors.Is(err, ErrConflict) {
				continue // another daemon took it between our read and write
			}
			if err != nil {
				return Ticket{}, err
			}
			if p.ratio != nil {
				n := p.streak + 1
				if p.priority {
					n = 0
				}
				if err := tx.SetStreak(ctx, ServiceKey{Site: s.ID, Service: p.t.Queue}, n); err != nil {
					return Ticket{}, fmt.Errorf("queue: ratio streak of %s: %w", p.t.Queue, err)
				}
			}
			return *p.t, nil
		}
		return Ticket{}, fmt.Errorf("queue: call next for counter %s: %w", a.c.ID, ErrConflict)
	})
}

// picked is the ticket chosen for a counter and how the ratio policy saw it.
type picked struct {
	t        *Ticket
	ratio    *Ratio
	priority bool
	streak   int
}

// pick chooses the next ticket for counter a: tickets transferred to it
// first, then any ticket over its service's maximum wait (oldest first),
// then by the counter's policy over its services.
func pick(ctx context.Context, tx Tx, s *Site, a atCounter) (*picked, error) {
	c, now := a.c, a.now
	day := s.Day(now)
	t, err := tx.Head(ctx, HeadQuery{Site: s.ID, Day: day, Counter: c.ID, Lock: true})
	if err != nil || t != nil {
		return wrapPick(t, err)
	}
	var oldest *Ticket
	for _, cs := range c.Services {
		sv, err := s.service(cs.Service)
		if err != nil {
			return nil, err
		}
		if sv.MaxWait <= 0 {
			continue
		}
		t, err := tx.Head(ctx, HeadQuery{Site: s.ID, Day: day, Service: sv.Code, WaitingBefore: ms(now.Add(-sv.MaxWait)), ByWait: true})
		if err != nil {
			return nil, fmt.Errorf("queue: pick for counter %s: %w", c.ID, err)
		}
		if t != nil && (oldest == nil || t.WaitingSince.Before(oldest.WaitingSince)) {
			oldest = t
		}
	}
	if oldest != nil {
		return &picked{t: oldest}, nil
	}
	if c.Policy == PolicyWeighted {
		var best *picked
		var bestScore float64
		for _, cs := range c.Services {
			p, err := serviceHead(ctx, tx, s, HeadQuery{Site: s.ID, Day: day, Service: cs.Service})
			if err != nil {
				return nil, err
			}
			if p == nil {
				continue
			}
			w := max(cs.Weight, 1)
			score := float64(now.Sub(p.t.WaitingSince)+time.Millisecond) * float64(w)
			if best == nil || score > bestScore {
				best, bestScore = p, score
			}
		}
		return best, nil
	}
	for _, cs := range c.Services {
		p, err := serviceHead(ctx, tx, s, HeadQuery{Site: s.ID, Day: day, Service: cs.Service, Lock: true})
		if err != nil || p != nil {
			return p, err
		}
	}
	return nil, nil
}

func wrapPick(t *Ticket, err error) (*picked, error) {
	if err != nil {
		return nil, fmt.Errorf("queue: pick: %w", err)
	}
	return &picked{t: t}, nil
}

// serviceHead is the head of the queue of service q.Service, honouring its
// ratio: one priority ticket after every NormalPerPriority others.
func serviceHead(ctx context.Context, tx Tx, s *Site, q HeadQuery) (*picked, error) {
	code := q.Service
	sv, err := s.service(code)
	if err != nil {
		return nil, err
	}
	if sv.Ratio == nil {
		t, err := tx.Head(ctx, q)
		if err != nil || t == nil {
			return nil, wrapErr(err, code)
		}
		return &picked{t: t}, nil
	}
	streak, err := tx.Streak(ctx, ServiceKey{Site: s.ID, Service: code})
	if err != nil {
		return nil, wrapErr(err, code)
	}
	pq, nq := q, q
	pq.Classes, nq.NotClasses = sv.Ratio.Priority, sv.Ratio.Priority
	order := []HeadQuery{nq, pq}
	if streak >= sv.Ratio.NormalPerPriority {
		order = []HeadQuery{pq, nq}
	}
	for _, hq := range order {
		t, err := tx.Head(ctx, hq)
		if err != nil {
			return nil, wrapErr(err, code)
		}
		if t != nil {
			return &picked{t: t, ratio: sv.Ratio, priority: len(hq.Classes) > 0, streak: streak}, nil
		}
	}
	return nil, nil
}

func wrapErr(err error, code string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("queue: head of %s: %w", code, err)
}

// CallNumber calls a given waiting ticket to a counter.
func (e *Engine) CallNumber(ctx context.Context, r NumberRequest) (Ticket, error) {
	return idempotent(ctx, e, call{Request: r.Request, op: opName("call-number", r.Counter, r.Number)}, func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
		a, err := loadCounter(ctx, tx, s, r.Counter)
		if err != nil {
			return Ticket{}, err
		}
		a.actor, a.now = r.Device, e.clock()
		t, err := byNumberFor(ctx, tx, todays(s, r.Number, a.now), ActCall)
		if err != nil {
			return Ticket{}, err
		}
		if err := a.readyToCall(ctx, tx, j); err != nil {
			return Ticket{}, err
		}
		if err := a.claim(ctx, tx, j, t); err != nil {
			return Ticket{}, err
		}
		return *t, nil
	})
}

// todays is the key of ticket number of site s on the service day of now.
func todays(s *Site, number string, now time.Time) NumberKey {
	return NumberKey{Site: s.ID, Day: s.Day(now), Number: number}
}

// byNumber reads the ticket of k, which names a ticket of today.
func byNumber(ctx context.Context, tx Tx, k NumberKey) (*Ticket, error) {
	if k.Number == "" {
		return nil, fmt.Errorf("%w: no ticket number", ErrBadRequest)
	}
	t, err := tx.TicketByNumber(ctx, k)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %s today at %s", ErrNotFound, k.Number, k.Site)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: find ticket %s: %w", k.Number, err)
	}
	return t, nil
}

// byNumberFor is byNumber for action a: a ticket whose state does not
// allow a is refused with a *TransitionError.
func byNumberFor(ctx context.Context, tx Tx, k NumberKey, a Action) (*Ticket, error) {
	t, err := byNumber(ctx, tx, k)
	if err != nil {
		return nil, err
	}
	if _, err := Next(t.Number, t.Status, a); err != nil {
		return nil, err
	}
	return t, nil
}

// counterStep is an action on the ticket a counter calls or serves: op
// names it in the idempotency record, act moves the ticket, event records
// it, edit sets the ticket's fields besides its status, and frees, when
// true, frees the counter.
type counterStep struct {
	op    string
	act   Action
	event EventType
	edit  func(t *Ticket, now time.Time)
	frees bool
}

// call is r as an idempotent request op of the counter.
func (r CounterRequest) call(op string) call {
	return call{Request: r.Request, op: opName(op, r.Counter)}
}

// actOnCurrent applies st to the ticket the counter calls or serves now.
func (e *Engine) actOnCurrent(ctx context.Context, r CounterRequest, st counterStep) (Ticket, error) {
	return idempotent(ctx, e, r.call(st.op), func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
		a, err := loadCounter(ctx, tx, s, r.Counter)
		if err != nil {
			return Ticket{}, err
		}
		if a.cur == nil {
			return Ticket{}, fmt.Errorf("%w: counter %s has no ticket to %s", ErrCounterIdle, a.c.ID, st.act)
		}
		a.actor, a.now = r.Device, e.clock()
		if err := move(ctx, tx, j, ticketMove{t: a.cur, act: st.act, c: a.change(st.event), edit: func(t *Ticket) { st.edit(t, a.now) }}); err != nil {
			return Ticket{}, err
		}
		if st.frees {
			if err := putCounter(ctx, tx, a.cs.holding(0, a.now)); err != nil {
				return Ticket{}, err
			}
		}
		return *a.cur, nil
	})
}

// Recall announces the counter's called ticket again.
func (e *Engine) Recall(ctx context.Context, r CounterRequest) (Ticket, error) {
	return e.actOnCurrent(ctx, r, counterStep{op: "recall", act: ActRecall, event: EventRecalled,
		edit: func(t *Ticket, _ time.Time) { t.CallCount++ }})
}

// NoShow marks the counter's called ticket as not come.
func (e *Engine) NoShow(ctx context.Context, r CounterRequest) (Ticket, error) {
	return e.actOnCurrent(ctx, r, counterStep{op: "no-show", act: ActNoShow, event: EventNoShow, frees: true,
		edit: func(t *Ticket, now time.Time) {
			t.NoShowCount++
			t.FinishedAt = now
		}})
}

// Start begins serving the counter's called ticket.
func (e *Engine) Start(ctx context.Context, r CounterRequest) (Ticket, error) {
	return e.actOnCurrent(ctx, r, counterStep{op: "start", act: ActStart, event: EventServing,
		edit: func(t *Ticket, now time.Time) { t.ServingAt = now }})
}

// Complete finishes the ticket the counter serves.
func (e *Engine) Complete(ctx context.Context, r CounterRequest) (Ticket, error) {
	return e.actOnCurrent(ctx, r, counterStep{op: "complete", act: ActComplete, event: EventDone, frees: true,
		edit: func(t *Ticket, now time.Time) { t.FinishedAt = now }})
}

// Reenter puts a no-show ticket back in its queue, ReentryAfter places after
// the head, at most MaxReentries times.
func (e *Engine) Reenter(ctx context.Context, r NumberRequest) (Ticket, error) {
	return idempotent(ctx, e, call{Request: r.Request, op: opName("re-enter", r.Number)}, func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
		now := e.clock()
		t, err := byNumberFor(ctx, tx, todays(s, r.Number, now), ActReenter)
		if err != nil {
			return Ticket{}, err
		}
		sv, err := s.service(t.Queue)
		if err != nil {
			return Ticket{}, err
		}
		if t.NoShowCount > sv.MaxReentries {
			return Ticket{}, fmt.Errorf("%w: %s was re-entered %d times, the limit is %d", ErrReentryLimit, t.Number, t.NoShowCount-1, sv.MaxReentries)
		}
		if err := place(ctx, tx, t, sv.ReentryAfter); err != nil {
			return Ticket{}, err
		}
		err = move(ctx, tx, j, ticketMove{t: t, act: ActReenter, c: ticketChange{Event: EventReentered, Actor: r.Device, At: now}, edit: func(t *Ticket) {
			t.Class = ClassReentered
			t.Counter, t.TargetCounter = "", ""
			t.WaitingSince, t.FinishedAt = now, time.Time{}
		}})
		return *t, err
	})
}

// Transfer sends the counter's ticket back to waiting in another service's
// queue (at the head of its class) or for one counter; it keeps its number.
func (e *Engine) Transfer(ctx context.Context, r TransferRequest) (Ticket, error) {
	return idempotent(ctx, e, call{Request: r.Request, op: opName("transfer", r.Counter, r.ToService, r.ToCounter)}, func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
		if (r.ToService == "") == (r.ToCounter == "") {
			return Ticket{}, fmt.Errorf("%w: transfer needs a service or a counter, not both", ErrBadRequest)
		}
		a, err := loadCounter(ctx, tx, s, r.Counter)
		if err != nil {
			return Ticket{}, err
		}
		cur := a.cur
		if cur == nil {
			return Ticket{}, fmt.Errorf("%w: counter %s cannot transfer", ErrCounterIdle, a.c.ID)
		}
		a.actor, a.now = r.Device, e.clock()
		now := a.now
		detail := ""
		queue, target := cur.Queue, ""
		if r.ToService != "" {
			sv, err := s.service(r.ToService)
			if err != nil {
				return Ticket{}, err
			}
			queue, detail = sv.Code, "service "+sv.Code
		} else {
			tc, err := s.counter(r.ToCounter)
			if err != nil {
				return Ticket{}, err
			}
			target, detail = tc.ID, DetailToCounter+tc.ID
		}
		if r.Reason != "" {
			detail += ": " + r.Reason
		}
		if _, err := Next(cur.Number, cur.Status, ActTransfer); err != nil {
			return Ticket{}, err
		}
		moved := *cur
		moved.Queue, moved.TargetCounter = queue, target
		if target == "" {
			if err := place(ctx, tx, &moved, 0); err != nil {
				return Ticket{}, err
			}
		}
		ch := a.change(EventTransferred)
		ch.Detail = detail
		err = move(ctx, tx, j, ticketMove{t: cur, act: ActTransfer, c: ch, edit: func(t *Ticket) {
			t.Queue, t.TargetCounter, t.SortKey = moved.Queue, moved.TargetCounter, moved.SortKey
			t.Counter = ""
			t.WaitingSince = now
		}})
		if err != nil {
			return Ticket{}, err
		}
		return *cur, putCounter(ctx, tx, a.cs.holding(0, now))
	})
}

// Cancel withdraws a waiting or called ticket.
func (e *Engine) Cancel(ctx context.Context, r NumberRequest) (Ticket, error) {
	return idempotent(ctx, e, call{Request: r.Request, op: opName("cancel", r.Number)}, func(ctx context.Context, tx Tx, j *job, s *Site) (Ticket, error) {
		now := e.clock()
		t, err := byNumber(ctx, tx, todays(s, r.Number, now))
		if err != nil {
			return Ticket{}, err
		}
		ch := ticketChange{Event: EventCancelled, Counter: t.Counter, Actor: r.Device, At: now}
		if err := move(ctx, tx, j, ticketMove{t: t, act: ActCancel, c: ch, edit: func(t *Ticket) { t.FinishedAt = now }}); err != nil {
			return Ticket{}, err
		}
		return *t, freeCounterOf(ctx, tx, ch, t)
	})
}

// freeCounterOf clears the counter change c happened at (none: nothing to
// do) when its current ticket is t, which c moved away from it.
func freeCounterOf(ctx context.Context, tx Tx, c ticketChange, t *Ticket) error {
	if c.Counter == "" {
		return nil
	}
	cs, err := tx.Counter(ctx, CounterKey{Site: t.Site, ID: c.Counter})
	if err != nil {
		return fmt.Errorf("queue: read counter %s: %w", c.Counter, err)
	}
	if cs.TicketID != t.ID {
		return nil
	}
	return putCounter(ctx, tx, cs.holding(0, c.At))
}

// Pause stops a counter from calling; Resume opens it again.
func (e *Engine) Pause(ctx context.Context, r CounterRequest) (CounterState, error) {
	return e.setMode(ctx, r, modeChange{op: "pause", mode: CounterPaused, event: EventCounterPaused})
}

// Resume opens a paused counter.
func (e *Engine) Resume(ctx context.Context, r CounterRequest) (CounterState, error) {
	return e.setMode(ctx, r, modeChange{op: "resume", mode: CounterOpen, event: EventCounterOpened})
}

// modeChange is a change of a counter's mode: op names it in the
// idempotency record, event records it.
type modeChange struct {
	op    string
	mode  CounterMode
	event EventType
}

// setMode puts the counter of r in m's mode, keeping its ticket.
func (e *Engine) setMode(ctx context.Context, r CounterRequest, m modeChange) (CounterState, error) {
	return idempotent(ctx, e, r.call(m.op), func(ctx context.Context, tx Tx, j *job, s *Site) (CounterState, error) {
		c, err := s.counter(r.Counter)
		if err != nil {
			return CounterState{}, err
		}
		cs, err := tx.Counter(ctx, CounterKey{Site: s.ID, ID: c.ID})
		if err != nil {
			return CounterState{}, fmt.Errorf("queue: read counter %s: %w", c.ID, err)
		}
		now := e.clock()
		cs.Site, cs.ID, cs.Mode, cs.Since = s.ID, c.ID, m.mode, now
		if err := putCounter(ctx, tx, cs); err != nil {
			return CounterState{}, err
		}
		j.emit(Event{Site: s.ID, Type: m.event, Counter: c.ID, Actor: r.Device, At: now})
		return cs, nil
	})
}

// PrintFailure is a ticket of a site whose paper copy did not print: who
// printed it (the event's actor, a kiosk) and why.
type PrintFailure struct {
	Site     string
	TicketID int64
	Actor    string
	Reason   string
}

// MarkPrintFailed records that a ticket's paper copy did not print.
func (e *Engine) MarkPrintFailed(ctx context.Context, f PrintFailure) error {
	s, err := e.Site(f.Site)
	if err != nil {
		return err
	}
	_, err = submit(ctx, e, &job{site: s.ID, lane: laneBulk}, func(ctx context.Context, tx Tx, j *job) (struct{}, error) {
		t, err := tx.Ticket(ctx, f.TicketID)
		if err != nil {
			return struct{}{}, fmt.Errorf("queue: mark print failed: %w", err)
		}
		j.emit(ticketEvent(ticketChange{Event: EventPrintFailed, Actor: f.Actor, Detail: f.Reason, At: e.clock()}, t, t))
		return struct{}{}, nil
	})
	return err
}

// Sweep expires the waiting tickets of past service days, the tickets a
// counter still holds from a past day once the site's HeldGrace after the
// rollover has passed (until then the counter finishes them as usual), and
// applies call time-outs; it marks missed bookings, expires holds that ran
// out and creates the slots a resource's horizon reaches (at its opening
// time of day). The daemon runs it every few seconds; it returns how many
// tickets, bookings and slots it moved or made.
func (e *Engine) Sweep(ctx context.Context) (int, error) {
	total := 0
	defs := e.defs.Load()
	for _, id := range defs.order {
		s := defs.byID[id]
		n, err := submit(ctx, e, &job{site: s.ID, lane: laneBulk}, func(ctx context.Context, tx Tx, j *job) (int, error) {
			n := 0
			now := e.clock()
			day := s.Day(now)
			old, err := tx.Find(ctx, Filter{Site: s.ID, BeforeDay: day, Statuses: []Status{StatusWaiting}, Limit: 1000})
			if err != nil {
				return 0, fmt.Errorf("queue: sweep %s: %w", s.ID, err)
			}
			held, err := tx.Find(ctx, Filter{Site: s.ID, BeforeDay: s.HeldSinceDay(now), Statuses: []Status{StatusCalled, StatusServing}, Limit: 1000})
			if err != nil {
				return 0, fmt.Errorf("queue: sweep %s: %w", s.ID, err)
			}
			old = append(old, held...)
			for i := range old {
				t := &old[i]
				ch := ticketChange{Event: EventExpired, Counter: t.Counter, Actor: "rollover", At: now}
				if err := move(ctx, tx, j, ticketMove{t: t, act: ActExpire, c: ch, edit: func(t *Ticket) { t.FinishedAt = now }}); err != nil {
					return 0, err
				}
				if err := freeCounterOf(ctx, tx, ch, t); err != nil {
					return 0, err
				}
				n++
			}
			for _, sv := range s.Services {
				if sv.CallTimeout <= 0 {
					continue
				}
				late, err := tx.Find(ctx, Filter{Site: s.ID, Service: sv.Code, Day: day, Statuses: []Status{StatusCalled}, CalledBefore: ms(now.Add(-sv.CallTimeout)), Limit: 1000})
				if err != nil {
					return 0, fmt.Errorf("queue: sweep %s: %w", s.ID, err)
				}
				for i := range late {
					t := &late[i]
					a, typ, change := ActTimeoutNoShow, EventNoShow, func(t *Ticket) { t.NoShowCount++; t.FinishedAt = now }
					if sv.TimeoutAction == TimeoutRequeue {
						a, typ, change = ActTimeoutRequeue, EventReentered, func(t *Ticket) { t.Counter = ""; t.WaitingSince = now }
					}
					ch := ticketChange{Event: typ, Counter: t.Counter, Actor: "timeout", Detail: "call timeout", At: now}
					if err := move(ctx, tx, j, ticketMove{t: t, act: a, c: ch, edit: change}); err != nil {
						return 0, err
					}
					if err := freeCounterOf(ctx, tx, ch, t); err != nil {
						return 0, err
					}
					n++
				}
			}
			return n, nil
		})
		if err != nil {
			return total, err
		}
		total += n
		n, err = e.sweepBookings(ctx, s)
		total += n
		if err != nil {
			return total, err
		}
	}
	n, err := e.generate(ctx, true)
	return total + n, err
}
