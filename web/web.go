// Package web is nowserving's HTTP side: health and readiness probes, the
// Prometheus /metrics endpoint, a JSON API with bearer tokens for hospital
// and bank systems (tickets, status, snapshots, counter actions and a
// Server-Sent Events stream, documented in openapi.yaml), the hall display
// page /display/{site} and the ticket status page /t/{site}/{number} that
// the QR code on a printed ticket opens, the counter page /counter for
// staff behind /login (staff.go) and the browser kiosk /kiosk/{site}
// (kiosk.go). The pages are plain HTML (templates sharing their head and
// scripts, rendered once: pages.go), CSS and JavaScript embedded in the
// binary; they follow the site live over SSE.
package web

import (
	"cmp"
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nowserving/nowserving/booking"
	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/staff"
)

//go:embed static openapi.yaml
var files embed.FS

// TokenInfo is one API client. Its Name becomes the actor of what it does
// ("api:" + Name) and the device half of its idempotency keys.
type TokenInfo struct {
	Name string
	// Token is the bearer secret.
	Token string
	// Sites the token may act on; empty means every site.
	Sites []string
}

// Opts configures a Server.
type Opts struct {
	// Engine serves the API and the pages; required.
	Engine *queue.Engine
	// Registry is served at /metrics, and receives the HTTP metrics
	// (nowserving_http_requests_total{route, code},
	// nowserving_http_request_duration_seconds{route}, event streams not
	// timed, nowserving_http_streams); nil: a registry of its own.
	Registry *prometheus.Registry
	// Ready reports whether the daemon can serve (store writable,
	// migrations applied, listeners up); nil means always ready. /readyz
	// gives it ReadyTimeout and answers 503 when it has not returned by
	// then.
	Ready func(ctx context.Context) error
	// Tokens are the API clients; with none, every API call is refused.
	Tokens []TokenInfo
	// Logger receives request errors; nil discards them.
	Logger *slog.Logger
	// SlotCache bounds the slots the free-slot lists keep in memory
	// (http.slot_cache; default booking.DefaultCacheSlots).
	SlotCache int
	// MaxSlotReads, MaxBookings and BookingQueue are booking.Opts'
	// MaxReads, MaxBookings and BookingQueue (http.max_slot_reads, ...).
	MaxSlotReads, MaxBookings, BookingQueue int
	// MaxRunning, ReadWait and BookingWait are booking.Opts' (the
	// appointment requests working at once and the waits for a turn;
	// http.max_running, http.read_wait, http.booking_wait).
	MaxRunning            int
	ReadWait, BookingWait time.Duration
	// ReadBudget is booking.Opts' ReadBudget (default
	// booking.DefaultReadBudget).
	ReadBudget time.Duration
	// Clock is the time shown by the pages; default time.Now.
	Clock func() time.Time
	// Heartbeat is the interval of SSE keep-alive comments (default 15s).
	Heartbeat time.Duration
	// RecentCalls is how many calls the hall display lists (default 8).
	RecentCalls int
	// MaxStreams caps the open event streams (API, displays and ticket
	// pages together); beyond it a stream is refused with 503 (default
	// 2000).
	MaxStreams int
	// Staff logs people in to the counter page (/login, /counter; see
	// staff.go); nil: those pages are not served.
	Staff *staff.Service
	// TrustedHeader, when set, is single sign-on: the header a reverse
	// proxy sets to the account name of the person it authenticated,
	// believed only from TrustedProxies.
	TrustedHeader  string
	TrustedProxies []netip.Prefix
	// Kiosks are the kiosk devices a browser kiosk page (/kiosk/{site},
	// kiosk.go) may be provisioned as; none: the page is not served.
	Kiosks []KioskDevice
	// Print prints a ticket a kiosk page issued on the device's network
	// printer, reporting whether it has one; nil: tickets show on screen.
	Print func(ctx context.Context, device string, t queue.Ticket, p queue.Position) (bool, error)
	// PublicURL is the daemon's address for phones (http.public_url): the
	// kiosk page's on-screen QR code opens the ticket's page under it.
	PublicURL string
	// Appointments, when set, is the address of the appointments API's
	// own listener (listen.appointments), served by ServeAppointments
	// (listener.go): the main handler then answers the API's routes 421
	// misdirected, naming it. Empty: they are served with the rest.
	Appointments string
	// AppointmentConns caps the connections ServeAppointments serves at
	// once (listen.appointments_max_connections; default
	// DefaultAppointmentConns); AppointmentIdle closes one idle that long
	// (listen.appointments_idle_timeout; default DefaultAppointmentIdle).
	AppointmentConns int
	AppointmentIdle  time.Duration
}

// Server is the HTTP server. Handler can be mounted elsewhere; Serve and
// Shutdown follow net/http's contract.
type Server struct {
	o       Opts
	log     *slog.Logger
	mux     *http.ServeMux
	handler http.Handler
	srv     *http.Server

	// streams is cancelled on Shutdown so SSE handlers end and connections
	// become idle.
	streams context.Context
	stop    context.CancelFunc
	open    atomic.Int64                // event streams open now
	tokens  atomic.Pointer[[]TokenInfo] // o.Tokens, replaced whole by SetTokens

	// front serves the appointments: slot lists from memory, known-full
	// slots and the per-patient rate (package booking).
	front *booking.Front
	// boards are the counter pages' shared reads (board.go).
	boards boards
	// appts serves the appointments API on a listener of its own
	// (listener.go).
	appts *appointments

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// gzipped counts the slot list answers compressed (slotsgzip.go).
	gzipped prometheus.Counter
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = http.ErrServerClosed

// route is one entry of the mux; the same table is checked against
// openapi.yaml by a test.
type route struct {
	method, path string
	h            http.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{"GET", "/{$}", s.index},
		{"GET", "/openapi.yaml", s.openapi},
		{"GET", "/healthz", s.healthz},
		{"GET", "/readyz", s.readyz},
		{"GET", "/metrics", s.metrics},
		{"POST", "/api/v1/sites/{site}/tickets", s.auth(s.issue)},
		{"GET", "/api/v1/sites/{site}/tickets/{number}", s.auth(s.ticket)},
		{"GET", "/api/v1/sites/{site}/snapshot", s.auth(s.snapshot)},
		{"POST", "/api/v1/sites/{site}/counters/{counter}/{action}", s.auth(s.counterAction)},
		{"GET", "/api/v1/sites/{site}/events", s.auth(s.apiEvents)},
		{"GET", "/api/v1/sites/{site}/slots", s.auth(s.slots)},
		{"POST", "/api/v1/sites/{site}/appointments", s.auth(s.book)},
		{"GET", "/api/v1/sites/{site}/appointments/{id}", s.auth(s.appointment)},
		{"DELETE", "/api/v1/sites/{site}/appointments/{id}", s.auth(s.cancelAppointment)},
		{"POST", "/api/v1/sites/{site}/appointments/{id}/confirm", s.auth(s.confirmAppointment)},
		{"POST", "/api/v1/sites/{site}/appointments/{id}/check-in", s.auth(s.checkIn)},
		{"GET", "/display/{site}", s.page("static/display.html")},
		{"GET", "/display/{site}/events", s.displayEvents},
		{"GET", "/t/{site}/{number}", s.page("static/ticket.html")},
		{"GET", "/t/{site}/{number}/events", s.ticketEvents},
		{"GET", "/static/{file}", s.static},
		{"GET", "/static/words/{file}", s.catalogScript},
	}
}

// New builds a server.
func New(o Opts) (*Server, error) {
	if o.Engine == nil {
		return nil, errors.New("web: new server: no engine")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	o.Heartbeat = positive.Or(o.Heartbeat, 15*time.Second)
	o.RecentCalls = positive.Or(o.RecentCalls, 8)
	o.MaxStreams = positive.Or(o.MaxStreams, 2000)
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	o.AppointmentConns = positive.Or(o.AppointmentConns, DefaultAppointmentConns)
	o.AppointmentIdle = positive.Or(o.AppointmentIdle, DefaultAppointmentIdle)
	s := &Server{o: o, log: o.Logger, mux: http.NewServeMux(), front: booking.New(booking.Opts{Engine: o.Engine, Logger: o.Logger,
		CacheSlots: o.SlotCache, Encode: appendQueueSlot, MaxReads: o.MaxSlotReads, MaxBookings: o.MaxBookings, BookingQueue: o.BookingQueue, ReadBudget: o.ReadBudget,
		MaxRunning: o.MaxRunning, ReadWait: o.ReadWait, BookingWait: o.BookingWait})}
	if err := s.SetTokens(o.Tokens); err != nil {
		return nil, err
	}
	s.appts = s.newAppointments()
	if err := s.register(o.Registry); err != nil {
		return nil, err
	}
	if err := s.front.Register(o.Registry); err != nil {
		return nil, err
	}
	s.warnLanguages()
	s.streams, s.stop = context.WithCancel(context.Background())
	all := s.routes()
	if o.Staff != nil {
		all = append(all, s.staffRoutes()...)
		all = append(all, s.dashboardRoutes()...)
		all = append(all, s.adminRoutes()...)
	}
	if len(o.Kiosks) > 0 {
		all = append(all, s.kioskRoutes()...)
	}
	for _, r := range all {
		h := r.h
		if appointmentRoute(r.path) {
			s.appts.mux.HandleFunc(r.method+" "+r.path, h)
			if o.Appointments != "" {
				h = s.elsewhere
			}
		}
		s.mux.HandleFunc(r.method+" "+r.path, h)
	}
	s.handler = s.instrument(s.recoverer(s.mux))
	s.srv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	s.srv.RegisterOnShutdown(s.stop)
	return s, nil
}

// Handler returns the routes, for mounting or tests.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves HTTP on ln until Shutdown; it then returns ErrServerClosed.
// It also keeps the appointments' caches in step with the booking events
// until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	go func() {
		if err := s.front.Follow(s.streams); err != nil {
			s.log.Warn("web: appointment caches stopped; serving from the store", "err", err)
		}
	}()
	return s.srv.Serve(ln)
}

// Shutdown ends the event streams, stops accepting (on the appointments
// listener too) and waits for requests in flight within ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	if err := errors.Join(s.appts.srv.Shutdown(ctx), s.srv.Shutdown(ctx)); err != nil {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	return nil
}

// recoverer turns a handler panic into a 500 problem: one bad request must
// not take the daemon down.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("web: handler panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
				writeProblem(w, http.StatusInternalServerError, "internal", "internal error", "")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>nowserving</title><link rel="stylesheet" href="/static/style.css"></head>
<body class="index"><main><h1>nowserving</h1>
<h2>Hall displays</h2><ul>{{range .Sites}}<li><a href="/display/{{.ID}}">{{.Name}}</a></li>{{end}}</ul>
{{if .Staff}}<h2>Staff</h2><ul><li><a href="/counter">Counter page</a> (log in with a staff account)</li>
{{range .Sites}}<li>{{.Name}}: <a href="/dashboard/{{.ID}}">dashboard</a>, <a href="/reports/{{.ID}}">reports</a> (supervisors)</li>{{end}}
<li><a href="/admin">Staff accounts</a> (admins)</li></ul>{{end}}
<h2>Operations</h2><ul><li><a href="/metrics">/metrics</a></li><li><a href="/healthz">/healthz</a></li>
<li><a href="/readyz">/readyz</a></li><li><a href="/openapi.yaml">HTTP API (OpenAPI)</a></li></ul>
</main></body></html>
`))

// index lists the sites' hall displays and the operations endpoints.
func (s *Server) index(w http.ResponseWriter, _ *http.Request) {
	type site struct{ ID, Name string }
	var sites []site
	for _, st := range s.o.Engine.Sites() {
		sites = append(sites, site{ID: st.ID, Name: st.Name("")})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := indexPage.Execute(w, map[string]any{"Sites": sites, "Staff": s.o.Staff != nil}); err != nil {
		s.log.Warn("web: index page", "err", err)
	}
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	b, err := files.ReadFile("openapi.yaml")
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(b)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// ReadyTimeout bounds /readyz: a load balancer gets its answer within it
// whatever the store does.
const ReadyTimeout = time.Second

// readyz answers within ReadyTimeout: Ready runs with that deadline, and
// if it has not returned by then (a check that ignores its context) the
// answer is 503 all the same.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.o.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
		defer cancel()
		res := make(chan error, 1)
		go func() { res <- s.o.Ready(ctx) }()
		var err error
		select {
		case err = <-res:
		case <-ctx.Done():
			err = fmt.Errorf("web: readiness check did not return within %s", ReadyTimeout)
		}
		if err != nil {
			// The cause (a driver's error, say) is for the log; the body
			// says what a load balancer or a person can act on.
			s.log.Debug("web: not ready", "err", err)
			detail := "see the daemon's log"
			switch {
			case ctx.Err() != nil:
				detail = fmt.Sprintf("store did not answer within %s", ReadyTimeout)
			default:
				detail = cmp.Or(unavailable(err), detail)
			}
			writeProblem(w, http.StatusServiceUnavailable, "not_ready", "not ready", detail)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ready")
}

// unavailable names what err says of the store, for a load balancer or a
// person: "store read-only" (a standby, a read-only node: the daemon is
// looking for the writable one), "store not answering" (gone, refusing
// connections, shutting down, timed out), "store unavailable" (too many
// connections, a full disk), or "" when err is none of these.
func unavailable(err error) string {
	switch {
	case errors.Is(err, queue.ErrReadOnly):
		return "store read-only"
	case errors.Is(err, queue.ErrNotAnswering), errors.Is(err, context.DeadlineExceeded):
		return "store not answering"
	case errors.Is(err, queue.ErrUnavailable):
		return "store unavailable"
	}
	return ""
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(s.o.Registry, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}).ServeHTTP(w, r)
}

// SetTokens replaces the API clients while the server runs (a
// configuration reload); invalid tokens are refused and the running ones
// stay. A request already authorized finishes under its token.
func (s *Server) SetTokens(tokens []TokenInfo) error {
	names := map[string]bool{}
	for i, t := range tokens {
		if t.Name == "" || len(t.Token) < 16 {
			return fmt.Errorf("web: token %d (%q): needs a name and a token of at least 16 characters", i, t.Name)
		}
		if names[t.Name] {
			return fmt.Errorf("web: token name %q used twice", t.Name)
		}
		names[t.Name] = true
	}
	tokens = slices.Clone(tokens)
	s.tokens.Store(&tokens)
	return nil
}

type ctxKey struct{}

// auth checks the bearer token and its site, and passes its name on.
func (s *Server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		const prefix = "Bearer "
		h := r.Header.Get("Authorization")
		var tok *TokenInfo
		if len(h) > len(prefix) && (h[:len(prefix)] == prefix || h[:len(prefix)] == "bearer ") {
			given := []byte(h[len(prefix):])
			tokens := *s.tokens.Load()
			for i := range tokens {
				if subtle.ConstantTimeCompare(given, []byte(tokens[i].Token)) == 1 {
					tok = &tokens[i]
				}
			}
		}
		if tok == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="nowserving"`)
			writeProblem(w, http.StatusUnauthorized, "unauthorized", "missing or unknown bearer token", "")
			return
		}
		if site := r.PathValue("site"); len(tok.Sites) > 0 && !slices.Contains(tok.Sites, site) {
			writeProblem(w, http.StatusForbidden, "forbidden_site", "token not allowed on this site", fmt.Sprintf("token %s may not act on site %s", tok.Name, site))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, tok.Name)))
	}
}

func tokenName(r *http.Request) string {
	n, _ := r.Context().Value(ctxKey{}).(string)
	return n
}

// pathSite is the site the request's path names; when there is no such
// site it writes the error and returns nil.
func (s *Server) pathSite(w http.ResponseWriter, r *http.Request) *queue.Site {
	site, err := s.o.Engine.Site(r.PathValue("site"))
	if err != nil {
		writeError(w, s.log, err)
		return nil
	}
	return site
}

// page serves an embedded HTML page for a known site.
func (s *Server) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		site := s.pathSite(w, r)
		if site == nil {
			return
		}
		b, err := pageOf(name, site)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(b)
	}
}

func (s *Server) static(w http.ResponseWriter, r *http.Request) { s.serveFile(w, r, "static/") }

// serveFile answers with the embedded file dir+{file} of the path.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, dir string) {
	name := r.PathValue("file")
	if !fs.ValidPath(name) || name == "." {
		http.NotFound(w, r)
		return
	}
	if page, ok := pageFiles[dir+name]; ok {
		writeStatic(w, name, page) // a page as rendered (pages.go), not its template
		return
	}
	b, err := fs.ReadFile(files, dir+name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if dir+name == "static/i18n.js" {
		b = wordsScript(b)
	}
	writeStatic(w, name, b)
}

// writeStatic answers with the static file name of content b.
func writeStatic(w http.ResponseWriter, name string, b []byte) {
	switch {
	case hasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case hasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case hasSuffix(name, ".html"):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }
