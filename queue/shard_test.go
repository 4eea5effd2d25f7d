package queue

import (
	"slices"
	"testing"
)

// The sites a daemon writes spread evenly over its committers, in the order
// they are first written to, whatever their names (a hash put 10 of one
// daemon's 15 sites on one of its two committers), and keep their committer.
func TestShardOf(t *testing.T) {
	e := &Engine{shards: make([]shard, 3)}
	var got []int
	for _, s := range []string{"s1", "s3", "s5", "s7", "s9", "s11", "s3", "s13"} {
		got = append(got, e.shardOf(s))
	}
	if want := []int{0, 1, 2, 0, 1, 2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("shards %v, want %v", got, want)
	}
}

// A batch takes at most a quarter of its size of bookings, however many
// wait, and fills the rest with the kiosks' and other bulk requests
// waiting: a booking rush never holds a kiosk back by more than that.
func TestBookingShare(t *testing.T) {
	e := &Engine{batch: 64}
	queues := func(nbulk, nbooks int) (chan *job, chan *job) {
		bulk, books := make(chan *job, 256), make(chan *job, 256)
		for range nbulk {
			bulk <- &job{lane: laneIssue}
		}
		for range nbooks {
			books <- &job{lane: laneBooking}
		}
		return bulk, books
	}
	count := func(batch []*job) (kiosks, bookings int) {
		for _, j := range batch {
			if j.lane == laneBooking {
				bookings++
			} else {
				kiosks++
			}
		}
		return kiosks, bookings
	}
	for _, c := range []struct {
		name                 string
		first                lane
		bulk, books          int
		wantKiosks, wantBook int
	}{
		{"a booking starts it, kiosks wait", laneBooking, 100, 200, 48, 16},
		{"a kiosk starts it, bookings wait", laneIssue, 100, 200, 48, 16},
		{"few kiosks", laneBooking, 3, 200, 3, 16},
		{"no bookings", laneIssue, 100, 0, 64, 0},
		{"few bookings", laneIssue, 100, 5, 59, 5},
	} {
		bulk, books := queues(c.bulk, c.books)
		batch := e.fill([]*job{{lane: c.first}}, bulk, books)
		if k, b := count(batch); k != c.wantKiosks || b != c.wantBook {
			t.Errorf("%s: %d kiosks and %d bookings, want %d and %d", c.name, k, b, c.wantKiosks, c.wantBook)
		}
	}
	if got := bookingShare(1); got != 1 {
		t.Errorf("bookingShare(1) = %d, want 1", got)
	}
}
