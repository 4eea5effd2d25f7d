package sqlstore

import (
	"errors"
	"fmt"
)

// A stored request result (the requests table) is what a retry with the
// same idempotency key is answered with: the engine's JSON of the first
// answer, 110 to 1,100 bytes, half of them the same field names in every
// row. The store keeps it shorter: a format byte, then the JSON with every
// field name of resultKeys (`"IssuedAt":`) and every zero time written as
// one or two bytes below 0x20, which compact JSON never holds (the
// encoder escapes them inside strings). LookupRequests gives back the very
// bytes the engine saved. A result that holds such a byte already, or is
// not an object, is kept as it is behind resultRaw. A stored result whose
// first byte is neither format is returned as it is: rows written before
// (JSON starts with '{') read as they always did.
//
// resultKeys is part of the stored format: a name may be appended, never
// moved or removed, or rows stored with it would read back wrong
// (TestResultKeysFixed holds it). Compression (DEFLATE with a dictionary)
// halves it again but costs about 45 µs a result, a third of a core at
// the opening rush; this costs about one.
var resultKeys = [...]string{
	// A ticket.
	"ID", "Site", "Service", "Queue", "Day", "Seq", "Number", "Class", "Status", "Rank", "SortKey", "Counter",
	"TargetCounter", "CallCount", "NoShowCount", "IssuedAt", "WaitingSince", "CalledAt", "FirstCalledAt",
	"ServingAt", "FinishedAt", "Device", "IdemKey", "Version",
	// A counter's state, a booking, a check-in and its position.
	"Mode", "Since", "Resource", "Slot", "Start", "End", "Patient", "Code", "HeldUntil", "TicketID",
	"CreatedAt", "UpdatedAt", "Booking", "Position", "Ticket", "Ahead", "Wait", "Appointment", "OnTime",
}

// zeroTime is how the engine's JSON writes a time not set.
const zeroTime = `"0001-01-01T00:00:00Z"`

// The stored formats: resultKeyed is the JSON with names and zero times as
// tokens; resultRaw, the bytes as given.
const (
	resultRaw   = 0x00
	resultKeyed = 0x01
)

// Tokens: a byte 0x01..0x1d stands for resultKeys[b-1], 0x1e for
// zeroTime, 0x1f followed by a byte n for resultKeys[0x1d+n].
const (
	tokenShort = 0x1d
	tokenZero  = 0x1e
	tokenLong  = 0x1f
)

// resultKeyIndex is resultKeys by name.
var resultKeyIndex = func() map[string]int {
	m := make(map[string]int, len(resultKeys))
	for i, k := range resultKeys {
		m[k] = i
	}
	return m
}()

// packResult is the stored form of a result; nil stays nil.
func packResult(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) == 0 || b[0] != '{' || hasControl(b) {
		return append([]byte{resultRaw}, b...)
	}
	out := make([]byte, 1, len(b)/2+16)
	out[0] = resultKeyed
	for i := 0; i < len(b); {
		c := b[i]
		if c != '"' {
			out = append(out, c)
			i++
			continue
		}
		end := stringEnd(b, i)
		s := b[i:end]
		key := end < len(b) && b[end] == ':' && len(s) >= 2
		k, known := 0, false
		if key {
			k, known = resultKeyIndex[string(s[1:len(s)-1])]
		}
		switch {
		case known && k < tokenShort:
			out = append(out, byte(k+1))
			end++
		case known:
			out = append(out, tokenLong, byte(k-tokenShort))
			end++
		case !key && string(s) == zeroTime:
			out = append(out, tokenZero)
		default:
			out = append(out, s...)
		}
		i = end
	}
	return out
}

// hasControl reports whether b holds a byte below 0x20.
func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// stringEnd is the index after the JSON string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

var errResultToken = errors.New("stored result: unknown token")

// unpackResult reads a stored result back: what packResult was given, or
// an older row's bytes as they are.
func unpackResult(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return b, nil
	}
	switch b[0] {
	case resultRaw:
		return b[1:], nil
	case resultKeyed:
	default:
		return b, nil
	}
	out := make([]byte, 0, 2*len(b)+64)
	for i := 1; i < len(b); i++ {
		c := b[i]
		k := -1
		switch {
		case c >= 0x20:
			out = append(out, c)
			continue
		case c == tokenZero:
			out = append(out, zeroTime...)
			continue
		case c == tokenLong && i+1 < len(b):
			i++
			k = tokenShort + int(b[i])
		case c >= 1 && c <= tokenShort:
			k = int(c) - 1
		}
		if k < 0 || k >= len(resultKeys) {
			return nil, fmt.Errorf("%w 0x%02x at byte %d", errResultToken, c, i)
		}
		out = append(out, '"')
		out = append(out, resultKeys[k]...)
		out = append(out, '"', ':')
	}
	return out, nil
}
