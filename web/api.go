package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/queue"
)

// Ticket is a ticket as the API shows it; times are RFC 3339, absent when
// the step has not happened.
type Ticket struct {
	ID         int64      `json:"id"`
	Site       string     `json:"site"`
	Service    string     `json:"service"`
	Queue      string     `json:"queue"`
	Day        string     `json:"day"`
	Number     string     `json:"number"`
	Class      string     `json:"class"`
	Status     string     `json:"status"`
	Counter    string     `json:"counter,omitempty"`
	CallCount  int        `json:"call_count"`
	IssuedAt   *time.Time `json:"issued_at,omitempty"`
	CalledAt   *time.Time `json:"called_at,omitempty"`
	ServingAt  *time.Time `json:"serving_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Position is a ticket with where it stands: people ahead and the
// estimated wait in seconds (both 0 once it is no longer waiting).
type Position struct {
	Ticket          Ticket  `json:"ticket"`
	Ahead           int     `json:"ahead"`
	EstimatedWaitS  float64 `json:"estimated_wait_s"`
	WaitingForS     float64 `json:"waiting_for_s"`
	CalledToCounter string  `json:"called_to_counter,omitempty"`
}

func tptr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = stored(t)
	return &t
}

// stored is t to the millisecond, as the stores keep it: the first answer
// to a request (times from the clock) and a replay of it (times read back)
// then say the same.
func stored(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

func toTicket(t queue.Ticket) Ticket {
	return Ticket{ID: t.ID, Site: t.Site, Service: t.Service, Queue: t.Queue, Day: t.Day, Number: t.Number,
		Class: string(t.Class), Status: string(t.Status), Counter: t.Counter, CallCount: t.CallCount,
		IssuedAt: tptr(t.IssuedAt), CalledAt: tptr(t.CalledAt), ServingAt: tptr(t.ServingAt), FinishedAt: tptr(t.FinishedAt)}
}

func toPosition(p queue.Position, now time.Time) Position {
	out := Position{Ticket: toTicket(p.Ticket), Ahead: p.Ahead, EstimatedWaitS: p.Wait.Seconds()}
	if p.Ticket.Status == queue.StatusWaiting && !p.Ticket.WaitingSince.IsZero() {
		out.WaitingForS = max(0, now.Sub(p.Ticket.WaitingSince).Round(time.Second).Seconds())
	}
	if p.Ticket.Status == queue.StatusCalled {
		out.CalledToCounter = p.Ticket.Counter
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// issueBody is the body of POST .../tickets.
type issueBody struct {
	Service string `json:"service"`
	Class   string `json:"class"`
}

// maxBody bounds request bodies.
const maxBody = 4 << 10

func (s *Server) request(r *http.Request) queue.Request {
	return queue.Request{Site: r.PathValue("site"), Device: "api:" + tokenName(r), Key: r.Header.Get("Idempotency-Key")}
}

func (s *Server) issue(w http.ResponseWriter, r *http.Request) {
	var b issueBody
	if !readBody(w, r, &b, `{"service": CODE, "class": CLASS}`) {
		return
	}
	if b.Service == "" {
		badRequest(w, "body: service is required")
		return
	}
	if len(r.Header.Get("Idempotency-Key")) > 128 {
		badRequest(w, "Idempotency-Key: at most 128 characters")
		return
	}
	p, err := s.o.Engine.IssuePosition(r.Context(), queue.IssueRequest{Request: s.request(r), Service: b.Service, Class: queue.Class(b.Class)})
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/api/v1/sites/%s/tickets/%s", p.Ticket.Site, p.Ticket.Number))
	writeJSON(w, http.StatusCreated, toPosition(p, s.o.Clock()))
}

func (s *Server) ticket(w http.ResponseWriter, r *http.Request) {
	p, err := s.o.Engine.Position(r.Context(), r.PathValue("site"), r.PathValue("number"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toPosition(p, s.o.Clock()))
}

// Snapshot is a site's state as the API shows it.
type Snapshot struct {
	Site     string          `json:"site"`
	Day      string          `json:"day"`
	Version  int64           `json:"version"`
	At       time.Time       `json:"at"`
	Services []ServiceStatus `json:"services"`
	Counters []CounterStatus `json:"counters"`
}

// ServiceStatus is one service in a Snapshot.
type ServiceStatus struct {
	Code         string  `json:"code"`
	Waiting      int     `json:"waiting"`
	LongestWaitS float64 `json:"longest_wait_s"`
	AvgWaitS     float64 `json:"avg_wait_s"`
	AvgServiceS  float64 `json:"avg_service_s"`
	Issued       int     `json:"issued"`
	Served       int     `json:"served"`
	NoShows      int     `json:"no_shows"`
	Cancelled    int     `json:"cancelled"`
	Open         bool    `json:"open"`
	Full         bool    `json:"full"`
}

// CounterStatus is one counter in a Snapshot.
type CounterStatus struct {
	ID     string     `json:"id"`
	Mode   string     `json:"mode"`
	Ticket *Ticket    `json:"ticket,omitempty"`
	Since  *time.Time `json:"since,omitempty"`
	Served int        `json:"served"`
}

func toSnapshot(sn queue.Snapshot) Snapshot {
	out := Snapshot{Site: sn.Site, Day: sn.Day, Version: sn.Version, At: sn.At, Services: []ServiceStatus{}, Counters: []CounterStatus{}}
	for _, v := range sn.Services {
		out.Services = append(out.Services, ServiceStatus{Code: v.Code, Waiting: v.Waiting, LongestWaitS: v.LongestWait.Seconds(),
			AvgWaitS: v.AvgWait.Seconds(), AvgServiceS: v.AvgService.Seconds(), Issued: v.Issued, Served: v.Served,
			NoShows: v.NoShows, Cancelled: v.Cancelled, Open: v.Open, Full: v.Full})
	}
	for _, c := range sn.Counters {
		cs := CounterStatus{ID: c.ID, Mode: string(c.Mode), Since: tptr(c.Since), Served: c.Served}
		if c.Ticket != nil {
			t := toTicket(*c.Ticket)
			cs.Ticket = &t
		}
		out.Counters = append(out.Counters, cs)
	}
	return out
}

func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	sn, err := s.o.Engine.SnapshotOf(r.Context(), r.PathValue("site"), queue.ResourcesNone)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toSnapshot(sn))
}

// counterOp returns the engine operation of a counter action.
func (s *Server) counterOp(action string) (func(context.Context, queue.CounterRequest) (queue.Ticket, error), bool) {
	e := s.o.Engine
	switch action {
	case "call":
		return e.CallNext, true
	case "recall":
		return e.Recall, true
	case "start":
		return e.Start, true
	case "complete":
		return e.Complete, true
	case "noshow":
		return e.NoShow, true
	}
	return nil, false
}

func (s *Server) counterAction(w http.ResponseWriter, r *http.Request) {
	op, ok := s.counterOp(r.PathValue("action"))
	if !ok {
		writeProblem(w, http.StatusNotFound, "unknown_action", "unknown action", "want call, recall, start, complete or noshow")
		return
	}
	t, err := op(r.Context(), queue.CounterRequest{Request: s.request(r), Counter: r.PathValue("counter")})
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toTicket(t))
}

// Event is one committed change as the API streams it.
type Event struct {
	Version  int64     `json:"version"`
	Type     string    `json:"type"`
	TicketID int64     `json:"ticket_id,omitempty"`
	Number   string    `json:"number,omitempty"`
	Service  string    `json:"service,omitempty"`
	Class    string    `json:"class,omitempty"`
	Status   string    `json:"status,omitempty"`
	Counter  string    `json:"counter,omitempty"`
	Actor    string    `json:"actor,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	At       time.Time `json:"at"`
}

func toEvent(e queue.Event) Event {
	return Event{Version: e.Version, Type: string(e.Type), TicketID: e.TicketID, Number: e.Number, Service: e.Service,
		Class: string(e.Class), Status: string(e.Status), Counter: e.Counter, Actor: e.Actor, Detail: e.Detail, At: e.At}
}

// apiEvents streams a site's events as SSE: each event is a default
// "message" with id = version and the Event as data. It starts after
// Last-Event-ID when the client reconnects, else after ?from=V, else at the
// current version. When the gap is too large it sends an event named
// "snapshot" (data: Snapshot, id: its version) and goes on from there.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	site := r.PathValue("site")
	from := int64(-1)
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("from")} {
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			badRequest(w, fmt.Sprintf("version %q: want a non-negative integer", v))
			return
		}
		from = n
		break
	}
	if from < 0 {
		sn, err := s.o.Engine.SnapshotOf(r.Context(), site, queue.ResourcesNone)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		from = sn.Version
	}
	s.serveEvents(w, r, s.follower(site, follow.Opts{Resume: true, After: from}), nil, func(ctx context.Context, st *stream, u follow.Update) error {
		if sn := u.Snapshot; sn != nil {
			if err := st.send(sn.Version, "snapshot", toSnapshot(*sn)); err != nil {
				return err
			}
		}
		for _, e := range u.Events {
			if err := st.send(e.Version, "", toEvent(e)); err != nil {
				return err
			}
		}
		return nil
	})
}
