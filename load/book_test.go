package load_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/web"
)

// bookServer is a web server of the bench's token over an engine of
// site hq, whose slots are made, and site other; opts completes its
// Opts.
func bookServer(t *testing.T, opts web.Opts) *web.Server {
	t.Helper()
	site := storetest.BookingSite()
	site.Appointments.PatientRate, site.Appointments.PatientWindow = 5, 10*time.Second
	other := storetest.TestSite()
	other.ID = "other"
	// The store's deadline is the machine's business, not this test's: on
	// a loaded CI machine a booking committed after 3 s was answered 503.
	eng := storetest.StartEngine(t, queue.Opts{Store: storetest.SQLite(t), Sites: []queue.Site{site, other}, StoreTimeout: time.Minute})
	if _, err := eng.GenerateSlots(t.Context()); err != nil {
		t.Fatal(err)
	}
	opts.Engine, opts.Tokens = eng, []web.TokenInfo{{Name: "bench", Token: "bench-token-0123456789"}}
	srv, err := web.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestBook: a short rush onto 3 slots of one place each books exactly 3,
// answers only 201, 409 and 429, and takes tickets at another site
// meanwhile. It reads the slot lists as a browser does, asking for gzip
// (the daemon compresses them for such clients).
func TestBook(t *testing.T) {
	h := bookServer(t, web.Opts{}).Handler()
	var mu sync.Mutex
	var encodings []string // the Accept-Encoding of each slot list read
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/slots") {
			mu.Lock()
			encodings = append(encodings, r.Header.Get("Accept-Encoding"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	var out bytes.Buffer
	o := load.BookOpts{URL: hs.URL, Token: "bench-token-0123456789", Site: "hq", Resource: "dr-li", Slots: 3, Patients: 20,
		Rate: 200, Duration: time.Second, OtherSite: "other", OtherService: "A", OtherRate: 10}
	if err := load.Book(t.Context(), o, &out); err != nil {
		t.Fatalf("book: %v\n%s", err, out.String())
	}
	for _, re := range []string{
		`^book: 200 requests/s for 1s onto 3 slots of dr-li on \d{4}-\d\d-\d\d \(capacity 1 each\), 20 patients\n`,
		`\nbookings: 201: 3  409: \d+  429: \d+  transport errors: 0  dropped: 0\n  latency from the intended send time: p50 `,
		`\ntickets at other meanwhile \(10/s\): 201: 10  transport errors: 0`,
		`\n  p99 by second of the run:  0s \d`,
		`\nslots: 3 places booked of 3, 0 slots overbooked, 3 bookings created \(201\)\n$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", re, out.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(encodings) < 2 || slices.ContainsFunc(encodings, func(ae string) bool { return ae != "gzip" }) {
		t.Errorf("the slot lists were read with Accept-Encoding %q, want gzip each", encodings)
	}
}

// TestBookAppointmentsURL: against a daemon whose appointments API has a
// listener of its own, bench book reads the slots and books on
// AppointmentsURL and takes the other site's tickets on URL: each is 421
// misdirected on the other listener, which the run would report.
func TestBookAppointmentsURL(t *testing.T) {
	ln := conntest.Listener(t)
	srv := bookServer(t, web.Opts{Appointments: ln.Addr().String()})
	go srv.ServeAppointments(ln)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Shutdown(context.Background()) })
	var out bytes.Buffer
	o := load.BookOpts{URL: hs.URL, AppointmentsURL: "http://" + ln.Addr().String(), Token: "bench-token-0123456789", Site: "hq", Resource: "dr-li",
		Slots: 2, Patients: 10, Rate: 50, Duration: time.Second, OtherSite: "other", OtherService: "A", OtherRate: 5}
	if err := load.Book(t.Context(), o, &out); err != nil {
		t.Fatalf("book: %v\n%s", err, out.String())
	}
	for _, re := range []string{
		`\nbookings: 201: 2  409: \d+  (429: \d+  )?transport errors: 0  dropped: 0\n`,
		`\ntickets at other meanwhile \(5/s\): 201: 5  transport errors: 0`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", re, out.String())
		}
	}
}
