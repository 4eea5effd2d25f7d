package sim

import (
	"fmt"
	"strings"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// CounterNum is a counter id as a wire number; "" is 0 (the keypad's own
// counter, or none).
func CounterNum(id string) (uint32, error) {
	if id == "" {
		return 0, nil
	}
	n := queue.CounterNumber(id)
	if n == 0 {
		return 0, fmt.Errorf("sim: counter %q: want a counter number such as 1 or 12", id)
	}
	return n, nil
}

// ParseClass reads a ticket class by its name, in any case.
func ParseClass(s string) (wire.Class, error) {
	if c, ok := wire.ClassNamed(strings.ToLower(s)); ok {
		return c, nil
	}
	return 0, fmt.Errorf("sim: class %q: want normal, vip, emergency, revisit, appointment or reentered", s)
}
