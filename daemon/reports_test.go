package daemon

import (
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"encoding/base64"
	"io"

	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/internal/testkit/smtpsink"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestPeriod: a daily report covers the day before the day it falls due
// at its time; a weekly one Monday to Sunday before the Monday; before the
// time of day it is the period before that; on the day the clocks change
// the time is the wall clock's.
func TestPeriod(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	day := ReportSchedule{At: 7 * time.Hour}
	week := ReportSchedule{At: 7*time.Hour + 30*time.Minute, Weekly: true}
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, berlin)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, c := range []struct {
		s             ReportSchedule
		now           string
		from, to, due string
	}{
		{day, "2026-12-02 07:00", "2026-12-01", "2026-12-01", "2026-12-02 07:00"},
		{day, "2026-12-02 06:59", "2026-11-30", "2026-11-30", "2026-12-01 07:00"},
		{day, "2026-12-01 23:00", "2026-11-30", "2026-11-30", "2026-12-01 07:00"},
		{day, "2026-03-29 07:10", "2026-03-28", "2026-03-28", "2026-03-29 07:00"},  // summer time began at 02:00
		{week, "2026-12-07 07:30", "2026-11-30", "2026-12-06", "2026-12-07 07:30"}, // a Monday
		{week, "2026-12-07 07:29", "2026-11-23", "2026-11-29", "2026-11-30 07:30"},
		{week, "2026-12-06 12:00", "2026-11-23", "2026-11-29", "2026-11-30 07:30"}, // a Sunday
	} {
		from, to, due := Period(c.s, berlin, at(c.now))
		if from != c.from || to != c.to || !due.Equal(at(c.due)) {
			t.Errorf("weekly %v at %s: %s..%s due %s, want %s..%s due %s", c.s.Weekly, c.now, from, to,
				due.In(berlin).Format("2006-01-02 15:04"), c.from, c.to, c.due)
		}
	}
	if a, b := periodVersion("daily", "2026-12-01"), periodVersion("daily", "2026-12-02"); a >= 0 || a == b {
		t.Errorf("periodVersion: %d and %d, want two negative ones", a, b)
	}
}

// TestReportsOnce: the day's report is built once it is due and queued
// once for each receiver, though two daemons on the database look at the
// schedule and one of them starts again; the outbox worker then mails it,
// the CSV attached, with the day's tickets in it.
func TestReportsOnce(t *testing.T) {
	site := storetest.TestSite()
	clock := storetest.FixedClock(time.Date(2026, 12, 1, 10, 0, 0, 0, site.Location))
	st := storetest.SQLite(t)
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock.Now})
	for i := range 3 {
		if _, err := eng.Issue(t.Context(), queue.IssueRequest{Request: queue.Request{Site: site.ID, Device: "kiosk-1", Key: string(rune('a' + i))},
			Service: site.Services[0].Code}); err != nil {
			t.Fatal(err)
		}
	}
	next := func() time.Time { return time.Date(2026, 12, 2, 7, 5, 0, 0, site.Location) }
	sched := []ReportSchedule{{Name: "daily", Site: site.ID, At: 7 * time.Hour, Format: "csv", To: []string{"mail"}}}
	total := 0
	for range 3 { // two daemons, then the first started again
		total += NewReports(ReportsOpts{Engine: eng, Store: st.Store, Schedules: sched, Now: next}).Pass(t.Context())
	}
	if total != 1 {
		t.Fatalf("reports queued %d times, want once", total)
	}
	sink := smtpsink.Start(t)
	w, err := notify.New(notify.Opts{Store: st.Store, Poll: 20 * time.Millisecond, Receivers: []notify.Receiver{{Name: "mail", NoEvents: true,
		Deliverer: &notify.Email{Addr: sink.Addr(), From: "ns@hospital.example", To: []string{"head@hospital.example"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	parttest.Until(t, t.Context(), w.Run)
	poll.Until(t, "the report's mail", func() bool { return len(sink.Mails()) == 1 })
	msg, err := mail.ReadMessage(strings.NewReader(sink.Mails()[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var attached string
	for {
		p, err := mr.NextRawPart()
		if err != nil {
			break
		}
		if strings.HasPrefix(p.Header.Get("Content-Disposition"), "attachment") {
			raw, _ := io.ReadAll(p)
			b, _ := base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(raw)))
			attached = string(b)
		}
	}
	if !strings.Contains(attached, "2026-12-01") || !strings.Contains(attached, ",3,") {
		t.Errorf("attached report lacks the day and its 3 tickets:\n%s", attached)
	}
}
