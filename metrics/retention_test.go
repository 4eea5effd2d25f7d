package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRetention: every table the purge reports on has its series from the
// start; deleted and blanked rows add up per table.
func TestRetention(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r, err := NewRetention(reg)
	if err != nil {
		t.Fatal(err)
	}
	r.Deleted("requests", 500)
	r.Deleted("requests", 12)
	r.Deleted("events", 3)
	r.Blanked("bookings", 2)
	compareGolden(t, reg, "retention.golden")
}
