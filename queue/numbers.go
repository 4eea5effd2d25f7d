package queue

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
)

// numbers hands out the ticket numbers of a batch's kiosk requests, which
// run bare (see runJobs): the first of them to want a number of a service
// day takes, in one statement, one for itself and one for every bare kiosk
// request after it in the batch that may want the same (same site and
// service, not answered by an earlier request with its key); those after
// it take theirs from that span instead of a statement each. A request
// refused once it took its number (the daily cap) gives it back to the
// span (untake), to be handed out again. The numbers the batch did not use
// (a request refused, a day that turned meanwhile) are given back at the
// end of its requests, so the numbering keeps no gap.
//
// Numbers are handed out in the order the requests run, as one statement
// each would. Only bare requests use the spans: a request in a savepoint
// of its own could be rolled back after taking one. A statement of such a
// request for a service day with a span seals the span (its unused numbers
// are no longer the last ones, so they cannot be given back: they stay a
// gap, which can happen only when a check-in and kiosks of one service
// share a batch and one of the kiosks is refused). A batch run again with a
// savepoint per request (redo) has no spans: the rollback to the batch's
// savepoint took its numbers back.
//
// The tickets of those requests are stored the same way: the first takes,
// in one statement (the one that takes its numbers, where the store can:
// Tx.NextSeqIDs), the ids of the tickets of the bare requests up to the
// next request that is not one (Tx.TicketIDs), and their inserts wait in
// the batch, to be sent together (Tx.InsertTickets) before anything else
// runs that may read tickets or insert one itself: a request that is not a
// fresh kiosk ticket, a ticket placed among the waiting (a revisit), the
// end of the batch. The ids left then are dropped. A store that gives ids
// only as it inserts (MySQL) inserts each ticket at once.
type numbers struct {
	jobs  []*job
	spans map[DayKey]*span

	ids     []int64   // reserved for the tickets to come
	pending []*Ticket // inserts not sent yet
	noIDs   bool      // the store cannot reserve ids
	apart   bool      // the store takes numbers and ids in two statements
}

// span is the numbers next..last a batch took and has not handed out yet.
type span struct {
	next, last int
	sealed     bool
}

func newNumbers(jobs []*job) *numbers {
	return &numbers{jobs: jobs, spans: map[DayKey]*span{}}
}

// newKioskTicket reports whether j runs bare and has no stored result: a kiosk
// ticket to issue, which reads no ticket.
func newKioskTicket(j *job) bool { return j.lane == laneIssue && j.prior == nil }

// takesNumber reports whether j runs bare and may take a number of k.
func takesNumber(j *job, k DayKey) bool {
	return newKioskTicket(j) && j.site == k.Site && j.number == k.Service
}

// insert stores tk, a ticket of j: later, with the batch's other kiosk
// tickets, when j is a fresh kiosk request and the store can reserve ids.
func (n *numbers) insert(ctx context.Context, tx Tx, j *job, tk *Ticket) error {
	if n.noIDs || !newKioskTicket(j) || tk.Queue == "" || (len(n.ids) == 0 && len(n.jobs) == 1) {
		// Stored now, after those waiting, and the ids left dropped:
		// the store gives this one an id of its own. (A request alone
		// whose id did not come with its number: reserving it first
		// would cost a statement.)
		if err := n.flush(ctx, tx, true); err != nil {
			return err
		}
		return tx.InsertTicket(ctx, tk)
	}
	if len(n.ids) == 0 {
		ids, err := tx.TicketIDs(ctx, n.idsFor(j))
		if errors.Is(err, errors.ErrUnsupported) {
			n.noIDs = true
			return tx.InsertTicket(ctx, tk)
		}
		if err != nil {
			return err
		}
		n.ids = ids
	}
	tk.ID, n.ids = n.ids[0], n.ids[1:]
	c := *tk
	n.pending = append(n.pending, &c)
	return nil
}

// idsFor is how many ticket ids j reserves: its own, then those of the
// fresh kiosk requests right after it.
func (n *numbers) idsFor(j *job) int {
	want := 1
	for _, o := range n.after(j) {
		if !newKioskTicket(o) {
			break
		}
		want++
	}
	return want
}

// flush sends the inserts that wait, before anything that may read the
// tickets runs; with drop, the ids left are dropped too, before anything
// that may insert a ticket of its own.
func (n *numbers) flush(ctx context.Context, tx Tx, drop bool) error {
	if drop {
		n.ids = nil
	}
	if len(n.pending) == 0 {
		return nil
	}
	err := tx.InsertTickets(ctx, n.pending)
	n.pending = n.pending[:0]
	return err
}

// take is the next number of k for j: from k's span, or from a new span
// for j and the requests after it that want one of k too.
func (n *numbers) take(ctx context.Context, tx Tx, j *job, k DayKey) (int, error) {
	if j.lane != laneIssue {
		if sp := n.spans[k]; sp != nil {
			sp.sealed = true
		}
		return tx.NextSeq(ctx, k, 1)
	}
	if sp := n.spans[k]; sp != nil && sp.next <= sp.last {
		sp.next++
		return sp.next - 1, nil
	}
	want := 1
	for _, o := range n.after(j) {
		if takesNumber(o, k) {
			want++
		}
	}
	last, err := n.nextSeq(ctx, tx, j, k, want)
	if err != nil {
		return 0, err
	}
	n.spans[k] = &span{next: last - want + 2, last: last}
	return last - want + 1, nil
}

// nextSeq takes want numbers of k for a new span, and with them, where the
// store can and none are left, the ids of the tickets of j and the fresh
// requests after it (Tx.NextSeqIDs).
func (n *numbers) nextSeq(ctx context.Context, tx Tx, j *job, k DayKey, want int) (int, error) {
	if len(n.ids) > 0 || n.noIDs || n.apart {
		return tx.NextSeq(ctx, k, want)
	}
	last, ids, err := tx.NextSeqIDs(ctx, k, want, n.idsFor(j))
	if errors.Is(err, errors.ErrUnsupported) {
		n.apart = true
		return tx.NextSeq(ctx, k, want)
	}
	if err != nil {
		return 0, err
	}
	n.ids = ids
	return last, nil
}

// untake gives back seq, the number of k that j, refused, took last from
// k's span, where nothing else took one after it: the span hands it out
// again, or gives it back to the store. It reports whether it could.
func (n *numbers) untake(k DayKey, seq int) bool {
	sp := n.spans[k]
	if sp == nil || sp.sealed || sp.next != seq+1 {
		return false
	}
	sp.next = seq
	return true
}

// after is the batch's jobs after j.
func (n *numbers) after(j *job) []*job {
	i := slices.Index(n.jobs, j)
	if i < 0 {
		return nil
	}
	return n.jobs[i+1:]
}

// finish sends the inserts that wait and gives back the numbers left, at
// the end of the batch's requests.
func (n *numbers) finish(ctx context.Context, tx Tx) error {
	if err := n.flush(ctx, tx, true); err != nil {
		return err
	}
	return n.giveBack(ctx, tx)
}

// giveBack returns every span's unused numbers to the store.
func (n *numbers) giveBack(ctx context.Context, tx Tx) error {
	keys := make([]DayKey, 0, len(n.spans))
	for k, sp := range n.spans {
		if sp.next <= sp.last && !sp.sealed {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b DayKey) int {
		return cmp.Or(strings.Compare(a.Site, b.Site), strings.Compare(a.Service, b.Service), strings.Compare(a.Day, b.Day))
	})
	for _, k := range keys {
		sp := n.spans[k]
		if err := tx.GiveBackSeq(ctx, k, sp.last-sp.next+1); err != nil {
			return err
		}
	}
	return nil
}
