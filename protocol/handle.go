package protocol

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// requestTimeout bounds one request inside the engine.
const requestTimeout = 30 * time.Second

// maxKey is the longest idempotency key a device may send.
const maxKey = 64

// welcome builds the WELCOME for a device that has seen events up to
// version seen (its HELLO's LastVersion).
func (s *Server) welcome(dev *device, seen int64) (*wire.Welcome, error) {
	now := s.eng.Now()
	w := &wire.Welcome{
		ServerTimeMS: now.UnixMilli(), Role: dev.Role, Counter: dev.counterNum, Allowed: dev.allowed,
		HeartbeatMS: uint32(s.o.Heartbeat.Milliseconds()), MaxPayload: uint32(s.o.MaxFrame),
	}
	if s.o.RateLimit > 0 {
		w.RateLimit = uint16(min(math.Ceil(s.o.RateLimit), 0xFFFF))
		w.RateBurst = uint16(min(s.o.RateBurst, 0xFFFF))
	}
	site := dev.Site
	if site == "" {
		if sites := s.eng.Sites(); len(sites) > 0 {
			site = sites[0].ID
		}
	}
	if site == "" {
		return w, nil
	}
	def, err := s.eng.Site(site)
	if err != nil {
		return nil, err
	}
	w.Site, w.ServiceDay = def.ID, def.Day(now)
	defs(def, w)
	if dev.Role != wire.RoleKiosk {
		// Subscribers resume from here; kiosks do not need it and there
		// may be many of them.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A device that saw versions the store does not have is evidence
		// that the store lost work (queue/lost.go).
		s.eng.SeenVersion(site, seen)
		v, err := s.eng.LastVersion(ctx, site)
		if err != nil {
			return nil, err
		}
		w.Version = uint64(v)
	}
	return w, nil
}

// handle answers one frame of a welcomed session.
func (ss *session) handle(ctx context.Context, f wire.Frame) {
	s := ss.srv
	switch f.Type {
	case wire.TypeHeartbeat:
		return
	case wire.TypeError:
		s.log.Debug("device sent an error", "device", ss.dev.ID, "request_id", f.RequestID)
		return
	}
	start := s.o.Clock()
	code := uint16(0)
	defer func() { s.metrics.Request(f.Type, code, s.o.Clock().Sub(start)) }()
	fail := func(e *wire.StatusError, retryAfter time.Duration) {
		code = e.Code
		m := e.Reply(f.RequestID)
		if retryAfter > 0 {
			m.RetryAfterMS = uint32(retryAfter.Milliseconds())
		}
		ss.send(f.RequestID, m)
	}
	if !f.Type.IsRequest() {
		msg := fmt.Sprintf("unknown message type: %s", f.Type)
		if _, err := wire.New(f.Type); err == nil {
			msg = fmt.Sprintf("unknown message type: %s is not a request a device may send now", f.Type)
		}
		fail(wire.ErrUnsupportedType.WithMsg(msg), 0)
		return
	}
	if !ss.dev.allowed.Allows(f.Type) {
		fail(wire.ErrForbidden.WithMsg(fmt.Sprintf("forbidden for role: a %s may not send %s", ss.dev.Role, f.Type)), 0)
		return
	}
	if ok, wait := ss.dev.bucket.take(start); !ok {
		s.rateLimited.Add(1)
		fail(wire.ErrRateLimited, wait)
		return
	}
	m, err := wire.DecodeMessage(f)
	if err != nil {
		fail(wire.StatusOf(err), 0)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	answer, err := ss.dispatch(ctx, f, m)
	if errors.Is(err, errAnswered) || errors.Is(err, errSessionGone) {
		return
	}
	if err != nil {
		se, logIt := statusOf(err)
		switch {
		case logIt && se.Code == wire.ErrInternal.Code:
			s.log.Error("request failed", "device", ss.dev.ID, "type", f.Type.String(), "request_id", f.RequestID, "err", err)
		case logIt:
			// The store's trouble (unavailable, read-only, aborted), not a
			// fault of the daemon: the device retries.
			s.log.Warn("request failed", "device", ss.dev.ID, "type", f.Type.String(), "request_id", f.RequestID, "code", se.Code, "err", err)
		}
		fail(se, 0)
		return
	}
	ss.send(f.RequestID, answer)
}

// req is a request after its site, counter and key were resolved.
type req struct {
	site    *queue.Site
	counter string // acting counter; "" when none
	qr      queue.Request
}

// resolve checks the site, counter and idempotency key of a request.
// needCounter: the request acts for a counter (a console must name it).
func (ss *session) resolve(f wire.Frame, site string, counter uint32, key string, needCounter bool) (req, error) {
	var r req
	def, err := ss.siteFor(site)
	if err != nil {
		return r, err
	}
	r.site = def
	// A keypad always acts as its counter: Counter 0 means it (§4), also
	// for REENTER, whose LCD lines count what its counter has waiting.
	if needCounter || counter != 0 || ss.dev.Role == wire.RoleKeypad {
		if r.counter, err = ss.counterFor(counter, needCounter); err != nil {
			return r, err
		}
	}
	if len(key) > maxKey {
		return r, wire.ErrBadPayload.WithMsg(fmt.Sprintf("malformed payload: idempotency key longer than %d bytes", maxKey))
	}
	if key == "" && f.Type.IsMutating() {
		// Every request of id 0 in a boot would derive the same key: a
		// second TAKE_TICKET would get the first one's ticket, two people
		// one number. Id 0 is not for requests (§3): refused, not guessed.
		if f.RequestID == 0 {
			return r, wire.ErrBadPayload.WithMsg("malformed payload: request id 0 is not for requests (count from 1) without an idempotency key")
		}
		key = wire.DerivedKey(ss.dev.ID, ss.hello.BootNonce, f.RequestID)
	}
	r.qr = queue.Request{Site: def.ID, Device: ss.dev.ID, Key: key}
	return r, nil
}

// siteFor resolves the site a request names ("" = the device's own).
func (ss *session) siteFor(name string) (*queue.Site, error) {
	dev := ss.dev
	eng := ss.srv.eng
	switch {
	case name == "" && dev.Site != "":
		name = dev.Site
	case name == "":
		sites := eng.Sites()
		if len(sites) != 1 {
			return nil, wire.ErrBadPayload.WithMsg("malformed payload: site required, this daemon serves several sites")
		}
		name = sites[0].ID
	case dev.Site != "" && name != dev.Site:
		return nil, wire.ErrForbidden.WithMsg(fmt.Sprintf("forbidden for role: %s may not act on site %s", dev.ID, name))
	}
	def, err := eng.Site(name)
	if err != nil {
		return nil, wire.ErrUnknownSite.WithMsg("unknown site: " + name)
	}
	return def, nil
}

// counterFor resolves the counter a request acts for.
func (ss *session) counterFor(n uint32, required bool) (string, error) {
	dev := ss.dev
	if dev.Role == wire.RoleKeypad {
		if n != 0 && n != dev.counterNum {
			return "", wire.ErrWrongCounter.WithMsg(fmt.Sprintf("wrong counter: %s is bound to counter %s, not %d", dev.ID, dev.Counter, n))
		}
		return dev.Counter, nil
	}
	if n == 0 {
		if required {
			return "", wire.ErrBadPayload.WithMsg("malformed payload: counter required")
		}
		return "", nil
	}
	return queue.CounterID(n), nil
}

// dispatch runs a decoded request against the engine.
func (ss *session) dispatch(ctx context.Context, f wire.Frame, m wire.Message) (wire.Message, error) {
	eng := ss.srv.eng
	switch m := m.(type) {
	case *wire.TakeTicket:
		return ss.takeTicket(ctx, f, m)
	case *wire.CallNext:
		r, err := ss.resolve(f, m.Site, m.Counter, m.IdemKey, true)
		if err != nil {
			return nil, err
		}
		t, err := eng.CallNext(ctx, queue.CounterRequest{Request: r.qr, Counter: r.counter})
		return ss.ticketAnswer(ctx, f.Type, r, t, err)
	case *wire.CallNumber:
		return ss.numberOp(ctx, f, wire.NumberAction(*m), true, eng.CallNumber)
	case *wire.Recall:
		return ss.counterOp(ctx, f, m.Site, m.Counter, m.IdemKey, eng.Recall)
	case *wire.NoShow:
		return ss.counterOp(ctx, f, m.Site, m.Counter, m.IdemKey, eng.NoShow)
	case *wire.Start:
		return ss.counterOp(ctx, f, m.Site, m.Counter, m.IdemKey, eng.Start)
	case *wire.Complete:
		return ss.counterOp(ctx, f, m.Site, m.Counter, m.IdemKey, eng.Complete)
	case *wire.Reenter:
		return ss.numberOp(ctx, f, wire.NumberAction(*m), false, eng.Reenter)
	case *wire.Transfer:
		r, err := ss.resolve(f, m.Site, m.Counter, m.IdemKey, true)
		if err != nil {
			return nil, err
		}
		tr := queue.TransferRequest{Request: r.qr, Counter: r.counter, ToService: m.ToService}
		if m.ToCounter != 0 {
			tr.ToCounter = queue.CounterID(m.ToCounter)
		}
		t, err := eng.Transfer(ctx, tr)
		return ss.ticketAnswer(ctx, f.Type, r, t, err)
	case *wire.Cancel:
		return ss.numberOp(ctx, f, wire.NumberAction(*m), false, eng.Cancel)
	case *wire.Pause:
		return ss.modeOp(ctx, f, m.Site, m.Counter, m.IdemKey, eng.Pause, func(w lcdWords) string { return w.paused })
	case *wire.Resume:
		return ss.modeOp(ctx, f, m.Site, m.Counter, m.IdemKey, eng.Resume, func(w lcdWords) string { return w.open })
	case *wire.Status:
		return ss.status(ctx, m)
	case *wire.Subscribe:
		return ss.subscribe(ctx, f, m)
	case *wire.Reprint:
		return ss.reprint(ctx, f, m)
	case *wire.CheckIn:
		return ss.checkIn(ctx, f, m)
	}
	return nil, wire.ErrUnsupportedType.WithMsg(fmt.Sprintf("unknown message type: %s is not handled", f.Type))
}

func (ss *session) takeTicket(ctx context.Context, f wire.Frame, m *wire.TakeTicket) (wire.Message, error) {
	r, err := ss.resolve(f, m.Site, 0, m.IdemKey, false)
	if err != nil {
		return nil, err
	}
	class, ok := classesOf(r.site).fromWire[m.Class]
	if !ok {
		return nil, wire.ErrBadPayload.WithMsg(fmt.Sprintf("malformed payload: unknown ticket class %d at site %s", m.Class, r.site.ID))
	}
	if m.WantESCPOS && ss.srv.o.Render == nil {
		return nil, wire.ErrBadPayload.WithMsg("malformed payload: WantESCPOS, but printing is not configured")
	}
	pos, err := ss.srv.eng.IssuePosition(ctx, queue.IssueRequest{Request: r.qr, Service: m.Service, Class: class})
	if err != nil {
		return nil, err
	}
	return ss.printed(ctx, f, r, pos, m.WantESCPOS, m.Language)
}

// printed is the TICKET answer of a new ticket a kiosk prints: with its
// ESC/POS bytes when it asked for them, else printed on its network
// printer (if it has one) before it is answered.
func (ss *session) printed(ctx context.Context, f wire.Frame, r req, pos queue.Position, wantESCPOS bool, lang string) (wire.Message, error) {
	out := ticketMsg(r.site, &pos.Ticket, &pos)
	if !wantESCPOS && ss.srv.o.Print != nil {
		// A kiosk with only a button: its ticket prints on its network
		// printer before it is answered. A ticket that did not print is
		// issued all the same (it has its number and its place): the kiosk
		// is told so with the ticket, to show the number or call staff; a
		// retry with the same key gets the same ticket and tries the
		// printer again.
		if err := ss.srv.o.Print(ctx, ss.dev.ID, pos.Ticket, pos); err != nil {
			ss.srv.log.Warn("ticket issued but not printed", "device", ss.dev.ID, "request_id", f.RequestID,
				"site", r.site.ID, "number", pos.Ticket.Number, "err", err)
			out.NotPrinted, out.PrintError = true, printReason(err)
		}
	}
	if wantESCPOS {
		b, err := ss.srv.o.Render(r.site.ID, pos.Ticket, pos, lang)
		if err != nil {
			return nil, fmt.Errorf("protocol: render ticket %s: %w", pos.Ticket.Number, err)
		}
		out.ESCPOS = b
	}
	return out, nil
}

// checkIn turns a booking into a ticket and answers it as TAKE_TICKET
// does, with the slot's start in AppointmentMS.
func (ss *session) checkIn(ctx context.Context, f wire.Frame, m *wire.CheckIn) (wire.Message, error) {
	r, err := ss.resolve(f, m.Site, 0, m.IdemKey, false)
	if err != nil {
		return nil, err
	}
	if m.WantESCPOS && ss.srv.o.Render == nil {
		return nil, wire.ErrBadPayload.WithMsg("malformed payload: WantESCPOS, but printing is not configured")
	}
	ci, err := ss.srv.eng.CheckIn(ctx, queue.BookingRequest{Request: r.qr, Code: m.Code})
	if err != nil {
		return nil, err
	}
	return ss.printed(ctx, f, r, ci.Position, m.WantESCPOS, m.Language)
}

type counterFunc func(context.Context, queue.CounterRequest) (queue.Ticket, error)

func (ss *session) counterOp(ctx context.Context, f wire.Frame, site string, counter uint32, key string, fn counterFunc) (wire.Message, error) {
	r, err := ss.resolve(f, site, counter, key, true)
	if err != nil {
		return nil, err
	}
	t, err := fn(ctx, queue.CounterRequest{Request: r.qr, Counter: r.counter})
	return ss.ticketAnswer(ctx, f.Type, r, t, err)
}

type numberFunc func(context.Context, queue.NumberRequest) (queue.Ticket, error)

// numberOp runs fn on the ticket that a CALL_NUMBER, REENTER or CANCEL
// names; needCounter as for resolve.
func (ss *session) numberOp(ctx context.Context, f wire.Frame, m wire.NumberAction, needCounter bool, fn numberFunc) (wire.Message, error) {
	r, err := ss.resolve(f, m.Site, m.Counter, m.IdemKey, needCounter)
	if err != nil {
		return nil, err
	}
	t, err := fn(ctx, queue.NumberRequest{Request: r.qr, Counter: r.counter, Number: m.Number})
	return ss.ticketAnswer(ctx, f.Type, r, t, err)
}

type modeFunc func(context.Context, queue.CounterRequest) (queue.CounterState, error)

func (ss *session) modeOp(ctx context.Context, f wire.Frame, site string, counter uint32, key string, fn modeFunc, word func(lcdWords) string) (wire.Message, error) {
	r, err := ss.resolve(f, site, counter, key, true)
	if err != nil {
		return nil, err
	}
	cs, err := fn(ctx, queue.CounterRequest{Request: r.qr, Counter: r.counter})
	if err != nil {
		return nil, err
	}
	ok := &wire.OK{Version: uint64(max(cs.Version, 0))}
	if ss.dev.Role == wire.RoleKeypad {
		lang := ss.lcdLang(r.site)
		ok.LCD = []string{lcdCounter(r.site, r.counter, lang), word(lcdWordsFor(lang))}
	}
	return ok, nil
}

// ticketAnswer turns an engine result into TICKET, with LCD lines for a
// keypad.
func (ss *session) ticketAnswer(ctx context.Context, t wire.MsgType, r req, tk queue.Ticket, err error) (wire.Message, error) {
	if err != nil {
		return nil, err
	}
	var pos *queue.Position
	if tk.Status == queue.StatusWaiting {
		if p, err := ss.srv.eng.TicketPosition(ctx, tk); err == nil {
			pos = &p
		}
	}
	out := ticketMsg(r.site, &tk, pos)
	if ss.dev.Role == wire.RoleKeypad {
		lang := ss.lcdLang(r.site)
		out.LCD = []string{lcdFirst(t, &tk, r.counter, lang)}
		err := ss.srv.views.read(ctx, ss.srv.eng, r.site, func(v *view.Site) {
			out.LCD = append(out.LCD, lcdWaiting(waitingFor(r.site, v, r.counter), lang))
		})
		if err != nil {
			ss.srv.log.Warn("keypad answer without its waiting count", "device", ss.dev.ID, "site", r.site.ID, "err", err)
		}
	}
	return out, nil
}

func (ss *session) status(ctx context.Context, m *wire.Status) (wire.Message, error) {
	def, err := ss.siteFor(m.Site)
	if err != nil {
		return nil, err
	}
	if m.Number != "" {
		p, err := ss.srv.eng.Position(ctx, def.ID, m.Number)
		if err != nil {
			return nil, err
		}
		return ticketMsg(def, &p.Ticket, &p), nil
	}
	if m.Service != "" && !hasService(def, m.Service) {
		return nil, wire.ErrUnknownService.WithMsg("unknown service: " + m.Service)
	}
	counter := queue.CounterID(m.Counter)
	if m.Counter != 0 && !def.HasCounter(counter) {
		return nil, wire.ErrUnknownCounter.WithMsg("unknown counter: " + counter)
	}
	snap, err := ss.srv.eng.SnapshotOf(ctx, def.ID, queue.ResourcesOfDay, m.Resources...)
	if err != nil {
		return nil, err
	}
	out := ss.srv.snapshotMsg(def, &snap)
	narrow(def, out, counter, m.Service)
	if err := pageResources(out, idSet(m.Resources), m.ResourceAfter); err != nil {
		return nil, err
	}
	if counter == "" && m.Service == "" {
		out = withRecent(ss, def, out, ss.srv.recent(ctx, ss, def, &snap), filter{})
	}
	return out, nil
}

// hasService reports whether site has a service of that code.
func hasService(site *queue.Site, code string) bool {
	for _, sv := range site.Services {
		if sv.Code == code {
			return true
		}
	}
	return false
}

// serves reports whether counter id of site serves service code.
func serves(site *queue.Site, id, code string) bool {
	for _, c := range site.Counters {
		if c.ID == id {
			for _, cs := range c.Services {
				if cs.Service == code {
					return true
				}
			}
		}
	}
	return false
}

// narrow keeps, of a SNAPSHOT, what a STATUS filter asks for: a counter
// (that counter, the services it serves and its devices) and a service
// (that service and the counters serving it); "" means no filter.
func narrow(site *queue.Site, m *wire.Snapshot, counter, service string) {
	if counter == "" && service == "" {
		return
	}
	m.Services = slices.DeleteFunc(m.Services, func(sv wire.ServiceInfo) bool {
		return (service != "" && sv.Code != service) || (counter != "" && !serves(site, counter, sv.Code))
	})
	m.Counters = slices.DeleteFunc(m.Counters, func(c wire.CounterInfo) bool {
		id := queue.CounterID(c.ID)
		return (counter != "" && id != counter) || (service != "" && !serves(site, id, service))
	})
	if counter != "" {
		n := queue.CounterNumber(counter)
		m.Devices = slices.DeleteFunc(m.Devices, func(d wire.DeviceInfo) bool { return d.Counter != n })
	}
}

// reprint prints a ticket again through Opts.Reprint. It changes no state
// and is not idempotent: every REPRINT received prints.
func (ss *session) reprint(ctx context.Context, f wire.Frame, m *wire.Reprint) (wire.Message, error) {
	if err := wire.Validate(m); err != nil {
		return nil, wire.StatusOf(err)
	}
	def, err := ss.siteFor(m.Site)
	if err != nil {
		return nil, err
	}
	fn := ss.srv.o.Reprint
	if fn == nil {
		return nil, wire.ErrPrinterFailed.WithMsg("printer failed: printing not configured")
	}
	err = fn(ctx, def.ID, m.Number, m.Printer)
	if err == nil {
		ss.srv.log.Info("ticket reprinted", "device", ss.dev.ID, "site", def.ID, "number", m.Number, "printer", m.Printer)
		return &wire.OK{}, nil
	}
	return nil, reprintErr(ss, f, def.ID, m, err)
}

// reprintErr maps a failed reprint onto what the console is told: no such
// ticket; the store's or the daemon's own trouble (left to statusOf);
// else "printer failed" with the cause (paper out, cover open, no answer),
// which is logged here.
func reprintErr(ss *session, f wire.Frame, site string, m *wire.Reprint, err error) error {
	var se *wire.StatusError
	switch {
	case errors.As(err, &se):
		return se
	case errors.Is(err, queue.ErrNotFound):
		return wire.ErrUnknownTicket.WithMsg(fmt.Sprintf("unknown ticket: %s today at %s", m.Number, site))
	case errors.Is(err, queue.ErrUnavailable), errors.Is(err, queue.ErrClosed):
		return err
	}
	ss.srv.log.Warn("reprint failed", "device", ss.dev.ID, "request_id", f.RequestID, "site", site,
		"number", m.Number, "printer", m.Printer, "err", err)
	msg := "printer failed: " + printReason(err)
	if m.Printer != "" {
		msg += " on " + m.Printer
	}
	return wire.ErrPrinterFailed.WithMsg(msg)
}

// printReason is the short wording of a failed print a device may show
// (devices.PrintError's Reason); the error itself goes to the log.
func printReason(err error) string {
	var r interface{ Reason() string }
	if errors.As(err, &r) {
		return r.Reason()
	}
	return "printer error"
}

// filter selects the events a subscription forwards.
type filter struct {
	counters map[string]bool // nil: every counter
	// served are the services the counters serve: a counter filter also
	// forwards every ticket event of them (ISSUED, a call at another
	// counter), which is what a keypad needs to count what waits for it.
	served   map[string]bool
	services map[string]bool // nil: every service
	// resources keeps the booking events of these resources and their
	// figures in a SNAPSHOT; nil: every resource.
	resources map[string]bool
}

// idSet is the set of ids, nil for none.
func idSet(ids []string) map[string]bool {
	if len(ids) == 0 {
		return nil
	}
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// serving fills fl.served from the site's definition of fl.counters.
func (fl *filter) serving(site *queue.Site) {
	fl.served = map[string]bool{}
	for _, c := range site.Counters {
		if fl.counters[c.ID] {
			for _, cs := range c.Services {
				fl.served[cs.Service] = true
			}
		}
	}
}

func (fl filter) match(ev *queue.Event) bool {
	if ev.Type.IsBooking() && fl.counters != nil {
		return false // a keypad counts tickets, not bookings
	}
	if fl.counters != nil && !fl.counters[ev.Counter] && !fl.served[ev.Service] && !fl.served[ev.FromQueue] {
		return false
	}
	if fl.services != nil && !fl.services[ev.Service] {
		return false
	}
	if ev.Type.IsBooking() && fl.resources != nil && !fl.resources[ev.Resource] {
		return false
	}
	return true
}

func (ss *session) subscribe(ctx context.Context, f wire.Frame, m *wire.Subscribe) (wire.Message, error) {
	s := ss.srv
	def, err := ss.siteFor(m.Site)
	if err != nil {
		return nil, err
	}
	var fl filter
	if ss.dev.Role == wire.RoleKeypad {
		for _, c := range m.Counters {
			if c != ss.dev.counterNum {
				return nil, wire.ErrWrongCounter.WithMsg(fmt.Sprintf("wrong counter: %s is bound to counter %s, not %d", ss.dev.ID, ss.dev.Counter, c))
			}
		}
		fl.counters = map[string]bool{ss.dev.Counter: true}
	} else if len(m.Counters) > 0 {
		fl.counters = map[string]bool{}
		for _, c := range m.Counters {
			fl.counters[queue.CounterID(c)] = true
		}
	}
	if fl.counters != nil {
		fl.serving(def)
	}
	if len(m.Services) > 0 {
		fl.services = map[string]bool{}
		for _, sv := range m.Services {
			fl.services[sv] = true
		}
	}
	fl.resources = idSet(m.Resources)
	ss.unsubscribe()
	ss.resources.Store(&fl.resources)
	snap, err := s.eng.SnapshotOf(ctx, def.ID, queue.ResourcesOfDay, m.Resources...)
	if err != nil {
		return nil, err
	}
	from := int64(m.FromVersion)
	v := snap.Version
	var answer wire.Message = &wire.OK{Version: uint64(v)}
	if m.FromVersion == 0 || m.Snapshot || from > v || v-from > int64(s.o.MaxReplay) {
		sm := s.snapshotMsg(def, &snap)
		if err := pageResources(sm, fl.resources, ""); err != nil {
			return nil, err
		}
		answer, from = withRecent(ss, def, sm, s.recent(ctx, ss, def, &snap), fl), v
	}
	// The answer goes into the queue before any event of the hub.
	if !ss.send(f.RequestID, answer) {
		return nil, errSessionGone
	}
	if err := s.join(ss, def, from, v, fl); err != nil {
		s.log.Error("subscribe", "device", ss.dev.ID, "site", def.ID, "err", err)
		ss.kill(wire.ErrInternal, "subscribe failed")
	}
	return nil, errAnswered
}

// errAnswered and errSessionGone tell handle that dispatch already queued
// its answer (or could not).
var (
	errAnswered    = errors.New("protocol: answered")
	errSessionGone = errors.New("protocol: session gone")
)
