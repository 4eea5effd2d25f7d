package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// register adds the HTTP metrics to reg.
func (s *Server) register(reg *prometheus.Registry) error {
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "nowserving", Subsystem: "http", Name: "requests_total",
		Help: "HTTP requests answered, by route pattern and status code."}, []string{"route", "code"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "nowserving", Subsystem: "http", Name: "request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern (event streams excluded).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}, []string{"route"})
	streams := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "nowserving", Subsystem: "http", Name: "streams",
		Help: "Server-Sent Event streams open now."}, func() float64 { return float64(s.open.Load()) })
	s.gzipped = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "nowserving", Subsystem: "http", Name: "slot_lists_compressed_total",
		Help: "Slot list answers compressed (gzip): once per change of a list kept in memory, and page."})
	for _, c := range []prometheus.Collector{s.requests, s.latency, streams, s.gzipped, s.appts.collector()} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return fmt.Errorf("web: register metrics: a server already uses this registry: %w", err)
			}
			return fmt.Errorf("web: register metrics: %w", err)
		}
	}
	return nil
}

// statusWriter remembers the status code; Unwrap keeps
// http.ResponseController (Flush, deadlines) working through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument counts and times requests by the mux pattern they matched
// (never by raw path, which would make a label per ticket number).
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern // set by the mux on this request
		if route == "" {
			route = "unmatched"
		}
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		s.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
		if !strings.HasSuffix(route, "/events") {
			s.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}
	})
}
