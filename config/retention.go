package config

import "time"

// Retention says how long the daemon keeps what it stores. Past each
// window, rows are removed in small batches by one daemon at a time (a
// lease in the database): stored request results and notifications never
// delivered by age; tickets, events, bookings and slots only of finished
// service days, never of the current day and never a ticket a counter
// still holds. Personal data (the patient reference of a booking and the
// per-patient lock row) has its own, shorter window: the booking row
// stays, its patient blanked.
//
// Durations are written in hours (Go durations have no day unit):
// 2160h is 90 days, 720h is 30 days.
type Retention struct {
	// Requests is how long the result of a request with an idempotency
	// key is remembered: a retry with the same key within it gets the
	// first answer (one ticket printed, one call made). Default 48h, at
	// least 1h (devices retry for seconds or minutes).
	Requests time.Duration `mapstructure:"requests" usage:"how long a request result is kept for retries with its key"`
	// Events, Tickets and Bookings keep the detail of a finished service
	// day (reports and `check` read it) for this long after the day;
	// default 2160h (90 days), at least 48h. Tickets are kept at least as
	// long as events (a ticket leaves with its last event), bookings (and
	// their slots) at most as long as tickets (a checked-in booking names
	// its ticket).
	Events   time.Duration `mapstructure:"events" usage:"how long the events of a finished service day are kept"`
	Tickets  time.Duration `mapstructure:"tickets" usage:"how long the tickets of a finished service day are kept"`
	Bookings time.Duration `mapstructure:"bookings" usage:"how long bookings and their slots are kept after the slot"`
	// Outbox keeps notifications that were never delivered (dead, or
	// still pending) for this long after their event; default 720h (30
	// days). Delivered ones are deleted at once, as before.
	Outbox time.Duration `mapstructure:"outbox" usage:"how long a notification never delivered is kept"`
	// Personal keeps patient references for this long after the booked
	// slot (bookings.patient is blanked, patient_locks rows deleted);
	// default 720h (30 days), from retention.requests (stored results
	// carry the patient, so they must be gone first) to retention.bookings.
	Personal time.Duration `mapstructure:"personal" usage:"how long a patient reference is kept after the slot"`
	// Batch is how many rows one purge transaction removes or blanks
	// (default 500): small, so devices' requests are not held up.
	Batch int `mapstructure:"batch" usage:"rows removed per purge transaction"`
	// Every is how often a daemon looks for rows past their windows
	// (default 1m).
	Every time.Duration `mapstructure:"every" usage:"how often a daemon looks for rows past their retention"`
}

// Defaults and bounds of the retention section.
var (
	DefaultRetention = Retention{Requests: 48 * time.Hour, Events: 90 * 24 * time.Hour, Tickets: 90 * 24 * time.Hour,
		Bookings: 90 * 24 * time.Hour, Outbox: 30 * 24 * time.Hour, Personal: 30 * 24 * time.Hour, Batch: 500, Every: time.Minute}
	// MinRequestsRetention is the shortest retention.requests: longer than
	// any device's retry horizon.
	MinRequestsRetention = time.Hour
	// MinDayRetention is the shortest window of the day-bound rows: the
	// current day and the day before (a held ticket's) are never touched.
	MinDayRetention = 48 * time.Hour
)

// applyRetentionDefaults fills omitted retention values; isSet as in
// applyDefaults, so an explicit zero is kept (and refused).
func applyRetentionDefaults(c *Config, isSet func(key string) bool) {
	r, d := &c.Retention, DefaultRetention
	orDefault(isSet, "retention.requests", &r.Requests, d.Requests)
	orDefault(isSet, "retention.events", &r.Events, d.Events)
	orDefault(isSet, "retention.tickets", &r.Tickets, d.Tickets)
	orDefault(isSet, "retention.bookings", &r.Bookings, d.Bookings)
	orDefault(isSet, "retention.outbox", &r.Outbox, d.Outbox)
	orDefault(isSet, "retention.personal", &r.Personal, d.Personal)
	orDefault(isSet, "retention.every", &r.Every, d.Every)
	orDefault(isSet, "retention.batch", &r.Batch, d.Batch)
}

// maxRetention bounds every window: ten years.
const maxRetention = 10 * 366 * 24 * time.Hour

func (c *Config) validateRetention(ps *problems) {
	r := &c.Retention
	window := func(key string, v, lo time.Duration) {
		if v < lo || v > maxRetention {
			ps.add(key, "must be %s..%s, got %s", lo, maxRetention, v)
		}
	}
	window("retention.requests", r.Requests, MinRequestsRetention)
	window("retention.events", r.Events, MinDayRetention)
	window("retention.tickets", r.Tickets, MinDayRetention)
	window("retention.bookings", r.Bookings, MinDayRetention)
	window("retention.outbox", r.Outbox, MinDayRetention)
	window("retention.personal", r.Personal, MinDayRetention)
	if r.Personal < r.Requests {
		ps.add("retention.personal", "must be at least retention.requests (%s): stored results carry patient references, got %s", r.Requests, r.Personal)
	}
	if r.Tickets < r.Events {
		ps.add("retention.tickets", "must be at least retention.events (%s): a ticket leaves with its last event, got %s", r.Events, r.Tickets)
	}
	if r.Bookings > r.Tickets {
		ps.add("retention.bookings", "must be at most retention.tickets (%s): a checked-in booking names its ticket, got %s", r.Tickets, r.Bookings)
	}
	if r.Personal > r.Bookings {
		ps.add("retention.personal", "must be at most retention.bookings (%s), got %s", r.Bookings, r.Personal)
	}
	if r.Batch < 1 || r.Batch > 10000 {
		ps.add("retention.batch", "must be 1..10000, got %d", r.Batch)
	}
	if r.Every < time.Second || r.Every > 24*time.Hour {
		ps.add("retention.every", "must be 1s..24h, got %s", r.Every)
	}
}
