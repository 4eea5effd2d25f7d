package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
)

// Opts shape a load run.
type Opts struct {
	Kiosks   int           // kiosk connections; they share the configured kiosk devices
	Keypads  int           // keypads calling, at most one per configured keypad device
	Rate     float64       // tickets per second in total
	Services []string      // service codes; nil: every service of the kiosks' site
	Duration time.Duration // how long to run; 0: until ctx ends
	Every    time.Duration // progress interval

	ServiceTime time.Duration // average time from start to done at a counter
	CallGap     time.Duration // average pause of a keypad between calling and starting
	NoShow      float64       // share of called tickets marked no-show
}

// Run makes a site busy: kiosks take tickets of random services at
// o.Rate, keypads call the next ticket, now and then mark a no-show,
// otherwise start and finish it. It writes progress every o.Every and a
// summary to out, refusals and errors (each once) to errw, and fails when
// every service refused tickets.
func Run(ctx context.Context, e *sim.Env, o Opts, out, errw io.Writer) error {
	kd := e.Devices(wire.RoleKiosk)
	if len(kd) == 0 {
		return errors.New("sim: load: the configuration has no kiosk device")
	}
	pd := e.Devices(wire.RoleKeypad)
	if len(pd) > o.Keypads {
		pd = pd[:o.Keypads]
	}
	services := o.Services
	if len(services) == 0 {
		services = siteServices(e, kd[0].Site)
	}
	if len(services) == 0 {
		return errors.New("sim: load: give --services")
	}
	l := &loader{e: e, o: o, errw: errw, services: services, open: map[string]bool{}}
	for _, s := range services {
		l.open[s] = true
	}
	defer l.close()
	// Connect everyone first: a daemon that is not there is one clear
	// error, not a hundred.
	kc, err := l.dial(ctx, o.Kiosks, kd)
	if err != nil {
		return err
	}
	pc, err := l.dial(ctx, len(pd), pd)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "load: %d kiosks (%d devices) at %.3g tickets/s over services %s, %d keypads, for %s\n",
		o.Kiosks, min(o.Kiosks, len(kd)), o.Rate, strings.Join(services, ","), len(pc), durText(o.Duration))
	// The duration is the load's, counted from when everyone is connected:
	// on a busy machine connecting took part of a short run, which then
	// said "done: 1s" for --duration 2s.
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	start := time.Now()
	l.run(ctx, kc, pc, out, start)
	el := time.Since(start)
	fmt.Fprintln(out, "done:", l.st.line(el))
	fmt.Fprintf(out, "      %.2f tickets/s issued, %d skipped (all kiosks busy)\n", float64(l.st.issued.Load())/el.Seconds(), l.st.skipped.Load())
	if l.allClosed() {
		return errors.New("sim: load: every service refused tickets (see above)")
	}
	return nil
}

// siteServices are the configured services of site ("": the first site).
func siteServices(e *sim.Env, site string) []string {
	if e.Config == nil {
		return nil
	}
	var out []string
	for _, st := range e.Config.Sites {
		if st.ID == site || site == "" {
			for _, sv := range st.Services {
				out = append(out, sv.Code)
			}
			break
		}
	}
	return out
}

func durText(d time.Duration) string {
	if d <= 0 {
		return "ever (Ctrl-C stops)"
	}
	return d.String()
}

// stats are the counts of a load run.
type stats struct {
	issued, called, served, noShows, errs, skipped atomic.Int64

	mu      sync.Mutex
	refused map[string]int // message -> count
}

// refuse counts msg and reports whether it is the first of its kind.
func (s *stats) refuse(msg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]int{}
	}
	s.refused[msg]++
	return s.refused[msg] == 1
}

func (s *stats) line(elapsed time.Duration) string {
	return fmt.Sprintf("%6s  issued %d  called %d  served %d  no-show %d  errors %d",
		elapsed.Round(time.Second), s.issued.Load(), s.called.Load(), s.served.Load(), s.noShows.Load(), s.errs.Load())
}

// loader runs the simulated devices of a load.
type loader struct {
	e        *sim.Env
	o        Opts
	st       stats
	errw     io.Writer
	services []string
	clients  []*client.Client

	mu   sync.Mutex
	open map[string]bool // services still taking tickets
}

// dial connects n clients, spread over devs; close closes them.
func (l *loader) dial(ctx context.Context, n int, devs []sim.Device) ([]*client.Client, error) {
	cs, err := dialN(ctx, l.e, devs, n)
	l.clients = append(l.clients, cs...)
	if err != nil {
		return nil, err
	}
	return cs, nil
}

func (l *loader) close() { closeAll(l.clients) }

// run plays kiosks kc and keypads pc until ctx ends or every service
// refuses tickets, writing progress to out.
func (l *loader) run(ctx context.Context, kc, pc []*client.Client, out io.Writer, start time.Time) {
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	for _, c := range kc {
		wg.Go(func() {
			for range jobs {
				l.take(ctx, c)
			}
		})
	}
	for _, c := range pc {
		wg.Go(func() { l.keypad(ctx, c) })
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / l.o.Rate))
	progress := time.NewTicker(l.o.Every)
	defer func() {
		tick.Stop()
		progress.Stop()
		close(jobs)
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if l.allClosed() {
				return
			}
			select {
			case jobs <- struct{}{}:
			default:
				l.st.skipped.Add(1) // every kiosk is still busy
			}
		case <-progress.C:
			fmt.Fprintln(out, l.st.line(time.Since(start)))
		}
	}
}

func (l *loader) allClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ok := range l.open {
		if ok {
			return false
		}
	}
	return true
}

func (l *loader) pickService() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var open []string
	for _, s := range l.services {
		if l.open[s] {
			open = append(open, s)
		}
	}
	if len(open) == 0 {
		return "", false
	}
	return open[rand.IntN(len(open))], true
}

func (l *loader) take(ctx context.Context, c *client.Client) {
	svc, ok := l.pickService()
	if !ok {
		return
	}
	_, err := c.TakeTicket(ctx, svc, wire.ClassNormal, client.TicketOpts{})
	switch {
	case err == nil:
		l.st.issued.Add(1)
	case ctx.Err() != nil:
	case errors.Is(err, wire.ErrServiceClosed), errors.Is(err, wire.ErrServiceFull), errors.Is(err, wire.ErrUnknownService):
		msg := l.e.Explain(err, sim.Device{})
		l.mu.Lock()
		defer l.mu.Unlock()
		l.open[svc] = false
		fmt.Fprintf(l.errw, "service %s: %v; no more tickets for it\n", svc, msg) // errw is shared by every kiosk
	default:
		l.fail(err)
	}
}

func (l *loader) fail(err error) {
	l.st.errs.Add(1)
	msg := l.e.Explain(err, sim.Device{}).Error()
	if l.st.refuse(msg) {
		l.mu.Lock()
		defer l.mu.Unlock()
		fmt.Fprintln(l.errw, "error:", msg)
	}
}
