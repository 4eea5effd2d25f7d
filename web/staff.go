package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nowserving/nowserving/internal/words"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/staff"
)

// The people's pages: /login, /logout and the counter page /counter with
// its JSON calls under /counter/api/. They are for browsers with a session
// cookie, not for API clients, so they are not in openapi.yaml. Every
// action goes through the engine's operations as a keypad's does, with the
// actor "user:NAME@counter-ID" and the page's idempotency key.

const (
	sessionCookie = "ns_session"
	loginCookie   = "ns_login" // the login form's CSRF token (double submit)
	csrfHeader    = "X-CSRF-Token"
)

func (s *Server) staffRoutes() []route {
	return []route{
		{"GET", "/login", s.loginPage},
		{"POST", "/login", s.login},
		{"POST", "/logout", s.logout},
		{"GET", "/counter", s.counterPage},
		{"GET", "/counter/api/session", s.staffSession(s.sessionInfo)},
		{"GET", "/counter/api/{site}/{counter}", s.staffSession(s.counterBoard)},
		{"POST", "/counter/api/{site}/{counter}/{action}", s.staffSession(s.staffAction)},
	}
}

// fromProxy reports whether the request came from a configured single
// sign-on proxy.
func (s *Server) fromProxy(r *http.Request) bool {
	a, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := a.Addr().Unmap()
	return slices.ContainsFunc(s.o.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// clientAddr is the address the login rate limit counts: the peer's, or
// behind a trusted proxy the last address of X-Forwarded-For (the one the
// proxy itself added).
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if s.fromProxy(r) {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			parts := strings.Split(xff, ",")
			if a, err := netip.ParseAddr(strings.TrimSpace(parts[len(parts)-1])); err == nil {
				return a.String()
			}
		}
	}
	return host
}

// secure tells whether cookies must be Secure: the request came over TLS,
// directly or through a trusted proxy that says so.
func (s *Server) secure(r *http.Request) bool {
	return r.TLS != nil || (s.fromProxy(r) && r.Header.Get("X-Forwarded-Proto") == "https")
}

func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: s.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: maxAge})
}

// pageHeaders are the headers of every people's page: no framing (click
// jacking), nothing but the daemon's own scripts and styles, no caching.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// sameOrigin refuses a request whose Origin (or, without one, Referer)
// names another site: a second guard beside the CSRF token.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		o = r.Header.Get("Referer")
	}
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// session returns the request's session: its cookie's, or, with single
// sign-on, one opened for the account the trusted proxy names (and set
// as the cookie). nil when there is none.
func (s *Server) session(w http.ResponseWriter, r *http.Request) (*staff.Session, error) {
	var sso string
	if h := s.o.TrustedHeader; h != "" {
		if name := r.Header.Get(h); name != "" {
			if s.fromProxy(r) {
				sso = name
			} else {
				s.log.Warn("web: single sign-on header from an address that is not a trusted proxy; ignored",
					"header", h, "addr", r.RemoteAddr)
			}
		}
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		ss, err := s.o.Staff.Check(r.Context(), c.Value, r.Method != http.MethodGet || r.URL.Path == "/counter/api/session")
		if err == nil && (sso == "" || ss.Name == sso) {
			return ss, nil
		}
		if err != nil && !errors.Is(err, staff.ErrNoSession) {
			return nil, err
		}
	}
	if sso == "" {
		return nil, nil
	}
	ss, err := s.o.Staff.Open(r.Context(), sso)
	if errors.Is(err, staff.ErrBadLogin) || errors.Is(err, staff.ErrDisabled) {
		s.log.Warn("web: single sign-on for no active account", "name", sso, "err", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.log.Info("web: login", "user", ss.Name, "via", "trusted_header", "addr", s.clientAddr(r))
	s.setCookie(w, r, sessionCookie, ss.ID, 0)
	return ss, nil
}

type sessionKey struct{}

// staffSession lets through requests with a live session and, for any
// method but GET, the session's CSRF token in X-CSRF-Token and no foreign
// Origin; it answers 401 or 403 problems otherwise.
func (s *Server) staffSession(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		ss, err := s.session(w, r)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		if ss == nil {
			writeProblem(w, http.StatusUnauthorized, "login_required", "log in first", "no session, or it ended after being idle")
			return
		}
		if r.Method != http.MethodGet {
			if subtle.ConstantTimeCompare([]byte(r.Header.Get(csrfHeader)), []byte(ss.CSRF)) != 1 || !sameOrigin(r) {
				s.log.Warn("web: staff request without its CSRF token refused", "user", ss.Name, "path", r.URL.Path)
				writeProblem(w, http.StatusForbidden, "csrf", "request not from the page", "missing or wrong "+csrfHeader)
				return
			}
		}
		next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, ss)))
	}
}

func sessionOf(r *http.Request) *staff.Session {
	ss, _ := r.Context().Value(sessionKey{}).(*staff.Session)
	return ss
}

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.W.title}} · nowserving</title><link rel="stylesheet" href="/static/counter.css"></head>
<body class="login"><main>
<h1>{{.W.title}}</h1>
{{if .Error}}<p class="refusal" role="alert" id="login-error">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<label for="name">{{.W.name}}</label>
<input id="name" name="name" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="64" required autofocus>
<label for="password">{{.W.password}}</label>
<input id="password" name="password" type="password" autocomplete="current-password" maxlength="256" required>
<button type="submit">{{.W.submit}}</button>
</form>
</main></body></html>
`))

// acceptLang is the first language of the request's Accept-Language that
// have has, else "en".
func acceptLang(r *http.Request, have func(string) bool) string {
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if base := words.Base(tag); have(base) {
			return base
		}
	}
	return "en"
}

// renderLogin writes the login page in the browser's first language
// that static/words/login.json has (Accept-Language), else English, with
// the word problem as its error when not "".
func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	lang := acceptLang(r, func(l string) bool { _, ok := loginCatalog[l]; return ok })
	words := loginCatalog.Words(lang)
	csrf := staff.NewToken()
	s.setCookie(w, r, loginCookie, csrf, 3600)
	pageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	err := loginTemplate.Execute(w, map[string]any{"Lang": lang, "W": words, "CSRF": csrf, "Error": words[problem]})
	if err != nil {
		s.log.Warn("web: login page", "err", err)
	}
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if ss, _ := s.session(w, r); ss != nil {
		http.Redirect(w, r, "/counter", http.StatusSeeOther)
		return
	}
	problem := ""
	if r.URL.Query().Get("ended") != "" {
		problem = "ended"
	}
	s.renderLogin(w, r, http.StatusOK, problem)
}

// login checks the form: the CSRF token of its cookie, the name and the
// password (never logged), the rate limit. A good login sets the session
// cookie and goes to /counter.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		s.renderLogin(w, r, http.StatusBadRequest, "bad")
		return
	}
	name, pw := r.PostForm.Get("name"), r.PostForm.Get("password")
	c, err := r.Cookie(loginCookie)
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostForm.Get("csrf"))) != 1 || !sameOrigin(r) {
		s.log.Warn("web: login form without its CSRF token refused", "addr", s.clientAddr(r))
		s.renderLogin(w, r, http.StatusForbidden, "csrf")
		return
	}
	addr := s.clientAddr(r)
	ss, err := s.o.Staff.Login(r.Context(), name, pw, addr)
	switch {
	case errors.Is(err, staff.ErrBadLogin):
		s.log.Warn("web: login failed", "name", fmt.Sprintf("%.64q", name), "addr", addr)
		s.renderLogin(w, r, http.StatusUnauthorized, "bad")
		return
	case errors.Is(err, staff.ErrDisabled):
		s.log.Warn("web: login to a disabled account", "name", name, "addr", addr)
		s.renderLogin(w, r, http.StatusForbidden, "disabled")
		return
	case errors.Is(err, staff.ErrRateLimited):
		s.log.Warn("web: login refused by the rate limit", "name", fmt.Sprintf("%.64q", name), "addr", addr)
		w.Header().Set("Retry-After", "900")
		s.renderLogin(w, r, http.StatusTooManyRequests, "limited")
		return
	case err != nil:
		writeError(w, s.log, err)
		return
	}
	s.log.Info("web: login", "user", ss.Name, "addr", addr)
	s.setCookie(w, r, sessionCookie, ss.ID, 0)
	s.setCookie(w, r, loginCookie, "", -1)
	http.Redirect(w, r, "/counter", http.StatusSeeOther)
}

// logout ends the session; it needs the session's CSRF token (a form
// field or the header), so another site cannot log a clerk out.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	_ = r.ParseForm()
	if c, err := r.Cookie(sessionCookie); err == nil {
		if ss, err := s.o.Staff.Check(r.Context(), c.Value, false); err == nil {
			tok := r.PostForm.Get("csrf")
			if tok == "" {
				tok = r.Header.Get(csrfHeader)
			}
			if subtle.ConstantTimeCompare([]byte(tok), []byte(ss.CSRF)) != 1 || !sameOrigin(r) {
				writeProblem(w, http.StatusForbidden, "csrf", "request not from the page", "missing or wrong csrf")
				return
			}
			s.o.Staff.Logout(ss.ID)
			s.log.Info("web: logout", "user", ss.Name)
		}
	}
	s.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// counterPage serves the counter page to a logged-in person, else sends
// them to /login.
func (s *Server) counterPage(w http.ResponseWriter, r *http.Request) {
	if s.pagePerson(w, r) != nil {
		s.staffPage(w, "static/counter.html", nil)
	}
}

// pagePerson is the session of a request for a people's page; without one
// it sends the browser to /login (or answers the error) and returns nil.
func (s *Server) pagePerson(w http.ResponseWriter, r *http.Request) *staff.Session {
	ss, err := s.session(w, r)
	if err != nil {
		writeError(w, s.log, err)
		return nil
	}
	if ss == nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	}
	return ss
}

// staffPage serves an embedded people's page with pageHeaders; given a
// site, in that site's languages (pageFor).
func (s *Server) staffPage(w http.ResponseWriter, name string, site *queue.Site) {
	b, err := pageOf(name, site)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	pageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}

// StaffSession is what the counter page learns of its person: who, the
// CSRF token its actions carry, and the counters they may act at.
type StaffSession struct {
	Name  string      `json:"name"`
	Role  string      `json:"role"`
	CSRF  string      `json:"csrf"`
	IdleS float64     `json:"idle_s"`
	Sites []StaffSite `json:"sites"`
}

// StaffSite is one site of a StaffSession.
type StaffSite struct {
	ID       string            `json:"id"`
	Names    map[string]string `json:"names"`
	Langs    []string          `json:"langs"`
	Counters []StaffCounter    `json:"counters"`
	Services []StaffService    `json:"services"`
}

// StaffCounter is a counter the person may act at.
type StaffCounter struct {
	ID       string            `json:"id"`
	Names    map[string]string `json:"names"`
	Services []string          `json:"services"`
}

// StaffService is a service, for the waiting lists and transfers.
type StaffService struct {
	Code  string            `json:"code"`
	Names map[string]string `json:"names"`
}

func (s *Server) sessionInfo(w http.ResponseWriter, r *http.Request) {
	ss := sessionOf(r)
	out := StaffSession{Name: ss.Name, Role: string(ss.Role), CSRF: ss.CSRF, IdleS: s.o.Staff.Idle().Seconds(), Sites: []StaffSite{}}
	for _, site := range s.o.Engine.Sites() {
		if !ss.MaySite(site.ID) {
			continue
		}
		st := StaffSite{ID: site.ID, Names: perLang(&site, site.Name), Langs: siteLangs(&site)}
		for _, c := range site.Counters {
			if !ss.MayCounter(site.ID, c.ID) {
				continue
			}
			sc := StaffCounter{ID: c.ID, Names: counterNames(&site, c.ID)}
			for _, cs := range c.Services {
				sc.Services = append(sc.Services, cs.Service)
			}
			st.Counters = append(st.Counters, sc)
		}
		for _, sv := range site.Services {
			st.Services = append(st.Services, StaffService{Code: sv.Code,
				Names: perLang(&site, func(l string) string { return site.PickName(sv.Names, l, sv.Code) })})
		}
		if len(st.Counters) > 0 {
			out.Sites = append(out.Sites, st)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// CounterBoard is what the counter page shows of its counter: its mode,
// the ticket in hand, the waiting lists of its services and every counter
// of the site (for transfers).
type CounterBoard struct {
	Site     string          `json:"site"`
	Counter  string          `json:"counter"`
	Version  int64           `json:"version"`
	Mode     string          `json:"mode"`
	Ticket   *Ticket         `json:"ticket,omitempty"`
	Served   int             `json:"served"`
	Queues   []CounterQueue  `json:"queues"`
	Counters []CounterTarget `json:"counters"`
}

// CounterQueue is the waiting list of one of the counter's services.
type CounterQueue struct {
	Service string          `json:"service"`
	Waiting int             `json:"waiting"`
	Tickets []WaitingTicket `json:"tickets"` // the first boardTickets, in call order
}

// WaitingTicket is one ticket of a waiting list.
type WaitingTicket struct {
	Number     string  `json:"number"`
	Class      string  `json:"class"`
	WaitingS   float64 `json:"waiting_s"`
	ForCounter string  `json:"for_counter,omitempty"` // transferred to this counter
}

// CounterTarget is a counter a ticket can be transferred to.
type CounterTarget struct {
	ID    string            `json:"id"`
	Names map[string]string `json:"names"`
}

// boardTickets is how many tickets a waiting list shows.
const boardTickets = 30

// mayAct checks that the session may act at the path's counter and
// returns the site and counter; otherwise it answers (and logs a refusal
// at a counter not the person's).
func (s *Server) mayAct(w http.ResponseWriter, r *http.Request) (*queue.Site, *queue.Counter, bool) {
	ss := sessionOf(r)
	site, err := s.o.Engine.Site(r.PathValue("site"))
	if err != nil {
		writeError(w, s.log, err)
		return nil, nil, false
	}
	id := r.PathValue("counter")
	var c *queue.Counter
	for i := range site.Counters {
		if site.Counters[i].ID == id {
			c = &site.Counters[i]
		}
	}
	if c == nil {
		writeError(w, s.log, fmt.Errorf("%w: %.40q at site %s", queue.ErrUnknownCounter, id, site.ID))
		return nil, nil, false
	}
	if !ss.MayCounter(site.ID, c.ID) {
		s.log.Warn("web: staff refused at a counter not theirs", "user", ss.Name, "role", ss.Role,
			"site", site.ID, "counter", c.ID, "action", r.PathValue("action"))
		writeProblem(w, http.StatusForbidden, "forbidden_counter", "not your counter",
			fmt.Sprintf("%s may not act at counter %s of %s", ss.Name, c.ID, site.ID))
		return nil, nil, false
	}
	return site, c, true
}

func (s *Server) counterBoard(w http.ResponseWriter, r *http.Request) {
	site, c, ok := s.mayAct(w, r)
	if !ok {
		return
	}
	b, err := s.board(r.Context(), site, c)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (s *Server) board(ctx context.Context, site *queue.Site, c *queue.Counter) (CounterBoard, error) {
	var services []string
	for _, sv := range c.Services {
		services = append(services, sv.Service)
	}
	sn, lists, err := s.boards.read(ctx, s.o.Engine, site, services)
	if err != nil {
		return CounterBoard{}, err
	}
	b := CounterBoard{Site: site.ID, Counter: c.ID, Version: sn.Version, Mode: string(queue.CounterOpen),
		Queues: []CounterQueue{}, Counters: []CounterTarget{}}
	for _, cs := range sn.Counters {
		if cs.ID == c.ID {
			b.Mode, b.Served = string(cs.Mode), cs.Served
			if cs.Ticket != nil {
				t := toTicket(*cs.Ticket)
				b.Ticket = &t
			}
		}
	}
	now := s.o.Clock()
	for _, sv := range c.Services {
		q := CounterQueue{Service: sv.Service, Tickets: []WaitingTicket{}}
		for _, st := range sn.Services {
			if st.Code == sv.Service {
				q.Waiting = st.Waiting
			}
		}
		for _, t := range lists[sv.Service] {
			if t.TargetCounter != "" && t.TargetCounter != c.ID {
				continue
			}
			q.Tickets = append(q.Tickets, WaitingTicket{Number: t.Number, Class: string(t.Class),
				WaitingS: max(0, now.Sub(t.WaitingSince).Round(time.Second).Seconds()), ForCounter: t.TargetCounter})
		}
		b.Queues = append(b.Queues, q)
	}
	for _, o := range site.Counters {
		b.Counters = append(b.Counters, CounterTarget{ID: o.ID, Names: counterNames(site, o.ID)})
	}
	return b, nil
}

// StaffActionBody is the body of a counter page's action. Key is the
// idempotency key the page made for the click: a double click or a retry
// sends the same one, and the engine answers the first result again.
type StaffActionBody struct {
	Key       string `json:"key"`
	Number    string `json:"number,omitempty"`     // call
	ToService string `json:"to_service,omitempty"` // transfer
	ToCounter string `json:"to_counter,omitempty"` // transfer
	Reason    string `json:"reason,omitempty"`     // transfer
}

// StaffActionResult answers an action: the ticket it acted on (none for
// pause and resume) and the counter's mode after it.
type StaffActionResult struct {
	Action string  `json:"action"`
	Ticket *Ticket `json:"ticket,omitempty"`
	Mode   string  `json:"mode,omitempty"`
}

var (
	reKey    = regexp.MustCompile(`^[A-Za-z0-9_.:-]{8,128}$`)
	reNumber = regexp.MustCompile(`^[A-Za-z0-9-]{1,16}$`)
	reCode   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
)

// MaxReason is the longest transfer reason, in characters.
const MaxReason = 200

// checkBody refuses what the engine must never see: a missing or odd
// key, a number, service or counter that cannot be one, a reason too long
// or with control characters.
func checkBody(action string, b StaffActionBody) error {
	if !reKey.MatchString(b.Key) {
		return errors.New("key: want 8 to 128 of A-Z a-z 0-9 _ . : -")
	}
	switch action {
	case "call":
		if !reNumber.MatchString(b.Number) {
			return errors.New("number: want a ticket number such as A023")
		}
	case "transfer":
		if (b.ToService == "") == (b.ToCounter == "") {
			return errors.New("transfer: want to_service or to_counter, one of them")
		}
		for _, v := range []string{b.ToService, b.ToCounter} {
			if v != "" && !reCode.MatchString(v) {
				return errors.New("transfer: to_service or to_counter is not a code")
			}
		}
		if utf8.RuneCountInString(b.Reason) > MaxReason || !utf8.ValidString(b.Reason) ||
			strings.IndexFunc(b.Reason, unicode.IsControl) >= 0 {
			return fmt.Errorf("reason: at most %d characters, no control characters", MaxReason)
		}
	}
	if action != "call" && b.Number != "" || action != "transfer" && (b.ToService != "" || b.ToCounter != "" || b.Reason != "") {
		return fmt.Errorf("%s takes only key", action)
	}
	return nil
}

// staffAction runs one action of the counter page at its counter.
func (s *Server) staffAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	switch action {
	case "next", "recall", "start", "done", "noshow", "transfer", "call", "pause", "resume":
	default:
		writeProblem(w, http.StatusNotFound, "unknown_action", "unknown action",
			"want next, recall, start, done, noshow, transfer, call, pause or resume")
		return
	}
	site, c, ok := s.mayAct(w, r)
	if !ok {
		return
	}
	var b StaffActionBody
	if !readBody(w, r, &b, "a JSON object with key (and number, to_service, to_counter, reason)") {
		return
	}
	if err := checkBody(action, b); err != nil {
		badRequest(w, err.Error())
		return
	}
	ss := sessionOf(r)
	req := queue.Request{Site: site.ID, Device: queue.StaffActor(ss.Name, c.ID), Key: b.Key}
	cr := queue.CounterRequest{Request: req, Counter: c.ID}
	e := s.o.Engine
	ctx := r.Context()
	var t queue.Ticket
	var err error
	res := StaffActionResult{Action: action}
	switch action {
	case "next":
		t, err = e.CallNext(ctx, cr)
	case "recall":
		t, err = e.Recall(ctx, cr)
	case "start":
		t, err = e.Start(ctx, cr)
	case "done":
		t, err = e.Complete(ctx, cr)
	case "noshow":
		t, err = e.NoShow(ctx, cr)
	case "call":
		t, err = e.CallNumber(ctx, queue.NumberRequest{Request: req, Counter: c.ID, Number: b.Number})
	case "transfer":
		t, err = e.Transfer(ctx, queue.TransferRequest{Request: req, Counter: c.ID, ToService: b.ToService, ToCounter: b.ToCounter, Reason: b.Reason})
	case "pause", "resume":
		var cs queue.CounterState
		if action == "pause" {
			cs, err = e.Pause(ctx, cr)
		} else {
			cs, err = e.Resume(ctx, cr)
		}
		res.Mode = string(cs.Mode)
	}
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	if t.ID != 0 {
		tt := toTicket(t)
		res.Ticket = &tt
	}
	writeJSON(w, http.StatusOK, res)
}
