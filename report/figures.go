package report

import (
	"slices"
	"time"
)

// Figures are the figures of one row (a service, a counter, a resource or
// the site's total) on one service day: what the daily figures keep per
// row (daily_figures.figures, as this JSON) and what a range adds up
// (Add). Durations are in milliseconds so sums stay exact.
type Figures struct {
	Issued      int `json:"issued,omitempty"`
	Called      int `json:"called,omitempty"`
	Served      int `json:"served,omitempty"`
	NoShows     int `json:"no_shows,omitempty"`
	Cancelled   int `json:"cancelled,omitempty"`
	Transferred int `json:"transferred,omitempty"`
	// WaitMs is the sum of the waits (issue to first call) counted in
	// Waits, the histogram of those waits in WaitBuckets (trailing empty
	// buckets left out); MaxWaitMs the longest.
	WaitMs    int64 `json:"wait_ms,omitempty"`
	Waits     []int `json:"waits,omitempty"`
	MaxWaitMs int64 `json:"max_wait_ms,omitempty"`
	// Targeted counts the waits of tickets whose issuing service has a
	// wait target (queue.Service.WaitTarget), Within those no longer than it.
	Targeted int `json:"targeted,omitempty"`
	Within   int `json:"within,omitempty"`
	// ServiceMs is the sum of the service times (start to done) of the
	// Served tickets.
	ServiceMs int64 `json:"service_ms,omitempty"`
	// Hours counts, by local hour, the tickets issued (a service, the
	// total) or the first calls (a counter).
	Hours [24]int `json:"hours"`
	// StaffedMs is a counter's time open: from its first event of the day
	// (or a COUNTER_OPENED) to a COUNTER_PAUSED or its last event.
	StaffedMs int64 `json:"staffed_ms,omitempty"`
	// A person's row (kind person) counts every call of theirs in Called
	// (not first calls only), their Recalled calls and Paused pauses, the
	// services they completed with a service time in Timed, and the
	// counters they acted at in Counters (sorted); StaffedMs is, as for a
	// counter, from their first event of the day to a pause or their last.
	Recalled int      `json:"recalled,omitempty"`
	Paused   int      `json:"paused,omitempty"`
	Timed    int      `json:"timed,omitempty"`
	Counters []string `json:"counters,omitempty"`
	// PersonRows marks a day's total summed with its person rows (a day
	// summed before they were kept has none: its people come from its
	// events, as long as they are kept).
	PersonRows bool `json:"person_rows,omitempty"`
	// Bookings (a resource's row, on the day of its slots).
	Booked        int `json:"booked,omitempty"`
	BookCancelled int `json:"book_cancelled,omitempty"`
	OnTime        int `json:"on_time,omitempty"`
	Late          int `json:"late,omitempty"`
	Missed        int `json:"missed,omitempty"`
}

// WaitBuckets are the upper bounds (inclusive) of the wait histogram's
// buckets: every 30 s up to 2 h, then every 5 min up to 12 h; a wait
// beyond falls in one more bucket, whose bound is the longest wait. A
// percentile is the bound of the bucket that holds it, so a wait
// percentile is exact to 30 s under two hours.
var WaitBuckets = func() []time.Duration {
	var b []time.Duration
	for d := time.Duration(0); d <= 2*time.Hour; d += 30 * time.Second {
		b = append(b, d)
	}
	for d := 2*time.Hour + 5*time.Minute; d <= 12*time.Hour; d += 5 * time.Minute {
		b = append(b, d)
	}
	return b
}()

// bucketOf is the index of wait's bucket.
func bucketOf(wait time.Duration) int {
	switch {
	case wait <= 0:
		return 0
	case wait <= 2*time.Hour:
		return int((wait + 30*time.Second - 1) / (30 * time.Second))
	case wait <= 12*time.Hour:
		return 240 + int((wait-2*time.Hour+5*time.Minute-1)/(5*time.Minute))
	}
	return len(WaitBuckets)
}

// addWait counts one wait, with target the issuing service's (0: none).
func (f *Figures) addWait(wait, target time.Duration) {
	i := bucketOf(wait)
	for len(f.Waits) <= i {
		f.Waits = append(f.Waits, 0)
	}
	f.Waits[i]++
	f.WaitMs += wait.Milliseconds()
	f.MaxWaitMs = max(f.MaxWaitMs, wait.Milliseconds())
	if target > 0 {
		f.Targeted++
		if wait <= target {
			f.Within++
		}
	}
}

// counts are f's counts, in one order, for Add.
func (f *Figures) counts() []*int {
	return []*int{&f.Issued, &f.Called, &f.Served, &f.NoShows, &f.Cancelled, &f.Transferred, &f.Targeted, &f.Within,
		&f.Booked, &f.BookCancelled, &f.OnTime, &f.Late, &f.Missed, &f.Recalled, &f.Paused, &f.Timed}
}

// Add adds o's figures to f.
func (f *Figures) Add(o *Figures) {
	oc := o.counts()
	for i, n := range f.counts() {
		*n += *oc[i]
	}
	f.WaitMs += o.WaitMs
	f.ServiceMs += o.ServiceMs
	f.StaffedMs += o.StaffedMs
	f.MaxWaitMs = max(f.MaxWaitMs, o.MaxWaitMs)
	for len(f.Waits) < len(o.Waits) {
		f.Waits = append(f.Waits, 0)
	}
	for i, n := range o.Waits {
		f.Waits[i] += n
	}
	for h, n := range o.Hours {
		f.Hours[h] += n
	}
	for _, c := range o.Counters {
		f.atCounter(c)
	}
}

// atCounter adds c to f.Counters, kept sorted.
func (f *Figures) atCounter(c string) {
	if i, found := slices.BinarySearch(f.Counters, c); !found {
		f.Counters = slices.Insert(f.Counters, i, c)
	}
}

// waited is how many waits the histogram holds.
func (f *Figures) waited() int {
	n := 0
	for _, c := range f.Waits {
		n += c
	}
	return n
}

// Percentile is the nearest-rank p-th quantile (0 < p <= 1) of the waits,
// as the bound of its bucket (WaitBuckets); 0 without waits.
func (f *Figures) Percentile(p float64) time.Duration {
	n := f.waited()
	if n == 0 {
		return 0
	}
	rank := int(p*float64(n) + 0.999999999)
	rank = min(max(rank, 1), n)
	seen := 0
	for i, c := range f.Waits {
		seen += c
		if seen >= rank {
			if i < len(WaitBuckets) {
				return WaitBuckets[i]
			}
			break
		}
	}
	return time.Duration(f.MaxWaitMs) * time.Millisecond
}

// Stats are f as a report shows them.
func (f *Figures) Stats() Stats {
	s := Stats{Issued: f.Issued, Called: f.Called, Served: f.Served, NoShows: f.NoShows, Cancelled: f.Cancelled,
		Transferred: f.Transferred, P50Wait: f.Percentile(0.5), P90Wait: f.Percentile(0.9),
		Targeted: f.Targeted, WithinTarget: f.Within, ByHour: f.Hours,
		Staffed: time.Duration(f.StaffedMs) * time.Millisecond, BusiestHour: -1}
	if n := f.waited(); n > 0 {
		s.AvgWait = time.Duration(f.WaitMs/int64(n)) * time.Millisecond
	}
	if f.Served > 0 {
		s.AvgService = time.Duration(f.ServiceMs/int64(f.Served)) * time.Millisecond
		s.ServiceTime = time.Duration(f.ServiceMs) * time.Millisecond
	}
	for h, n := range f.Hours {
		if n > s.BusiestCount {
			s.BusiestHour, s.BusiestCount = h, n
		}
	}
	return s
}
