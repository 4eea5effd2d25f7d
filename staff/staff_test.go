package staff

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// cheap keeps the tests fast; DefaultParams are checked by TestHash.
var cheap = Params{Memory: 64, Time: 1, Threads: 1}

func TestHash(t *testing.T) {
	h, err := Hash("correct horse", DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(h, "correct horse") {
		t.Fatalf("hash %q", h)
	}
	if !Verify(h, "correct horse") || Verify(h, "correct hors") || Verify(h, "") {
		t.Fatal("verify")
	}
	h2, _ := Hash("correct horse", DefaultParams)
	if h2 == h {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for _, bad := range []string{"", "$argon2id$", "$argon2i$v=19$m=64,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=9999999,t=1,p=1$AAAA$AAAA",
		strings.Replace(h, "v=19", "v=16", 1)} {
		if Verify(bad, "correct horse") {
			t.Errorf("Verify(%q) true", bad)
		}
	}
	for _, pw := range []string{"short", strings.Repeat("x", MaxPassword+1)} {
		if _, err := Hash(pw, cheap); !errors.Is(err, ErrBadPassword) {
			t.Errorf("Hash(%d bytes): %v", len(pw), err)
		}
	}
}

// TestAccountStores: the accounts round-trip on every store; a name is
// taken once; an unknown one is told apart.
func TestAccountStores(t *testing.T) {
	for _, e := range storetest.Engines {
		t.Run(e.Name, func(t *testing.T) {
			_, st := e.Open(t)
			ctx := t.Context()
			now := time.UnixMilli(1_700_000_000_000).UTC()
			a := queue.Account{Name: "li.na", Role: queue.RoleCounter, Sites: []string{"hospital"}, Counters: []string{"1", "3"}}
			if err := Add(ctx, st, a, "secret-pass", cheap, now); err != nil {
				t.Fatal(err)
			}
			if err := Add(ctx, st, a, "secret-pass", cheap, now); !errors.Is(err, queue.ErrAccountExists) {
				t.Fatalf("second add: %v", err)
			}
			if err := Add(ctx, st, queue.Account{Name: "boss", Role: queue.RoleAdmin}, "admin-pass", cheap, now); err != nil {
				t.Fatal(err)
			}
			got, err := st.Account(ctx, "li.na")
			if err != nil {
				t.Fatal(err)
			}
			if got.Role != queue.RoleCounter || strings.Join(got.Counters, ",") != "1,3" || got.Sites[0] != "hospital" ||
				!got.Created.Equal(now) || got.Disabled || !Verify(got.Hash, "secret-pass") || strings.Contains(got.Hash, "secret-pass") {
				t.Fatalf("got %+v", got)
			}
			if err := SetPassword(ctx, st, "li.na", "other-pass", cheap, now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := SetDisabled(ctx, st, "li.na", true, now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			got, _ = st.Account(ctx, "li.na")
			if !got.Disabled || !Verify(got.Hash, "other-pass") || !got.Updated.Equal(now.Add(time.Hour)) || !got.Created.Equal(now) {
				t.Fatalf("after passwd and disable: %+v", got)
			}
			all, err := st.Accounts(ctx)
			if err != nil || len(all) != 2 || all[0].Name != "boss" || all[0].Sites != nil {
				t.Fatalf("accounts %+v, %v", all, err)
			}
			if _, err := st.Account(ctx, "nobody"); !errors.Is(err, queue.ErrUnknownAccount) {
				t.Fatalf("unknown: %v", err)
			}
			if err := SetPassword(ctx, st, "nobody", "other-pass", cheap, now); !errors.Is(err, queue.ErrUnknownAccount) {
				t.Fatalf("passwd unknown: %v", err)
			}
		})
	}
}

func TestCheckAccount(t *testing.T) {
	for _, a := range []queue.Account{
		{Name: "", Role: queue.RoleAdmin},
		{Name: "Li Na", Role: queue.RoleAdmin},
		{Name: strings.Repeat("a", 65), Role: queue.RoleAdmin},
		{Name: "li'; drop table accounts;--", Role: queue.RoleAdmin},
		{Name: "li", Role: "root"},
		{Name: "li", Role: queue.RoleCounter},
		{Name: "li", Role: queue.RoleCounter, Counters: []string{"1,2"}},
	} {
		if CheckAccount(a) == nil {
			t.Errorf("CheckAccount(%+v) accepted", a)
		}
	}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newService(t *testing.T) (*Service, queue.AccountStore, *clock) {
	st := storetest.SQLite(t).Store
	c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	for _, a := range []queue.Account{
		{Name: "li.na", Role: queue.RoleCounter, Counters: []string{"3"}},
		{Name: "wang", Role: queue.RoleSupervisor, Sites: []string{"hospital"}},
	} {
		if err := Add(t.Context(), st, a, "secret-pass", cheap, c.now()); err != nil {
			t.Fatal(err)
		}
	}
	sv, err := New(Opts{Accounts: st, Idle: 10 * time.Minute, LoginLimit: 3, LoginWindow: 5 * time.Minute, Params: cheap, Clock: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return sv, st, c
}

func TestLogin(t *testing.T) {
	sv, st, c := newService(t)
	ctx := context.Background()
	s, err := sv.Login(ctx, "li.na", "secret-pass", "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ID) < 40 || len(s.CSRF) < 40 || s.ID == s.CSRF {
		t.Fatalf("session %+v", s)
	}
	if !s.MayCounter("hospital", "3") || s.MayCounter("hospital", "2") {
		t.Fatal("counter clerk's counters")
	}
	if _, err := sv.Login(ctx, "li.na", "wrong-pass", "10.0.0.1"); !errors.Is(err, ErrBadLogin) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := sv.Login(ctx, "nobody", "secret-pass", "10.0.0.1"); !errors.Is(err, ErrBadLogin) {
		t.Fatalf("unknown name: %v", err)
	}

	// Idle time-out: touched within it, gone after it.
	c.add(9 * time.Minute)
	if _, err := sv.Check(ctx, s.ID, true); err != nil {
		t.Fatal(err)
	}
	c.add(9 * time.Minute)
	if _, err := sv.Check(ctx, s.ID, true); err != nil {
		t.Fatalf("touched 9 min ago: %v", err)
	}
	// Reads that do not touch (the page following the queue) do not
	// keep it.
	c.add(5 * time.Minute)
	if _, err := sv.Check(ctx, s.ID, false); err != nil {
		t.Fatal(err)
	}
	c.add(5 * time.Minute)
	if _, err := sv.Check(ctx, s.ID, false); !errors.Is(err, ErrNoSession) {
		t.Fatalf("idle 10 min: %v", err)
	}

	// Logout ends it.
	s, _ = sv.Login(ctx, "wang", "secret-pass", "10.0.0.2")
	sv.Logout(s.ID)
	if _, err := sv.Check(ctx, s.ID, true); !errors.Is(err, ErrNoSession) {
		t.Fatalf("after logout: %v", err)
	}

	// Disabled: no login even with the right password, and an open
	// session ends at its next check.
	s, _ = sv.Login(ctx, "wang", "secret-pass", "10.0.0.2")
	if err := SetDisabled(ctx, st, "wang", true, c.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Check(ctx, s.ID, true); !errors.Is(err, ErrNoSession) {
		t.Fatalf("disabled session: %v", err)
	}
	if _, err := sv.Login(ctx, "wang", "secret-pass", "10.0.0.2"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("disabled login: %v", err)
	}
	if _, err := sv.Open(ctx, "wang"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("disabled sso: %v", err)
	}
}

func TestLoginRateLimit(t *testing.T) {
	sv, _, c := newService(t)
	ctx := context.Background()
	// Per name: 3 failures from 3 addresses, then even the right password
	// from a fourth is refused until the window has passed.
	for i, addr := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		if _, err := sv.Login(ctx, "li.na", "wrong-pass", addr); !errors.Is(err, ErrBadLogin) {
			t.Fatalf("try %d: %v", i, err)
		}
	}
	if _, err := sv.Login(ctx, "li.na", "secret-pass", "10.0.0.4"); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("name limited: %v", err)
	}
	if _, err := sv.Login(ctx, "wang", "secret-pass", "10.0.0.4"); err != nil {
		t.Fatalf("another name: %v", err)
	}
	c.add(5 * time.Minute)
	if _, err := sv.Login(ctx, "li.na", "secret-pass", "10.0.0.4"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	// Per address: 3 failures for 3 names from one address.
	for _, n := range []string{"a", "b", "c"} {
		sv.Login(ctx, n, "wrong-pass", "10.9.9.9")
	}
	if _, err := sv.Login(ctx, "wang", "secret-pass", "10.9.9.9"); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("address limited: %v", err)
	}
	if _, err := sv.Login(ctx, "wang", "secret-pass", "10.9.9.8"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// countingAccounts counts the account reads of a store.
type countingAccounts struct {
	queue.AccountStore
	mu    sync.Mutex
	reads int
}

func (c *countingAccounts) Account(ctx context.Context, name string) (queue.Account, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.AccountStore.Account(ctx, name)
}

func (c *countingAccounts) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// TestSessionAccount: a page's own reads (no touch) take the account the
// session read within Recheck, without the store; every action reads it
// again, so a disable or a new password written by another process (the
// CLI) ends the session at its next action, and at its next page read
// once Recheck has passed; a change through the Service applies at the
// next request, whatever it is.
func TestSessionAccount(t *testing.T) {
	_, st, c := newService(t)
	ca := &countingAccounts{AccountStore: st}
	sv, err := New(Opts{Accounts: ca, Idle: 10 * time.Minute, Params: cheap, Clock: c.now, Recheck: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	check := func(s *Session, touch bool) (*Session, int) {
		t.Helper()
		n := ca.count()
		got, err := sv.Check(ctx, s.ID, touch)
		if err != nil {
			t.Fatalf("check (touch %v): %v", touch, err)
		}
		return got, ca.count() - n
	}
	s, _ := sv.Login(ctx, "li.na", "secret-pass", "10.0.0.1")
	for range 3 {
		if _, n := check(s, false); n != 0 {
			t.Fatalf("a page read within Recheck read the account %d times", n)
		}
	}
	if _, n := check(s, true); n != 1 {
		t.Fatalf("an action read the account %d times, want 1", n)
	}
	c.add(time.Second)
	if _, n := check(s, false); n != 1 {
		t.Fatalf("a page read after Recheck read the account %d times, want 1", n)
	}

	// Through the Service: the next page read has the new counters.
	if err := sv.ChangeAccess(ctx, "boss", "li.na", queue.RoleCounter, nil, []string{"4"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := check(s, false); !got.MayCounter("hospital", "4") || got.MayCounter("hospital", "3") {
		t.Fatalf("after ChangeAccess: counters %v", got.Counters)
	}

	// From another process: the next action ends the session; a page
	// read, once Recheck has passed.
	if err := SetDisabled(ctx, st, "li.na", true, c.now()); err != nil {
		t.Fatal(err)
	}
	if _, n := check(s, false); n != 0 {
		t.Fatal("page read within Recheck went to the store")
	}
	if _, err := sv.Check(ctx, s.ID, true); !errors.Is(err, ErrNoSession) {
		t.Fatalf("action after a disable: %v", err)
	}
	if err := SetDisabled(ctx, st, "li.na", false, c.now()); err != nil {
		t.Fatal(err)
	}
	s, _ = sv.Login(ctx, "li.na", "secret-pass", "10.0.0.1")
	if err := SetDisabled(ctx, st, "li.na", true, c.now()); err != nil {
		t.Fatal(err)
	}
	c.add(time.Second)
	if _, err := sv.Check(ctx, s.ID, false); !errors.Is(err, ErrNoSession) {
		t.Fatalf("page read after a disable and Recheck: %v", err)
	}
	if err := SetDisabled(ctx, st, "li.na", false, c.now()); err != nil {
		t.Fatal(err)
	}
	s, _ = sv.Login(ctx, "li.na", "secret-pass", "10.0.0.1")
	if err := SetPassword(ctx, st, "li.na", "another-pass", cheap, c.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Check(ctx, s.ID, true); !errors.Is(err, ErrNoSession) {
		t.Fatalf("action after a new password: %v", err)
	}
}
