package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/sim"
	"github.com/nowserving/nowserving/view"
)

// DayOpts shape a compressed busy day.
type DayOpts struct {
	Tickets  int           // tickets to issue in all
	Kiosks   int           // kiosk connections taking them, back to back
	Keypads  int           // counters calling, one configured keypad device each
	Transfer float64       // share of called tickets transferred to another service
	NoShow   float64       // share of called tickets marked no-show
	Every    time.Duration // progress interval
	// Metrics, when set, is the daemon's /metrics URL: the sessions it
	// closed as slow consumers during the day are read from it.
	Metrics string
	// Hall, when set, is the daemon's HTTP address: the hall display's
	// stream is followed the whole day, as an open TV page does.
	Hall string
	// Checkpoints are counts of tickets issued at which the day pauses:
	// kiosks and counters stop once the operation they have in flight
	// ends, the consoles and the display catch up with the daemon and are
	// compared with it, a line is written, and AtCheckpoint (when set)
	// runs before the day goes on. An error of AtCheckpoint ends the day.
	// AtCheckpoint runs once more at the end of the day (Checkpoint.End).
	Checkpoints  []int
	AtCheckpoint func(context.Context, *Checkpoint) error
}

// DefaultDayOpts is a day of 20,000 tickets at 10 counters.
func DefaultDayOpts() DayOpts {
	return DayOpts{Tickets: 20000, Kiosks: 16, Keypads: 10, Transfer: 0.05, NoShow: 0.05, Every: time.Second}
}

// DayResult is what a day measured.
type DayResult struct {
	Issued, Called, Served, NoShows, Transfers, Errors int64
	Elapsed                                            time.Duration
	// Waiting is what the daemon's last snapshot counts waiting at the
	// end (tickets transferred to a service no calling counter serves).
	Waiting int
	// Consoles are the consoles attached: the first from the start, the
	// second joining when half the tickets are issued.
	Consoles []ConsoleResult
	// Dropped is how many sessions the daemon closed as slow consumers
	// during the day (from DayOpts.Metrics); -1 when not read.
	Dropped int
	// Goroutines and RSS are the most the daemon reported during the day
	// (go_goroutines, process_resident_memory_bytes; with DayOpts.Metrics).
	Goroutines int
	RSS        float64
	// Hall is what the hall display's stream showed (with DayOpts.Hall).
	Hall *HallResult
}

// HallResult is what the hall display's stream showed during the day.
type HallResult struct {
	States  int64  // "state" events read
	Lost    int64  // connections lost
	Matches bool   // at the end: its waiting counts are the daemon's, its last call the log's
	Diff    string // how they differ, when they do
}

// ConsoleResult is what one console saw.
type ConsoleResult struct {
	Joined  time.Duration // after the day's start
	Ready   time.Duration // from its dial to the day's figures and last events on hand
	Recent  int           // the last events its first SNAPSHOT carried
	Events  int64         // EVENTs it read
	Lost    int64         // connections it lost (dropped as a slow consumer, say)
	Matches bool          // its figures equal the daemon's last snapshot
	Diff    string        // how they differ, when they do
}

// Day plays a compressed busy day on a running daemon: o.Kiosks kiosks take
// o.Tickets tickets back to back over the services the calling counters
// serve, o.Keypads keypads call each one and serve it, mark it no-show or
// transfer it to another service (then it is called again). A console
// follows the site from the start and a second one joins halfway. It writes
// a progress line every o.Every and a summary to out, and returns the
// result.
func Day(ctx context.Context, e *sim.Env, o DayOpts, out io.Writer) (DayResult, error) {
	d, err := newDay(e, o)
	if err != nil {
		return DayResult{}, err
	}
	// The clients the day dials from here on, closed as it returns (a
	// deferred closeAll(d.clients) would close the empty list of now).
	defer func() { closeAll(d.clients) }()
	raiseFileLimit()
	kc, err := dialN(ctx, e, d.kiosks, o.Kiosks)
	d.clients = append(d.clients, kc...)
	if err != nil {
		return DayResult{}, err
	}
	pc, err := dialN(ctx, e, d.keypads, len(d.keypads))
	d.clients = append(d.clients, pc...)
	if err != nil {
		return DayResult{}, err
	}
	fmt.Fprintf(out, "day: %d tickets over services %s, %d kiosks, %d counters (%s), consoles %s from the start and halfway\n",
		o.Tickets, strings.Join(d.services, ","), o.Kiosks, len(pc), counterList(d.keypads), d.console.ID)
	d.at0, err = scrape(ctx, o.Metrics)
	if err != nil {
		return DayResult{}, err
	}
	d.start = time.Now()
	hctx, stopHall := context.WithCancel(ctx)
	defer stopHall()
	if o.Hall != "" {
		d.hall = watchHall(hctx, o.Hall, d.keypads[0].Site)
	}
	_, err = d.attach(ctx)
	if err != nil {
		return DayResult{}, err
	}
	if err := d.play(ctx, kc, pc, out); err != nil {
		return DayResult{}, err
	}
	r, err := d.finish(ctx)
	if err != nil {
		return r, err
	}
	r.Dropped = -1
	if o.Metrics != "" {
		f, err := scrape(ctx, o.Metrics)
		if err != nil {
			return r, err
		}
		d.sample(f)
		r.Dropped = f.slow - d.at0.slow
		r.Goroutines, r.RSS = d.peak.goroutines, d.peak.rss
	}
	writeDay(out, &r)
	return r, nil
}

// play runs kiosks kc and keypads pc until every ticket is issued and
// handled, writing progress to out; the second console joins once half the
// tickets are issued (at a progress line or a checkpoint, whichever comes
// first; at the end, for a day shorter than a progress interval).
func (d *day) play(ctx context.Context, kc, pc []*client.Client, out io.Writer) error {
	dctx, stop := context.WithCancel(ctx)
	defer stop()
	d.stopDay, d.out = stop, out
	var wg sync.WaitGroup
	for _, c := range kc {
		wg.Go(func() { d.kiosk(dctx, c) })
	}
	for i, c := range pc {
		wg.Go(func() { d.counter(dctx, c, d.keypads[i]) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	progress := time.NewTicker(d.o.Every)
	defer progress.Stop()
	for {
		select {
		case <-done:
			if d.cpErr != nil {
				return d.cpErr
			}
			return d.joinSecond(ctx, true)
		case <-ctx.Done():
			stop()
			<-done
			return ctx.Err()
		case <-progress.C:
			if err := d.joinSecond(ctx, false); err != nil {
				stop()
				<-done
				return err
			}
			if d.o.Metrics != "" {
				if f, err := scrape(ctx, d.o.Metrics); err == nil {
					d.sample(f)
				}
			}
			d.mu.Lock()
			ws := slices.Clone(d.watchers)
			d.mu.Unlock()
			d.say("%s", d.line(ws...))
		}
	}
}

// joinSecond attaches the second console once half the tickets are issued
// (or now, when anyway), unless it is there already.
func (d *day) joinSecond(ctx context.Context, anyway bool) error {
	d.join.Lock()
	defer d.join.Unlock()
	d.mu.Lock()
	n := len(d.watchers)
	d.mu.Unlock()
	if n >= 2 || !anyway && d.st.issued.Load() < int64(d.o.Tickets/2) {
		return nil
	}
	_, err := d.attach(ctx)
	return err
}

// sample keeps the most goroutines and RSS of f and the figures before.
func (d *day) sample(f daemonFigures) {
	d.peak.goroutines = max(d.peak.goroutines, f.goroutines)
	d.peak.rss = max(d.peak.rss, f.rss)
}

// day is one run of Day.
type day struct {
	e        *sim.Env
	o        DayOpts
	kiosks   []sim.Device
	keypads  []sim.Device
	console  sim.Device
	services []string
	serves   map[string][]string // counter -> its services among d.services
	clients  []*client.Client
	start    time.Time
	st       stats
	taken    atomic.Int64 // tickets a kiosk set out to take
	moved    atomic.Int64 // transfers
	issuing  atomic.Bool  // false once every ticket is issued

	hall *hall         // nil without DayOpts.Hall
	at0  daemonFigures // /metrics before the day
	peak daemonFigures // the most goroutines and RSS seen

	// gate pauses the day at a checkpoint: each kiosk's take and each
	// counter's call and handling hold it shared, a checkpoint holds it.
	gate    sync.RWMutex
	out     io.Writer          // progress and checkpoint lines, through say
	outMu   sync.Mutex         // held by say
	stopDay context.CancelFunc // ends play, after an error at a checkpoint
	cpErr   error              // the first error at a checkpoint

	join     sync.Mutex // held while the second console joins
	mu       sync.Mutex
	watchers []*watcher
}

func newDay(e *sim.Env, o DayOpts) (*day, error) {
	d := &day{e: e, o: o, serves: map[string][]string{}, stopDay: func() {}}
	d.issuing.Store(true)
	var err error
	if d.kiosks, err = benchDevices(e, wire.RoleKiosk); err != nil {
		return nil, err
	}
	if d.keypads, err = benchDevices(e, wire.RoleKeypad); err != nil {
		return nil, err
	}
	if len(d.keypads) > o.Keypads {
		d.keypads = d.keypads[:o.Keypads]
	}
	cons, err := benchDevices(e, wire.RoleConsole)
	if err != nil {
		return nil, err
	}
	d.console = cons[0]
	if e.Config == nil {
		return nil, errors.New("bench: day: give --config, the daemon's configuration (its services, counters and devices)")
	}
	open := map[string]bool{}
	for _, st := range e.Config.Sites {
		if st.ID != d.keypads[0].Site {
			continue
		}
		for _, sv := range st.Services {
			open[sv.Code] = sv.DailyCap == 0 && len(sv.Hours) == 0
		}
		for _, c := range st.Counters {
			for _, cs := range c.Services {
				if open[cs.Service] && keypadFor(d.keypads, c.ID) {
					d.serves[c.ID] = append(d.serves[c.ID], cs.Service)
					if !slices.Contains(d.services, cs.Service) {
						d.services = append(d.services, cs.Service)
					}
				}
			}
		}
	}
	if len(d.services) == 0 {
		return nil, errors.New("bench: day: no service without a daily cap or opening hours is served by a counter with a keypad device")
	}
	sort.Strings(d.services)
	return d, nil
}

func keypadFor(kps []sim.Device, counter string) bool {
	return slices.ContainsFunc(kps, func(k sim.Device) bool { return k.Counter == counter })
}

func counterList(kps []sim.Device) string {
	var ids []string
	for _, k := range kps {
		ids = append(ids, k.Counter)
	}
	return strings.Join(ids, ",")
}

// kiosk takes tickets back to back until the day's are all taken.
func (d *day) kiosk(ctx context.Context, c *client.Client) {
	for ctx.Err() == nil && d.taken.Add(1) <= int64(d.o.Tickets) {
		svc := d.services[rand.IntN(len(d.services))]
		d.gate.RLock()
		_, err := c.TakeTicket(ctx, svc, wire.ClassNormal, client.TicketOpts{})
		n := int64(0)
		if err == nil {
			n = d.st.issued.Add(1)
		} else if ctx.Err() == nil {
			d.fail("kiosk: take a ticket", err)
		}
		d.gate.RUnlock()
		if n > 0 && slices.Contains(d.o.Checkpoints, int(n)) {
			d.pause(ctx, n)
		}
	}
	if d.st.issued.Load()+d.st.errs.Load() >= int64(d.o.Tickets) {
		d.issuing.Store(false)
	}
}

// counter calls and handles tickets until every ticket is issued and none
// waits for it.
func (d *day) counter(ctx context.Context, c *client.Client, kp sim.Device) {
	for ctx.Err() == nil {
		if !d.turn(ctx, c, kp) {
			return
		}
	}
}

// turn is one call at a counter and its handling, holding the gate (but
// not for the nap when nothing waits); false when the counter's day is
// over.
func (d *day) turn(ctx context.Context, c *client.Client, kp sim.Device) bool {
	d.gate.RLock()
	more, nap := d.call(ctx, c, kp)
	d.gate.RUnlock()
	if nap {
		sleep(ctx, 20*time.Millisecond)
	}
	return more
}

// call calls the next ticket at a counter and handles it. It reports
// whether the counter's day goes on, and whether it found nothing to call.
func (d *day) call(ctx context.Context, c *client.Client, kp sim.Device) (more, nap bool) {
	issuing := d.issuing.Load()
	tk, err := c.CallNext(ctx, 0)
	switch {
	case err == nil:
		d.st.called.Add(1)
	case ctx.Err() != nil:
		return false, false
	case errors.Is(err, wire.ErrNoTicketWaiting):
		return issuing, issuing
	case errors.Is(err, wire.ErrInvalidTransition):
		// A ticket held from before the day: finish it first.
		if _, err := c.Complete(ctx, 0, ""); err != nil {
			_, _ = c.Start(ctx, 0, "")
			_, _ = c.Complete(ctx, 0, "")
		}
		return true, false
	default:
		d.fail("counter "+kp.Counter+": call", err)
		sleep(ctx, 100*time.Millisecond)
		return true, false
	}
	d.handle(ctx, c, kp, tk)
	return true, false
}

// handle serves, marks no-show or transfers the ticket just called.
//
// A transfer goes to another service this counter serves, so that the
// ticket is called again before the counter ends its day.
func (d *day) handle(ctx context.Context, c *client.Client, kp sim.Device, tk *wire.Ticket) {
	p := rand.Float64()
	var err error
	switch {
	case p < d.o.NoShow:
		if _, err = c.NoShow(ctx, 0, ""); err == nil {
			d.st.noShows.Add(1)
		}
	case p < d.o.NoShow+d.o.Transfer && len(others(d.serves[kp.Counter], tk.Service)) > 0:
		to := others(d.serves[kp.Counter], tk.Service)
		if _, err = c.Transfer(ctx, 0, "", client.Target{Service: to[rand.IntN(len(to))]}); err == nil {
			d.moved.Add(1)
		}
	default:
		if _, err = c.Start(ctx, 0, ""); err == nil {
			if _, err = c.Complete(ctx, 0, ""); err == nil {
				d.st.served.Add(1)
			}
		}
	}
	if err != nil && ctx.Err() == nil {
		d.fail("counter "+kp.Counter+": "+tk.Number, err)
	}
}

// fail counts a failed request and says the first of each kind, when
// into the day, so that a summary's errors are explained.
func (d *day) fail(what string, err error) {
	d.st.errs.Add(1)
	msg := d.e.Explain(err, sim.Device{}).Error()
	if d.st.refuse(msg) {
		d.say("%s  error: %s: %s", time.Since(d.start).Round(time.Second), what, msg)
	}
}

// others are the services of list but one.
func others(list []string, but string) []string {
	var out []string
	for _, s := range list {
		if s != but {
			out = append(out, s)
		}
	}
	return out
}

func (d *day) line(ws ...*watcher) string {
	s := fmt.Sprintf("%s  transferred %d", d.st.line(time.Since(d.start)), d.moved.Load())
	for i, w := range ws {
		if w != nil {
			s += fmt.Sprintf("  console%d %d events", i+1, w.events.Load())
		}
	}
	return s
}

// watcher is one console following the site: its picture (package view,
// as the console's), the events it read, the connections it lost.
type watcher struct {
	c       *client.Client
	sub     *client.Subscription
	joined  time.Duration
	ready   time.Duration
	recent  int
	events  atomic.Int64
	lost    atomic.Int64
	version atomic.Uint64

	mu     sync.Mutex
	v      *view.Site
	calls  []string                // "number counter" of each CALLED or RECALLED event read, in order
	status map[string]queue.Status // each ticket's status after the last event read, by number

	done chan struct{} // closed once read ends: the subscription ended
}

// attach starts a console: dial, its first SNAPSHOT (STATUS) and the
// subscription after it, as the console does.
func (d *day) attach(ctx context.Context) (*watcher, error) {
	w := &watcher{joined: time.Since(d.start), status: map[string]queue.Status{}, done: make(chan struct{})}
	t0 := time.Now()
	o := d.e.ClientOpts(d.console)
	o.OnState = func(s client.State, _ error) {
		if s == client.StateReconnecting {
			w.lost.Add(1)
		}
	}
	c, err := d.e.Dial(ctx, d.console, o)
	if err != nil {
		return nil, err
	}
	d.clients = append(d.clients, c)
	w.c = c
	site := d.keypads[0].Site
	ans, err := c.Do(ctx, &wire.Status{Site: site})
	if err != nil {
		return nil, fmt.Errorf("bench: day: console STATUS: %w", err)
	}
	snap, ok := ans.(*wire.Snapshot)
	if !ok {
		return nil, fmt.Errorf("bench: day: console STATUS answered %s", ans.Type())
	}
	w.v = view.FromSnapshot(queue.Site{ID: site}, view.Opts{}, protocol.QueueSnapshot(snap))
	w.recent = len(snap.Recent)
	w.version.Store(snap.Version)
	w.ready = time.Since(t0)
	// ctx bounds the dial and the STATUS; the subscription lasts as long
	// as the client, which the day closes as it returns. It must not end
	// with ctx: the console that joins at a checkpoint is attached on the
	// kiosk's goroutine, whose context ends with play, before finish waits
	// for the consoles to reach the daemon's last version, so the day's
	// last events, still on their way, never reached it.
	if w.sub, err = c.Subscribe(context.WithoutCancel(ctx), client.Filter{Site: site, FromVersion: snap.Version}); err != nil {
		return nil, fmt.Errorf("bench: day: console subscribe: %w", err)
	}
	go w.read()
	d.mu.Lock()
	d.watchers = append(d.watchers, w)
	d.mu.Unlock()
	return w, nil
}

// read applies the subscription's updates to the picture.
func (w *watcher) read() {
	defer close(w.done)
	for u := range w.sub.Updates() {
		w.mu.Lock()
		switch {
		case u.Snapshot != nil:
			w.v = view.FromSnapshot(queue.Site{ID: w.v.ID}, view.Opts{}, protocol.QueueSnapshot(u.Snapshot))
		case u.Event != nil:
			w.events.Add(1)
			if k := u.Event.Kind; k == wire.EventCalled || k == wire.EventRecalled {
				w.calls = append(w.calls, fmt.Sprintf("%s %d", u.Event.Number, u.Event.Counter))
			}
			if qe, ok := protocol.QueueEvent(u.Event); ok {
				w.v.Apply(&qe)
				if qe.Number != "" && qe.Status != "" {
					w.status[qe.Number] = qe.Status
				}
			}
		}
		w.mu.Unlock()
		w.version.Store(u.Version())
	}
}

// ended reports whether the watcher's subscription ended.
func (w *watcher) ended() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// finish waits for the consoles (and the display) to reach the daemon's
// last version and compares their figures with its snapshot.
func (d *day) finish(ctx context.Context) (DayResult, error) {
	r := DayResult{Issued: d.st.issued.Load(), Called: d.st.called.Load(), Served: d.st.served.Load(),
		NoShows: d.st.noShows.Load(), Transfers: d.moved.Load(), Errors: d.st.errs.Load(), Elapsed: time.Since(d.start)}
	cp, err := d.compare(ctx)
	if err != nil {
		return r, err
	}
	for _, s := range cp.Site.Services {
		r.Waiting += s.Waiting
	}
	r.Consoles, r.Hall = cp.Consoles, cp.Hall
	if d.o.AtCheckpoint != nil {
		cp.Issued, cp.End = r.Issued, true
		if err := d.o.AtCheckpoint(ctx, cp); err != nil {
			return r, fmt.Errorf("bench: day: at the end: %w", err)
		}
	}
	return r, nil
}

// hallDiff says how the display's state differs from the daemon's
// snapshot (waiting per service) and the log's last call ("number
// counter"), "" when it does not.
func hallDiff(st hallState, want *view.Site, lastCall string) string {
	var out []string
	for _, ws := range want.Services {
		n := -1
		for _, hs := range st.Services {
			if hs.Code == ws.Code {
				n = hs.Waiting
			}
		}
		if n != ws.Waiting {
			out = append(out, fmt.Sprintf("service %s: %d waiting on the display, %d at the daemon", ws.Code, n, ws.Waiting))
		}
	}
	shown := ""
	if len(st.Calls) > 0 {
		shown = st.Calls[0].Number + " " + st.Calls[0].Counter
	}
	if shown != lastCall {
		out = append(out, fmt.Sprintf("last call %q on the display, %q in the log", shown, lastCall))
	}
	return strings.Join(out, "; ")
}

// figuresDiff says how a console's figures differ from the daemon's, ""
// when they are the same.
func figuresDiff(got, want *view.Site) string {
	var out []string
	for _, ws := range want.Services {
		gs := got.Service(ws.Code)
		if gs == nil {
			gs = &view.Service{}
		}
		if gs.Waiting != ws.Waiting || gs.Issued != ws.Issued || gs.Called != ws.Called || gs.Served != ws.Served || gs.NoShows != ws.NoShows {
			out = append(out, fmt.Sprintf("service %s: waiting %d issued %d called %d served %d no-show %d, daemon %d %d %d %d %d",
				ws.Code, gs.Waiting, gs.Issued, gs.Called, gs.Served, gs.NoShows, ws.Waiting, ws.Issued, ws.Called, ws.Served, ws.NoShows))
		}
	}
	for _, wc := range want.Counters {
		gc := got.Counter(wc.ID)
		if gc == nil || gc.TicketID != wc.TicketID || gc.Served != wc.Served {
			out = append(out, fmt.Sprintf("counter %s differs", wc.ID))
		}
	}
	return strings.Join(out, "; ")
}

func writeDay(out io.Writer, r *DayResult) {
	el := r.Elapsed.Seconds()
	fmt.Fprintf(out, "done: %s  issued %d  called %d  served %d  no-show %d  transferred %d  errors %d  waiting at the end %d\n",
		r.Elapsed.Round(100*time.Millisecond), r.Issued, r.Called, r.Served, r.NoShows, r.Transfers, r.Errors, r.Waiting)
	fmt.Fprintf(out, "      %.0f tickets/s issued, %.0f calls/s\n", float64(r.Issued)/el, float64(r.Called)/el)
	if r.Dropped >= 0 {
		fmt.Fprintf(out, "daemon: %d sessions closed as slow consumers during the day; at most %d goroutines and %.0f MiB RSS (/metrics)\n",
			r.Dropped, r.Goroutines, r.RSS/(1<<20))
	}
	if h := r.Hall; h != nil {
		same := "its waiting counts and last call equal the daemon's"
		if !h.Matches {
			same = "DIFFERS: " + h.Diff
		}
		fmt.Fprintf(out, "display: read %d states, lost the connection %d times; %s\n", h.States, h.Lost, same)
	}
	for i, c := range r.Consoles {
		same := "figures equal the daemon's"
		if !c.Matches {
			same = "FIGURES DIFFER: " + c.Diff
		}
		fmt.Fprintf(out, "console %d: joined at %s, figures and %d last events in %s, read %d events, lost the connection %d times; %s\n",
			i+1, c.Joined.Round(100*time.Millisecond), c.Recent, c.Ready.Round(time.Millisecond), c.Events, c.Lost, same)
	}
}

// daemonFigures are what a day reads from the daemon's /metrics.
type daemonFigures struct {
	slow       int     // sessions closed as slow consumers, of every role
	goroutines int     // go_goroutines
	rss        float64 // process_resident_memory_bytes
}

// scrape reads the daemon's figures from its /metrics at url; zero
// without url.
func scrape(ctx context.Context, url string) (daemonFigures, error) {
	var f daemonFigures
	if url == "" {
		return f, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return f, fmt.Errorf("bench: day: metrics: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return f, fmt.Errorf("bench: day: metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return f, fmt.Errorf("bench: day: metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		slow := strings.HasPrefix(line, "nowserving_protocol_sessions_closed_total{") && strings.Contains(line, `reason="slow consumer"`)
		if !slow && !strings.HasPrefix(line, "go_goroutines ") && !strings.HasPrefix(line, "process_resident_memory_bytes ") {
			continue
		}
		fs := strings.Fields(line)
		v, err := strconv.ParseFloat(fs[len(fs)-1], 64)
		if err != nil {
			return f, fmt.Errorf("bench: day: metrics: %q: %w", line, err)
		}
		switch {
		case slow:
			f.slow += int(v)
		case fs[0] == "go_goroutines":
			f.goroutines = int(v)
		default:
			f.rss = v
		}
	}
	return f, sc.Err()
}
