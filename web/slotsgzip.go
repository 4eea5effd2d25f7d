package web

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"strings"
	"sync"

	"github.com/nowserving/nowserving/booking"
)

// minGzip is the smallest slot list answer served compressed: below it
// the gzip header and trailer (18 bytes) and the client's inflating cost
// more than the bytes saved, and the answer fits one write anyway.
const minGzip = 1024

// gzipLevel is the level slot lists are compressed at. Measured on a day
// of a doctor (40 slots, 5,563 bytes): BestSpeed 613 bytes in 16-23 µs,
// the default (6) 523 bytes in 50-88 µs, BestCompression 498 bytes in
// about 90 µs. An answer is compressed once per change of its list, but
// a rush changes a popular list many times a second, and the 90 bytes
// the default saves do not make a write fewer.
const gzipLevel = gzip.BestSpeed

// gzipWriters are the compressors of slot lists.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzipLevel) // a valid level: no error
	return zw
}}

// gzipBufs are the buffers a slot list is compressed into before it is
// copied to a slice of its size, which the front keeps.
var gzipBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// gzipSlots is answer compressed. It cannot fail: the writer writes to
// memory.
func gzipSlots(answer []byte) []byte {
	buf := gzipBufs.Get().(*bytes.Buffer)
	buf.Reset()
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(buf)
	zw.Write(answer)
	zw.Close()
	gzipWriters.Put(zw)
	body := bytes.Clone(buf.Bytes())
	if buf.Cap() <= 1<<20 {
		gzipBufs.Put(buf)
	}
	return body
}

// slotsEncoding reports whether a slot list answer of n bytes, a page
// of the list page with the hash key, is served compressed, and its
// compressed form when the front keeps it already. It is not compressed
// when the client does not accept gzip, the answer is small, or its
// compressed form could not be kept beside the list in memory (not in
// memory, or no room within the cache's bound), as it would then be made
// again for every read.
func (s *Server) slotsEncoding(acceptEncoding []string, n int, page booking.EncodedPage, key uint64) (gz bool, kept []byte) {
	if n < minGzip || !acceptsGzip(acceptEncoding) {
		return false, nil
	}
	kept, room := s.front.Compressed(page, key)
	return kept != nil || room, kept
}

// compressSlots compresses answer, a page of the list page with the hash
// key, and has the front keep it beside the list until the list changes:
// the first read after a change compresses, the next ones reuse it.
func (s *Server) compressSlots(answer []byte, page booking.EncodedPage, key uint64) []byte {
	body := gzipSlots(answer)
	s.gzipped.Inc()
	// Served even when it finds no room after all (another list took
	// it meanwhile): the front then says there is none for this list.
	s.front.KeepCompressed(page, key, body)
	return body
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip
// (RFC 9110 12.5.3): gzip or x-gzip with a q above 0, or else * with one.
func acceptsGzip(header []string) bool {
	named, star := -1.0, -1.0
	for _, h := range header {
		for coding := range strings.SplitSeq(h, ",") {
			name, params, _ := strings.Cut(coding, ";")
			q := qValue(params)
			switch name = strings.TrimSpace(name); {
			case strings.EqualFold(name, "gzip") || strings.EqualFold(name, "x-gzip"):
				named = max(named, q)
			case name == "*":
				star = max(star, q)
			}
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// qValue is the weight of a coding's parameters: 1 without one, 0 for
// one that does not parse.
func qValue(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || q < 0 || q > 1 {
			return 0
		}
		return q
	}
	return 1
}
