package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/queue"
)

// RegisterFollow registers on reg how this daemon follows the events other
// daemons commit to the same store, per site:
//
//	nowserving_events_followed_total        events of other daemons that reached this one
//	nowserving_events_follow_delay_seconds  from an event's time (its request, on the
//	                                        other daemon's clock) to its arrival here
//	nowserving_events_behind                versions the feed was behind the store after
//	                                        the last poll (0 when it keeps up)
//	nowserving_events_poll_age_seconds      since the store's versions were last read
//	nowserving_store_lost_work_total        times the store was found behind this daemon
//	                                        (it lost acknowledged work), by outcome
//	                                        (found, restored)
//	nowserving_store_lost_tickets_total     tickets of lost work, by outcome (restored,
//	                                        unrestored)
//
// now is the clock the delays are taken on.
func RegisterFollow(reg prometheus.Registerer, eng *queue.Engine, now func() time.Time) error {
	const sub subsystem = "events"
	followed := sub.counterVec("followed_total", "Events other daemons committed that reached this daemon.", "site")
	delay := sub.histogramVec("follow_delay_seconds",
		"Time from an event of another daemon (its request) to its arrival in this daemon.",
		[]float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5}, "site")
	if err := registerAll(reg, "follow", followed, delay, followGauges{eng: eng, now: now}); err != nil {
		return err
	}
	// Every site's series exist from the start (at 0), so a scrape shows
	// them before the first event of another daemon arrives.
	for _, s := range eng.Sites() {
		followed.WithLabelValues(s.ID)
		delay.WithLabelValues(s.ID)
	}
	eng.OnFollow(func(site string, evs []queue.Event) {
		t := now()
		followed.WithLabelValues(site).Add(float64(len(evs)))
		h := delay.WithLabelValues(site)
		for i := range evs {
			h.Observe(max(t.Sub(evs[i].At), 0).Seconds())
		}
	})
	return nil
}

var (
	behindDesc = prometheus.NewDesc("nowserving_events_behind",
		"Versions this daemon's event feed was behind the store after its last poll.", []string{"site"}, nil)
	pollAgeDesc = prometheus.NewDesc("nowserving_events_poll_age_seconds",
		"Seconds since this daemon last read the store's event versions.", []string{"site"}, nil)
	lostWorkDesc = prometheus.NewDesc("nowserving_store_lost_work_total",
		"Times the store was found behind what this daemon had committed or followed (lost acknowledged work), by outcome.", []string{"outcome"}, nil)
	lostTicketsDesc = prometheus.NewDesc("nowserving_store_lost_tickets_total",
		"Tickets of lost work this daemon applied again (restored) or could not (unrestored).", []string{"outcome"}, nil)
)

// followGauges reads the engine's follow statistics at scrape time.
type followGauges struct {
	eng *queue.Engine
	now func() time.Time
}

func (g followGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- behindDesc
	ch <- pollAgeDesc
	ch <- lostWorkDesc
	ch <- lostTicketsDesc
}

func (g followGauges) Collect(ch chan<- prometheus.Metric) {
	t := g.now()
	l := g.eng.Losses()
	ch <- prometheus.MustNewConstMetric(lostWorkDesc, prometheus.CounterValue, float64(l.Found), "found")
	ch <- prometheus.MustNewConstMetric(lostWorkDesc, prometheus.CounterValue, float64(l.Restored), "restored")
	ch <- prometheus.MustNewConstMetric(lostTicketsDesc, prometheus.CounterValue, float64(l.Tickets), "restored")
	ch <- prometheus.MustNewConstMetric(lostTicketsDesc, prometheus.CounterValue, float64(l.Unrestored), "unrestored")
	stats := g.eng.FollowStats()
	// A site nobody else writes (one daemon, or SQLite where the feed does
	// not poll) is never behind: 0, and no poll age.
	for _, s := range g.eng.Sites() {
		site, st := s.ID, stats[s.ID]
		ch <- prometheus.MustNewConstMetric(behindDesc, prometheus.GaugeValue, float64(st.Behind), site)
		if !st.Polled.IsZero() {
			ch <- prometheus.MustNewConstMetric(pollAgeDesc, prometheus.GaugeValue, t.Sub(st.Polled).Seconds(), site)
		}
	}
}
