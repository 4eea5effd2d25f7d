package load

import (
	"context"
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
}

// Issue connects o.Kiosks kiosks (spread over the kiosk devices, and over
// the daemons when the address lists several), each
// taking tickets back to back for o.Duration, and writes to out tickets
// per second and the latency percentiles of TAKE_TICKET, from send to
// answer. It fails when no ticket was taken.
func Issue(ctx context.Context, e *sim.Env, o IssueOpts, out io.Writer) error {
	devs, err := benchDevices(e, wire.RoleKiosk, wire.RoleConsole)
	if err != nil {
		return err
	}
	service := o.Service
	if service == "" {
		service = uncappedService(e)
	}
	if service == "" {
		return errors.New("bench: issue: give --service")
	}
	raiseFileLimit()
	clients := make([]*client.Client, 0, o.Kiosks)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for i := 0; i < o.Kiosks; i++ {
		d := devs[i%len(devs)]
		c, err := e.DialNth(ctx, d, e.ClientOpts(d), i)
		if err != nil {
			return err
		}
		clients = append(clients, c)
	}
	fmt.Fprintf(out, "issue: %d kiosks over %d device ids, service %s, for %s\n", o.Kiosks, len(devs), service, o.Duration)
	if rl := clients[0].Welcome().RateLimit; rl > 0 {
		fmt.Fprintf(out, "the daemon allows %d requests/s per device: at most about %d tickets/s with %d device ids\n",
			rl, int(rl)*min(len(devs), o.Kiosks), min(len(devs), o.Kiosks))
	}
	start := time.Now()
	lat, errs, firstErr := takeAll(ctx, e, clients, service, o.Duration)
	el := time.Since(start)
	slices.Sort(lat)
	fmt.Fprintf(out, "tickets: %d in %s = %.0f/s, errors %d\n", len(lat), el.Round(time.Millisecond), float64(len(lat))/el.Seconds(), errs)
	if len(lat) > 0 {
		fmt.Fprintf(out, "latency: %s\n", latencies(lat))
	}
	var resent uint64
	for _, c := range clients {
		resent += c.Resent()
	}
	if resent > 0 {
		fmt.Fprintf(out, "requests sent again: %d (rate limited, lost or late answers; their wait is in the latency)\n", resent)
	}
	if firstErr != "" {
		fmt.Fprintf(out, "first error: %s\n", firstErr)
		if len(lat) == 0 {
			return fmt.Errorf("bench: issue: %s", firstErr)
		}
	}
	return nil
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

// takeAll has every client take tickets of service back to back for d
// (less when the service refuses them) and returns the latencies of those
// taken, the count of errors and the first.
func takeAll(ctx context.Context, e *sim.Env, clients []*client.Client, service string, d time.Duration) ([]time.Duration, int64, string) {
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu       sync.Mutex
		lat      []time.Duration
		errs     atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
	)
	for _, c := range clients {
		wg.Go(func() {
			var mine []time.Duration
			for rctx.Err() == nil {
				t0 := time.Now()
				_, err := c.TakeTicket(rctx, service, wire.ClassNormal, client.TicketOpts{})
				if err != nil {
					if rctx.Err() != nil {
						break
					}
					errs.Add(1)
					firstErr.CompareAndSwap(nil, e.Explain(err, sim.Device{}).Error())
					if errors.Is(err, wire.ErrServiceFull) || errors.Is(err, wire.ErrServiceClosed) || errors.Is(err, wire.ErrUnknownService) {
						cancel()
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	first, _ := firstErr.Load().(string)
	return lat, errs.Load(), first
}
