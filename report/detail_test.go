package report

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// detailSite is a site of its own (the other tests' may change): two
// services with targets, two counters, Lisbon time.
func detailSite(t *testing.T) queue.Site {
	loc, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	return queue.Site{ID: "branch", Location: loc, Rollover: 4 * time.Hour,
		Services: []queue.Service{
			{Code: "P", Prefix: "P", Width: 3, AvgService: 5 * time.Minute, WaitTarget: 10 * time.Minute},
			{Code: "N", Prefix: "N", Width: 3, AvgService: 5 * time.Minute, WaitTarget: 20 * time.Minute},
		},
		Counters: []queue.Counter{
			{ID: "1", Services: []queue.CounterService{{Service: "P", Weight: 1}, {Service: "N", Weight: 1}}, Policy: queue.PolicyStrict},
			{ID: "2", Services: []queue.CounterService{{Service: "N", Weight: 1}}, Policy: queue.PolicyStrict},
		},
	}
}

// TestBuildDetail plays three days (a Friday, a Saturday and a Monday)
// with a person and a device at the counters, and holds BuildDetail's
// figures against a reference that pairs ISSUED and first CALLED events
// by ticket and adds up the times itself.
func TestBuildDetail(t *testing.T) {
	site := detailSite(t)
	eng, _ := playDetail(t, site)
	ctx := context.Background()
	got, err := BuildDetail(ctx, eng, "branch", "2026-03-06", "2026-03-09")
	if err != nil {
		t.Fatal(err)
	}
	checkDetail(t, got, referenceDetail(t, eng, &site))
	rep, err := Build(ctx, eng, "branch", "2026-03-06", "2026-03-09")
	if err != nil {
		t.Fatal(err)
	}
	if r, d, err := BuildAll(ctx, eng, "branch", "2026-03-06", "2026-03-09"); err != nil || !reflect.DeepEqual(r, rep) || !reflect.DeepEqual(d, got) {
		t.Errorf("BuildAll: %+v %+v %v; want Build's and BuildDetail's", r, d, err)
	}
	if _, err := BuildDetail(ctx, eng, "branch", "2026-03-09", "2026-03-06"); err == nil {
		t.Error("a range that ends before it starts: no error")
	}
}

// TestBuildDetailSummed: once the days are summed into the daily figures
// and their events purged, BuildDetail and People read the same as from
// the event log (so a summed day reads no event).
func TestBuildDetailSummed(t *testing.T) {
	site := detailSite(t)
	eng, st := playDetail(t, site)
	ctx := context.Background()
	want, wantP := pageOf(t, eng)
	if len(wantP) != 1 || wantP[0].Served == 0 {
		t.Fatalf("people %+v: want ana", wantP)
	}
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, site.Location)
	if _, more, err := SumDays(ctx, eng, st, "branch", now, 31, nil); err != nil || more {
		t.Fatalf("SumDays: more %v, %v", more, err)
	}
	if n, err := st.PurgeEvents(ctx, sqlstore.DayPurgeOf(&site, now, time.Hour, 100000)); err != nil || n == 0 {
		t.Fatalf("purge: %d events, %v", n, err)
	}
	if evs, err := eng.Events(ctx, "branch", 0, 10); err != nil || len(evs) != 0 {
		t.Fatalf("events after the purge: %d, %v; want none", len(evs), err)
	}
	got, gotP := pageOf(t, eng)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("from the daily figures:\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(gotP, wantP) {
		t.Errorf("people from the daily figures: %+v; want %+v", gotP, wantP)
	}
}

// pageOf is BuildDetail and People of playDetail's days.
func pageOf(t *testing.T, eng *queue.Engine) (Detail, []Person) {
	t.Helper()
	ctx := context.Background()
	d, err := BuildDetail(ctx, eng, "branch", "2026-03-06", "2026-03-09")
	if err != nil {
		t.Fatal(err)
	}
	p, err := People(ctx, eng, "branch", "2026-03-06", "2026-03-09")
	if err != nil {
		t.Fatal(err)
	}
	return d, p
}

// playDetail plays TestBuildDetail's three days (a Friday, a Saturday and
// a Monday) on a SQLite store, and returns the engine and the store.
func playDetail(t *testing.T, site queue.Site) (*queue.Engine, *sqlstore.Store) {
	c := storetest.FixedClock(time.Time{})
	st := storetest.SQLite(t)
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: c.Now})
	ctx := context.Background()
	n := 0
	for di, day := range []string{"2026-03-06", "2026-03-07", "2026-03-09"} {
		start, _ := time.ParseInLocation("2006-01-02 15:04", day+" 08:30", site.Location)
		c.Fix(start)
		for i := range 6 + di*2 {
			n++
			svc := []string{"P", "N", "N"}[i%3]
			if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "branch", Device: "kiosk", Key: fmt.Sprint("i", n)}, Service: svc}); err != nil {
				t.Fatal(err)
			}
			c.Add(time.Duration(2+i) * time.Minute)
		}
		for round := range 4 {
			for _, ctr := range []string{"1", "2"} {
				actor := "keypad-" + ctr
				if ctr == "1" {
					actor = "user:ana@counter-1"
				}
				cr := queue.CounterRequest{Request: queue.Request{Site: "branch", Device: actor}, Counter: ctr}
				c.Add(3 * time.Minute)
				if _, err := eng.CallNext(ctx, cr); err != nil {
					continue // nobody waiting for it
				}
				c.Add(time.Minute)
				if _, err := eng.Start(ctx, cr); err != nil {
					t.Fatal(err)
				}
				c.Add(time.Duration(4+round) * time.Minute)
				if round == 1 && ctr == "2" {
					if _, err := eng.Transfer(ctx, queue.TransferRequest{Request: cr.Request, Counter: ctr, ToService: "P"}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if _, err := eng.Complete(ctx, cr); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return eng, st.Store
}

// checkDetail holds got against the reference want.
func checkDetail(t *testing.T, got, want Detail) {
	t.Helper()
	if got.Hours != want.Hours || got.Weekdays != want.Weekdays {
		t.Errorf("hours %v weekdays %v, want %v %v", got.Hours, got.Weekdays, want.Hours, want.Weekdays)
	}
	if got.Weekdays[time.Friday] != 6 || got.Weekdays[time.Saturday] != 8 || got.Weekdays[time.Monday] != 10 {
		t.Errorf("weekdays %v: want 6 on Friday, 8 on Saturday, 10 on Monday", got.Weekdays)
	}
	for i, s := range got.Services {
		w := want.Services[i]
		if s.ID != w.ID || s.Called != w.Called || s.Within != w.Within || s.P50Wait != w.P50Wait || s.P90Wait != w.P90Wait || s.Transfers != w.Transfers {
			t.Errorf("service %s: %+v, want %+v", s.ID, s, w)
		}
	}
	if got.Services[1].Transfers != 3 || got.Services[0].Called == 0 || got.Services[0].Within == got.Services[0].Called {
		t.Errorf("services %+v: want 3 transfers out of N, P called, some over target", got.Services)
	}
	if len(got.People) != 1 || got.People[0].ID != "ana" || got.People[0].Served == 0 || got.People[0].IdleShare() <= 0 {
		t.Fatalf("people: %+v, want ana alone", got.People)
	}
	for _, rows := range [][2][]WorkRow{{got.Counters, want.Counters}, {got.People, want.People}} {
		for i, r := range rows[0] {
			w := rows[1][i]
			if r.ID != w.ID || r.Served != w.Served || r.Busy != w.Busy || r.Span != w.Span ||
				math.Abs(r.IdleShare()-w.IdleShare()) > 1e-9 || r.Served > 0 && r.AvgService != w.Busy/time.Duration(w.Served) {
				t.Errorf("%s: %+v, want %+v", r.ID, r, w)
			}
		}
	}
}

// referenceDetail computes the figures of TestBuildDetail from the whole
// log its own way: waits from the times of each ticket's ISSUED and first
// CALLED, service times from SERVING to DONE, spans from each counter's
// and person's first and last event per day.
func referenceDetail(t *testing.T, eng *queue.Engine, site *queue.Site) Detail {
	evs, err := eng.Events(context.Background(), site.ID, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var d Detail
	issued, started := map[int64]queue.Event{}, map[int64]time.Time{}
	waits := map[string][]time.Duration{}
	transfers := map[string]int{}
	type span struct{ first, last time.Time }
	spans := map[string]map[string]*span{} // who → day → span
	work := map[string]*WorkRow{}
	for _, e := range evs {
		local := e.At.In(site.Location)
		day := local.Add(-site.Rollover).Format(time.DateOnly)
		switch {
		case e.Type == queue.EventIssued:
			issued[e.TicketID] = e
			d.Hours[local.Hour()]++
			wd, _ := time.Parse(time.DateOnly, day)
			d.Weekdays[wd.Weekday()]++
		case e.Type == queue.EventCalled && e.CallCount == 1:
			is := issued[e.TicketID]
			waits[is.Service] = append(waits[is.Service], e.At.Sub(is.At))
		case e.Type == queue.EventTransferred:
			transfers[e.FromQueue]++
		}
		for _, who := range []string{"c:" + e.Counter, "p:" + personOf(e.Actor)} {
			if who == "c:" || who == "p:" {
				continue
			}
			if spans[who] == nil {
				spans[who], work[who] = map[string]*span{}, &WorkRow{ID: who[2:]}
			}
			if spans[who][day] == nil {
				spans[who][day] = &span{first: e.At}
			}
			spans[who][day].last = e.At
			if e.Type == queue.EventServing {
				started[e.TicketID] = e.At
			}
			if e.Type == queue.EventDone {
				work[who].Served++
				work[who].Busy += e.At.Sub(started[e.TicketID])
			}
		}
	}
	for who, days := range spans {
		for _, s := range days {
			work[who].Span += s.last.Sub(s.first)
		}
	}
	for _, sv := range site.Services {
		w := waits[sv.Code]
		slices.Sort(w)
		sd := ServiceDetail{ID: sv.Code, Target: sv.WaitTarget, Called: len(w), Transfers: transfers[sv.Code]}
		for _, x := range w {
			if x <= sv.WaitTarget {
				sd.Within++
			}
		}
		if len(w) > 0 {
			sd.P50Wait, sd.P90Wait = w[(len(w)+1)/2-1], w[int(math.Ceil(0.9*float64(len(w))))-1]
		}
		d.Services = append(d.Services, sd)
	}
	for _, c := range site.Counters {
		d.Counters = append(d.Counters, *work["c:"+c.ID])
	}
	d.People = append(d.People, *work["p:ana"])
	return d
}

// TestPeopleOfOlderSums: days summed before the daily figures kept person
// rows (a day row without person_rows, no person rows) take their people
// from the events while those are kept.
func TestPeopleOfOlderSums(t *testing.T) {
	site := detailSite(t)
	eng, st := playDetail(t, site)
	ctx := context.Background()
	want, wantP := pageOf(t, eng)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, site.Location)
	if _, _, err := SumDays(ctx, eng, st, "branch", now, 31, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := st.DailyRows(ctx, "branch", "2026-03-06", "2026-03-09")
	if err != nil {
		t.Fatal(err)
	}
	var older []sqlstore.DailyRow
	marked := 0
	for _, r := range rows {
		if strings.Contains(string(r.Figures), `"person_rows":true`) {
			marked++
		}
		if r.Kind != kindPerson {
			r.Figures = []byte(strings.Replace(string(r.Figures), `"person_rows":true`, `"issued_by":0`, 1))
			older = append(older, r)
		}
	}
	days := []string{"2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09"}
	if marked != len(days) || len(older) == len(rows) {
		t.Fatalf("%d day rows marked of %d days, %d rows of %d not of people", marked, len(days), len(older), len(rows))
	}
	if err := st.PutDaily(ctx, "branch", days, older, now); err != nil {
		t.Fatal(err)
	}
	got, gotP := pageOf(t, eng)
	if !reflect.DeepEqual(got, want) || len(got.People) != 1 || !reflect.DeepEqual(gotP, wantP) {
		t.Errorf("from older sums: %+v %+v; want %+v %+v", got, gotP, want, wantP)
	}
}
