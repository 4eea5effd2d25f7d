package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/nowserving/nowserving/booking"
	"github.com/nowserving/nowserving/queue"
)

// Problem is an RFC 9457 problem detail, with a stable machine code.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   string `json:"code"`
}

// ProblemType is the prefix of Problem.Type; the code follows it.
const ProblemType = "urn:nowserving:problem:"

func writeProblem(w http.ResponseWriter, status int, code, title, detail string) {
	p := Problem{Type: ProblemType + code, Title: title, Status: status, Detail: detail, Code: code}
	writeBody(w, status, hdrProblem, func(b []byte) []byte { return appendProblem(b, &p) })
}

// badRequest answers a request that cannot be read as the document
// describes it (a malformed or incomplete body, path id, version or
// header), the same on every endpoint: 400 bad_request, detail saying what.
func badRequest(w http.ResponseWriter, detail string) {
	writeProblem(w, http.StatusBadRequest, "bad_request", "bad request", detail)
}

// readBody decodes a JSON request body of at most maxBody bytes into v,
// refusing fields v does not have; on a body it cannot read it answers 400
// "body: want " + want + the decoder's reason, and returns false.
func readBody(w http.ResponseWriter, r *http.Request, v any, want string) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		badRequest(w, "body: want "+want+": "+err.Error())
		return false
	}
	return true
}

// problem is how an error is answered: its status, code and title.
type problem struct {
	err    error
	status int
	code   string
	title  string
}

// problemOf is the entry of problems that err is (the first; the zero
// problem when none).
func problemOf(err error) problem {
	for _, p := range problems {
		if errors.Is(err, p.err) {
			return p
		}
	}
	return problem{}
}

// problems maps the engine's errors onto HTTP. A refusal that waiting
// cannot cure (service full today, closed now, bad transition) is 409 (not
// 429: retrying later the same day does not help a full service); a store
// that is busy or down is 503 with Retry-After.
var problems = []problem{
	{queue.ErrUnknownSite, http.StatusNotFound, "unknown_site", "unknown site"},
	{queue.ErrUnknownCounter, http.StatusNotFound, "unknown_counter", "unknown counter"},
	{queue.ErrNotFound, http.StatusNotFound, "ticket_not_found", "no such ticket today"},
	{queue.ErrUnknownService, http.StatusUnprocessableEntity, "unknown_service", "unknown service"},
	{queue.ErrBadRequest, http.StatusBadRequest, "bad_request", "bad request"},
	{queue.ErrServiceFull, http.StatusConflict, "service_full", "service full today"},
	{queue.ErrServiceClosed, http.StatusConflict, "service_closed", "service closed now"},
	{queue.ErrNoneWaiting, http.StatusConflict, "none_waiting", "no ticket waiting"},
	{queue.ErrInvalidTransition, http.StatusConflict, "invalid_transition", "not allowed in the ticket's state"},
	{queue.ErrReentryLimit, http.StatusConflict, "reentry_limit", "re-entry limit reached"},
	{queue.ErrCounterPaused, http.StatusConflict, "counter_paused", "counter paused"},
	{queue.ErrCounterBusy, http.StatusConflict, "counter_busy", "counter is calling a ticket"},
	{queue.ErrCounterIdle, http.StatusConflict, "counter_idle", "counter has no ticket"},
	{queue.ErrUnknownResource, http.StatusNotFound, "unknown_resource", "unknown resource"},
	{queue.ErrBookingNotFound, http.StatusNotFound, "booking_not_found", "no such appointment"},
	{queue.ErrSlotNotFound, http.StatusUnprocessableEntity, "unknown_slot", "no such slot"},
	{queue.ErrSlotFull, http.StatusConflict, "slot_full", "slot full"},
	{queue.ErrAlreadyBooked, http.StatusConflict, "already_booked", "patient already booked in this slot"},
	{queue.ErrOverlap, http.StatusConflict, "overlapping_booking", "patient has an overlapping appointment"},
	{queue.ErrSlotClosed, http.StatusConflict, "slot_closed", "slot no longer bookable"},
	{queue.ErrBookingState, http.StatusConflict, "appointment_state", "not allowed in the appointment's state"},
	{queue.ErrCheckInEarly, http.StatusConflict, "check_in_early", "too early to check in"},
	{queue.ErrCheckInLate, http.StatusConflict, "check_in_late", "too late to check in"},
	{booking.ErrOverloaded, http.StatusTooManyRequests, "overloaded", "too many appointment requests at once"},
	{queue.ErrRateLimited, http.StatusTooManyRequests, "rate_limited", "too many requests for this patient"},
	{queue.ErrKeyReused, http.StatusUnprocessableEntity, "idempotency_key_reused", "idempotency key used for another operation"},
	{queue.ErrClosed, http.StatusServiceUnavailable, "shutting_down", "shutting down"},
	{queue.ErrConflict, http.StatusServiceUnavailable, "busy", "busy, try again"},
	{queue.ErrAborted, http.StatusServiceUnavailable, "busy", "busy, try again"},
	{queue.ErrUnavailable, http.StatusServiceUnavailable, "store_unavailable", "store unavailable"},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, "timeout", "timed out, try again"},
}

// writeError answers err as a problem; unexpected errors are logged and
// answered without detail.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	if p := problemOf(err); p.err != nil {
		detail := strings.TrimPrefix(err.Error(), "queue: ")
		if p.status == http.StatusServiceUnavailable {
			// The daemon's trouble: its cause (a driver's error) is
			// for the log, not for the caller.
			w.Header().Set("Retry-After", "1")
			log.Warn("web: request not served", "code", p.code, "err", err)
			detail = ""
		}
		if p.status == http.StatusTooManyRequests {
			retryAfter(w, err)
		}
		var ce *queue.ClosedError
		if errors.As(err, &ce) {
			detail = ce.Notice() // in the site's languages, with when it opens
		}
		writeProblem(w, p.status, p.code, p.title, detail)
		return
	}
	if errors.Is(err, context.Canceled) {
		return // the client left
	}
	log.Error("web: request failed", "err", err)
	writeProblem(w, http.StatusInternalServerError, "internal", "internal error", "")
}
