package report

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// DailyStore is what a report reads of a store's daily figures
// (*sqlstore.Store offers it, and the daemon's store).
type DailyStore interface {
	DailyRows(ctx context.Context, site, from, to string) ([]sqlstore.DailyRow, error)
}

// DailyWriter is what SumDays needs of the store.
type DailyWriter interface {
	DailyStore
	LastDailyDay(ctx context.Context, site string) (string, error)
	PutDaily(ctx context.Context, site string, days []string, rows []sqlstore.DailyRow, now time.Time) error
}

// The kinds of daily rows.
const (
	kindDay     = "day"
	kindService = "service"
	kindCounter = "counter"
	kindBooking = "booking"
	kindPerson  = "person"
)

// readDaily reads the daily figures of site's days from..to: a day is
// there when its "day" row is.
func readDaily(ctx context.Context, ds DailyStore, site, from, to string) (map[string]*dayFigures, error) {
	rows, err := ds.DailyRows(ctx, site, from, to)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	days := map[string]*dayFigures{}
	for _, r := range rows {
		var f Figures
		if err := json.Unmarshal(r.Figures, &f); err != nil {
			return nil, fmt.Errorf("report: daily figures of %s %s %s %q: %w", site, r.Day, r.Kind, r.ID, err)
		}
		d := days[r.Day]
		if d == nil {
			d = newDayFigures()
			days[r.Day] = d
		}
		switch r.Kind {
		case kindDay:
			d.total = f
		case kindService:
			d.services[r.ID] = &f
		case kindCounter:
			d.counters[r.ID] = &f
		case kindBooking:
			d.bookings[r.ID] = &f
		case kindPerson:
			d.people[r.ID] = &f
		}
	}
	return days, nil
}

// dailyRows encodes the figures of the days as daily rows.
func dailyRows(days map[string]*dayFigures, list []string) ([]sqlstore.DailyRow, error) {
	var out []sqlstore.DailyRow
	add := func(day, kind, id string, f *Figures) error {
		b, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("report: daily figures of %s %s %q: %w", day, kind, id, err)
		}
		out = append(out, sqlstore.DailyRow{Day: day, Kind: kind, ID: id, Figures: b})
		return nil
	}
	for _, day := range list {
		d := days[day]
		if err := add(day, kindDay, "", &d.total); err != nil {
			return nil, err
		}
		for _, m := range []struct {
			kind string
			rows map[string]*Figures
		}{{kindService, d.services}, {kindCounter, d.counters}, {kindBooking, d.bookings}, {kindPerson, d.people}} {
			for id, f := range m.rows {
				if err := add(day, m.kind, id, f); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// CloseDelay is how long after a service day's rollover its figures are
// summed at the earliest: its last events (stamped before the rollover,
// committed after it) are in by then.
const CloseDelay = 10 * time.Minute

// SumDays sums, into st's daily figures, the finished days of site not
// summed yet, oldest first, at most maxDays of them (one read of their
// events: a booking event counts on the day it happened, by the day of
// its slot): the first time, every day the event log holds (a backfill, a
// chunk a call, logged as it goes). A day is finished once it is before
// the day a counter may still hold tickets of (queue.Site.HeldSinceDay) and
// CloseDelay past its rollover. It returns the first day not summed (the
// purge keeps that day's detail and later) and whether finished days are
// left to sum.
func SumDays(ctx context.Context, eng *queue.Engine, st DailyWriter, site string, now time.Time, maxDays int, log *slog.Logger) (string, bool, error) {
	s, err := eng.Site(site)
	if err != nil {
		return "", false, fmt.Errorf("report: %w", err)
	}
	end, err := parseDay(min(s.HeldSinceDay(now), s.Day(now.Add(-CloseDelay)))) // the first day not finished
	if err != nil {
		return "", false, err
	}
	start, err := firstToSum(ctx, eng, st, s)
	if err != nil || start.IsZero() {
		return end.Format(time.DateOnly), false, err // no event: nothing to sum
	}
	if !start.Before(end) {
		return start.Format(time.DateOnly), false, nil
	}
	last := start.AddDate(0, 0, max(maxDays, 1)-1)
	if !last.Before(end) {
		last = end.AddDate(0, 0, -1)
	}
	days, err := sumEvents(ctx, eng, s, start, last)
	if err != nil {
		return "", false, err
	}
	var list []string
	for d := start; !d.After(last); d = d.AddDate(0, 0, 1) {
		list = append(list, d.Format(time.DateOnly))
	}
	rows, err := dailyRows(days, list)
	if err != nil {
		return "", false, err
	}
	if err := st.PutDaily(ctx, s.ID, list, rows, now); err != nil {
		return "", false, fmt.Errorf("report: %w", err)
	}
	next := last.AddDate(0, 0, 1)
	left := int(end.Sub(next).Hours()/24 + 0.5)
	if log != nil {
		log.Info("daily figures summed", "site", s.ID, "from", list[0], "to", list[len(list)-1], "days_left", left)
	}
	return next.Format(time.DateOnly), left > 0, nil
}

// firstToSum is the day after the last summed, or the day of the oldest
// event kept when none is; zero when there is no event.
func firstToSum(ctx context.Context, eng *queue.Engine, st DailyWriter, s *queue.Site) (time.Time, error) {
	last, err := st.LastDailyDay(ctx, s.ID)
	if err != nil {
		return time.Time{}, fmt.Errorf("report: %w", err)
	}
	if last != "" {
		d, err := parseDay(last)
		return d.AddDate(0, 0, 1), err
	}
	evs, err := eng.Events(ctx, s.ID, 0, 1)
	if err != nil || len(evs) == 0 {
		return time.Time{}, err
	}
	return parseDay(s.Day(evs[0].At))
}
