package notify_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/smtpsink"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// TestEmailReport: a scheduled report goes out as a mail with a text part
// and the report attached, under the event id as Message-ID, with AUTH
// PLAIN (allowed to localhost without TLS).
func TestEmailReport(t *testing.T) {
	sink := smtpsink.Start(t)
	e := &notify.Email{Addr: sink.Addr(), From: "nowserving@hospital.example", To: []string{"head@hospital.example", "ops@hospital.example"},
		Username: "ns", Password: "pw", StartTLS: notify.StartTLSAuto}
	csv := "site,service,issued\nhq,A,120\n"
	body, _ := json.Marshal(notify.ReportBody{ID: "report:daily:2026-12-01", Type: "REPORT", Schedule: "daily", Site: "hq",
		SiteName: "第一医院", From: "2026-12-01", To: "2026-12-01", Format: "csv", Filename: "hq-2026-12-01.csv", ContentType: "text/csv", Content: csv})
	m := &sqlstore.OutboxMessage{ID: 1, EventID: "report:daily:2026-12-01", Receiver: "mail", Site: "hq", Type: notify.TypeReport, Body: body, Attempt: 1}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := e.Deliver(ctx, m); err != nil {
		t.Fatal(err)
	}
	got := sink.Mails()
	if len(got) != 1 {
		t.Fatalf("sink has %d mails, want 1", len(got))
	}
	s := got[0]
	if s.From != e.From || strings.Join(s.To, ",") != "head@hospital.example,ops@hospital.example" {
		t.Errorf("envelope from %q to %v", s.From, s.To)
	}
	if a, _ := base64.StdEncoding.DecodeString(s.Auth); string(a) != "\x00ns\x00pw" {
		t.Errorf("AUTH PLAIN %q", a)
	}
	msg, err := mail.ReadMessage(strings.NewReader(s.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if subject != "nowserving report: 第一医院, 2026-12-01" {
		t.Errorf("subject %q", subject)
	}
	if id := msg.Header.Get("Message-ID"); id != "<report:daily:2026-12-01@nowserving>" {
		t.Errorf("Message-ID %q", id)
	}
	parts := readParts(t, msg)
	if len(parts) != 2 || !strings.Contains(parts[0].text, "csv report of hq") {
		t.Fatalf("parts %+v, want the text and the attachment", parts)
	}
	if parts[1].text != csv || parts[1].filename != "hq-2026-12-01.csv" || parts[1].mediaType != "text/csv" {
		t.Errorf("attachment %+v, want %q as hq-2026-12-01.csv", parts[1], csv)
	}
}

type mailPart struct{ mediaType, filename, text string }

func readParts(t *testing.T, msg *mail.Message) []mailPart {
	t.Helper()
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	var out []mailPart
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(p)
		dec, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(raw)))
		if err != nil {
			t.Fatalf("part not base64: %v", err)
		}
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		_, dp, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		out = append(out, mailPart{mediaType: pt, filename: dp["filename"], text: string(dec)})
	}
}

// TestEmailFailures: what the server refuses, a missing STARTTLS when it
// is required and an unreachable server are errors that say which step
// failed, so the outbox retries and an operator reads why.
func TestEmailFailures(t *testing.T) {
	sink := smtpsink.Start(t)
	m := &sqlstore.OutboxMessage{ID: 2, EventID: "e-1", Site: "hq", Type: "BOOKING_BOOKED", Body: []byte(`{"id":"e-1"}`), Attempt: 1}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	e := &notify.Email{Addr: sink.Addr(), From: "a@x", To: []string{"b@x"}, StartTLS: notify.StartTLSAlways}
	if err := e.Deliver(ctx, m); err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("start_tls always on a server without it: %v", err)
	}
	sink.Refuse(true)
	e.StartTLS = ""
	if err := e.Deliver(ctx, m); err == nil || !strings.Contains(err.Error(), "RCPT TO b@x: 550") {
		t.Errorf("refused recipient: %v", err)
	}
	closed := conntest.Listen(t)
	closed.Close() // its port refuses connections
	gone := closed.Addr()
	e.Addr = gone
	if err := e.Deliver(ctx, m); err == nil || !strings.Contains(err.Error(), gone) {
		t.Errorf("no server: %v", err)
	}
	if n := len(sink.Mails()); n != 0 {
		t.Errorf("sink took %d mails, want none", n)
	}
}

// TestEmailEvent: an event's message is a mail with its JSON as the text.
func TestEmailEvent(t *testing.T) {
	sink := smtpsink.Start(t)
	e := &notify.Email{Addr: sink.Addr(), From: "a@x", To: []string{"b@x"}}
	m := &sqlstore.OutboxMessage{ID: 3, EventID: "e-2", Site: "hq", Type: "BOOKING_BOOKED", Body: []byte(`{"id":"e-2","type":"BOOKING_BOOKED"}`), Attempt: 1}
	if err := e.Deliver(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	got := sink.Mails()
	if len(got) != 1 {
		t.Fatalf("%d mails", len(got))
	}
	msg, err := mail.ReadMessage(strings.NewReader(got[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if s := msg.Header.Get("Subject"); s != "nowserving: BOOKING_BOOKED at hq" {
		t.Errorf("subject %q", s)
	}
	parts := readParts(t, msg)
	if len(parts) != 1 || !strings.Contains(parts[0].text, `"type": "BOOKING_BOOKED"`) {
		t.Errorf("parts %+v", parts)
	}
}

// TestEnqueueOnce: two daemons enqueueing one scheduled report at once,
// and again afterwards, write it once per receiver, on each database.
func TestEnqueueOnce(t *testing.T) {
	each(t, func(t *testing.T, open func(o sqlstore.Opts) *sqlstore.Store) {
		a, b := open(sqlstore.Opts{}), open(sqlstore.Opts{})
		at := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
		entries := []sqlstore.OutboxEntry{
			{EventID: "report:daily:2026-12-01", Receiver: "mail", Site: "hq", Version: -42, Type: notify.TypeReport, Body: []byte(`{}`), At: at},
			{EventID: "report:daily:2026-12-01", Receiver: "hook", Site: "hq", Version: -42, Type: notify.TypeReport, Body: []byte(`{}`), At: at},
		}
		var wg sync.WaitGroup
		did := make([]bool, 4)
		for i, s := range []*sqlstore.Store{a, b, a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if did[i], err = s.EnqueueOnce(t.Context(), "report:daily:2026-12-01", at.AddDate(1, 0, 0), entries); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if n := slices.Index(did, true); n < 0 || slices.Index(did[n+1:], true) >= 0 {
			t.Errorf("enqueued by %v, want exactly one", did)
		}
		if again, err := b.EnqueueOnce(t.Context(), "report:daily:2026-12-01", at.AddDate(1, 0, 0), entries); err != nil || again {
			t.Errorf("again: %v, %v; want false", again, err)
		}
		st, err := a.OutboxStatus(t.Context(), 0)
		if err != nil || st.Pending != 2 {
			t.Errorf("outbox %+v, %v; want 2 pending", st, err)
		}
	})
}
