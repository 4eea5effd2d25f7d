package config

import (
	"net/url"
	"regexp"
	"time"
)

// HTTP configures what the daemon serves on listen.http besides health and
// metrics: the public address of the ticket status pages and the API
// clients.
type HTTP struct {
	// PublicURL is the address customers' phones reach the daemon at, e.g.
	// "https://queue.example.org"; the QR code on a ticket opens
	// PublicURL/t/{site}/{number}. Empty prints no status-page QR code.
	PublicURL string `mapstructure:"public_url" usage:"public address of the ticket status pages, for the QR code (empty: none)"`
	// Tokens are the API clients (hospital or bank systems).
	Tokens []Token `mapstructure:"tokens"`
	// Staff configures the people's pages: logins, sessions, single
	// sign-on and demo accounts (staff.go).
	Staff Staff `mapstructure:"staff"`
	// SlotCache bounds the slots the free-slot lists of the appointments
	// API keep in memory, 32 bytes each; 0: booking.DefaultCacheSlots
	// (2,500,000, about 80 MB: every slot of 1.1 M twice, by resource
	// and by day). Past it the lists read least recently are dropped and
	// read again from the store when asked for.
	SlotCache int `mapstructure:"slot_cache" usage:"slots the appointments API keeps in memory for its slot lists, 32 bytes each, encoded answers included (0: 2500000)"`
	// MaxSlotReads, MaxBookings and BookingQueue bound what the
	// appointments API sends the store at a time, so that kiosks and
	// counters keep it: slot lists read from the store at once (the next
	// is 429 overloaded), bookings at the store at once and bookings
	// waiting for them (the next is 429 overloaded). 0: the defaults of
	// package booking (8, 16 and 64).
	MaxSlotReads int `mapstructure:"max_slot_reads" usage:"slot lists read from the store at once; the next is 429 overloaded (0: 8)"`
	MaxBookings  int `mapstructure:"max_bookings" usage:"bookings at the store at once (0: 16)"`
	BookingQueue int `mapstructure:"booking_queue" usage:"bookings waiting for the store; the next is 429 overloaded (0: 64)"`
	// MaxRunning bounds the appointment requests that work (use the CPU)
	// at once; 0: one less than GOMAXPROCS, at least 1, so that a CPU
	// stays for kiosks and counters. ReadWait and BookingWait are the
	// longest a slot list and a booking wait for their turn before they
	// are 429 overloaded; 0: 20 ms and 200 ms (package booking).
	MaxRunning  int           `mapstructure:"max_running" usage:"appointment requests working at once (0: one less than GOMAXPROCS, at least 1)"`
	ReadWait    time.Duration `mapstructure:"read_wait" usage:"longest a slot list waits for its turn; then 429 overloaded (0: 20ms)"`
	BookingWait time.Duration `mapstructure:"booking_wait" usage:"longest a booking waits for its turn; then 429 overloaded (0: 200ms)"`
}

// MaxAppointmentWait bounds http.read_wait and http.booking_wait: a
// request waits for its turn less than a client's timeout.
const MaxAppointmentWait = 10 * time.Second

// The bounds of http.slot_cache other than 0: at least a day of a large
// resource.
const (
	MinSlotCache = 1000
	MaxSlotCache = 100_000_000
)

// Token is one API client's bearer token.
type Token struct {
	// Name is recorded as the actor "api:NAME" of what the client does.
	Name string `mapstructure:"name"`
	// Token is the secret, at least MinSecret characters; or TokenEnv
	// names an environment variable holding it.
	Token    string `mapstructure:"token"`
	TokenEnv string `mapstructure:"token_env"`
	// Sites the token may act on; empty means every site.
	Sites []string `mapstructure:"sites"`
}

var reTokenName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// resolveTokens reads token_env values into Token.
func (c *Config) resolveTokens(lookup func(string) (string, bool), ps *problems) {
	for i := range c.HTTP.Tokens {
		t := &c.HTTP.Tokens[i]
		fromEnv(lookup, keyf("http.tokens[%d]", i), "token", t.TokenEnv, &t.Token, ps)
	}
}

func (c *Config) validateHTTP(ps *problems) {
	c.validateStaff(ps)
	if n := c.HTTP.SlotCache; n != 0 && (n < MinSlotCache || n > MaxSlotCache) {
		ps.add("http.slot_cache", "must be 0 (the default) or %d to %d slots, got %d", MinSlotCache, MaxSlotCache, n)
	}
	for _, k := range []struct {
		key string
		n   int
	}{{"http.max_slot_reads", c.HTTP.MaxSlotReads}, {"http.max_bookings", c.HTTP.MaxBookings}, {"http.booking_queue", c.HTTP.BookingQueue},
		{"http.max_running", c.HTTP.MaxRunning}} {
		if k.n < 0 || k.n > 10000 {
			ps.add(k.key, "must be 0 (the default) to 10000, got %d", k.n)
		}
	}
	for _, k := range []struct {
		key string
		d   time.Duration
	}{{"http.read_wait", c.HTTP.ReadWait}, {"http.booking_wait", c.HTTP.BookingWait}} {
		if k.d < 0 || k.d > MaxAppointmentWait {
			ps.add(k.key, "must be 0 (the default) to %s, got %s", MaxAppointmentWait, k.d)
		}
	}
	if u := c.HTTP.PublicURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			ps.add("http.public_url", "must be an http:// or https:// address, got %q", u)
		}
	}
	names := map[string]int{}
	secrets := map[string]int{}
	for i, t := range c.HTTP.Tokens {
		k := keyf("http.tokens[%d]", i)
		if !reTokenName.MatchString(t.Name) {
			ps.add(k+".name", "must be 1 to 32 lower-case letters, digits or dashes, got %q", t.Name)
		} else if j, dup := names[t.Name]; dup {
			ps.add(k+".name", "duplicate token name %q (also http.tokens[%d])", t.Name, j)
		} else {
			names[t.Name] = i
		}
		switch {
		case len(t.Token) < MinSecret && t.TokenEnv != "":
			ps.add(k+".token_env", "token in %s must be at least %d characters, got %d", t.TokenEnv, MinSecret, len(t.Token))
		case len(t.Token) < MinSecret:
			ps.add(k+".token", "must be at least %d characters, got %d (or use token_env)", MinSecret, len(t.Token))
		default:
			if j, dup := secrets[t.Token]; dup {
				ps.add(k+".token", "same token as http.tokens[%d]: each client needs its own", j)
			} else {
				secrets[t.Token] = i
			}
		}
		for j, s := range t.Sites {
			if _, ok := c.Site(s); !ok {
				ps.add(keyf("%s.sites[%d]", k, j), "unknown site %q", s)
			}
		}
	}
}
