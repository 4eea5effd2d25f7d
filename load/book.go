package load

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/sim"
)

// BookOpts shape the booking rush benchmark (nowserving bench book).
type BookOpts struct {
	URL   string // the daemon's HTTP base, e.g. http://127.0.0.1:7480
	Token string // API bearer token
	Site  string
	// AppointmentsURL is the base of the appointments API's own listener
	// (listen.appointments), e.g. http://127.0.0.1:7483, where the slot
	// lists and bookings go; "": URL, with the tickets.
	AppointmentsURL string
	// Resource and Date pick the slots: the first Slots open slots of the
	// resource on Date ("": the first day from today that has that many).
	Resource string
	Date     string
	Slots    int
	Patients int
	Rate     float64 // booking requests per second, sent open loop
	Duration time.Duration
	// OtherSite, when set, takes OtherRate tickets per second of
	// OtherService there during the rush: the API for other sites.
	OtherSite    string
	OtherService string
	OtherRate    float64
	// MaxInFlight bounds the requests outstanding; one more is not sent
	// and counted as dropped (the generator, not the daemon, is behind).
	MaxInFlight int
}

// outcome is what open-loop requests of one kind got.
type outcome struct {
	mu  sync.Mutex
	lat []time.Duration
	// sec counts the latencies by the second of the run they were meant
	// to be sent in (see splitLine).
	sec     [][]time.Duration
	status  map[int]int
	errs    int
	firstEr string
	// kinds counts the transport errors by kind (errKind): a reset is
	// the daemon's refusal the client cannot tell from a crash.
	kinds   map[string]int
	dropped atomic.Int64
}

func (o *outcome) add(d, sentAt time.Duration, status int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.errs++
		if o.kinds == nil {
			o.kinds = map[string]int{}
		}
		o.kinds[errKind(err)]++
		if o.firstEr == "" {
			o.firstEr = err.Error()
		}
		return
	}
	o.lat = append(o.lat, d)
	o.status[status]++
	i := min(int(sentAt/time.Second), splitSeconds)
	for len(o.sec) <= i {
		o.sec = append(o.sec, nil)
	}
	o.sec[i] = append(o.sec[i], d)
}

// splitSeconds is how many first seconds of a run splitLine shows one by
// one; the rest of the run is shown together.
const splitSeconds = 5

// splitLine is the p99 latency by second of the run, the first
// splitSeconds one by one: whether a tail is the first seconds' or the
// whole run's.
func (o *outcome) splitLine() string {
	var b strings.Builder
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	for i, l := range o.sec {
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		if i < splitSeconds {
			fmt.Fprintf(&b, "  %ds %s", i, r(Percentile(l, 99)))
		} else {
			fmt.Fprintf(&b, "  %ds-end %s", i, r(Percentile(l, 99)))
		}
	}
	return b.String()
}

// errKind names the kind of a transport error: "reset" (connection
// reset by peer), "eof" (closed before an answer), "timeout", or "other".
func errKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "other"
}

func (o *outcome) line() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	codes := make([]int, 0, len(o.status))
	for c := range o.status {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, "%d: %d  ", c, o.status[c])
	}
	fmt.Fprintf(&b, "transport errors: %d", o.errs)
	if len(o.kinds) > 0 {
		kinds := slices.Sorted(maps.Keys(o.kinds))
		for i, k := range kinds {
			kinds[i] = fmt.Sprintf("%s %d", k, o.kinds[k])
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(&b, "  dropped: %d", o.dropped.Load())
	if o.firstEr != "" {
		fmt.Fprintf(&b, " (first: %s)", o.firstEr)
	}
	if len(o.lat) > 0 {
		slices.Sort(o.lat)
		b.WriteString("\n  latency from the intended send time: " + latencies(o.lat))
		b.WriteString("\n  p99 by second of the run:" + o.splitLine())
	}
	return b.String()
}

type apiSlot struct {
	ID       int64     `json:"id"`
	Start    time.Time `json:"start"`
	Capacity int       `json:"capacity"`
	Booked   int       `json:"booked"`
	Closed   bool      `json:"closed"`
}

// bookClient sends the API requests of the benchmark: the tickets to
// API, the slot lists and bookings to appts (the appointments API's own
// listener, or API's).
type bookClient struct {
	sim.API
	appts sim.API
	o     BookOpts
}

// bookTransport is the transport of the benchmark's requests, with
// maxIdle connections kept: as a browser's and Go's default, it asks for
// gzip (Accept-Encoding, DisableCompression unset) and inflates the
// answers, so that the figures measure what real clients cost the
// daemon (a slot list is served compressed to them).
func bookTransport(maxIdle int) *http.Transport {
	return &http.Transport{MaxIdleConns: maxIdle, MaxIdleConnsPerHost: maxIdle, IdleConnTimeout: time.Minute}
}

// newBookClient is the client of o over tr.
func newBookClient(o BookOpts, tr *http.Transport) *bookClient {
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	return &bookClient{o: o, API: sim.API{URL: o.URL, Token: o.Token, Client: hc},
		appts: sim.API{URL: cmp.Or(o.AppointmentsURL, o.URL), Token: o.Token, Client: hc}}
}

// slots reads the open slots of the resource on date.
func (c *bookClient) slots(ctx context.Context, date string) ([]apiSlot, error) {
	st, b, err := c.appts.Do(ctx, "GET", fmt.Sprintf("/api/v1/sites/%s/slots?resource=%s&date=%s", c.o.Site, c.o.Resource, date), nil, "")
	if err != nil {
		return nil, fmt.Errorf("bench: book: read slots: %w", err)
	}
	if st != http.StatusOK {
		return nil, fmt.Errorf("bench: book: read slots: status %d: %s", st, b)
	}
	var l struct{ Slots []apiSlot }
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("bench: book: read slots: %w", err)
	}
	return slices.DeleteFunc(l.Slots, func(s apiSlot) bool { return s.Closed || !s.Start.After(time.Now()) }), nil
}

// pick finds the date and the slots to book.
func (c *bookClient) pick(ctx context.Context) (string, []apiSlot, error) {
	dates := []string{c.o.Date}
	if c.o.Date == "" {
		dates = nil
		for d := range 15 {
			dates = append(dates, time.Now().AddDate(0, 0, d).Format(time.DateOnly))
		}
	}
	for _, d := range dates {
		l, err := c.slots(ctx, d)
		if err != nil {
			return "", nil, err
		}
		// A slot that starts before the rush is over would refuse its
		// last requests as started, not full.
		soon := time.Now().Add(c.o.Duration + time.Minute)
		l = slices.DeleteFunc(l, func(s apiSlot) bool { return s.Booked > 0 || s.Start.Before(soon) })
		if len(l) >= c.o.Slots {
			return d, l[:c.o.Slots], nil
		}
	}
	return "", nil, fmt.Errorf("bench: book: no day in %v has %d unbooked slots of %s", dates, c.o.Slots, c.o.Resource)
}

// paceLoop calls send at rate per second for d, each in its own goroutine,
// and records the latency from the time it was meant to be sent.
func paceLoop(ctx context.Context, rate float64, d time.Duration, maxInFlight int, out *outcome, send func(ctx context.Context, i int) (int, error)) {
	var wg sync.WaitGroup
	var inFlight atomic.Int64
	start := time.Now()
	n := int(rate * d.Seconds())
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(at); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				wg.Wait()
				return
			}
		}
		if inFlight.Load() >= int64(maxInFlight) {
			out.dropped.Add(1)
			continue
		}
		inFlight.Add(1)
		wg.Add(1)
		go func(i int, at time.Time) {
			defer wg.Done()
			defer inFlight.Add(-1)
			st, err := send(ctx, i)
			out.add(time.Since(at), at.Sub(start), st, err)
		}(i, at)
	}
	wg.Wait()
}

// Book runs the rush: o.Rate booking requests per second for o.Duration,
// open loop over HTTP, each a random one of o.Patients booking a random one
// of o.Slots slots (a fresh Idempotency-Key each, so none is a replay);
// with o.OtherSite, tickets taken at another site meanwhile. It writes the
// counts by status, the latency percentiles measured from each request's
// intended send time, and what the slots hold afterwards; it fails when a
// slot is overbooked or an answer other than 201, 409 or 429 came back.
func Book(ctx context.Context, o BookOpts, w io.Writer) error {
	o.MaxInFlight = positive.Or(o.MaxInFlight, 4096)
	tr := bookTransport(o.MaxInFlight)
	defer tr.CloseIdleConnections()
	c := newBookClient(o, tr)
	date, slots, err := c.pick(ctx)
	if err != nil {
		return err
	}
	raiseFileLimit()
	fmt.Fprintf(w, "book: %.0f requests/s for %s onto %d slots of %s on %s (capacity %d each), %d patients\n",
		o.Rate, o.Duration, len(slots), o.Resource, date, slots[0].Capacity, o.Patients)
	run := time.Now().UnixNano()
	books := &outcome{status: map[int]int{}}
	other := &outcome{status: map[int]int{}}
	var wg sync.WaitGroup
	if o.OtherSite != "" && o.OtherRate > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paceLoop(ctx, o.OtherRate, o.Duration, o.MaxInFlight, other, func(ctx context.Context, i int) (int, error) {
				st, _, err := c.Do(ctx, "POST", "/api/v1/sites/"+o.OtherSite+"/tickets", map[string]string{"service": o.OtherService}, fmt.Sprintf("bench-%d-t%d", run, i))
				return st, err
			})
		}()
	}
	paceLoop(ctx, o.Rate, o.Duration, o.MaxInFlight, books, func(ctx context.Context, i int) (int, error) {
		body := map[string]any{"slot": slots[rand.IntN(len(slots))].ID, "patient": fmt.Sprintf("bench-patient-%d", rand.IntN(o.Patients))}
		st, _, err := c.appts.Do(ctx, "POST", "/api/v1/sites/"+o.Site+"/appointments", body, fmt.Sprintf("bench-%d-b%d", run, i))
		return st, err
	})
	wg.Wait()
	fmt.Fprintf(w, "bookings: %s\n", books.line())
	if o.OtherSite != "" {
		fmt.Fprintf(w, "tickets at %s meanwhile (%.0f/s): %s\n", o.OtherSite, o.OtherRate, other.line())
	}
	return bookVerdict(ctx, c, date, slots, books, w)
}

// bookVerdict reads the slots again and checks the run.
func bookVerdict(ctx context.Context, c *bookClient, date string, picked []apiSlot, books *outcome, w io.Writer) error {
	after, err := c.slots(ctx, date)
	if err != nil {
		return err
	}
	byID := map[int64]apiSlot{}
	for _, s := range after {
		byID[s.ID] = s
	}
	booked, capacity, over := 0, 0, 0
	for _, p := range picked {
		s := byID[p.ID]
		booked += s.Booked
		capacity += p.Capacity
		if s.Booked > s.Capacity {
			over++
		}
	}
	books.mu.Lock()
	created, unexpected := books.status[http.StatusCreated], 0
	for st, n := range books.status {
		if st != http.StatusCreated && st != http.StatusConflict && st != http.StatusTooManyRequests {
			unexpected += n
		}
	}
	unexpected += books.errs
	books.mu.Unlock()
	fmt.Fprintf(w, "slots: %d places booked of %d, %d slots overbooked, %d bookings created (201)\n", booked, capacity, over, created)
	var errs []error
	if over > 0 || booked > capacity {
		errs = append(errs, fmt.Errorf("bench: book: %d slots overbooked", over))
	}
	if created != booked {
		errs = append(errs, fmt.Errorf("bench: book: %d bookings created but %d places booked", created, booked))
	}
	if unexpected > 0 {
		errs = append(errs, fmt.Errorf("bench: book: %d answers other than 201, 409 and 429", unexpected))
	}
	return errors.Join(errs...)
}
