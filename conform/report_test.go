package conform

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// The sections the checks are filed under are headings of PROTOCOL.md.
func TestSectionsAreHeadings(t *testing.T) {
	doc := golden.Read(t, "../protocol/PROTOCOL.md")
	for s := range sectionNames {
		if !bytes.Contains(doc, []byte("\n## "+s.String()+"\n")) {
			t.Errorf("PROTOCOL.md has no heading %q", "## "+s.String())
		}
	}
}

func TestReportText(t *testing.T) {
	r := NewReport("conform kiosk: device under test on 127.0.0.1:7400")
	r.Pass(Session, "HELLO is the first frame, sent at once")
	r.Pass(Frame, "frames are sound (magic, version, length, CRC-32)")
	r.Fail(Frame, "frames are sound (magic, version, length, CRC-32)", "bad checksum")
	r.Fail(Frame, "frames are sound (magic, version, length, CRC-32)", "second failure, not shown")
	r.Skip(Limits, "past the bucket, requests get ERROR 0x30 with RetryAfterMS", "WELCOME announces no rate limit")
	r.Pass(Retries, "a retry has the same request id, fields and idempotency key")
	var b strings.Builder
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/report.txt", []byte(b.String()))
	if got, want := r.Failures(), "§2 frames are sound (magic, version, length, CRC-32): bad checksum\n"; got != want {
		t.Errorf("Failures() = %q, want %q", got, want)
	}
}
