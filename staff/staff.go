package staff

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
)

// Errors of a login or a session.
var (
	// ErrBadLogin is an unknown name or a wrong password: the answer does
	// not tell which.
	ErrBadLogin = errors.New("staff: wrong name or password")
	// ErrDisabled is a disabled account (told only to the right password).
	ErrDisabled = errors.New("staff: account disabled")
	// ErrRateLimited is too many failed logins for the name or the address.
	ErrRateLimited = errors.New("staff: too many failed logins; wait and try again")
	// ErrNoSession is a missing, unknown or idle-expired session.
	ErrNoSession = errors.New("staff: not logged in")
)

var (
	reName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	reID   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`) // a site's or counter's id, as queue.Site.Validate wants
)

// CheckName reports whether name can be an account name: 1 to 64
// lower-case letters, digits, dots, dashes or underscores, starting with a
// letter or digit.
func CheckName(name string) error {
	if !reName.MatchString(name) {
		return fmt.Errorf("staff: name %.70q: want 1 to 64 of a-z 0-9 . _ - (starting with a letter or digit)", name)
	}
	return nil
}

// MaxList bounds an account's sites and its counters (the store keeps
// each list in 2,000 characters).
const MaxList = 50

// CheckAccount validates an account's fields other than its hash.
func CheckAccount(a queue.Account) error {
	if err := CheckName(a.Name); err != nil {
		return err
	}
	if !slices.Contains(queue.Roles, a.Role) {
		return fmt.Errorf("staff: role %.40q: want counter, supervisor or admin", a.Role)
	}
	for _, l := range [][]string{a.Sites, a.Counters} {
		for _, v := range l {
			if !reID.MatchString(v) {
				return fmt.Errorf("staff: site or counter %.70q: want 1 to 32 of A-Z a-z 0-9 _ -", v)
			}
		}
	}
	if len(a.Sites) > MaxList || len(a.Counters) > MaxList {
		return fmt.Errorf("staff: at most %d sites and %d counters", MaxList, MaxList)
	}
	if a.Role == queue.RoleCounter && len(a.Counters) == 0 {
		return errors.New("staff: a counter account needs at least one counter")
	}
	return nil
}

// Session is one logged-in person.
type Session struct {
	ID   string // the cookie's value
	CSRF string // the token every action must carry
	Name string
	// Role, Sites and Counters are the account's, read again from the
	// store on every action (Service.Check), so a disabled or changed
	// account takes effect at once.
	Role     queue.Role
	Sites    []string
	Counters []string
	last     time.Time
	// read is when the account was last read from the store (zero: it
	// must be read again), hash its password hash then: a session whose
	// account has another password since it opened ends.
	read time.Time
	hash string
}

// MaySite reports whether the session may act on site.
func (s *Session) MaySite(site string) bool {
	return len(s.Sites) == 0 || slices.Contains(s.Sites, site)
}

// MayCounter reports whether the session may act at counter of site: a
// counter clerk at the counters given to them, a supervisor or admin at
// every counter of their sites.
func (s *Session) MayCounter(site, counter string) bool {
	if !s.MaySite(site) {
		return false
	}
	return s.Role != queue.RoleCounter || slices.Contains(s.Counters, counter)
}

// Opts configures a Service.
type Opts struct {
	Accounts queue.AccountStore // required
	// Idle ends a session unused for that long (default 30 min).
	Idle time.Duration
	// LoginLimit is how many failed logins a name, or an address, may
	// have within LoginWindow before further tries are refused until the
	// window has passed (defaults 5 and 15 min).
	LoginLimit  int
	LoginWindow time.Duration
	Params      Params           // zero: DefaultParams
	Clock       func() time.Time // default time.Now
	// Recheck is how long the account a session last read serves the
	// reads a page makes by itself (Check without touch: a counter page
	// reads its board after every event of the site, a hundred reads a
	// second with a few pages open); default 1 s. Every action reads the
	// account again, and a change through the Service (the admin page)
	// takes effect at once on every request; a change that another process
	// wrote (`nowserving user`) reaches those page reads within Recheck.
	Recheck time.Duration
}

// Service logs people in and keeps their sessions (in memory: a restart
// logs everyone out).
type Service struct {
	o     Opts
	mu    sync.Mutex
	byID  map[string]*Session
	fails map[string][]time.Time // "name:" or "addr:" key → failure times in the window
	// gen counts the account changes made through the Service: an account
	// read before one is not kept for a session (Check).
	gen uint64
	// dummy is a hash checked for unknown names, so that a login for a
	// name that does not exist costs as long as one that does; made at
	// the first such login, not at every start.
	dummyOnce sync.Once
	dummy     string
}

// MaxSessions bounds the sessions kept; past it the least recently used
// is dropped.
const MaxSessions = 10000

// New builds a service.
func New(o Opts) (*Service, error) {
	if o.Accounts == nil {
		return nil, errors.New("staff: new: no account store")
	}
	o.Idle = positive.Or(o.Idle, 30*time.Minute)
	o.LoginLimit = positive.Or(o.LoginLimit, 5)
	o.LoginWindow = positive.Or(o.LoginWindow, 15*time.Minute)
	if o.Params == (Params{}) {
		o.Params = DefaultParams
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	o.Recheck = positive.Or(o.Recheck, time.Second)
	return &Service{o: o, byID: map[string]*Session{}, fails: map[string][]time.Time{}}, nil
}

// Idle is the sessions' idle time-out.
func (sv *Service) Idle() time.Duration { return sv.o.Idle }

// HashPassword hashes a new password with the service's costs.
func (sv *Service) HashPassword(pw string) (string, error) { return Hash(pw, sv.o.Params) }

// limited reports whether key has used up its failures; it forgets the
// ones out of the window.
func (sv *Service) limited(key string, now time.Time) bool {
	f := sv.fails[key]
	i := 0
	for i < len(f) && now.Sub(f[i]) >= sv.o.LoginWindow {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(sv.fails, key)
		return false
	}
	sv.fails[key] = f
	return len(f) >= sv.o.LoginLimit
}

// maxFailKeys bounds the names and addresses with failures remembered: a
// flood of made-up names first drops those whose window has passed, then
// (still over) forgets the names' failures, and the addresses' only if
// they alone pass half the bound, so memory stays bounded and the
// per-address limit still holds. Each time it brings the keys down to
// half the bound, so the next such scan is maxFailKeys/2 failures away:
// brought just under the bound, every failure of the flood scanned all
// 100,000 keys again, about 35 ms with sv.mu held, which every staff
// page's session check waits for.
const maxFailKeys = 100000

func (sv *Service) fail(keys []string, now time.Time) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if len(sv.fails) >= maxFailKeys {
		for k := range sv.fails {
			sv.limited(k, now)
		}
		for _, names := range []bool{true, false} {
			for k := range sv.fails {
				if len(sv.fails) <= maxFailKeys/2 {
					break
				}
				if !names || strings.HasPrefix(k, "name:") {
					delete(sv.fails, k)
				}
			}
		}
	}
	for _, k := range keys {
		sv.fails[k] = append(sv.fails[k], now)
	}
}

// Login checks name and password from addr (the client's address) and
// opens a session. A name or an address with LoginLimit failures in the
// window is refused without checking the password.
func (sv *Service) Login(ctx context.Context, name, password, addr string) (*Session, error) {
	now := sv.o.Clock()
	keys := []string{"name:" + name, "addr:" + addr}
	sv.mu.Lock()
	limited := sv.limited(keys[0], now) || sv.limited(keys[1], now)
	sv.mu.Unlock()
	if limited {
		return nil, ErrRateLimited
	}
	if CheckName(name) != nil || len(password) > MaxPassword {
		sv.fail(keys, now)
		return nil, ErrBadLogin
	}
	a, err := sv.o.Accounts.Account(ctx, name)
	if errors.Is(err, queue.ErrUnknownAccount) {
		sv.dummyOnce.Do(func() { sv.dummy, _ = Hash("not a password of anyone", sv.o.Params) })
		Verify(sv.dummy, password)
		sv.fail(keys, now)
		return nil, ErrBadLogin
	}
	if err != nil {
		return nil, err
	}
	if !Verify(a.Hash, password) {
		sv.fail(keys, now)
		return nil, ErrBadLogin
	}
	if a.Disabled {
		return nil, ErrDisabled
	}
	return sv.open(a, now), nil
}

// Open opens a session for an account already authenticated elsewhere
// (the trusted header of a single sign-on proxy). A disabled or unknown
// account gets none.
func (sv *Service) Open(ctx context.Context, name string) (*Session, error) {
	a, err := sv.o.Accounts.Account(ctx, name)
	if errors.Is(err, queue.ErrUnknownAccount) {
		return nil, ErrBadLogin
	}
	if err != nil {
		return nil, err
	}
	if a.Disabled {
		return nil, ErrDisabled
	}
	return sv.open(a, sv.o.Clock()), nil
}

func (sv *Service) open(a queue.Account, now time.Time) *Session {
	s := &Session{ID: NewToken(), CSRF: NewToken(), Name: a.Name, Role: a.Role, Sites: a.Sites, Counters: a.Counters, last: now,
		read: now, hash: a.Hash}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	delete(sv.fails, "name:"+a.Name)
	if len(sv.byID) >= MaxSessions {
		var oldest *Session
		for _, o := range sv.byID {
			if oldest == nil || o.last.Before(oldest.last) {
				oldest = o
			}
		}
		delete(sv.byID, oldest.ID)
	}
	sv.byID[s.ID] = s
	return s
}

// Check returns the session of id with its account as it is now (its
// role, sites and counters); ErrNoSession when there is none, it has been
// idle past the time-out, or the account is gone, disabled or has another
// password (the session then ends). touch restarts the idle time: what the
// person does touches it, what the page reads by itself (following the
// queue) does not, so a page left open still times out. A touch also reads
// the account from the store again; a read without one takes the account
// the session read within Opts.Recheck, if it did.
func (sv *Service) Check(ctx context.Context, id string, touch bool) (*Session, error) {
	now := sv.o.Clock()
	sv.mu.Lock()
	s, ok := sv.byID[id]
	if ok && now.Sub(s.last) >= sv.o.Idle {
		delete(sv.byID, id)
		ok = false
	}
	var cp Session
	if ok {
		if touch {
			s.last = now
		}
		cp = *s
	}
	gen := sv.gen
	sv.mu.Unlock()
	if !ok {
		return nil, ErrNoSession
	}
	if !touch && !cp.read.IsZero() && now.Sub(cp.read) < sv.o.Recheck {
		return &cp, nil
	}
	a, err := sv.o.Accounts.Account(ctx, cp.Name)
	if errors.Is(err, queue.ErrUnknownAccount) || (err == nil && (a.Disabled || a.Hash != cp.hash)) {
		sv.Logout(id)
		return nil, ErrNoSession
	}
	if err != nil {
		return nil, err
	}
	cp.Role, cp.Sites, cp.Counters = a.Role, a.Sites, a.Counters
	sv.mu.Lock()
	if s, ok := sv.byID[id]; ok && sv.gen == gen {
		// Kept unless a change through the Service came meanwhile: what
		// was read may be from before it.
		s.Role, s.Sites, s.Counters, s.read = a.Role, a.Sites, a.Counters, now
	}
	sv.mu.Unlock()
	return &cp, nil
}

// Logout ends the session of id.
func (sv *Service) Logout(id string) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	delete(sv.byID, id)
}
