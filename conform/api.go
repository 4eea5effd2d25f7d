package conform

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/notify"
)

// APIOpts configure a run against a daemon's HTTP API (web/openapi.yaml).
type APIOpts struct {
	// URL is the daemon's HTTP address, e.g. http://127.0.0.1:7480.
	URL string
	// Token is an API bearer token allowed on Site.
	Token string
	// Site and Resource are where the run books: a test site whose
	// resource has free slots today or tomorrow (the first free one is
	// taken), a check-in window open now for it, and at least one more
	// free slot (cancelled again).
	Site, Resource string
	// Webhook, when set, is where the daemon's webhook receiver for the
	// site's booking events (notify.webhooks) points: the run serves it,
	// checks that its booking's BOOKING_BOOKED arrives signed with
	// WebhookSecret, and answers 2xx. API closes it when it returns.
	Webhook       net.Listener
	WebhookSecret []byte
	// Client sends the requests; nil: one with a 10 s time-out.
	Client *http.Client
	// Wait bounds the wait for the webhook; 0: 30 s.
	Wait time.Duration
}

// The operations of web/openapi.yaml the API kit plays, as the report
// names them.
const (
	opSlots    = "GET /api/v1/sites/{site}/slots"
	opBook     = "POST /api/v1/sites/{site}/appointments"
	opGet      = "GET /api/v1/sites/{site}/appointments/{id}"
	opCancel   = "DELETE /api/v1/sites/{site}/appointments/{id}"
	opConfirm  = "POST /api/v1/sites/{site}/appointments/{id}/confirm"
	opCheckIn  = "POST /api/v1/sites/{site}/appointments/{id}/check-in"
	opTicket   = "GET /api/v1/sites/{site}/tickets/{number}"
	opWebhook  = "POST webhook event (notify.webhooks)" // openapi.yaml's webhooks: event
	codeLetter = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
)

// apiSlot and apiBooking are what the kit reads of the answers.
type apiSlot struct {
	ID       int64     `json:"id"`
	Resource string    `json:"resource"`
	Start    time.Time `json:"start"`
	Capacity int       `json:"capacity"`
	Free     int       `json:"free"`
}

type apiBooking struct {
	ID       int64  `json:"id"`
	Site     string `json:"site"`
	Resource string `json:"resource"`
	Slot     int64  `json:"slot"`
	Patient  string `json:"patient"`
	Code     string `json:"code"`
	Status   string `json:"status"`
	Ticket   string `json:"ticket"`
}

type apiProblem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Code   string `json:"code"`
}

// answer is one HTTP answer as the kit keeps it.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (a answer) String() string {
	if a.err != nil {
		return a.err.Error()
	}
	return fmt.Sprintf("%d %s", a.status, bytes.TrimSpace(a.body[:min(len(a.body), 200)]))
}

// problem decodes a problem answer; ok when it is one of status and code.
func (a answer) problem(status int, code string) bool {
	var p apiProblem
	return a.err == nil && a.status == status && strings.HasPrefix(a.header.Get("Content-Type"), "application/problem+json") &&
		json.Unmarshal(a.body, &p) == nil && p.Code == code && p.Status == status && p.Type == "urn:nowserving:problem:"+code && p.Title != ""
}

// apiRun is the state of a run against a daemon's HTTP API.
type apiRun struct {
	o    APIOpts
	rep  *Report
	ctx  context.Context
	tag  string // makes the run's keys and patients its own
	base string // /api/v1/sites/SITE

	mu    sync.Mutex
	hooks []hook // webhook deliveries received
}

type hook struct {
	typ, id string
	signed  bool
	body    map[string]any
}

// API plays a hospital's system against the daemon's HTTP API at o.URL and
// reports pass or fail per web/openapi.yaml operation: slots, booking
// (replay, key reuse, a full slot, malformed bodies), reading, cancelling,
// holding and confirming, checking in, and with o.Webhook the webhook. It
// books, cancels and checks in at o.Site: point it at a test site. It
// returns an error only when it could not run at all.
func API(ctx context.Context, o APIOpts) (*Report, error) {
	if o.URL == "" || o.Token == "" || o.Site == "" || o.Resource == "" {
		return nil, errors.New("conform: api: give the URL, a token, a site and a resource")
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	o.Wait = positive.Or(o.Wait, 30*time.Second)
	r := &apiRun{o: o, rep: NewReport("conform api: " + o.URL), ctx: ctx,
		tag: fmt.Sprintf("conform-%d", time.Now().UnixNano()), base: "/api/v1/sites/" + o.Site}
	if o.Webhook != nil {
		srv := &http.Server{Handler: http.HandlerFunc(r.receive), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(o.Webhook) }()
		defer srv.Close()
	}
	free := r.checkSlots()
	if len(free) < 2 {
		return r.rep, fmt.Errorf("conform: api: %s has %d free slots today and tomorrow, want 2", o.Resource, len(free))
	}
	b, ok := r.checkBook(free[0])
	r.checkGet(b, ok)
	r.checkCancelAndHold(free[1])
	r.checkCheckIn(b, ok)
	r.checkWebhook(b, ok)
	return r.rep, nil
}

// do sends one request; key is the Idempotency-Key ("": none).
func (r *apiRun) do(method, path string, body any, key string, token ...string) answer {
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			b, _ = json.Marshal(body)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(r.ctx, method, strings.TrimSuffix(r.o.URL, "/")+path, rd)
	if err != nil {
		return answer{err: err}
	}
	tok := r.o.Token
	if len(token) > 0 {
		tok = token[0]
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := r.o.Client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// decode decodes a JSON answer of status into v.
func (a answer) decode(status int, v any) bool {
	return a.err == nil && a.status == status && strings.HasPrefix(a.header.Get("Content-Type"), "application/json") && json.Unmarshal(a.body, v) == nil
}

// checkSlots lists today's and tomorrow's slots of the resource and
// returns the free ones that start later than a minute from now. Today is
// the site's, as the list without a date says: the kit's machine may be in
// another time zone.
func (r *apiRun) checkSlots() []apiSlot {
	var free []apiSlot
	now, today := time.Now(), time.Time{}
	for day := range 2 { // today (no date), then tomorrow
		var l struct {
			Date  string    `json:"date"`
			Slots []apiSlot `json:"slots"`
		}
		date, q, name := "", "", "no date: 200 with today's date at the site and its slots of the resource"
		if day == 1 {
			date, name = today.AddDate(0, 0, 1).Format(time.DateOnly), "200 with the date and its slots of the resource"
			q = "&date=" + date
		}
		a := r.do("GET", r.base+"/slots?resource="+r.o.Resource+q, nil, "")
		ok := a.decode(http.StatusOK, &l) && l.Slots != nil && l.Date == cmp.Or(date, l.Date)
		if day == 0 {
			d, err := time.Parse(time.DateOnly, l.Date)
			ok, today = ok && err == nil, cmp.Or(d, now)
		}
		for _, s := range l.Slots {
			ok = ok && s.Resource == r.o.Resource && s.ID > 0 && s.Capacity > 0
			if s.Free > 0 && s.Start.After(now.Add(time.Minute)) {
				free = append(free, s)
			}
		}
		r.rep.CheckOp(opSlots, name, ok, a.String())
	}
	a := r.do("GET", r.base+"/slots?date="+today.AddDate(0, 0, -3).Format(time.DateOnly), nil, "")
	var past struct {
		Slots []apiSlot `json:"slots"`
		Past  bool      `json:"past"`
	}
	r.rep.CheckOp(opSlots, "a past date: 200, no slots, past true", a.decode(http.StatusOK, &past) && len(past.Slots) == 0 && past.Past, a.String())
	a = r.do("GET", r.base+"/slots?date="+today.AddDate(1, 0, 0).Format(time.DateOnly)+"&resource="+r.o.Resource, nil, "")
	var far struct {
		Slots   []apiSlot            `json:"slots"`
		Opening map[string]time.Time `json:"opening"`
	}
	r.rep.CheckOp(opSlots, "a date beyond days_ahead: 200, no slots, opening says when", a.decode(http.StatusOK, &far) && len(far.Slots) == 0 && !far.Opening[r.o.Resource].IsZero(), a.String())
	a = r.do("GET", r.base+"/slots?date=tomorrow", nil, "")
	r.rep.CheckOp(opSlots, "a malformed date: 400 bad_request", a.problem(http.StatusBadRequest, "bad_request"), a.String())
	a = r.do("GET", r.base+"/slots?resource=conform-no-such-resource", nil, "")
	r.rep.CheckOp(opSlots, "an unknown resource: 404 unknown_resource", a.problem(http.StatusNotFound, "unknown_resource"), a.String())
	a = r.do("GET", r.base+"/slots", nil, "", "")
	r.rep.CheckOp(opSlots, "no token: 401 unauthorized", a.problem(http.StatusUnauthorized, "unauthorized"), a.String())
	a = r.do("GET", "/api/v1/sites/conform-no-such-site/slots", nil, "")
	r.rep.CheckOp(opSlots, "a site the token may not use (or no such site): 403 forbidden_site or 404 unknown_site",
		a.problem(http.StatusForbidden, "forbidden_site") || a.problem(http.StatusNotFound, "unknown_site"), a.String())
	return free
}

// validCode reports whether c is a booking code: 8 characters of the
// alphabet PROTOCOL.md §5a gives.
func validCode(c string) bool {
	if len(c) != 8 {
		return false
	}
	for _, ch := range c {
		if !strings.ContainsRune(codeLetter, ch) {
			return false
		}
	}
	return true
}

// checkBook books sl for a patient of the run and plays the retries and
// refusals around it; ok false when the booking failed.
func (r *apiRun) checkBook(sl apiSlot) (apiBooking, bool) {
	patient, key := r.tag+"-p1", r.tag+"-k1"
	body := map[string]any{"slot": sl.ID, "patient": patient}
	var b apiBooking
	a := r.do("POST", r.base+"/appointments", body, key)
	ok := a.decode(http.StatusCreated, &b) && b.ID > 0 && b.Status == "BOOKED" && b.Slot == sl.ID && b.Patient == patient &&
		b.Site == r.o.Site && validCode(b.Code) && a.header.Get("Location") == fmt.Sprintf("%s/appointments/%d", r.base, b.ID)
	r.rep.CheckOp(opBook, "201 BOOKED, a code of 8 characters, Location", ok, a.String())
	if !ok {
		return b, false
	}
	var again apiBooking
	a = r.do("POST", r.base+"/appointments", body, key)
	r.rep.CheckOp(opBook, "the same Idempotency-Key again: 200 and the same booking", a.decode(http.StatusOK, &again) && again.ID == b.ID && again.Code == b.Code, a.String())
	a = r.do("POST", r.base+"/appointments", map[string]any{"slot": sl.ID, "patient": r.tag + "-p2"}, key)
	r.rep.CheckOp(opBook, "the same key for another patient: 422 idempotency_key_reused", a.problem(http.StatusUnprocessableEntity, "idempotency_key_reused"), a.String())
	if sl.Capacity == 1 {
		a = r.do("POST", r.base+"/appointments", map[string]any{"slot": sl.ID, "patient": r.tag + "-p3"}, r.tag+"-k3")
		r.rep.CheckOp(opBook, "a full slot: 409 slot_full", a.problem(http.StatusConflict, "slot_full"), a.String())
		// Now known full: the fast path must not hide the reuse either.
		a = r.do("POST", r.base+"/appointments", map[string]any{"slot": sl.ID, "patient": r.tag + "-p4"}, key)
		r.rep.CheckOp(opBook, "the key that filled the slot, for another patient: 422 idempotency_key_reused", a.problem(http.StatusUnprocessableEntity, "idempotency_key_reused"), a.String())
		a = r.do("POST", r.base+"/appointments", body, key)
		r.rep.CheckOp(opBook, "the same Idempotency-Key again: 200 and the same booking", a.decode(http.StatusOK, &again) && again.ID == b.ID, "once the slot is full: "+a.String())
	}
	a = r.do("POST", r.base+"/appointments", map[string]any{"slot": sl.ID, "patient": patient}, r.tag+"-k5")
	r.rep.CheckOp(opBook, "the patient again in the slot, another key: 409 already_booked or slot_full",
		a.problem(http.StatusConflict, "already_booked") || a.problem(http.StatusConflict, "slot_full"), a.String())
	a = r.do("POST", r.base+"/appointments", map[string]any{"slot": int64(1) << 60, "patient": r.tag + "-p6"}, r.tag+"-k6")
	r.rep.CheckOp(opBook, "an unknown slot: 422 unknown_slot", a.problem(http.StatusUnprocessableEntity, "unknown_slot"), a.String())
	for _, bad := range []string{`{"slot": `, `{"slot": 1, "patient": "x", "colour": "red"}`, `{"patient": "x"}`, `{"slot": 1}`} {
		a = r.do("POST", r.base+"/appointments", []byte(bad), r.tag+"-k7")
		r.rep.CheckOp(opBook, "a malformed body: 400 bad_request", a.problem(http.StatusBadRequest, "bad_request"), bad+": "+a.String())
	}
	return b, true
}

func (r *apiRun) checkGet(b apiBooking, ok bool) {
	if !ok {
		r.rep.CheckOp(opGet, "200 and the booking", false, "no booking was made")
		return
	}
	var got apiBooking
	a := r.do("GET", fmt.Sprintf("%s/appointments/%d", r.base, b.ID), nil, "")
	r.rep.CheckOp(opGet, "200 and the booking", a.decode(http.StatusOK, &got) && got.ID == b.ID && got.Code == b.Code && got.Status == "BOOKED", a.String())
	a = r.do("GET", r.base+"/appointments/abc", nil, "")
	r.rep.CheckOp(opGet, "an id that is not a number: 400 bad_request", a.problem(http.StatusBadRequest, "bad_request"), a.String())
	a = r.do("GET", fmt.Sprintf("%s/appointments/%d", r.base, int64(1)<<60), nil, "")
	r.rep.CheckOp(opGet, "an unknown id: 404 booking_not_found", a.problem(http.StatusNotFound, "booking_not_found"), a.String())
}

// checkCancelAndHold holds a place in sl, confirms it, cancels it and
// cancels it again.
func (r *apiRun) checkCancelAndHold(sl apiSlot) {
	var b, c apiBooking
	a := r.do("POST", r.base+"/appointments", map[string]any{"slot": sl.ID, "patient": r.tag + "-h1", "hold": true}, r.tag+"-h1")
	ok := a.decode(http.StatusCreated, &b) && b.Status == "HELD"
	r.rep.CheckOp(opBook, "hold: true: 201 HELD", ok, a.String())
	if !ok {
		return
	}
	path := fmt.Sprintf("%s/appointments/%d", r.base, b.ID)
	a = r.do("POST", path+"/confirm", nil, r.tag+"-c1")
	r.rep.CheckOp(opConfirm, "200 BOOKED", a.decode(http.StatusOK, &c) && c.ID == b.ID && c.Status == "BOOKED", a.String())
	a = r.do("DELETE", path, nil, r.tag+"-d1")
	r.rep.CheckOp(opCancel, "200 CANCELLED", a.decode(http.StatusOK, &c) && c.ID == b.ID && c.Status == "CANCELLED", a.String())
	a = r.do("DELETE", path, nil, r.tag+"-d2")
	r.rep.CheckOp(opCancel, "a second cancel: 409 appointment_state", a.problem(http.StatusConflict, "appointment_state"), a.String())
	a = r.do("POST", path+"/confirm", nil, r.tag+"-c2")
	r.rep.CheckOp(opConfirm, "a cancelled booking: 409 appointment_state", a.problem(http.StatusConflict, "appointment_state"), a.String())
}

// checkCheckIn checks the booking in, replays it, and checks it in again
// with another key.
func (r *apiRun) checkCheckIn(b apiBooking, ok bool) {
	if !ok {
		r.rep.CheckOp(opCheckIn, "201 and the ticket", false, "no booking was made")
		return
	}
	type position struct {
		Ticket struct {
			Number string `json:"number"`
			Class  string `json:"class"`
			Status string `json:"status"`
		} `json:"ticket"`
	}
	var p, again position
	path := fmt.Sprintf("%s/appointments/%d/check-in", r.base, b.ID)
	a := r.do("POST", path, nil, r.tag+"-ci1")
	if a.problem(http.StatusConflict, "check_in_early") {
		r.rep.CheckOp(opCheckIn, "201 and the ticket", false, "the check-in window of the first free slot is not open: point the kit at a resource whose window is open now ("+a.String()+")")
		return
	}
	ok = a.decode(http.StatusCreated, &p) && p.Ticket.Number != "" && p.Ticket.Status == "WAITING" &&
		strings.HasSuffix(a.header.Get("Location"), "/tickets/"+p.Ticket.Number)
	r.rep.CheckOp(opCheckIn, "201 and the ticket", ok, a.String())
	a = r.do("POST", path, nil, r.tag+"-ci1")
	r.rep.CheckOp(opCheckIn, "the same Idempotency-Key again: 201 and the same ticket", a.decode(http.StatusCreated, &again) && again.Ticket.Number == p.Ticket.Number, a.String())
	a = r.do("POST", path, nil, r.tag+"-ci2")
	r.rep.CheckOp(opCheckIn, "checked in already, another key: 409 appointment_state", a.problem(http.StatusConflict, "appointment_state"), a.String())
	var got apiBooking
	a = r.do("GET", fmt.Sprintf("%s/appointments/%d", r.base, b.ID), nil, "")
	r.rep.CheckOp(opGet, "a checked-in booking: CHECKED_IN with its ticket", a.decode(http.StatusOK, &got) && got.Status == "CHECKED_IN" && got.Ticket == p.Ticket.Number, a.String())
	if ok {
		a = r.do("GET", r.base+"/tickets/"+p.Ticket.Number, nil, "")
		r.rep.CheckOp(opTicket, "the checked-in ticket: 200", a.decode(http.StatusOK, &again) && again.Ticket.Number == p.Ticket.Number, a.String())
	}
}

// receive is the webhook receiver.
func (r *apiRun) receive(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	h := hook{typ: req.Header.Get(notify.HeaderEventType), id: req.Header.Get(notify.HeaderEventID),
		signed: notify.Verify(r.o.WebhookSecret, body, req.Header.Get(notify.HeaderSignature))}
	_ = json.Unmarshal(body, &h.body)
	r.mu.Lock()
	r.hooks = append(r.hooks, h)
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// checkWebhook waits for the BOOKING_BOOKED of booking b.
func (r *apiRun) checkWebhook(b apiBooking, ok bool) {
	const name = "BOOKING_BOOKED of the booking arrives, signed, with its event id and booking_id, no code or patient"
	if r.o.Webhook == nil {
		r.rep.SkipOp(opWebhook, name, "no webhook receiver asked for (--webhook-listen)")
		return
	}
	if !ok {
		r.rep.CheckOp(opWebhook, name, false, "no booking was made")
		return
	}
	end := time.Now().Add(r.o.Wait)
	for {
		r.mu.Lock()
		var found *hook
		for i, h := range r.hooks {
			if id, _ := h.body["booking_id"].(float64); h.typ == "BOOKING_BOOKED" && int64(id) == b.ID {
				found = &r.hooks[i]
			}
		}
		n := len(r.hooks)
		r.mu.Unlock()
		if found != nil {
			_, code := found.body["code"]
			_, patient := found.body["patient"]
			r.rep.CheckOp(opWebhook, name, found.signed && found.id != "" && found.body["id"] == found.id && found.body["type"] == "BOOKING_BOOKED" &&
				found.body["site"] == r.o.Site && !code && !patient,
				fmt.Sprintf("signed %v, event id %q, body %v", found.signed, found.id, found.body))
			return
		}
		if time.Now().After(end) || r.ctx.Err() != nil {
			r.rep.CheckOp(opWebhook, name, false, fmt.Sprintf("not within %s (%d deliveries received)", r.o.Wait, n))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
