package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/sim"
)

// ScaleOpts shape the scale mode of bench book (--resources, --days): a
// site of Resources resources (nine in ten doctors of one place, the rest
// rooms of ten) with 40 slots a day, Days days ahead, as ScaleConfig
// writes it. Book's URL, Token, Site, Patients, Rate, Duration, OtherSite,
// OtherService, OtherRate and MaxInFlight serve here too.
type ScaleOpts struct {
	Book            BookOpts
	Resources, Days int
	// PID is the daemon's process, for its RSS and CPU time (0: not
	// reported).
	PID int
	// Warmers read the lists at once while the cache is warmed.
	Warmers int
	// ReadRates are the steps of the read ladder, each Step long.
	ReadRates []float64
	Step      time.Duration
	// BookRate is the rate of distinct-slot bookings (one request per
	// slot, each for its own patient), for Step.
	BookRate float64
	// RushDoctors are the doctors whose first free slot of the last day
	// the rush books (Book.Rate for Book.Duration) while RushReads slot
	// lists are read each second.
	RushDoctors int
	RushReads   float64
}

// ScaleResource is the id of resource i (from 0) of the scale site, and
// its capacity: nine in ten are doctors of one place, the rest rooms of
// ten.
func ScaleResource(i int) (string, int) {
	if i%10 == 9 {
		return fmt.Sprintf("room-%04d", i), 10
	}
	return fmt.Sprintf("dr-%04d", i), 1
}

// ScaleSetup is what ScaleConfig writes: site Site of Resources
// resources, Days days ahead, and site Other whose tickets are taken
// meanwhile, served on HTTP (and the appointments API on Appointments,
// when set) with API token Token, on the store of Driver and DSN, the
// devices on Protocol.
type ScaleSetup struct {
	Site, Other                                      string
	Resources, Days                                  int
	Driver, DSN, HTTP, Appointments, Protocol, Token string
}

// ScaleConfig writes the daemon's configuration for the scale mode: the
// scale site's resources open 08:00-18:00 in 15-minute slots, each day
// opening at midnight, with a display and a console of the scale site and
// a kiosk of the other. Without an appointments listener it uses no key
// newer than the appointments themselves, so an older daemon reads it
// too.
func ScaleConfig(w io.Writer, c ScaleSetup) error {
	var b strings.Builder
	listen := fmt.Sprintf("  protocol: %q\n  http: %q\n", c.Protocol, c.HTTP)
	if c.Appointments != "" {
		listen += fmt.Sprintf("  appointments: %q\n", c.Appointments)
	}
	fmt.Fprintf(&b, `# nowserving bench book --resources %d --days %d: %d slots.
# BENCH ONLY: the token below is published.
store:
  driver: %s
  dsn: %q
listen:
%shttp:
  tokens:
    - { name: bench, token: %q }
log:
  level: warn
sites:
  - id: %s
    timezone: UTC
    services:
      - { code: A, name: { en: "Outpatients" } }
    counters:
      - { id: "1", services: [A] }
    appointments: { patient_rate: 5, patient_window: 10s }
    resources:
`, c.Resources, c.Days, c.Resources*c.Days*40, c.Driver, c.DSN, listen, c.Token, c.Site)
	for i := range c.Resources {
		id, capacity := ScaleResource(i)
		fmt.Fprintf(&b, "      - { id: %s, service: A, schedule: { open: \"08:00\", close: \"18:00\", slot: 15m, capacity: %d, days_ahead: %d, opens_at: \"00:00\" } }\n",
			id, capacity, c.Days)
	}
	fmt.Fprintf(&b, `  - id: %s
    timezone: UTC
    services:
      - { code: A, name: { en: "Counter service" } }
    counters:
      - { id: "1", services: [A] }
devices:
  - { id: display-1, role: display, site: %s, secret: "scale-bench-display-secret" }
  - { id: console-1, role: console, site: %s, secret: "scale-bench-console-secret" }
  - { id: kiosk-1, role: kiosk, site: %s, secret: "scale-bench-kiosk-secret-01" }
`, c.Other, c.Site, c.Site, c.Other)
	_, err := io.WriteString(w, b.String())
	return err
}

// scalePair is one list of the scale site: a resource on a date.
type scalePair struct{ resource, date string }

// scaleRun is the state of one scale run.
type scaleRun struct {
	o     ScaleOpts
	c     *bookClient
	reads sim.API // the ladder's and the rush's reads (readTransport)
	w     io.Writer
	pairs []scalePair
	free  []int64 // unbooked slots of one place after the run's start, but of the rush's doctors
	rush  []apiSlot
	rushP []scalePair
	run   int64
}

// Scale runs the scale mode: it warms the cache by reading every list
// once, then reports the daemon's RSS, climbs the read ladder, books
// distinct slots, and runs the rush with reads and the other site's
// tickets beside it, printing each figure; it fails when a slot is
// overbooked.
func Scale(ctx context.Context, o ScaleOpts, w io.Writer) error {
	o.Book.MaxInFlight = positive.Or(o.Book.MaxInFlight, 4096)
	o.Warmers, o.RushDoctors = max(o.Warmers, 1), max(o.RushDoctors, 1)
	tr, rt := bookTransport(o.Book.MaxInFlight), readTransport(o.Book.MaxInFlight)
	defer tr.CloseIdleConnections()
	defer rt.tr.CloseIdleConnections()
	raiseFileLimit()
	s := &scaleRun{o: o, w: w, run: time.Now().UnixNano(), c: newBookClient(o.Book, tr)}
	s.reads = s.c.appts
	s.reads.Client = &http.Client{Transport: rt, Timeout: 30 * time.Second}
	if err := s.warm(ctx); err != nil {
		return err
	}
	s.rss("after every list was read once")
	s.ladder(ctx)
	s.distinct(ctx)
	return s.rushRun(ctx)
}

// rss prints the daemon's RSS.
func (s *scaleRun) rss(when string) {
	if s.o.PID == 0 {
		return
	}
	if b, err := procRSS(s.o.PID); err == nil {
		fmt.Fprintf(s.w, "scale: RSS %s: %s\n", when, mib(b))
	}
}

// cpu is the daemon's CPU time so far (0 without PID).
func (s *scaleRun) cpu() time.Duration {
	if s.o.PID == 0 {
		return 0
	}
	d, _ := procCPU(s.o.PID)
	return d
}

// list reads the slots of p, again after a while when the daemon sheds
// the read (429), for up to a minute.
func (s *scaleRun) list(ctx context.Context, p scalePair) ([]apiSlot, error) {
	path := fmt.Sprintf("/api/v1/sites/%s/slots?resource=%s&date=%s", s.o.Book.Site, p.resource, p.date)
	st, b, err := s.c.appts.Do(ctx, "GET", path, nil, "")
	for end := time.Now().Add(time.Minute); err == nil && st == http.StatusTooManyRequests && time.Now().Before(end); {
		time.Sleep(time.Duration(50+rand.IntN(100)) * time.Millisecond)
		st, b, err = s.c.appts.Do(ctx, "GET", path, nil, "")
	}
	if err != nil {
		return nil, err
	}
	if st != http.StatusOK {
		return nil, fmt.Errorf("bench: scale: slots of %s on %s: status %d: %s", p.resource, p.date, st, b)
	}
	var l struct{ Slots []apiSlot }
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("bench: scale: slots of %s on %s: %w", p.resource, p.date, err)
	}
	return l.Slots, nil
}

// warm reads every list once, Warmers at a time, and keeps the free
// slots of one place to book.
func (s *scaleRun) warm(ctx context.Context) error {
	today := time.Now().UTC()
	for d := range s.o.Days {
		for i := range s.o.Resources {
			id, _ := ScaleResource(i)
			s.pairs = append(s.pairs, scalePair{id, today.AddDate(0, 0, d).Format(time.DateOnly)})
		}
	}
	start, cpu0 := time.Now(), s.cpu()
	soon := time.Now().Add(10 * time.Minute)
	var mu sync.Mutex
	var next, slots atomic.Int64
	var firstErr error
	var wg sync.WaitGroup
	for range s.o.Warmers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(s.pairs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				l, err := s.list(ctx, s.pairs[i])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				for _, sl := range l {
					if sl.Capacity == 1 && sl.Booked == 0 && !sl.Closed && sl.Start.After(soon) {
						s.free = append(s.free, sl.ID)
					}
				}
				mu.Unlock()
				slots.Add(int64(len(l)))
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Fprintf(s.w, "scale: warmed %d lists (%d slots of %d; fewer: the daemon is still making them) in %s, daemon CPU %s\n", len(s.pairs), slots.Load(),
		len(s.pairs)*40, time.Since(start).Round(time.Millisecond), (s.cpu() - cpu0).Round(10*time.Millisecond))
	return s.pickRush(ctx)
}

// pickRush takes the first free slot of each of RushDoctors doctors on
// the last day for the rush, and keeps the distinct bookings off those
// doctors' lists.
func (s *scaleRun) pickRush(ctx context.Context) error {
	last := time.Now().UTC().AddDate(0, 0, s.o.Days-1).Format(time.DateOnly)
	taken := map[int64]bool{}
	for i := 0; len(s.rush) < s.o.RushDoctors && i < s.o.Resources; i++ {
		id, capacity := ScaleResource(i)
		if capacity != 1 {
			continue
		}
		p := scalePair{id, last}
		l, err := s.list(ctx, p)
		if err != nil {
			return err
		}
		for _, sl := range l {
			taken[sl.ID] = true
		}
		if i := slices.IndexFunc(l, func(sl apiSlot) bool { return sl.Booked == 0 && !sl.Closed }); i >= 0 {
			s.rush, s.rushP = append(s.rush, l[i]), append(s.rushP, p)
		}
	}
	if len(s.rush) < s.o.RushDoctors {
		return fmt.Errorf("bench: scale: %d doctors with a free slot on %s, want %d", len(s.rush), last, s.o.RushDoctors)
	}
	s.free = slices.DeleteFunc(s.free, func(id int64) bool { return taken[id] })
	rand.Shuffle(len(s.free), func(i, j int) { s.free[i], s.free[j] = s.free[j], s.free[i] })
	return nil
}

// readLoop reads random lists at rate for d into out.
func (s *scaleRun) readLoop(ctx context.Context, rate float64, d time.Duration, out *outcome) {
	paceLoop(ctx, rate, d, s.o.Book.MaxInFlight, out, func(ctx context.Context, _ int) (int, error) {
		p := s.pairs[rand.IntN(len(s.pairs))]
		st, _, err := s.reads.Do(ctx, "GET", fmt.Sprintf("/api/v1/sites/%s/slots?resource=%s&date=%s", s.o.Book.Site, p.resource, p.date), nil, "")
		return st, err
	})
}

// gzipAsking sends every request with Accept-Encoding: gzip over tr,
// whose compression is off: the answer comes back as the daemon sent
// it, compressed when it is.
type gzipAsking struct{ tr *http.Transport }

func (g gzipAsking) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper leaves the request as it is
	r.Header.Set("Accept-Encoding", "gzip")
	return g.tr.RoundTrip(r)
}

// readTransport is the transport of the reads that only count answers:
// they ask for gzip as a browser does, so the daemon does the work it
// does for real clients, but are not inflated, which real clients do on
// their own machines: Go's transport makes an inflater per answer, and
// on this one the bench's CPU took 40 % more from the daemon's cores
// (2.8 s against 3.8 s in a run of 2,500 reads/s).
func readTransport(maxIdle int) gzipAsking {
	tr := bookTransport(maxIdle)
	tr.DisableCompression = true
	return gzipAsking{tr}
}

// ladder reads at each of ReadRates for Step and prints the latencies,
// the daemon's CPU per read and the ceiling: the highest rate all of whose
// reads were answered 200, none dropped, with p99 under 50 ms.
func (s *scaleRun) ladder(ctx context.Context) {
	ceiling := 0.0
	for _, rate := range s.o.ReadRates {
		out := &outcome{status: map[int]int{}}
		cpu0 := s.cpu()
		s.readLoop(ctx, rate, s.o.Step, out)
		cpu := s.cpu() - cpu0
		out.mu.Lock()
		n, ok := len(out.lat), out.status[http.StatusOK]
		slices.Sort(out.lat)
		p99 := Percentile(out.lat, 99)
		out.mu.Unlock()
		perRead := time.Duration(0)
		if n > 0 {
			perRead = cpu / time.Duration(n)
		}
		fmt.Fprintf(s.w, "scale: reads at %.0f/s: %s\n  daemon CPU per read %s\n", rate, out.line(), perRead.Round(time.Microsecond))
		if ok == n && n > 0 && out.errs == 0 && out.dropped.Load() == 0 && p99 < 50*time.Millisecond {
			ceiling = rate
		}
		s.rss(fmt.Sprintf("after the reads at %.0f/s", rate))
	}
	fmt.Fprintf(s.w, "scale: read ceiling (every read 200, p99 < 50ms): %.0f/s\n", ceiling)
}

// distinct books BookRate distinct slots a second for Step, each for a
// patient of its own, and prints the bookings made per second, their
// latencies and the daemon's CPU per booking.
func (s *scaleRun) distinct(ctx context.Context) {
	if s.o.BookRate <= 0 {
		return
	}
	n := min(int(s.o.BookRate*s.o.Step.Seconds()), len(s.free))
	d := time.Duration(float64(n) / s.o.BookRate * float64(time.Second))
	out := &outcome{status: map[int]int{}}
	cpu0, start := s.cpu(), time.Now()
	paceLoop(ctx, s.o.BookRate, d, s.o.Book.MaxInFlight, out, func(ctx context.Context, i int) (int, error) {
		body := map[string]any{"slot": s.free[i], "patient": fmt.Sprintf("scale-%d-%d", s.run, i)}
		st, _, err := s.c.appts.Do(ctx, "POST", "/api/v1/sites/"+s.o.Book.Site+"/appointments", body, fmt.Sprintf("scale-%d-d%d", s.run, i))
		return st, err
	})
	took, cpu := time.Since(start), s.cpu()-cpu0
	out.mu.Lock()
	made := out.status[http.StatusCreated]
	out.mu.Unlock()
	per := time.Duration(0)
	if made > 0 {
		per = cpu / time.Duration(made)
	}
	fmt.Fprintf(s.w, "scale: distinct-slot bookings offered at %.0f/s: %s\n  made %.0f/s, daemon CPU per booking %s\n",
		s.o.BookRate, out.line(), float64(made)/took.Seconds(), per.Round(time.Microsecond))
}

// rushRun books the rush's slots at Book.Rate for Book.Duration while
// RushReads lists are read a second and the other site takes tickets,
// then reads the rush's lists again and checks no slot is overbooked.
func (s *scaleRun) rushRun(ctx context.Context) error {
	o := s.o.Book
	books, reads, other := &outcome{status: map[int]int{}}, &outcome{status: map[int]int{}}, &outcome{status: map[int]int{}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.readLoop(ctx, s.o.RushReads, o.Duration, reads) }()
	go func() {
		defer wg.Done()
		if o.OtherSite == "" || o.OtherRate <= 0 {
			return
		}
		paceLoop(ctx, o.OtherRate, o.Duration, o.MaxInFlight, other, func(ctx context.Context, i int) (int, error) {
			st, _, err := s.c.Do(ctx, "POST", "/api/v1/sites/"+o.OtherSite+"/tickets", map[string]string{"service": o.OtherService}, fmt.Sprintf("scale-%d-t%d", s.run, i))
			return st, err
		})
	}()
	paceLoop(ctx, o.Rate, o.Duration, o.MaxInFlight, books, func(ctx context.Context, i int) (int, error) {
		body := map[string]any{"slot": s.rush[rand.IntN(len(s.rush))].ID, "patient": fmt.Sprintf("scale-rush-%d", rand.IntN(o.Patients))}
		st, _, err := s.c.appts.Do(ctx, "POST", "/api/v1/sites/"+o.Site+"/appointments", body, fmt.Sprintf("scale-%d-r%d", s.run, i))
		return st, err
	})
	wg.Wait()
	fmt.Fprintf(s.w, "scale: rush on %d doctors, %.0f requests/s for %s: %s\n", len(s.rush), o.Rate, o.Duration, books.line())
	fmt.Fprintf(s.w, "scale: reads meanwhile (%.0f/s): %s\n", s.o.RushReads, reads.line())
	if o.OtherSite != "" {
		fmt.Fprintf(s.w, "scale: tickets at %s meanwhile (%.0f/s): %s\n", o.OtherSite, o.OtherRate, other.line())
	}
	s.rss("after the rush")
	return s.rushVerdict(ctx, books)
}

// rushVerdict reads the rush's lists again: no slot over its capacity,
// as many places booked as bookings were created.
func (s *scaleRun) rushVerdict(ctx context.Context, books *outcome) error {
	booked, over := 0, 0
	for i, p := range s.rushP {
		l, err := s.list(ctx, p)
		if err != nil {
			return err
		}
		for _, sl := range l {
			if sl.ID == s.rush[i].ID {
				booked += sl.Booked
				if sl.Booked > sl.Capacity {
					over++
				}
			}
		}
	}
	books.mu.Lock()
	created := books.status[http.StatusCreated]
	books.mu.Unlock()
	fmt.Fprintf(s.w, "scale: rush slots: %d places booked of %d, %d overbooked, %d bookings created (201)\n", booked, len(s.rush), over, created)
	var errs []error
	if over > 0 {
		errs = append(errs, fmt.Errorf("bench: scale: %d slots overbooked", over))
	}
	if created != booked {
		errs = append(errs, fmt.Errorf("bench: scale: %d bookings created but %d places booked", created, booked))
	}
	return errors.Join(errs...)
}
