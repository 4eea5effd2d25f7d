package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/nowserving/nowserving/queue"
)

// The kiosk page /kiosk/{site}?device=ID: a touch screen in a browser's
// kiosk mode that takes tickets as the kiosk device ID. An installer
// provisions it once by typing the device's secret (devices[].secret of a
// kiosk of that site); the page then holds a cookie that proves it, an
// HMAC of the device id under the secret (the secret itself is never
// stored in the browser), which a changed secret invalidates. Tickets are
// issued by the engine with the device's id as the actor and the page's
// idempotency key, print on the device's network printer when it has one,
// and otherwise show on screen with the QR code of their status page.

// KioskDevice is a kiosk device a browser kiosk page may act as.
type KioskDevice struct {
	ID, Site, Secret string
}

func (s *Server) kioskRoutes() []route {
	return []route{
		{"GET", "/kiosk/{site}", s.kioskPage},
		{"POST", "/kiosk/{site}/api/provision", s.kioskProvision},
		{"GET", "/kiosk/{site}/api/state", s.kiosk(s.kioskState)},
		{"POST", "/kiosk/{site}/api/tickets", s.kiosk(s.kioskIssue)},
		{"POST", "/kiosk/{site}/api/check-in", s.kiosk(s.kioskCheckIn)},
		{"GET", "/kiosk/{site}/qr", s.kioskQR},
	}
}

func kioskCookie(device string) string { return "ns_kiosk_" + device }

// kioskProof is what the provisioned page's cookie holds.
func kioskProof(k KioskDevice) string {
	m := hmac.New(sha256.New, []byte(k.Secret))
	m.Write([]byte("nowserving kiosk page\x00" + k.Site + "\x00" + k.ID))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) kioskDevice(site, id string) (KioskDevice, bool) {
	for _, k := range s.o.Kiosks {
		if k.ID == id && k.Site == site {
			return k, true
		}
	}
	return KioskDevice{}, false
}

func (s *Server) kioskPage(w http.ResponseWriter, r *http.Request) {
	site := s.pathSite(w, r)
	if site == nil {
		return
	}
	s.staffPage(w, "static/kiosk.html", site)
}

type kioskKey struct{}

// kiosk lets through a provisioned page of ?device= at the path's site;
// a POST must also carry X-Kiosk: 1 and no foreign Origin (a cross-site
// form cannot set the header).
func (s *Server) kiosk(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		id := r.URL.Query().Get("device")
		k, ok := s.kioskDevice(r.PathValue("site"), id)
		c, err := r.Cookie(kioskCookie(id))
		if !ok || err != nil || !hmac.Equal([]byte(c.Value), []byte(kioskProof(k))) {
			writeProblem(w, http.StatusUnauthorized, "kiosk_not_provisioned", "kiosk not provisioned",
				"this browser is not provisioned as kiosk "+shortQ(id)+" of this site")
			return
		}
		if r.Method != http.MethodGet && (r.Header.Get("X-Kiosk") != "1" || !sameOrigin(r)) {
			writeProblem(w, http.StatusForbidden, "csrf", "request not from the page", "missing X-Kiosk header or a foreign origin")
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), kioskKey{}, k)))
	}
}

func shortQ(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// kioskProvision checks a device's secret once and sets the page's cookie.
func (s *Server) kioskProvision(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Device string `json:"device"`
		Secret string `json:"secret"`
	}
	const want = `{"device": ID, "secret": SECRET}`
	if !readBody(w, r, &b, want) {
		return
	}
	if b.Device == "" || b.Secret == "" {
		badRequest(w, "body: want "+want)
		return
	}
	if r.Header.Get("X-Kiosk") != "1" || !sameOrigin(r) {
		writeProblem(w, http.StatusForbidden, "csrf", "request not from the page", "missing X-Kiosk header or a foreign origin")
		return
	}
	k, ok := s.kioskDevice(r.PathValue("site"), b.Device)
	if !ok || !hmac.Equal([]byte(b.Secret), []byte(k.Secret)) {
		s.log.Warn("web: kiosk provisioning refused", "device", shortQ(b.Device), "site", r.PathValue("site"), "addr", s.clientAddr(r))
		writeProblem(w, http.StatusForbidden, "kiosk_refused", "wrong device or secret", "no kiosk of this site with that id and secret")
		return
	}
	s.log.Info("web: kiosk page provisioned", "device", k.ID, "site", k.Site, "addr", s.clientAddr(r))
	http.SetCookie(w, &http.Cookie{Name: kioskCookie(k.ID), Value: kioskProof(k), Path: "/kiosk/", HttpOnly: true,
		Secure: s.secure(r), SameSite: http.SameSiteStrictMode, MaxAge: 10 * 365 * 24 * 3600})
	writeJSON(w, http.StatusOK, map[string]string{"device": k.ID})
}

// KioskService is a service as the kiosk page offers it.
type KioskService struct {
	Code  string            `json:"code"`
	Names map[string]string `json:"names"`
	Open  bool              `json:"open"`
	// Opens is when a service its hours close opens next (absent when
	// open, or never opening again): the page says it on the button.
	// Closes is when an open service with hours closes next. The page
	// reads its state again at the first of them.
	Opens     *time.Time `json:"opens,omitempty"`
	Closes    *time.Time `json:"closes,omitempty"`
	Full      bool       `json:"full"`
	Waiting   int        `json:"waiting"`
	EstimateS float64    `json:"estimate_s"` // waiting × average service time / open counters serving it
}

// KioskState is what the kiosk page shows.
type KioskState struct {
	Site     string            `json:"site"`
	Names    map[string]string `json:"names"`
	Langs    []string          `json:"langs"`
	TimeZone string            `json:"tz"`  // the site's, for the times it shows
	Now      time.Time         `json:"now"` // the daemon's clock, against the kiosk's
	Device   string            `json:"device"`
	Services []KioskService    `json:"services"`
	// CheckIn is whether the site has bookable resources: the page then
	// offers check-in by booking code.
	CheckIn bool `json:"check_in"`
}

func (s *Server) kioskState(w http.ResponseWriter, r *http.Request) {
	site := s.pathSite(w, r)
	if site == nil {
		return
	}
	k := r.Context().Value(kioskKey{}).(KioskDevice)
	sn, err := s.o.Engine.Snapshot(r.Context(), site.ID)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	open := map[string]bool{}
	for _, c := range sn.Counters {
		open[c.ID] = c.Mode == queue.CounterOpen
	}
	st := KioskState{Site: site.ID, Names: perLang(site, site.Name), Langs: siteLangs(site), TimeZone: site.Location.String(),
		Now: s.o.Clock(), Device: k.ID, Services: []KioskService{}, CheckIn: len(site.Resources) > 0}
	for _, sv := range site.Services {
		ks := KioskService{Code: sv.Code, Names: perLang(site, func(l string) string { return site.PickName(sv.Names, l, sv.Code) })}
		for _, ss := range sn.Services {
			if ss.Code == sv.Code {
				ks.Open, ks.Full, ks.Waiting = ss.Open, ss.Full, ss.Waiting
			}
		}
		if _, opens, closes := hoursOf(&sv, site.Location, st.Now); ks.Open {
			ks.Closes = closes
		} else {
			ks.Opens = opens
		}
		counters := 0
		for _, c := range site.Counters {
			for _, cs := range c.Services {
				if cs.Service == sv.Code && open[c.ID] {
					counters++
				}
			}
		}
		if counters > 0 {
			ks.EstimateS = float64(ks.Waiting) * sv.AvgService.Seconds() / float64(counters)
		}
		st.Services = append(st.Services, ks)
	}
	writeJSON(w, http.StatusOK, st)
}

// KioskTicket answers a kiosk page's ticket: where it stands, whether it
// printed, and the status page's address for the on-screen QR code.
type KioskTicket struct {
	Position
	Printed   bool   `json:"printed"`
	PrintErr  string `json:"print_error,omitempty"`
	StatusURL string `json:"status_url,omitempty"`
}

func (s *Server) kioskIssue(w http.ResponseWriter, r *http.Request) {
	k := r.Context().Value(kioskKey{}).(KioskDevice)
	var b struct {
		Service string `json:"service"`
		Key     string `json:"key"`
	}
	if !readBody(w, r, &b, `{"service": CODE, "key": KEY}`) {
		return
	}
	if !reCode.MatchString(b.Service) || !reKey.MatchString(b.Key) {
		badRequest(w, "service: a service code; key: 8 to 128 of A-Z a-z 0-9 _ . : -")
		return
	}
	p, err := s.o.Engine.IssuePosition(r.Context(), queue.IssueRequest{Request: queue.Request{Site: k.Site, Device: k.ID, Key: b.Key}, Service: b.Service})
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.kioskTicket(r.Context(), k, p))
}

// kioskTicket prints a ticket the kiosk page took on the device's printer
// (when it has one) and says where it stands.
func (s *Server) kioskTicket(ctx context.Context, k KioskDevice, p queue.Position) KioskTicket {
	out := KioskTicket{Position: toPosition(p, s.o.Clock())}
	if s.o.Print != nil {
		printed, err := s.o.Print(ctx, k.ID, p.Ticket, p)
		out.Printed = printed && err == nil
		if err != nil {
			s.log.Warn("web: kiosk ticket not printed; shown on screen", "device", k.ID, "ticket", p.Ticket.Number, "err", err)
			out.PrintErr = "printer"
		}
	}
	if s.o.PublicURL != "" {
		out.StatusURL = TicketURL(s.o.PublicURL, k.Site, p.Ticket.Number, p.Ticket.Day)
	}
	return out
}

// reBookingCode is a booking code as a person types it: its letters and
// digits, with dashes or spaces between groups (queue.NormalizeCode).
var reBookingCode = regexp.MustCompile(`^[A-Za-z0-9 -]{1,24}$`)

// KioskCheckIn answers a check-in at the kiosk page: the ticket, and the
// appointment's time in the site's zone (HH:MM) and whether it was on time
// (an appointment ticket) or late (a normal one).
type KioskCheckIn struct {
	KioskTicket
	Appointment string `json:"appointment"`
	OnTime      bool   `json:"on_time"`
}

// kioskCheckIn turns a booking, named by its code, into a ticket as the
// kiosk device (the engine's check-in: the same rules and events as a
// kiosk's CHECK_IN), printed or shown as a ticket the kiosk took. A check-in
// too early answers check_in_early with the time to come back (HH:MM, or
// the date too) as its detail, for the page to say in its language.
func (s *Server) kioskCheckIn(w http.ResponseWriter, r *http.Request) {
	k := r.Context().Value(kioskKey{}).(KioskDevice)
	var b struct {
		Code string `json:"code"`
		Key  string `json:"key"`
	}
	if !readBody(w, r, &b, `{"code": BOOKING-CODE, "key": KEY}`) {
		return
	}
	if !reBookingCode.MatchString(b.Code) || len(queue.NormalizeCode(b.Code)) != queue.CodeLen || !reKey.MatchString(b.Key) {
		badRequest(w, fmt.Sprintf("code: a booking code of %d letters and digits; key: 8 to 128 of A-Z a-z 0-9 _ . : -", queue.CodeLen))
		return
	}
	site := s.pathSite(w, r)
	if site == nil {
		return
	}
	ci, err := s.o.Engine.CheckIn(r.Context(), queue.BookingRequest{Request: queue.Request{Site: k.Site, Device: k.ID, Key: b.Key}, Code: b.Code})
	var early *queue.CheckInEarlyError
	switch {
	case errors.As(err, &early):
		writeProblem(w, http.StatusConflict, "check_in_early", "too early to check in", early.ComeBack())
		return
	case err != nil:
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, KioskCheckIn{KioskTicket: s.kioskTicket(r.Context(), k, ci.Position),
		Appointment: ci.Booking.Start.In(site.Location).Format("15:04"), OnTime: ci.OnTime})
}

// kioskQR is the QR code (PNG) of a ticket's status page, for the screen
// of a kiosk without a printer.
func (s *Server) kioskQR(w http.ResponseWriter, r *http.Request) {
	site := s.pathSite(w, r)
	if site == nil {
		return
	}
	q := r.URL.Query()
	number, day := q.Get("number"), q.Get("day")
	if s.o.PublicURL == "" || !reNumber.MatchString(number) || len(day) > 10 || strings.ContainsAny(day, "/?#&") {
		badRequest(w, "want ?number=A023&day=YYYY-MM-DD, and http.public_url configured")
		return
	}
	png, err := qrcode.Encode(TicketURL(s.o.PublicURL, site.ID, number, day), qrcode.Medium, 320)
	if err != nil {
		writeError(w, s.log, errors.Join(errors.New("web: qr code"), err))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(png)
}
