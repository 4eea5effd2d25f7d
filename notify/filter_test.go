package notify_test

import (
	"testing"

	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue"
)

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		patterns []string
		typ      queue.EventType
		want     bool
	}{
		{nil, "BOOKING_BOOKED", false},
		{[]string{"BOOKING_*"}, "BOOKING_BOOKED", true},
		{[]string{"BOOKING_*"}, "CALLED", false},
		{[]string{"BOOKING_*", "CALLED"}, "CALLED", true},
		{[]string{"CALLED"}, "RECALLED", false},
		{[]string{"*"}, "PRINT_FAILED", true},
	} {
		if got := notify.Match(tt.patterns, tt.typ); got != tt.want {
			t.Errorf("Match(%q, %s) = %v, want %v", tt.patterns, tt.typ, got, tt.want)
		}
	}
	if f := notify.Matcher(nil); !f("BOOKING_EXPIRED") || f("EXPIRED") {
		t.Error("Matcher(nil) does not take the booking events only")
	}
	if err := notify.CheckPatterns([]string{"BOOKING_*", "*", "CALLED"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "called", "BOOK*ING", "**", "A-B"} {
		if notify.CheckPatterns([]string{bad}) == nil {
			t.Errorf("CheckPatterns(%q) = nil", bad)
		}
	}
}
