package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
)

// IssueOpts shape a ticket throughput benchmark.
type IssueOpts struct {
	Kiosks   int           // concurrent kiosks (connections)
	Duration time.Duration // how long to take tickets
	Service  string        // service code; "": the first with no cap and no hours
	// Rate, when positive, runs open loop: tickets are sent at this many
	// per second in total, whatever the answers, and each latency is
	// counted from the time the ticket was due to be sent (no coordinated
	// omission). 0: closed loop, every kiosk back to back.
	Rate float64
	// PID, when positive, is the daemon's process id on this machine: its
	// CPU time per ticket is read from /proc/PID/stat.
	PID int
	// JSON writes the result as one JSON object instead of text.
	JSON bool
}

// maxInFlight bounds the requests an open-loop run has outstanding; one
// more due is not sent and counted as an error.
const maxInFlight = 20000

// IssueResult is what a ticket benchmark measured. Latencies are in
// milliseconds.
type IssueResult struct {
	Kiosks      int            `json:"kiosks"`
	Devices     int            `json:"devices"`
	Service     string         `json:"service"`
	Mode        string         `json:"mode"` // "closed" or "open"
	OfferedRate float64        `json:"offered_per_s,omitempty"`
	Seconds     float64        `json:"seconds"`
	Tickets     int            `json:"tickets"`
	Rate        float64        `json:"tickets_per_s"`
	P50         float64        `json:"p50_ms"`
	P90         float64        `json:"p90_ms"`
	P99         float64        `json:"p99_ms"`
	Max         float64        `json:"max_ms"`
	Errors      map[string]int `json:"errors"` // by wire code and name, or kind
	Resent      uint64         `json:"resent"`
	DaemonCPU   float64        `json:"daemon_cpu_s,omitempty"`
	CPUPerTick  float64        `json:"daemon_cpu_us_per_ticket,omitempty"`
	RateLimit   int            `json:"rate_limit_per_device,omitempty"`
}

// Issue connects o.Kiosks kiosks (spread over the kiosk devices, and over
// the daemons when --addr lists several) and takes
// tickets for o.Duration, back to back or at o.Rate, and writes to out the
// rate, the latency percentiles of TAKE_TICKET, the errors by code and,
// with o.PID, the daemon's CPU time per ticket. It fails when no ticket
// was taken.
func Issue(ctx context.Context, e *sim.Env, o IssueOpts, out io.Writer) error {
	r, first, err := RunIssue(ctx, e, o)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("bench: issue: %w", err)
		}
	} else {
		r.write(out, first)
	}
	if r.Tickets == 0 && first != "" {
		return fmt.Errorf("bench: issue: %s", first)
	}
	return nil
}

// RunIssue is Issue without the report: the result and the first error
// met, explained.
func RunIssue(ctx context.Context, e *sim.Env, o IssueOpts) (IssueResult, string, error) {
	devs, err := benchDevices(e, wire.RoleKiosk, wire.RoleConsole)
	if err != nil {
		return IssueResult{}, "", err
	}
	r := IssueResult{Kiosks: o.Kiosks, Devices: min(len(devs), o.Kiosks), Service: o.Service, Mode: "closed", OfferedRate: o.Rate}
	if r.Service == "" {
		r.Service = uncappedService(e)
	}
	if r.Service == "" {
		return r, "", errors.New("bench: issue: give --service")
	}
	if o.Rate > 0 {
		r.Mode = "open"
	}
	raiseFileLimit()
	clients, err := dialN(ctx, e, devs, o.Kiosks)
	defer closeAll(clients)
	if err != nil {
		return r, "", err
	}
	r.RateLimit = int(clients[0].Welcome().RateLimit)
	var cpu0 time.Duration
	if o.PID > 0 {
		if cpu0, err = procCPU(o.PID); err != nil {
			return r, "", err
		}
	}
	rec := &recorder{errs: map[string]int{}}
	start := time.Now()
	if o.Rate > 0 {
		openLoop(ctx, e, clients, r.Service, o.Rate, o.Duration, rec)
	} else {
		closedLoop(ctx, e, clients, r.Service, o.Duration, rec)
	}
	el := time.Since(start)
	if o.PID > 0 {
		cpu1, err := procCPU(o.PID)
		if err != nil {
			return r, "", err
		}
		r.DaemonCPU = (cpu1 - cpu0).Seconds()
	}
	r.fill(rec, el)
	for _, c := range clients {
		r.Resent += c.Resent()
	}
	return r, rec.first, nil
}

func (r *IssueResult) fill(rec *recorder, el time.Duration) {
	slices.Sort(rec.lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	r.Seconds, r.Tickets, r.Errors = el.Seconds(), len(rec.lat), rec.errs
	r.Rate = float64(r.Tickets) / el.Seconds()
	if n := len(rec.lat); n > 0 {
		r.P50, r.P90, r.P99, r.Max = ms(Percentile(rec.lat, 50)), ms(Percentile(rec.lat, 90)), ms(Percentile(rec.lat, 99)), ms(rec.lat[n-1])
	}
	if r.Tickets > 0 && r.DaemonCPU > 0 {
		r.CPUPerTick = r.DaemonCPU * 1e6 / float64(r.Tickets)
	}
}

func (r *IssueResult) write(out io.Writer, first string) {
	mode := "back to back"
	if r.Mode == "open" {
		mode = fmt.Sprintf("open loop at %.0f/s (latency from the time each was due)", r.OfferedRate)
	}
	fmt.Fprintf(out, "issue: %d kiosks over %d device ids, service %s, %s, for %s\n", r.Kiosks, r.Devices, r.Service, mode,
		(time.Duration(r.Seconds * float64(time.Second))).Round(100*time.Millisecond))
	if r.RateLimit > 0 {
		fmt.Fprintf(out, "the daemon allows %d requests/s per device: at most about %d tickets/s with %d device ids\n",
			r.RateLimit, r.RateLimit*r.Devices, r.Devices)
	}
	nerr := 0
	for _, n := range r.Errors {
		nerr += n
	}
	fmt.Fprintf(out, "tickets: %d in %.3fs = %.0f/s, errors %d\n", r.Tickets, r.Seconds, r.Rate, nerr)
	if r.Tickets > 0 {
		fmt.Fprintf(out, "latency: p50 %.2fms  p90 %.2fms  p99 %.2fms  max %.2fms\n", r.P50, r.P90, r.P99, r.Max)
	}
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "  error %s: %d\n", k, r.Errors[k])
	}
	if r.Resent > 0 {
		fmt.Fprintf(out, "requests sent again: %d (rate limited, lost or late answers; their wait is in the latency)\n", r.Resent)
	}
	if r.DaemonCPU > 0 {
		fmt.Fprintf(out, "daemon CPU: %.2fs, %.0f µs per ticket\n", r.DaemonCPU, r.CPUPerTick)
	}
	if first != "" {
		fmt.Fprintf(out, "first error: %s\n", first)
	}
}

// uncappedService is the first configured service with no daily cap and
// no opening hours, or "".
func uncappedService(e *sim.Env) string {
	if e.Config == nil {
		return ""
	}
	for _, st := range e.Config.Sites {
		for _, sv := range st.Services {
			if sv.DailyCap == 0 && len(sv.Hours) == 0 {
				return sv.Code
			}
		}
	}
	return ""
}

// recorder collects latencies and errors from many goroutines.
type recorder struct {
	mu    sync.Mutex
	lat   []time.Duration
	errs  map[string]int
	first string
}

func (r *recorder) ok(d time.Duration) {
	r.mu.Lock()
	r.lat = append(r.lat, d)
	r.mu.Unlock()
}

func (r *recorder) fail(e *sim.Env, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs[ErrorCode(err)]++
	if r.first == "" {
		r.first = e.Explain(err, sim.Device{}).Error()
	}
}

// ErrorCode names an error for a count by kind: the wire code and name of
// a refusal ("0x30 rate limited"), else "timeout" or "other".
func ErrorCode(err error) string {
	var se *wire.StatusError
	switch {
	case errors.As(err, &se):
		name := se.Msg
		for _, k := range wire.StatusErrors() {
			if k.Code == se.Code {
				name = k.Msg
			}
		}
		return fmt.Sprintf("0x%02x %s", se.Code, name)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, client.ErrTimeout):
		return "timeout"
	}
	return "other"
}

// final reports whether err ends the run: the service takes no more.
func final(err error) bool {
	return errors.Is(err, wire.ErrServiceFull) || errors.Is(err, wire.ErrServiceClosed) || errors.Is(err, wire.ErrUnknownService)
}

// closedLoop has every client take tickets of service back to back for d
// (less when the service refuses them).
func closedLoop(ctx context.Context, e *sim.Env, clients []*client.Client, service string, d time.Duration, rec *recorder) {
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for rctx.Err() == nil {
				t0 := time.Now()
				_, err := c.TakeTicket(rctx, service, wire.ClassNormal, client.TicketOpts{})
				switch {
				case err == nil:
					rec.ok(time.Since(t0))
				case rctx.Err() != nil:
				default:
					rec.fail(e, err)
					if final(err) {
						cancel()
					}
				}
			}
		})
	}
	wg.Wait()
}

// openLoop sends tickets of service at rate per second in total for d,
// round robin over the clients, each from its own goroutine at the time it
// is due, and records each latency from that time. Requests still out at
// the end are waited for (at most a request time-out).
func openLoop(ctx context.Context, e *sim.Env, clients []*client.Client, service string, rate float64, d time.Duration, rec *recorder) {
	rctx, cancel := context.WithTimeout(ctx, d+15*time.Second)
	defer cancel()
	var (
		wg       sync.WaitGroup
		inFlight atomic.Int64
		stop     atomic.Bool
	)
	start := time.Now()
	every := time.Duration(float64(time.Second) / rate)
	for i := 0; !stop.Load() && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(i) * every)
		if due.Sub(start) >= d {
			break
		}
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		if inFlight.Load() >= maxInFlight {
			rec.fail(e, fmt.Errorf("bench: not sent: %d requests in flight", maxInFlight))
			continue
		}
		c := clients[i%len(clients)]
		inFlight.Add(1)
		wg.Go(func() {
			defer inFlight.Add(-1)
			_, err := c.TakeTicket(rctx, service, wire.ClassNormal, client.TicketOpts{})
			switch {
			case err == nil:
				rec.ok(time.Since(due))
			default:
				rec.fail(e, err)
				if final(err) {
					stop.Store(true)
				}
			}
		})
	}
	wg.Wait()
}
