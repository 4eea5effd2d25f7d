package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/nowserving/nowserving/internal/part"
	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/report"
)

// ReportStore is what the report schedule needs of the store.
type ReportStore interface {
	EnqueueOnce(ctx context.Context, once string, until time.Time, entries []sqlstore.OutboxEntry) (bool, error)
}

var _ ReportStore = (*PendingStore)(nil)

// EnqueueOnce enqueues on the store.
func (p *PendingStore) EnqueueOnce(ctx context.Context, once string, until time.Time, entries []sqlstore.OutboxEntry) (bool, error) {
	return onStore(p, func(st *sqlstore.Store) (bool, error) { return st.EnqueueOnce(ctx, once, until, entries) })
}

// ReportSchedule is one scheduled report (see config.ReportSchedule).
type ReportSchedule struct {
	Name, Site string
	Weekly     bool          // the week before, every Monday; else the day before, every day
	At         time.Duration // the site's local time of day it is due
	Format     string        // a report.Formats name
	To         []string      // receivers
}

// ReportsOpts configures Reports.
type ReportsOpts struct {
	Engine    *queue.Engine
	Store     ReportStore
	Schedules []ReportSchedule
	// Every is how often the schedules are looked at (default a minute).
	Every time.Duration
	// Timeout bounds building and enqueueing one report (default 1 min).
	Timeout time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
}

// Reports sends the scheduled reports: when a schedule's period is due it
// builds the report and enqueues one outbox message per receiver, once
// (sqlstore.EnqueueOnce), however many daemons share the database and
// however often they start again. Only a schedule's latest due period is
// sent: a daemon that was down at the time sends it when it is back, not
// the periods before.
type Reports struct {
	o    ReportsOpts
	sent map[string]string // schedule → the period done (by this daemon or another)
	stop *part.Stop
}

// NewReports returns the report schedule of o.
func NewReports(o ReportsOpts) *Reports {
	o.Every = positive.Or(o.Every, time.Minute)
	o.Timeout = positive.Or(o.Timeout, time.Minute)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Reports{o: o, sent: map[string]string{}, stop: part.NewStop()}
}

// Name names the part.
func (r *Reports) Name() string { return "reports" }

// Run looks at the schedules at once, then every o.Every, until Shutdown
// or ctx ends; a report that failed is tried again the next time.
func (r *Reports) Run(ctx context.Context) error {
	r.stop.Every(ctx, r.o.Every, func() bool {
		pctx, cancel := r.stop.Context(ctx)
		defer cancel()
		r.Pass(pctx)
		return true
	})
	return nil
}

// Shutdown stops the schedule, waiting for a report in flight within ctx.
func (r *Reports) Shutdown(ctx context.Context) error {
	return r.stop.Shutdown(ctx, "reports: stop")
}

// Pass sends every schedule's report that is due and not yet sent, and
// returns how many this call enqueued.
func (r *Reports) Pass(ctx context.Context) int {
	n := 0
	for _, s := range r.o.Schedules {
		site, err := r.o.Engine.Site(s.Site)
		if err != nil {
			r.o.Logger.Warn("scheduled report: no such site", "schedule", s.Name, "site", s.Site)
			continue
		}
		from, to, due := Period(s, site.Location, r.o.Now())
		if r.sent[s.Name] == from {
			continue
		}
		did, err := withinTimeout(ctx, r.o.Timeout, func(ctx context.Context) (bool, error) {
			return r.send(ctx, s, site, from, to, due)
		})
		switch {
		case errors.Is(err, context.Canceled):
			return n
		case err != nil:
			r.o.Logger.Warn("scheduled report failed; tried again later", "schedule", s.Name, "from", from, "to", to, "err", err)
			continue
		case did:
			n++
			r.o.Logger.Info("scheduled report queued", "schedule", s.Name, "site", s.Site, "from", from, "to", to, "receivers", len(s.To))
		}
		r.sent[s.Name] = from
	}
	return n
}

// send builds the report of from..to and enqueues it for every receiver,
// unless that period was sent before; it reports whether it enqueued.
func (r *Reports) send(ctx context.Context, s ReportSchedule, site *queue.Site, from, to string, due time.Time) (bool, error) {
	rep, err := report.Build(ctx, r.o.Engine, s.Site, from, to)
	if err != nil {
		return false, fmt.Errorf("build: %w", err)
	}
	var content bytes.Buffer
	if err := report.Write(&content, rep, s.Format); err != nil {
		return false, fmt.Errorf("render %s: %w", s.Format, err)
	}
	id := "report:" + s.Name + ":" + from
	ext, ctype := reportFile(s.Format)
	name := s.Site + "-" + from
	if to != from {
		name += "-to-" + to
	}
	body, err := json.Marshal(notify.ReportBody{ID: id, Type: string(notify.TypeReport), Schedule: s.Name, Site: s.Site,
		SiteName: site.Name(""), From: from, To: to, Format: s.Format, Filename: name + ext, ContentType: ctype, Content: content.String()})
	if err != nil {
		return false, err
	}
	entries := make([]sqlstore.OutboxEntry, len(s.To))
	for i, rcv := range s.To {
		entries[i] = sqlstore.OutboxEntry{EventID: id, Receiver: rcv, Site: s.Site, Version: periodVersion(s.Name, from),
			Type: notify.TypeReport, Body: body, At: r.o.Now()}
	}
	// The record that it was sent outlives the period by a year.
	return r.o.Store.EnqueueOnce(ctx, id, due.AddDate(1, 0, 0), entries)
}

// reportFile is the file extension and media type of a report format.
func reportFile(format string) (string, string) {
	switch format {
	case "csv":
		return ".csv", "text/csv"
	case "json":
		return ".json", "application/json"
	case "html":
		return ".html", "text/html"
	}
	return ".txt", "text/plain"
}

// periodVersion is the outbox version of a schedule's report of a period
// (from, YYYY-MM-DD): negative, so it never meets an event's, and one per
// schedule and first day (a hash of the name above the day's number).
func periodVersion(schedule, from string) int64 {
	h := fnv.New32a()
	h.Write([]byte(schedule))
	day, _ := time.Parse(time.DateOnly, from)
	return -(int64(h.Sum32())<<20 | (day.Unix()/86400)&(1<<20-1)) - 1
}

// Period is the latest period of s due at now, in the zone loc: its first
// and last service days and when it fell due. A daily report covers the
// day before the day it is due, a weekly one Monday to Sunday before the
// Monday it is due.
func Period(s ReportSchedule, loc *time.Location, now time.Time) (from, to string, due time.Time) {
	local := now.In(loc)
	y, m, d := local.Date()
	at := int(s.At / time.Minute)
	due = time.Date(y, m, d, at/60, at%60, 0, 0, loc) // the wall clock's time, on a day of a DST change too
	if s.Weekly {
		back := (int(due.Weekday()) + 6) % 7 // days since Monday
		due = due.AddDate(0, 0, -back)
		if due.After(now) {
			due = due.AddDate(0, 0, -7)
		}
		start := due.AddDate(0, 0, -7)
		return start.Format(time.DateOnly), due.AddDate(0, 0, -1).Format(time.DateOnly), due
	}
	if due.After(now) {
		due = due.AddDate(0, 0, -1)
	}
	day := due.AddDate(0, 0, -1).Format(time.DateOnly)
	return day, day, due
}
