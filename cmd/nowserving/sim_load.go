package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// parseRate reads "5/s", "300/m", "2/h" or a bare "5" (per second).
func parseRate(s string) (float64, error) {
	num, unit, found := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("sim: rate %q: want a positive number per second, e.g. 5/s or 120/m", s)
	}
	if !found {
		return n, nil
	}
	switch unit {
	case "s":
		return n, nil
	case "m":
		return n / 60, nil
	case "h":
		return n / 3600, nil
	}
	return 0, fmt.Errorf("sim: rate %q: unit must be s, m or h", s)
}

// loadStats are the counts of a load run.
type loadStats struct {
	issued, called, served, noShows, errs, skipped atomic.Int64

	mu      sync.Mutex
	refused map[string]int // message -> count
}

func (s *loadStats) refuse(msg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]int{}
	}
	s.refused[msg]++
	return s.refused[msg] == 1
}

func (s *loadStats) line(elapsed time.Duration) string {
	return fmt.Sprintf("%6s  issued %d  called %d  served %d  no-show %d  errors %d",
		elapsed.Round(time.Second), s.issued.Load(), s.called.Load(), s.served.Load(), s.noShows.Load(), s.errs.Load())
}

func newSimLoadCmd(f *simFlags) *cobra.Command {
	var (
		kiosks, keypads      int
		rate, servicesFlag   string
		duration, every      time.Duration
		serviceTime, callGap time.Duration
		noShow               float64
	)
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Make a demo site busy: kiosks take tickets, keypads call, start and finish them",
		Long: `load plays many kiosks and keypads at once to make a site look busy (for the
console demo): kiosks take tickets of random services at --rate in total,
keypads call the next ticket, now and then mark a no-show, otherwise start
and finish after about --service-time. It prints progress every --every and
a summary at the end (after --duration, or Ctrl-C).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := f.env(cmd)
			if err != nil {
				return err
			}
			perSec, err := parseRate(rate)
			if err != nil {
				return err
			}
			kd := e.devices(wire.RoleKiosk)
			if len(kd) == 0 {
				return errors.New("sim: load: the configuration has no kiosk device")
			}
			pd := e.devices(wire.RoleKeypad)
			if len(pd) > keypads {
				pd = pd[:keypads]
			}
			services := splitList(servicesFlag)
			if len(services) == 0 && e.cfg != nil {
				for _, st := range e.cfg.Sites {
					if st.ID == kd[0].site || kd[0].site == "" {
						for _, sv := range st.Services {
							services = append(services, sv.Code)
						}
						break
					}
				}
			}
			if len(services) == 0 {
				return errors.New("sim: load: give --services")
			}
			ctx := cmd.Context()
			if duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			l := &loader{e: e, st: &loadStats{}, errw: errw, services: services, open: map[string]bool{}}
			for _, s := range services {
				l.open[s] = true
			}
			// Connect everyone first: a daemon that is not there is one
			// clear error, not a hundred.
			var clients []*client.Client
			defer func() {
				for _, c := range clients {
					c.Close()
				}
			}()
			dialOne := func(d simDevice) (*client.Client, error) {
				c, err := e.dial(ctx, d, e.opts(d))
				if err == nil {
					clients = append(clients, c)
				}
				return c, err
			}
			var kc []*client.Client
			for i := 0; i < kiosks; i++ {
				c, err := dialOne(kd[i%len(kd)])
				if err != nil {
					return err
				}
				kc = append(kc, c)
			}
			var pc []*client.Client
			for _, d := range pd {
				c, err := dialOne(d)
				if err != nil {
					return err
				}
				pc = append(pc, c)
			}
			fmt.Fprintf(out, "load: %d kiosks (%d devices) at %.3g tickets/s over services %s, %d keypads, for %s\n",
				kiosks, min(kiosks, len(kd)), perSec, strings.Join(services, ","), len(pc), durText(duration))

			var wg sync.WaitGroup
			jobs := make(chan struct{})
			for _, c := range kc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range jobs {
						l.take(ctx, c)
					}
				}()
			}
			for _, c := range pc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l.keypad(ctx, c, serviceTime, callGap, noShow)
				}()
			}
			start := time.Now()
			tick := time.NewTicker(time.Duration(float64(time.Second) / perSec))
			progress := time.NewTicker(every)
		loop:
			for {
				select {
				case <-ctx.Done():
					break loop
				case <-tick.C:
					if l.allClosed() {
						break loop
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
			tick.Stop()
			progress.Stop()
			close(jobs)
			wg.Wait()
			el := time.Since(start)
			fmt.Fprintln(out, "done:", l.st.line(el))
			fmt.Fprintf(out, "      %.2f tickets/s issued, %d skipped (all kiosks busy)\n", float64(l.st.issued.Load())/el.Seconds(), l.st.skipped.Load())
			if l.allClosed() {
				return errors.New("sim: load: every service refused tickets (see above)")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&kiosks, "kiosks", 20, "kiosks taking tickets (connections; they share the configured kiosk devices)")
	fl.IntVar(&keypads, "keypads", 5, "keypads calling (at most one per configured keypad device)")
	fl.StringVar(&rate, "rate", "5/s", "tickets per second in total, e.g. 5/s or 120/m")
	fl.DurationVar(&duration, "duration", 60*time.Second, "how long to run (0: until Ctrl-C)")
	fl.DurationVar(&every, "every", 5*time.Second, "progress interval")
	fl.StringVar(&servicesFlag, "services", "", "comma-separated service codes (default: every service of the site)")
	fl.DurationVar(&serviceTime, "service-time", 3*time.Second, "average time from start to done at a counter")
	fl.DurationVar(&callGap, "call-gap", time.Second, "average pause of a keypad between calling and starting")
	fl.Float64Var(&noShow, "noshow", 0.1, "share of called tickets marked no-show")
	return cmd
}

func durText(d time.Duration) string {
	if d <= 0 {
		return "ever (Ctrl-C stops)"
	}
	return d.String()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loader runs the simulated devices of a load.
type loader struct {
	e        *simEnv
	st       *loadStats
	errw     io.Writer
	services []string

	mu   sync.Mutex
	open map[string]bool // services still taking tickets
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
		l.mu.Lock()
		l.open[svc] = false
		l.mu.Unlock()
		fmt.Fprintf(l.errw, "service %s: %v; no more tickets for it\n", svc, l.e.explain(err, simDevice{}))
	default:
		l.fail(err)
	}
}

func (l *loader) fail(err error) {
	l.st.errs.Add(1)
	msg := l.e.explain(err, simDevice{}).Error()
	if l.st.refuse(msg) {
		fmt.Fprintln(l.errw, "error:", msg)
	}
}

// keypad calls, starts and finishes tickets until ctx ends.
func (l *loader) keypad(ctx context.Context, c *client.Client, serviceTime, callGap time.Duration, noShow float64) {
	sleep := func(avg time.Duration) bool {
		d := time.Duration(float64(avg) * (0.5 + rand.Float64()))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		_, err := c.CallNext(ctx, 0)
		switch {
		case err == nil:
			l.st.called.Add(1)
		case ctx.Err() != nil:
			return
		case errors.Is(err, wire.ErrNoTicketWaiting), errors.Is(err, wire.ErrCounterPaused):
			sleep(500 * time.Millisecond)
			continue
		case errors.Is(err, wire.ErrInvalidTransition):
			// The counter is still handling a ticket from before the run
			// (or from someone else): finish it first.
			if _, err := c.Complete(ctx, 0, ""); err != nil {
				_, _ = c.Start(ctx, 0, "")
				_, _ = c.Complete(ctx, 0, "")
			}
			continue
		default:
			l.fail(err)
			sleep(time.Second)
			continue
		}
		if !sleep(callGap) {
			return
		}
		if rand.Float64() < noShow {
			if _, err := c.NoShow(ctx, 0, ""); err == nil {
				l.st.noShows.Add(1)
			} else if ctx.Err() == nil {
				l.fail(err)
			}
			continue
		}
		if _, err := c.Start(ctx, 0, ""); err != nil {
			if ctx.Err() == nil {
				l.fail(err)
			}
			continue
		}
		if !sleep(serviceTime) {
			// Leave no ticket half-served at the end of a run.
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, _ = c.Complete(cctx, 0, "")
			cancel()
			return
		}
		if _, err := c.Complete(ctx, 0, ""); err == nil {
			l.st.served.Add(1)
		} else if ctx.Err() == nil {
			l.fail(err)
		}
	}
}
