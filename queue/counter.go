package queue

import "strconv"

// Counter ids are strings in the domain ("5"); the wire, keypad address
// maps and the console number them. CounterNumber and CounterID are the
// one pair of converters between the two, used by every package.

// CounterNumber returns the number of counter id ("5" -> 5), or 0, which
// numbers no counter, when id is not a counter number: a decimal
// 1..4294967295 without sign or leading zero, so that CounterID gives id
// back.
func CounterNumber(id string) uint32 {
	if id == "" || id[0] == '0' {
		return 0
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return 0
		}
	}
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// CounterID returns the counter id of number n (5 -> "5"); "" for 0, which
// on the wire means no counter (or a keypad's own).
func CounterID(n uint32) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(uint64(n), 10)
}

// HasCounter reports whether the site has counter id.
func (s *Site) HasCounter(id string) bool {
	for i := range s.Counters {
		if s.Counters[i].ID == id {
			return true
		}
	}
	return false
}
