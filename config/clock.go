package config

import (
	"fmt"
	"time"
)

// Clock is a local wall-clock time of day, written "HH:MM" (00:00..24:00;
// 24:00 only as a closing time).
type Clock struct {
	Hour   int
	Minute int
}

// ParseClock parses "HH:MM" with two-digit hours and minutes.
func ParseClock(s string) (Clock, error) {
	c, err := parseClock(s)
	if err != nil {
		return Clock{}, fmt.Errorf("config: parse clock: %w", err)
	}
	return c, nil
}

func parseClock(s string) (Clock, error) {
	if len(s) != 5 || s[2] != ':' || !digits(s[:2]) || !digits(s[3:]) {
		return Clock{}, fmt.Errorf("want HH:MM, got %q", s)
	}
	c := Clock{Hour: int(s[0]-'0')*10 + int(s[1]-'0'), Minute: int(s[3]-'0')*10 + int(s[4]-'0')}
	if c.Minute > 59 || c.Hour > 24 || (c.Hour == 24 && c.Minute != 0) {
		return Clock{}, fmt.Errorf("want HH:MM between 00:00 and 24:00, got %q", s)
	}
	return c, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Minutes returns the minutes since midnight.
func (c Clock) Minutes() int { return c.Hour*60 + c.Minute }

// Duration returns the time since midnight.
func (c Clock) Duration() time.Duration { return time.Duration(c.Minutes()) * time.Minute }

// String formats c as "HH:MM".
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// MarshalText implements encoding.TextMarshaler.
func (c Clock) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Clock) UnmarshalText(b []byte) error {
	v, err := ParseClock(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
