package metrics

import "testing"

// TestRetention: every table the purge reports on has its series from the
// start; deleted and blanked rows add up per table.
func TestRetention(t *testing.T) {
	r, reg := onRegistry(t, NewRetention)
	r.Deleted("requests", 500)
	r.Deleted("requests", 12)
	r.Deleted("events", 3)
	r.Blanked("bookings", 2)
	compareGolden(t, reg, "retention.golden")
}
