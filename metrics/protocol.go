package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
)

// Protocol implements protocol.Metrics (pass it as protocol.Opts.Metrics):
//
//	nowserving_protocol_sessions{role}                      (gauge)
//	nowserving_protocol_sessions_closed_total{role, reason}
//	nowserving_protocol_auth_failures_total{reason}
//	nowserving_protocol_request_duration_seconds{type}
//	nowserving_protocol_errors_total{type, code}            (code as 0x21)
//	nowserving_protocol_connections_refused_total
//	nowserving_protocol_connections_evicted_total
type Protocol struct {
	sessions *prometheus.GaugeVec
	closed   *prometheus.CounterVec
	auth     *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	errs     *prometheus.CounterVec
	refused  prometheus.Counter
	evicted  prometheus.Counter
}

var _ protocol.Metrics = (*Protocol)(nil)

// NewProtocol registers the protocol metrics on reg.
func NewProtocol(reg prometheus.Registerer) (*Protocol, error) {
	const sub subsystem = "protocol"
	p := &Protocol{
		sessions: sub.gaugeVec("sessions", "Device sessions open now, by role.", "role"),
		closed:   sub.counterVec("sessions_closed_total", "Device sessions ended, by role and reason.", "role", "reason"),
		auth:     sub.counterVec("auth_failures_total", "Failed handshakes, by reason.", "reason"),
		latency: sub.histogramVec("request_duration_seconds", "Time to answer a device request, by message type.",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}, "type"),
		errs: sub.counterVec("errors_total", "Requests answered with an error, by message type and wire error code.", "type", "code"),
		refused: sub.counter("connections_refused_total",
			"Connections refused at the cap of authenticated sessions (listen.max_connections)."),
		evicted: sub.counter("connections_evicted_total",
			"Connections closed before authenticating to make room for newer ones (listen.max_pending)."),
	}
	if err := registerAll(reg, "protocol metrics", p.sessions, p.closed, p.auth, p.latency, p.errs, p.refused, p.evicted); err != nil {
		return nil, err
	}
	for _, r := range []wire.Role{wire.RoleKiosk, wire.RoleKeypad, wire.RoleDisplay, wire.RoleConsole} {
		p.sessions.WithLabelValues(r.String())
	}
	return p, nil
}

// SessionOpened counts a welcomed session.
func (p *Protocol) SessionOpened(role wire.Role) { p.sessions.WithLabelValues(role.String()).Inc() }

// SessionClosed counts a session's end.
func (p *Protocol) SessionClosed(role wire.Role, reason string) {
	p.sessions.WithLabelValues(role.String()).Dec()
	p.closed.WithLabelValues(role.String(), reason).Inc()
}

// AuthFailed counts a failed handshake.
func (p *Protocol) AuthFailed(reason string) { p.auth.WithLabelValues(reason).Inc() }

// Request observes a request's latency and counts its error code.
func (p *Protocol) Request(t wire.MsgType, code uint16, d time.Duration) {
	p.latency.WithLabelValues(t.String()).Observe(d.Seconds())
	if code != 0 {
		p.errs.WithLabelValues(t.String(), fmt.Sprintf("0x%02x", code)).Inc()
	}
}

// ConnRefused counts a connection refused at the cap.
func (p *Protocol) ConnRefused() { p.refused.Inc() }

// ConnEvicted counts a connection closed before authenticating to make room
// for a newer one.
func (p *Protocol) ConnEvicted() { p.evicted.Inc() }
