package web

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// slotsSample is a day of a doctor's slots, as the API answers it, and
// one of each odd case.
func slotsSample() []Slots {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		loc = time.FixedZone("CST", 8*3600)
	}
	day := time.Date(2026, 12, 2, 8, 0, 0, 0, loc)
	full := Slots{Date: "2026-12-02", Total: 41, NextOffset: 40}
	for i := range 40 {
		start := day.Add(time.Duration(i) * 15 * time.Minute)
		full.Slots = append(full.Slots, Slot{ID: int64(1000 + i), Resource: "dr-0042", Start: start, End: start.Add(15 * time.Minute),
			Capacity: 1, Booked: i % 2, Free: 1 - i%2, Closed: i%7 == 0})
	}
	odd := Slots{Date: "2026-12-30", Slots: []Slot{{ID: 1, Resource: `dr "<li>" & 王`, Start: day.UTC().Add(123456789 * time.Nanosecond), End: day.Add(time.Hour).In(time.UTC)}},
		Opening: map[string]time.Time{"b": day, "a": day.Add(time.Hour)}}
	return []Slots{full, odd, {Date: "2026-11-01", Slots: []Slot{}, Past: true}}
}

// TestSlotsJSON: a slot list is written as encoding/json writes it, to
// the byte.
func TestSlotsJSON(t *testing.T) {
	for _, s := range slotsSample() {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := appendSlots(nil, &s); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("slots of %s:\n got %s\nwant %s", s.Date, got, want.Bytes())
		}
	}
}

// BenchmarkSlotsJSON: a day of a doctor's 40 slots, by encoding/json and
// by appendSlots.
func BenchmarkSlotsJSON(b *testing.B) {
	s := slotsSample()[0]
	b.Run("encoding/json", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			json.NewEncoder(&buf).Encode(s)
		}
	})
	b.Run("appendSlots", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = appendSlots(buf[:0], &s)
		}
	})
}
