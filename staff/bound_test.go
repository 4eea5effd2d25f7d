package staff

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSessionsBounded opens more sessions than MaxSessions (single sign-on
// opens one per browser that lost its cookie, and a session left to time
// out is only dropped when it is next checked): the service keeps at most
// MaxSessions, dropping the least recently used, and the newest still
// works.
func TestSessionsBounded(t *testing.T) {
	sv, st, c := newService(t)
	ctx := context.Background()
	a, err := st.Account(ctx, "li.na")
	if err != nil {
		t.Fatal(err)
	}
	var first, last *Session
	for i := range MaxSessions + 50 {
		s := sv.open(a, c.now()) // as Open does, without its account read
		if i == 0 {
			first = s
		}
		last = s
		c.add(time.Millisecond) // each used after the one before
	}
	sv.mu.Lock()
	n := len(sv.byID)
	sv.mu.Unlock()
	if n > MaxSessions {
		t.Fatalf("%d sessions kept, want at most %d", n, MaxSessions)
	}
	if _, err := sv.Check(ctx, first.ID, true); !errors.Is(err, ErrNoSession) {
		t.Errorf("the least recently used session: %v, want ErrNoSession", err)
	}
	if _, err := sv.Check(ctx, last.ID, true); err != nil {
		t.Errorf("the newest session: %v", err)
	}
}

// TestFailuresBounded: failed logins of ever new names from ever new
// addresses (a scan) keep at most about maxFailKeys keys, and an address
// over its limit is still refused; and reaching the bound brings the keys
// down to half of it, so that the flood's next failures do not scan every
// key again each. (Each login adds two keys: the bound is reached half way.)
func TestFailuresBounded(t *testing.T) {
	sv, _, _ := newService(t)
	ctx := context.Background()
	least, reached := maxFailKeys, false
	for i := range maxFailKeys/2 + 20 {
		if _, err := sv.Login(ctx, fmt.Sprintf("-x%d", i), "wrong-pass", fmt.Sprintf("10.%d", i)); !errors.Is(err, ErrBadLogin) {
			t.Fatalf("login %d: %v", i, err)
		}
		sv.mu.Lock()
		n := len(sv.fails)
		sv.mu.Unlock()
		if n > maxFailKeys+2 {
			t.Fatalf("after %d failed logins: %d keys kept, want at most %d", i+1, n, maxFailKeys+2)
		}
		if reached = reached || n >= maxFailKeys; reached {
			least = min(least, n)
		}
	}
	if !reached || least > maxFailKeys/2+2 {
		t.Errorf("the keys went down to %d once the bound was reached (reached %v), want at most %d", least, reached, maxFailKeys/2+2)
	}
	for range sv.o.LoginLimit {
		sv.Login(ctx, "li.na", "wrong-pass", "10.9.9.9")
	}
	if _, err := sv.Login(ctx, "wang", "secret-pass", "10.9.9.9"); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("address over its limit: %v, want ErrRateLimited", err)
	}
}
