package notify

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// DefaultEvents are the event types a receiver takes when it names none:
// every booking event.
var DefaultEvents = []string{"BOOKING_*"}

var rePattern = regexp.MustCompile(`^(\*|[A-Z][A-Z0-9_]*\*?)$`)

// CheckPatterns reports the first pattern Match does not understand: a
// pattern is an event type ("CALLED"), a prefix followed by * ("BOOKING_*")
// or * (every type).
func CheckPatterns(ps []string) error {
	for _, p := range ps {
		if !rePattern.MatchString(p) {
			return fmt.Errorf("notify: event pattern %q: want an event type such as CALLED, a prefix and * such as BOOKING_*, or *", p)
		}
	}
	return nil
}

// Match reports whether an event type matches one of the patterns.
func Match(patterns []string, t queue.EventType) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(string(t), prefix) {
				return true
			}
		} else if p == string(t) {
			return true
		}
	}
	return false
}

// Matcher returns Match over patterns (DefaultEvents when empty) as a
// function.
func Matcher(patterns []string) func(queue.EventType) bool {
	if len(patterns) == 0 {
		patterns = DefaultEvents
	}
	ps := append([]string(nil), patterns...)
	return func(t queue.EventType) bool { return Match(ps, t) }
}
