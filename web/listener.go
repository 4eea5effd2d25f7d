package web

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The appointments API on a listener of its own (Opts.Appointments,
// listen.appointments). The front's permits (booking.Front.Admit) bound
// the appointment requests that work at once, but a rush still costs CPU
// before any handler can refuse it: each request is accepted, its
// connection's goroutine started, its headers parsed, and even a 429 is
// written. Thousands a second kept thousands of goroutines runnable, and
// Go's scheduler made every step of another site's kiosk ticket wait in
// line behind them. On its own listener the API is served on at most
// AppointmentConns connections at once (doorListener): the next ones are
// not accepted, and wait in the kernel's backlog at no cost to the
// daemon, but only a poll or two: while every place stays taken, the door
// answers them 429. A connection keeps its place for its next requests
// until it is idle AppointmentIdle (closing connections to let waiting
// ones in made a rush's every request a connection of its own, door.go).

// Defaults of Opts.AppointmentConns and AppointmentIdle.
const (
	DefaultAppointmentConns = 64
	DefaultAppointmentIdle  = 5 * time.Second
)

// The appointments listener's timeouts: a client that is slow to send
// its request, or to read its answer, holds a place only so long.
const (
	appointmentHeaderTimeout = 5 * time.Second
	appointmentReadTimeout   = 10 * time.Second
	appointmentWriteTimeout  = 30 * time.Second
)

// appointmentRoute reports whether the route of path is the appointments
// API's: the slot lists and the appointments (booking, reading,
// cancelling, confirming and checking in one) that patient apps and
// hospital systems call.
func appointmentRoute(path string) bool {
	return strings.HasPrefix(path, "/api/v1/sites/{site}/slots") || strings.HasPrefix(path, "/api/v1/sites/{site}/appointments")
}

// appointments is the appointments API's own HTTP server.
type appointments struct {
	mux  *http.ServeMux
	srv  *http.Server
	max  int
	open atomic.Int64 // connections served now
}

// newAppointments builds the appointments server of s; its routes are
// added as New registers them.
func (s *Server) newAppointments() *appointments {
	a := &appointments{mux: http.NewServeMux(), max: s.o.AppointmentConns}
	a.mux.HandleFunc("GET /healthz", s.healthz)
	a.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusMisdirectedRequest, "misdirected", "served on another listener",
			"this listener (listen.appointments) serves only the appointments API (slots and appointments); the rest is on listen.http")
	})
	a.srv = &http.Server{
		Handler:           s.instrument(s.recoverer(a.mux)),
		ReadHeaderTimeout: appointmentHeaderTimeout,
		ReadTimeout:       appointmentReadTimeout,
		WriteTimeout:      appointmentWriteTimeout,
		IdleTimeout:       s.o.AppointmentIdle,
		ConnState:         a.track,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return a
}

// track counts the connections served.
func (a *appointments) track(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		a.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		a.open.Add(-1)
	}
}

// collector is the gauge of the connections served.
func (a *appointments) collector() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "nowserving", Subsystem: "http", Name: "appointment_connections",
		Help: "Connections the appointments API's own listener (listen.appointments) serves now; at most its max_connections."},
		func() float64 { return float64(a.open.Load()) })
}

// elsewhere answers a route of the appointments API on the main listener
// when it has a listener of its own.
func (s *Server) elsewhere(w http.ResponseWriter, _ *http.Request) {
	writeProblem(w, http.StatusMisdirectedRequest, "misdirected", "served on another listener",
		fmt.Sprintf("the appointments API is served on %s (listen.appointments), not on this address", s.o.Appointments))
}

// ServeAppointments serves the appointments API on ln, at most
// Opts.AppointmentConns connections at once (the next wait in the
// kernel's accept queue, and past doorDepth of them are shed at the door,
// door.go), until Shutdown; it then
// returns ErrServerClosed. The caches it serves from are kept in step by
// Serve.
func (s *Server) ServeAppointments(ln net.Listener) error {
	return s.appts.srv.Serve(newDoor(ln, s.appts.max))
}
