package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nowserving/nowserving/protocol/wire"
)

// CounterNum is a counter id as a wire number; "" is 0 (the keypad's own
// counter, or none).
func CounterNum(id string) (uint32, error) {
	if id == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("sim: counter %q: want a counter number such as 1 or 12", id)
	}
	return uint32(n), nil
}

// ParseClass reads a ticket class by its name, in any case.
func ParseClass(s string) (wire.Class, error) {
	for c := wire.ClassNormal; c <= wire.ClassReentered; c++ {
		if c.String() == strings.ToLower(s) {
			return c, nil
		}
	}
	return 0, fmt.Errorf("sim: class %q: want normal, vip, emergency, revisit, appointment or reentered", s)
}
