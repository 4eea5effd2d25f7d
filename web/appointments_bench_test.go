package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/internal/testkit/poll"
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
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", e.http.URL+"/api/v1/sites/main/appointments", rushBody(slot, n.Add(1)))
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := hc.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusConflict {
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
	h := e.srv.Handler()
	read := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/api/v1/sites/main/slots?resource=dr&date=2026-03-02", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
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
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
}
