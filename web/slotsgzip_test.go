package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// getEncoded sends GET path as a client that inflates answers itself:
// with Accept-Encoding ae (none when empty) and If-None-Match etag (none
// when empty). It returns the answer and its body as sent.
func (e *env) getEncoded(t *testing.T, path, ae, etag string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", e.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// gunzip is b inflated.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkGzipped checks a gzip answer of want: its headers, its ETag (the
// uncompressed answer's tag with -gz), and its body inflated.
func checkGzipped(t *testing.T, resp *http.Response, body, want []byte, plainTag string) {
	t.Helper()
	h := resp.Header
	wantTag := strings.TrimSuffix(plainTag, `"`) + `-gz"`
	if resp.StatusCode != http.StatusOK || h.Get("Content-Encoding") != "gzip" || h.Get("Vary") != "Accept-Encoding" ||
		h.Get("Content-Length") != strconv.Itoa(len(body)) || h.Get("ETag") != wantTag || h.Get("Content-Type") != "application/json" {
		t.Errorf("gzip answer: %d, headers %v, %d bytes; want ETag %s", resp.StatusCode, h, len(body), wantTag)
	}
	if got := gunzip(t, body); !bytes.Equal(got, want) {
		t.Errorf("gzip answer inflated:\n got %s\nwant %s", got, want)
	}
	if len(body) >= len(want) {
		t.Errorf("gzip answer of %d bytes for %d", len(body), len(want))
	}
}

// TestSlotsGzip: a client that accepts gzip gets a slot list compressed,
// the bytes of the uncompressed answer once inflated, with Vary, its
// Content-Length and an ETag of its own that If-None-Match gets a 304
// with; the answer is compressed once while the list is unchanged, and
// again after a booking changes it. A client that does not accept gzip
// gets today's answer, and a small answer is never compressed.
func TestSlotsGzip(t *testing.T) {
	e := bookingEnv(t)
	parttest.Until(t, context.Background(), e.srv.front.Follow) // as Serve does
	const path = "/api/v1/sites/main/slots?date=2026-03-02"     // every resource: 12 slots, above minGzip
	poll.Until(t, "a list served from memory", func() bool {
		e.getEncoded(t, path, "", "") // not compressed: the reads below count
		return e.metric(t, "nowserving_booking_slot_cache_hits_total") > 0
	})
	const compressed = "nowserving_http_slot_lists_compressed_total"
	read := func(want []byte) (plainTag, gzTag string) {
		t.Helper()
		plain, got := e.getEncoded(t, path, "", "")
		if !bytes.Equal(got, want) || plain.Header.Get("Content-Encoding") != "" || plain.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("plain answer: headers %v\n got %s\nwant %s", plain.Header, got, want)
		}
		n := e.metric(t, compressed)
		// The first gzip read of the list as it is now is answered plain
		// (a list read once is not worth compressing); the second
		// compresses, the third reuses.
		for i := range 3 {
			resp, body := e.getEncoded(t, path, "deflate, gzip;q=0.8, br", "")
			wantN := 1.0
			if i == 0 {
				wantN = 0
				if !bytes.Equal(body, want) || resp.Header.Get("Content-Encoding") != "" {
					t.Fatalf("first gzip read: headers %v, %d bytes, want the plain answer", resp.Header, len(body))
				}
			} else {
				checkGzipped(t, resp, body, want, plain.Header.Get("ETag"))
				gzTag = resp.Header.Get("ETag")
			}
			if got := e.metric(t, compressed) - n; got != wantN {
				t.Errorf("read %d: %v compressions, want %v", i, got, wantN)
			}
		}
		return plain.Header.Get("ETag"), gzTag
	}
	want := e.freshSlots(t, "", "2026-03-02", 0, 1000)
	if len(want) < minGzip {
		t.Fatalf("the list has %d bytes, below %d", len(want), minGzip)
	}
	plainTag, gzTag := read(want)
	if resp, body := e.getEncoded(t, path, "gzip", gzTag); resp.StatusCode != http.StatusNotModified || len(body) != 0 ||
		resp.Header.Get("ETag") != gzTag || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("If-None-Match %s: %d, headers %v, %d bytes", gzTag, resp.StatusCode, resp.Header, len(body))
	}
	// Another representation's tag does not match (RFC 9110 8.8.3).
	if resp, body := e.getEncoded(t, path, "gzip", plainTag); resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != gzTag {
		t.Errorf("gzip, If-None-Match %s: %d, ETag %s, %d bytes", plainTag, resp.StatusCode, resp.Header.Get("ETag"), len(body))
	}
	if resp, body := e.getEncoded(t, path, "", gzTag); resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
		t.Errorf("plain, If-None-Match %s: %d, %d bytes", gzTag, resp.StatusCode, len(body))
	}
	if resp, body := e.getEncoded(t, "/api/v1/sites/main/slots?resource=vacc&date=2026-03-02", "gzip", ""); resp.StatusCode != http.StatusOK ||
		resp.Header.Get("Content-Encoding") != "" || len(body) >= minGzip || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("small list: %d, headers %v, %d bytes", resp.StatusCode, resp.Header, len(body))
	}

	if resp := e.bookSlot(e.slotIDs(t, "dr")[0], "p-gzip", "k-gzip"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("book: %d", resp.StatusCode)
	}
	changed := e.freshSlots(t, "", "2026-03-02", 0, 1000)
	poll.Until(t, "the list in memory shows the booking", func() bool {
		_, got := e.getEncoded(t, path, "", "")
		return bytes.Equal(got, changed)
	})
	if _, newTag := read(changed); newTag == gzTag {
		t.Errorf("ETag %s after a booking, as before", newTag)
	}
	if resp, _ := e.getEncoded(t, path, "gzip", gzTag); resp.StatusCode != http.StatusOK {
		t.Errorf("If-None-Match of the answer before the booking: %d", resp.StatusCode)
	}
}

// TestAcceptsGzip: Accept-Encoding as RFC 9110 12.5.3 weighs it.
func TestAcceptsGzip(t *testing.T) {
	for want, headers := range map[bool][][]string{
		true: {{"gzip"}, {"GZip"}, {"x-gzip"}, {"gzip, deflate, br"}, {"br;q=1.0, gzip;q=0.5"}, {"deflate", "gzip"},
			{"*"}, {"*;q=0, gzip"}},
		false: {nil, {""}, {"gzip;q=0"}, {"gzip; q=0.000"}, {"gzip;q=nope"}, {"identity"}, {"br, deflate"},
			{"*;q=0"}, {"gzip;q=0, *"}},
	} {
		for _, h := range headers {
			if got := acceptsGzip(h); got != want {
				t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
			}
		}
	}
}
