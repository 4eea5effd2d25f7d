package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
)

// TestSlotsEncoded: a slot list answered from memory (encoded when it is
// first read from there, then kept encoded) has the bytes of a fresh
// encoding of the store's list, page by page, in the site's time zone; a
// booking changes the answer once its event is in, and its ETag; an
// If-None-Match naming the ETag is answered 304 without a body, one
// naming an older answer's gets the new one.
func TestSlotsEncoded(t *testing.T) {
	loc := time.FixedZone("EST", -5*3600)
	e := bookingEnv(t, func(s *queue.Site) { s.Location = loc })
	const date = "2026-03-02"
	queries := []struct {
		resource      string
		offset, limit int
	}{{"dr", 0, 1000}, {"vacc", 0, 1000}, {"", 0, 1000}, {"", 5, 5}, {"", 10, 5}, {"dr", 8, 5}}
	path := func(resource string, offset, limit int) string {
		return fmt.Sprintf("/api/v1/sites/main/slots?resource=%s&date=%s&offset=%d&limit=%d", resource, date, offset, limit)
	}
	parttest.Until(t, context.Background(), e.srv.front.Follow) // as Serve does
	poll.Until(t, "a list served from memory", func() bool {
		e.get(t, path("dr", 0, 1000), "")
		return e.metric(t, "nowserving_booking_slot_cache_hits_total") > 0
	})
	for round := range 3 { // from the store, encoded from memory, kept encoded
		for _, q := range queries {
			resp, got := e.get(t, path(q.resource, q.offset, q.limit), "")
			if want := e.freshSlots(t, q.resource, date, q.offset, q.limit); resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
				t.Errorf("round %d, %+v: %d\n got %s\nwant %s", round, q, resp.StatusCode, got, want)
			}
		}
	}
	if n := e.metric(t, "nowserving_booking_slot_cache_encoded_bytes"); n <= 0 {
		t.Errorf("encoded bytes held: %v, want some", n)
	}
	drPath := path("dr", 0, 1000)
	before, _ := e.get(t, drPath, "")
	tag := before.Header.Get("ETag")
	if resp, body := e.get(t, drPath, tag); resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != tag {
		t.Fatalf("If-None-Match %s: %d, ETag %q, %d bytes", tag, resp.StatusCode, resp.Header.Get("ETag"), len(body))
	}
	ids := e.slotIDs(t, "dr")
	if resp := e.bookSlot(ids[0], "p-encoded", "k-encoded"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("book: %d", resp.StatusCode)
	}
	want := e.freshSlots(t, "dr", date, 0, 1000)
	poll.Until(t, "the list in memory shows the booking", func() bool {
		_, got := e.get(t, drPath, "")
		return bytes.Equal(got, want)
	})
	resp, _ := e.get(t, drPath, tag)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == tag {
		t.Errorf("If-None-Match of the answer before the booking: %d, ETag %q (was %q)", resp.StatusCode, resp.Header.Get("ETag"), tag)
	}
}

// TestSlotsETagFromStore: the answer that read a list from the store has
// the ETag of the answers from memory after it while the list is
// unchanged, so a client that keeps the first one's ETag gets its 304
// (openapi.yaml, slots). It had a tag of its own, and its If-None-Match
// was answered the whole list again.
func TestSlotsETagFromStore(t *testing.T) {
	e := bookingEnv(t)
	parttest.Until(t, context.Background(), e.srv.front.Follow) // as Serve does
	// Lists are cached once the front follows the site: wait for that on
	// another day's list, so the lists below are read cold but cached.
	poll.Until(t, "a list served from memory", func() bool {
		e.get(t, "/api/v1/sites/main/slots?resource=vacc&date=2026-03-03", "")
		return e.metric(t, "nowserving_booking_slot_cache_hits_total") > 0
	})
	for _, path := range []string{
		"/api/v1/sites/main/slots?resource=dr&date=2026-03-02",
		"/api/v1/sites/main/slots?date=2026-03-02&offset=5&limit=5",
	} {
		misses := e.metric(t, "nowserving_booking_slot_cache_misses_total")
		first, _ := e.get(t, path, "")
		if e.metric(t, "nowserving_booking_slot_cache_misses_total") == misses {
			t.Fatalf("%s: the first read was not from the store", path)
		}
		tag := first.Header.Get("ETag")
		second, _ := e.get(t, path, "")
		if got := second.Header.Get("ETag"); got != tag {
			t.Errorf("%s: ETag from the store %s, from memory %s", path, tag, got)
		}
		if resp, body := e.get(t, path, tag); resp.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("%s: If-None-Match of the store's answer: %d, %d bytes", path, resp.StatusCode, len(body))
		}
	}
}

// get sends GET path, with If-None-Match when etag is set, and returns
// the answer and its body.
func (e *env) get(t *testing.T, path, etag string) (*http.Response, []byte) {
	t.Helper()
	var hdr []string
	if etag != "" {
		hdr = []string{"If-None-Match", etag}
	}
	resp := e.do("GET", path, "", "", hdr...)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// freshSlots is the answer of a slot list read from the store now,
// encoded by encoding/json.
func (e *env) freshSlots(t *testing.T, resource, date string, offset, limit int) []byte {
	t.Helper()
	site, err := e.eng.Site("main")
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.eng.Slots(t.Context(), "main", resource, date)
	if err != nil {
		t.Fatal(err)
	}
	from := min(offset, len(list))
	to := min(from+limit, len(list))
	out := Slots{Date: date, Total: len(list), Slots: []Slot{}}
	if to < len(list) {
		out.NextOffset = to
	}
	for _, s := range list[from:to] {
		out.Slots = append(out.Slots, Slot{ID: s.ID, Resource: s.Resource, Start: s.Start.In(site.Location), End: s.End.In(site.Location),
			Capacity: s.Capacity, Booked: s.Booked, Free: s.Free(), Closed: s.Closed})
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// metric is the value of a gauge or counter of the server's registry.
func (e *env) metric(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := e.srv.o.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.Metric) == 0 {
			continue
		}
		if g := mf.Metric[0].GetGauge(); g != nil {
			return g.GetValue()
		}
		return mf.Metric[0].GetCounter().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}
