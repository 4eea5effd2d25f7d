package backoff

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestExp(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		n        int
		min, max time.Duration
		want     time.Duration
	}{
		// The protocol client's pace (PROTOCOL.md §6): 0.5 s, 1 s, 2 s, 4 s, then 5 s.
		{0, 500 * ms, 5 * time.Second, 500 * ms},
		{1, 500 * ms, 5 * time.Second, time.Second},
		{3, 500 * ms, 5 * time.Second, 4 * time.Second},
		{4, 500 * ms, 5 * time.Second, 5 * time.Second},
		{1000, 500 * ms, 5 * time.Second, 5 * time.Second},
		// The stores' pace: 1, 2, 4 … 32 ms, then 50 ms.
		{5, ms, 50 * ms, 32 * ms},
		{6, ms, 50 * ms, 50 * ms},
		// Before the first retry, and odd bounds.
		{-1, 10 * ms, 80 * ms, 10 * ms},
		{3, 10 * ms, 0, 10 * ms},
		{3, 0, time.Second, 0},
		{3, -ms, time.Second, 0},
		// Doubling stops at the cap: no overflow however large n is.
		{1 << 30, time.Hour, 1<<63 - 1, 1<<63 - 1},
	} {
		if got := Exp(tc.n, tc.min, tc.max); got != tc.want {
			t.Errorf("Exp(%d, %v, %v) = %v, want %v", tc.n, tc.min, tc.max, got, tc.want)
		}
	}
}

func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{1, 3, time.Millisecond, 30 * time.Second} {
		lo, hi := d, time.Duration(0)
		for range 1000 {
			got := Jitter(d)
			if got < d/2 || got > d {
				t.Fatalf("Jitter(%v) = %v, outside [%v, %v]", d, got, d/2, d)
			}
			lo, hi = min(lo, got), max(hi, got)
		}
		if d >= time.Millisecond && hi-lo < d/4 {
			t.Errorf("Jitter(%v) drew only from [%v, %v] in 1000 draws", d, lo, hi)
		}
	}
	if got := Jitter(0); got != 0 {
		t.Errorf("Jitter(0) = %v", got)
	}
	if got := Jitter(-time.Second); got != 0 {
		t.Errorf("Jitter(-1s) = %v", got)
	}
}

// TestSleep runs on synctest's clock: a sleep takes exactly d, and one on
// a cancelled context none.
func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		start := time.Now()
		if err := Sleep(ctx, 20*time.Millisecond); err != nil || time.Since(start) != 20*time.Millisecond {
			t.Errorf("Sleep(20ms) = %v after %v", err, time.Since(start))
		}
		start = time.Now()
		if err := Sleep(ctx, 0); err != nil || time.Since(start) != 0 {
			t.Errorf("Sleep(0) = %v after %v", err, time.Since(start))
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		start = time.Now()
		if err := Sleep(cctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) != 0 {
			t.Errorf("Sleep on a cancelled context = %v after %v", err, time.Since(start))
		}
		if err := Sleep(cctx, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(0) on a cancelled context = %v", err)
		}
		// Cancelled while it sleeps: it returns then.
		cctx, cancel = context.WithCancel(ctx)
		time.AfterFunc(5*time.Millisecond, cancel)
		start = time.Now()
		if err := Sleep(cctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) != 5*time.Millisecond {
			t.Errorf("Sleep cancelled after 5ms = %v after %v", err, time.Since(start))
		}
	})
}
