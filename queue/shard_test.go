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
