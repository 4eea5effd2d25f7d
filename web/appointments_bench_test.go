package web

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
)

// fullSlot is bookingEnv with the front following the events and a slot
// it knows full (booked, then refused once by the store).
func fullSlot(b *testing.B) (*env, int64) {
	e := bookingEnv(b)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go e.srv.front.Follow(ctx)
	// The front follows the site once a list read twice comes from its
	// cache (it caches only then).
	poll.Until(b, "the front following the site", func() bool {
		for range 2 {
			if _, err := e.srv.front.Slots(ctx, "main", "dr", "2026-03-02"); err != nil {
				b.Fatal(err)
			}
		}
		return cacheHits(b, e.srv.o.Registry) > 0
	})
	slots, err := e.eng.Slots(ctx, "main", "dr", "2026-03-02")
	if err != nil {
		b.Fatal(err)
	}
	e.bookSlot(slots[0].ID, "p-0", "").Body.Close()
	e.bookSlot(slots[0].ID, "p-1", "").Body.Close()
	return e, slots[0].ID
}

// cacheHits is the count of slot lists the front served from its cache.
func cacheHits(t testing.TB, reg prometheus.Gatherer) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "nowserving_booking_slot_cache_hits_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

func rushBody(slot, i int64) io.Reader {
	return strings.NewReader(fmt.Sprintf(`{"slot": %d, "patient": "p-%d"}`, slot, 2+i%100000))
}

// BenchmarkBookKnownFull: the cost of one booking request the front
// refuses from memory (the bulk of a rush), through the whole handler
// chain without a network.
func BenchmarkBookKnownFull(b *testing.B) {
	e, slot := fullSlot(b)
	h := e.srv.Handler()
	b.ReportAllocs()
	var i int64
	for b.Loop() {
		i++
		req := httptest.NewRequest("POST", "/api/v1/sites/main/appointments", rushBody(slot, i))
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusConflict {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkBookKnownFullHTTP is BenchmarkBookKnownFull over loopback TCP
// with keep-alive connections, as bench book sends it (client and server
// share the machine).
func BenchmarkBookKnownFullHTTP(b *testing.B) {
	e, slot := fullSlot(b)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var n atomic.Int64
	sendParallel(b, hc, http.StatusConflict, func() *http.Request {
		req, _ := http.NewRequest("POST", e.http.URL+"/api/v1/sites/main/appointments", rushBody(slot, n.Add(1)))
		return req
	})
}

// sendParallel sends the requests req makes over hc with the test token,
// 8 clients at once, and fails on an answer other than want.
func sendParallel(b *testing.B, hc *http.Client, want int, req func() *http.Request) {
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := req()
			r.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := hc.Do(r)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkSlotsCached: one slot list served from its encoded form in
// memory (the bulk of the API's reads), through the whole handler chain
// without a network.
func BenchmarkSlotsCached(b *testing.B) {
	e, _ := fullSlot(b)
	read := slotReader(b, e, "/api/v1/sites/main/slots?resource=dr&date=2026-03-02", "")
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
}

// slotReader reads path through e's handler chain, with Accept-Encoding
// ae when set, once the list is served from memory.
func slotReader(b *testing.B, e *env, path, ae string) func() *httptest.ResponseRecorder {
	h := e.srv.Handler()
	read := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		if ae != "" {
			req.Header.Set("Accept-Encoding", ae)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
		return w
	}
	poll.Until(b, "the list in memory", func() bool {
		hits := cacheHits(b, e.srv.o.Registry)
		read()
		return cacheHits(b, e.srv.o.Registry) > hits
	})
	return read
}

// dayEnv is bookingEnv with the doctor open 08:00-18:00, 40 slots of 15
// minutes (4.6 KB of answer, of a doctor's day as issue 28 has it), in
// a zone east of UTC, and the front following the site.
func dayEnv(b *testing.B) *env {
	e := bookingEnv(b, func(s *queue.Site) {
		s.Location = time.FixedZone("CET", 3600)
		s.Resources[0].Schedule.Open, s.Resources[0].Schedule.Close = 8*time.Hour, 18*time.Hour
	})
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go e.srv.front.Follow(ctx)
	return e
}

// BenchmarkSlotsDay: a doctor's day served from memory to a client that
// does not accept gzip (plain) and to one that does (gzip: a browser, Go's
// client), through the handler chain without a network; wire-B/op is the
// body sent.
func BenchmarkSlotsDay(b *testing.B) {
	e := dayEnv(b)
	for _, ae := range []string{"", "gzip"} {
		b.Run(cmp.Or(ae, "plain"), func(b *testing.B) {
			read := slotReader(b, e, "/api/v1/sites/main/slots?resource=dr&date=2026-03-02", ae)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = read().Body.Len()
			}
			b.ReportMetric(float64(n), "wire-B/op")
		})
	}
}

// BenchmarkSlotsDayHTTP is BenchmarkSlotsDay over loopback TCP with
// keep-alive connections, 8 clients at once: plain with compression
// disabled in the client, gzip with Go's default (it asks for gzip and
// inflates the answer, in this process too).
func BenchmarkSlotsDayHTTP(b *testing.B) {
	e := dayEnv(b)
	slotReader(b, e, "/api/v1/sites/main/slots?resource=dr&date=2026-03-02", "") // in memory
	for _, gz := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "gzip"}[gz], func(b *testing.B) {
			tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: !gz}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			b.ReportAllocs()
			sendParallel(b, hc, http.StatusOK, func() *http.Request {
				req, _ := http.NewRequest("GET", e.http.URL+"/api/v1/sites/main/slots?resource=dr&date=2026-03-02", nil)
				return req
			})
		})
	}
}
