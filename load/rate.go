// Package load makes a daemon busy and measures it, over the device
// protocol as many devices at once (package sim): Run is the load
// generator of `nowserving sim load` (kiosks take tickets at a rate,
// keypads call, start and finish them), Conns and Issue are the benchmarks
// of `nowserving bench` (connections held and what they cost; ticket
// throughput and latency percentiles).
package load

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseRate reads "5/s", "300/m", "2/h" or a bare "5" (per second).
func ParseRate(s string) (float64, error) {
	num, unit, found := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("sim: rate %q: want a positive number per second, e.g. 5/s or 120/m", s)
	}
	if !found {
		return n, nil
	}
	switch unit {
	case "s":
		return n, nil
	case "m":
		return n / 60, nil
	case "h":
		return n / 3600, nil
	}
	return 0, fmt.Errorf("sim: rate %q: unit must be s, m or h", s)
}

// Percentile returns the p-th percentile (0..100) of sorted durations.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted)-1) + 0.5)
	return sorted[min(i, len(sorted)-1)]
}

// latencies are the p50/p90/p99/max of sorted, rounded to 10 µs.
func latencies(sorted []time.Duration) string {
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s",
		r(Percentile(sorted, 50)), r(Percentile(sorted, 90)), r(Percentile(sorted, 99)), r(sorted[len(sorted)-1]))
}
