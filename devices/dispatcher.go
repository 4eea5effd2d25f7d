package devices

import (
	"context"
	"errors"
	"fmt"
	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/internal/positive"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/voice"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// Board is one LED board: a counter board showing its counter's ticket, or a
// hall board showing the site's last calls.
type Board struct {
	// Port is the line the board is on; it must be listed in Opts.Ports.
	Port *led.Port
	// Addr is the board's address on the line.
	Addr int
	// Site is the board's site.
	Site string
	// Counter is the counter whose ticket the board shows; empty for a hall
	// board.
	Counter string
	// HallLines, on a hall board, is how many calls it lists (default 4).
	HallLines int
	// Idle is what a counter board shows when its counter has no ticket;
	// empty blanks the board.
	Idle string
}

// Zone is one voice zone: the announcer playing the calls of the counters
// whose queue.Counter.Zone names it. A counter with no zone uses the first
// zone of its site.
type Zone struct {
	Name      string
	Site      string
	Announcer *voice.Announcer
}

// Printer is a network ticket printer and its layout.
type Printer struct {
	ID      string
	Printer *escpos.Printer
	// Layout is how tickets are laid out; Layout.Lang empty means the
	// site's main language.
	Layout escpos.Layout
	// Footer is the free footer text printed on each ticket.
	Footer string
}

// Keypad is a bus of wired keypads and the counter of each address.
type Keypad struct {
	Bus      *led.KeypadBus
	Site     string
	Counters map[int]string // keypad address -> counter id
	// Name identifies the bus in logs and as the actor of its operations
	// (e.g. the line's name).
	Name string
}

// Opts configures a Dispatcher.
type Opts struct {
	// Engine is the queue; required.
	Engine *queue.Engine
	// Ports are the LED lines; Run runs them. Boards names the boards on
	// them.
	Ports  []*led.Port
	Boards []Board
	// Zones are the voice zones; Run runs their announcers.
	Zones []Zone
	// Printers are the network ticket printers, and Kiosks maps a kiosk's
	// device id to the id of the printer it prints on.
	Printers []Printer
	Kiosks   map[string]string
	// Layout is the layout of RenderTicket (kiosks that print themselves);
	// zero means escpos.DefaultLayout in the site's main language.
	Layout escpos.Layout
	// QR returns the QR payload printed on a ticket; nil means
	// DefaultQR, "" prints no QR code.
	QR func(t queue.Ticket) string
	// Keypads are the wired keypad buses; Run runs them.
	Keypads []Keypad
	// OpTimeout bounds one engine operation of a keypad press and the
	// recording of a failed print (default 5 s).
	OpTimeout time.Duration
	// DrainTimeout bounds how long the voice zones may finish their queued
	// announcements when Run's context ends (default 5 s); Shutdown uses
	// its own context instead.
	DrainTimeout time.Duration
	// PrinterPoll, when positive, asks each printer's status this often,
	// so Status (and the metrics) show a printer out of paper before a
	// kiosk needs it.
	PrinterPoll time.Duration
	// Retry is the pause before following a site's feed again after an
	// error (default 1 s).
	Retry time.Duration
	// Logger receives device failures; nil discards.
	Logger *slog.Logger
}

// DefaultQR is the QR payload of a ticket: "nowserving:SITE:DAY:NUMBER",
// enough for a lookup page or a kiosk scanner to find the ticket.
func DefaultQR(t queue.Ticket) string {
	return fmt.Sprintf("nowserving:%s:%s:%s", t.Site, t.Day, t.Number)
}

// Dispatcher turns a queue's committed events into board frames and
// announcements, prints tickets, and maps wired keypad presses onto the
// engine. Create it with New, start it with Run, stop it with Shutdown (or
// by cancelling Run's context).
type Dispatcher struct {
	eng      *queue.Engine
	o        Opts
	log      *slog.Logger
	printers map[string]*Printer
	zones    map[string]*Zone // by site + "\x00" + name
	first    map[string]*Zone // first zone of each site
	keypads  map[string][]keypadAt

	mu     sync.Mutex
	status map[string]PrinterStatus

	started atomic.Bool
	// loops runs the event loops and keypad handlers, parts the ports,
	// buses and announcers: Shutdown stops the loops first, lets the
	// announcers drain, then stops the parts (blanking the boards).
	loops, parts         context.Context
	stopLoops, stopParts context.CancelFunc
	shutOnce             sync.Once
	done                 chan struct{}
}

// keypadAt is one keypad showing a counter's ticket.
type keypadAt struct {
	bus  *led.KeypadBus
	addr int
}

// siteKey keys a site's zone or counter in a map.
func siteKey(site, name string) string { return site + "\x00" + name }

// New checks opts and returns a Dispatcher.
func New(opts Opts) (*Dispatcher, error) {
	if opts.Engine == nil {
		return nil, errors.New("devices: new dispatcher: Engine is required")
	}
	opts.OpTimeout = positive.Or(opts.OpTimeout, 5*time.Second)
	opts.DrainTimeout = positive.Or(opts.DrainTimeout, 5*time.Second)
	opts.Retry = positive.Or(opts.Retry, time.Second)
	if opts.QR == nil {
		opts.QR = DefaultQR
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	d := &Dispatcher{
		eng: opts.Engine, o: opts, log: log,
		printers: map[string]*Printer{}, zones: map[string]*Zone{}, first: map[string]*Zone{},
		keypads: map[string][]keypadAt{}, status: map[string]PrinterStatus{},
		done: make(chan struct{}),
	}
	d.loops, d.stopLoops = context.WithCancel(context.Background())
	d.parts, d.stopParts = context.WithCancel(context.Background())

	for _, add := range []func(Opts) error{d.addBoards, d.addZones, d.addPrinters, d.addKeypads} {
		if err := add(opts); err != nil {
			return nil, fmt.Errorf("devices: new dispatcher: %w", err)
		}
	}
	if opts.Layout.PaperMM != 0 {
		if err := opts.Layout.Validate(); err != nil {
			return nil, fmt.Errorf("devices: new dispatcher: layout: %w", err)
		}
	}
	return d, nil
}

// addBoards checks that every board is on a port of opts and shows a
// counter its site has.
func (d *Dispatcher) addBoards(opts Opts) error {
	ports := map[*led.Port]bool{}
	for _, p := range opts.Ports {
		if p == nil {
			return errors.New("nil port")
		}
		ports[p] = true
	}
	for i, b := range opts.Boards {
		if !ports[b.Port] {
			return fmt.Errorf("board %d (site %s, address %d): its port is not in Ports", i, b.Site, b.Addr)
		}
		s, err := d.eng.Site(b.Site)
		if err != nil {
			return fmt.Errorf("board %d: %w", i, err)
		}
		if b.Counter != "" && !s.HasCounter(b.Counter) {
			return fmt.Errorf("board %d: counter %s: %w", i, b.Counter, queue.ErrUnknownCounter)
		}
	}
	return nil
}

// addZones indexes the voice zones by site and name; a site's first zone
// is its default.
func (d *Dispatcher) addZones(opts Opts) error {
	for i := range opts.Zones {
		z := &opts.Zones[i]
		if z.Announcer == nil {
			return fmt.Errorf("zone %s: nil announcer", z.Name)
		}
		if _, err := d.eng.Site(z.Site); err != nil {
			return fmt.Errorf("zone %s: %w", z.Name, err)
		}
		d.zones[siteKey(z.Site, z.Name)] = z
		if d.first[z.Site] == nil {
			d.first[z.Site] = z
		}
	}
	return nil
}

// addPrinters indexes the printers by id and checks every kiosk's.
func (d *Dispatcher) addPrinters(opts Opts) error {
	for i := range opts.Printers {
		p := &opts.Printers[i]
		if p.Printer == nil {
			return fmt.Errorf("printer %s: nil printer", p.ID)
		}
		if err := p.Layout.Validate(); err != nil {
			return fmt.Errorf("printer %s: %w", p.ID, err)
		}
		d.printers[p.ID] = p
		d.status[p.ID] = PrinterStatus{ID: p.ID, Addr: p.Printer.Addr(), Status: "unknown"}
	}
	for dev, pid := range opts.Kiosks {
		if d.printers[pid] == nil {
			return fmt.Errorf("kiosk %s: printer %q: %w", dev, pid, ErrNoPrinter)
		}
	}
	return nil
}

// addKeypads indexes the wired keypads by the counter they act for.
func (d *Dispatcher) addKeypads(opts Opts) error {
	for i, k := range opts.Keypads {
		if k.Bus == nil {
			return fmt.Errorf("keypad bus %d: nil bus", i)
		}
		s, err := d.eng.Site(k.Site)
		if err != nil {
			return fmt.Errorf("keypad bus %d: %w", i, err)
		}
		for addr, c := range k.Counters {
			if !s.HasCounter(c) {
				return fmt.Errorf("keypad bus %d address %d: counter %s: %w", i, addr, c, queue.ErrUnknownCounter)
			}
			d.keypads[siteKey(k.Site, c)] = append(d.keypads[siteKey(k.Site, c)], keypadAt{k.Bus, addr})
		}
	}
	return nil
}

// Name names the dispatcher among the daemon's parts.
func (d *Dispatcher) Name() string { return "devices" }

// Run drives the devices until ctx ends or Shutdown is called: every LED
// port, voice announcer and keypad bus, and one loop per site following the
// engine's events. It returns nil after a clean stop (a Shutdown before Run
// makes Run return at once). Run may be called once.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.started.CompareAndSwap(false, true) {
		return ErrStarted
	}
	defer close(d.done)
	// The end of ctx is a shutdown too, bounded by DrainTimeout.
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), d.o.DrainTimeout)
		defer cancel()
		_ = d.Shutdown(sctx)
	})
	defer stop()

	var g errgroup.Group
	for _, p := range d.o.Ports {
		g.Go(func() error {
			// Run fails only when the boards could not be blanked on
			// the way out: worth a warning, not a failed daemon.
			if err := p.Run(d.parts); err != nil && !isStop(err) {
				d.log.Warn("devices: led port stopped", "port", p.Name(), "err", err)
			}
			return nil
		})
	}
	for _, z := range d.o.Zones {
		g.Go(func() error {
			if err := z.Announcer.Run(d.parts); err != nil && !isStop(err) && !errors.Is(err, voice.ErrClosed) {
				return fmt.Errorf("devices: voice zone %s: %w", z.Name, err)
			}
			return nil
		})
	}
	for _, k := range d.o.Keypads {
		g.Go(func() error {
			if err := k.Bus.Run(d.parts); err != nil && !isStop(err) {
				return fmt.Errorf("devices: keypad bus %s: %w", k.Name, err)
			}
			return nil
		})
		g.Go(func() error { d.keys(d.loops, k); return nil })
	}
	for _, s := range d.eng.Sites() {
		if d.drives(s.ID) {
			g.Go(func() error { d.follow(d.loops, s.ID); return nil })
		}
	}
	g.Go(func() error { <-d.loops.Done(); return nil }) // with nothing to drive, too
	if d.o.PrinterPoll > 0 {
		for _, p := range d.o.Printers {
			g.Go(func() error { d.poll(d.loops, p); return nil })
		}
	}
	return g.Wait()
}

// drives reports whether a site has a board, a voice zone or a wired
// keypad here: only those sites' events are followed. A subscriber
// waiting on every site would have the engine follow every site at once,
// at the cost of reads for the events of sites other daemons serve
// (queue's follower).
func (d *Dispatcher) drives(site string) bool {
	for i := range d.o.Boards {
		if d.o.Boards[i].Site == site {
			return true
		}
	}
	for i := range d.o.Keypads {
		if d.o.Keypads[i].Site == site {
			return true
		}
	}
	return d.first[site] != nil
}

func isStop(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Shutdown stops following events and reading keypads, lets each voice
// zone finish what it has queued, then blanks the boards and closes the
// lines, all within ctx. It returns ctx's error if Run did not end in time.
func (d *Dispatcher) Shutdown(ctx context.Context) error {
	var errs error
	d.shutOnce.Do(func() {
		d.stopLoops()
		if d.started.Load() {
			for _, z := range d.o.Zones {
				if err := z.Announcer.Close(ctx); err != nil {
					errs = errors.Join(errs, fmt.Errorf("devices: close voice zone %s: %w", z.Name, err))
				}
			}
		}
		d.stopParts()
	})
	if !d.started.Load() {
		return errs
	}
	select {
	case <-d.done:
		return errs
	case <-ctx.Done():
		return ctx.Err()
	}
}

// follow shows a site's events on its devices until ctx ends: from a
// snapshot at first, and again after a gap (the boards show the latest
// state, not a replay of what they missed).
func (d *Dispatcher) follow(ctx context.Context, site string) {
	st := d.newSiteState(site)
	f := follow.New(d.eng, site, follow.Opts{MinRetry: d.o.Retry, MaxRetry: 10 * d.o.Retry, Log: d.log, Who: "devices"})
	for {
		u, err := f.Next(ctx)
		if err != nil {
			if !follow.Done(ctx, err) {
				d.log.Error("devices: follow events failed", "site", site, "err", err)
			}
			return
		}
		if u.Snapshot != nil {
			st.restore(*u.Snapshot)
		}
		for i := range u.Events {
			st.apply(&u.Events[i])
		}
	}
}

// siteState is what one site's loop knows: the site's picture (the ticket
// each counter holds, from package view) and the hall boards' lists. Only
// the site's loop touches it.
type siteState struct {
	d      *Dispatcher
	site   string
	def    queue.Site
	v      *view.Site
	boards map[string][]*Board
	halls  []hallBoard
}

type hallBoard struct {
	b    *Board
	hall *led.Hall
}

func (d *Dispatcher) newSiteState(site string) *siteState {
	def := queue.Site{ID: site}
	if s, err := d.eng.Site(site); err == nil {
		def = *s
	}
	st := &siteState{d: d, site: site, def: def, v: view.New(def, view.Opts{}), boards: map[string][]*Board{}}
	for i := range d.o.Boards {
		b := &d.o.Boards[i]
		if b.Site != site {
			continue
		}
		if b.Counter == "" {
			n := b.HallLines
			if n < 1 {
				n = 4
			}
			st.halls = append(st.halls, hallBoard{b: b, hall: led.NewHall(n)})
			continue
		}
		st.boards[b.Counter] = append(st.boards[b.Counter], b)
	}
	return st
}

// restore shows every counter's current ticket from a snapshot, and lists
// the held tickets on the hall boards in the order they were called.
func (st *siteState) restore(snap queue.Snapshot) {
	st.v = view.FromSnapshot(st.def, view.Opts{}, snap)
	var called []view.Counter
	for _, c := range st.v.Counters {
		st.show(c.ID, c.Number)
		if c.Busy() {
			called = append(called, c)
		}
	}
	sort.SliceStable(called, func(i, j int) bool { return called[i].Since.Before(called[j].Since) })
	for _, c := range called {
		for _, h := range st.halls {
			h.hall.Call(c.Number, c.ID)
		}
	}
	for _, h := range st.halls {
		h.b.Port.Show(h.b.Addr, h.hall.Content())
	}
}

// show puts number (or the idle content when "") on a counter's boards and
// keypads.
func (st *siteState) show(counter, number string) {
	for _, b := range st.boards[counter] {
		c := led.Content{Text: b.Idle}
		if number != "" {
			c = led.Content{Number: number, Counter: counter}
		}
		b.Port.Show(b.Addr, c)
	}
	for _, k := range st.d.keypads[siteKey(st.site, counter)] {
		k.bus.Display(k.addr, keypadText(number))
	}
}

// keypadText is what a keypad's 3-character display shows for a number:
// its last three characters ("A023" -> "023"), or "---" for none.
func keypadText(number string) string {
	if number == "" {
		return "---"
	}
	if len(number) > 3 {
		return number[len(number)-3:]
	}
	return number
}

// apply shows one event: a call on its counter's boards, the hall boards
// and the voice; any counter whose ticket the event took away goes idle.
func (st *siteState) apply(e *queue.Event) {
	before := map[string]string{}
	for _, c := range st.v.Counters {
		before[c.ID] = c.Number
	}
	st.v.Apply(e)
	switch e.Type {
	case queue.EventCalled, queue.EventRecalled:
		if e.Counter == "" {
			return
		}
		st.show(e.Counter, e.Number)
		for _, h := range st.halls {
			h.b.Port.Show(h.b.Addr, h.hall.Call(e.Number, e.Counter))
		}
		if z := st.zone(e.Counter); z != nil {
			if !z.Announcer.Announce(voice.Call{Number: e.Number, Counter: e.Counter, Recall: e.Type == queue.EventRecalled}) {
				st.d.log.Warn("devices: announcement dropped", "zone", z.Name, "number", e.Number)
			}
		}
		return
	}
	for _, c := range st.v.Counters {
		if c.Number != before[c.ID] {
			st.show(c.ID, c.Number)
		}
	}
	switch e.Type {
	case queue.EventNoShow, queue.EventCancelled, queue.EventExpired, queue.EventTransferred:
		for _, h := range st.halls {
			before := h.hall.Content()
			if after := h.hall.Remove(e.Number); !after.Equal(before) {
				h.b.Port.Show(h.b.Addr, after)
			}
		}
	}
}

// zone returns the voice zone announcing a counter, nil if none.
func (st *siteState) zone(counter string) *Zone {
	for _, c := range st.def.Counters {
		if c.ID == counter && c.Zone != "" {
			return st.d.zones[siteKey(st.site, c.Zone)]
		}
	}
	return st.d.first[st.site]
}

// keys applies the key presses of one keypad bus until ctx ends.
func (d *Dispatcher) keys(ctx context.Context, k Keypad) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-k.Bus.Events():
			if !ok {
				return
			}
			d.press(ctx, k, ev)
		}
	}
}

// press applies one key press and answers on the keypad's display.
func (d *Dispatcher) press(ctx context.Context, k Keypad, ev led.KeyEvent) {
	counter, ok := k.Counters[ev.Addr]
	if !ok {
		d.log.Warn("devices: key press from an unmapped keypad", "bus", k.Name, "address", ev.Addr)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.OpTimeout)
	defer cancel()
	r := queue.CounterRequest{
		Request: queue.Request{Site: k.Site, Device: fmt.Sprintf("keypad:%s:%d", k.Name, ev.Addr)},
		Counter: counter,
	}
	var (
		t   queue.Ticket
		err error
	)
	switch ev.Key {
	case led.KeyCallNext:
		t, err = d.eng.CallNext(ctx, r)
	case led.KeyStart:
		t, err = d.eng.Start(ctx, r)
	case led.KeyNoShow:
		_, err = d.eng.NoShow(ctx, r)
	case led.KeyRedirect:
		_, err = d.redirect(ctx, r)
	default:
		return
	}
	text := keypadText(t.Number)
	if err != nil {
		text = "---"
		d.log.Info("devices: keypad operation refused", "bus", k.Name, "address", ev.Addr, "counter", counter, "key", ev.Key.String(), "err", err)
	}
	k.Bus.Display(ev.Addr, text)
}

// redirect sends the counter's ticket back to the head of its own queue.
func (d *Dispatcher) redirect(ctx context.Context, r queue.CounterRequest) (queue.Ticket, error) {
	snap, err := d.eng.Snapshot(ctx, r.Site)
	if err != nil {
		return queue.Ticket{}, err
	}
	for _, c := range snap.Counters {
		if c.ID == r.Counter && c.Ticket != nil {
			return d.eng.Transfer(ctx, queue.TransferRequest{Request: r.Request, Counter: r.Counter, ToService: c.Ticket.Queue})
		}
	}
	return queue.Ticket{}, fmt.Errorf("devices: redirect at counter %s: %w", r.Counter, queue.ErrCounterIdle)
}
