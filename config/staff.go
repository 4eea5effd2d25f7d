package config

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Staff configures the browser pages for people (http.staff): counter
// clerks, supervisors and admins log in with accounts kept in the
// database (`nowserving user add`).
type Staff struct {
	// SessionIdle ends a login session unused for that long (0: 30 min).
	SessionIdle time.Duration `mapstructure:"session_idle" usage:"end a browser login session unused for this long (0: 30m)"`
	// LoginLimit is how many failed logins a name, or a client address,
	// may have in 15 minutes before further tries wait (0: 5).
	LoginLimit int `mapstructure:"login_limit" usage:"failed logins a name or an address may have in 15 minutes before tries wait (0: 5)"`
	// TrustedHeader is single sign-on behind a reverse proxy; off unless
	// its header is set.
	TrustedHeader TrustedHeader `mapstructure:"trusted_header"`
	// DemoAccounts are created at start when no account of that name
	// exists (an existing one is left as it is). DEMO ONLY: their
	// passwords are in the file; a real installation uses `nowserving
	// user add`.
	DemoAccounts []DemoAccount `mapstructure:"demo_accounts"`
}

// TrustedHeader names the header a single sign-on proxy sets to the
// account name of the person it authenticated; it is believed only from
// the Proxies' addresses and ignored (and logged) from any other.
type TrustedHeader struct {
	Header  string   `mapstructure:"header" usage:"header a single sign-on proxy sets to the account name (empty: off)"`
	Proxies []string `mapstructure:"proxies"` // addresses or CIDR prefixes
}

// DemoAccount is one account DemoAccounts creates.
type DemoAccount struct {
	Name     string   `mapstructure:"name"`
	Password string   `mapstructure:"password"`
	Role     string   `mapstructure:"role"`
	Sites    []string `mapstructure:"sites"`
	Counters []string `mapstructure:"counters"`
}

var (
	reAccountName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	reHeaderName  = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
)

// ProxyPrefixes parses the proxies (validated: an address is a /32 or
// /128 prefix).
func (t TrustedHeader) ProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range t.Proxies {
		if pf, err := parseProxy(p); err == nil {
			out = append(out, pf)
		}
	}
	return out
}

func parseProxy(p string) (netip.Prefix, error) {
	if strings.Contains(p, "/") {
		return netip.ParsePrefix(p)
	}
	a, err := netip.ParseAddr(p)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func (c *Config) validateStaff(ps *problems) {
	s := c.HTTP.Staff
	if s.SessionIdle != 0 && (s.SessionIdle < time.Minute || s.SessionIdle > 24*time.Hour) {
		ps.add("http.staff.session_idle", "must be between 1m and 24h (0: 30m), got %s", s.SessionIdle)
	}
	if s.LoginLimit < 0 || s.LoginLimit > 1000 {
		ps.add("http.staff.login_limit", "must be 0 to 1000 (0: 5), got %d", s.LoginLimit)
	}
	th := s.TrustedHeader
	switch {
	case th.Header != "" && !reHeaderName.MatchString(th.Header):
		ps.add("http.staff.trusted_header.header", "must be a header name (letters, digits, dashes), got %q", th.Header)
	case th.Header != "" && len(th.Proxies) == 0:
		ps.add("http.staff.trusted_header.proxies", "required with a header: the proxies' addresses, the only ones it is believed from")
	case th.Header == "" && len(th.Proxies) > 0:
		ps.add("http.staff.trusted_header.header", "required with proxies")
	}
	for i, p := range th.Proxies {
		if _, err := parseProxy(p); err != nil {
			ps.add(keyf("http.staff.trusted_header.proxies[%d]", i), "must be an IP address or CIDR prefix, got %q", p)
		}
	}
	var names []string
	for i, a := range s.DemoAccounts {
		k := keyf("http.staff.demo_accounts[%d]", i)
		switch {
		case !reAccountName.MatchString(a.Name):
			ps.add(k+".name", "must be 1 to 64 of a-z 0-9 . _ - (starting with a letter or digit), got %q", a.Name)
		case slices.Contains(names, a.Name):
			ps.add(k+".name", "duplicate account %q", a.Name)
		}
		names = append(names, a.Name)
		if len(a.Password) < 8 || len(a.Password) > 256 {
			ps.add(k+".password", "must be 8 to 256 bytes, got %d", len(a.Password))
		}
		if !slices.Contains([]string{"counter", "supervisor", "admin"}, a.Role) {
			ps.add(k+".role", "must be counter, supervisor or admin, got %q", a.Role)
		}
		for j, st := range a.Sites {
			if _, ok := c.Site(st); !ok {
				ps.add(keyf("%s.sites[%d]", k, j), "unknown site %q", st)
			}
		}
		if a.Role == "counter" && len(a.Counters) == 0 {
			ps.add(k+".counters", "required for the counter role: the counters the account may act at")
		}
		for j, ct := range a.Counters {
			if !c.counterSomewhere(a.Sites, ct) {
				ps.add(keyf("%s.counters[%d]", k, j), "no counter %q at the account's sites", ct)
			}
		}
	}
}

// counterSomewhere reports whether a counter id exists at one of sites
// (every site when none).
func (c *Config) counterSomewhere(sites []string, id string) bool {
	for _, s := range c.Sites {
		if len(sites) > 0 && !slices.Contains(sites, s.ID) {
			continue
		}
		for _, ct := range s.Counters {
			if ct.ID == id {
				return true
			}
		}
	}
	return false
}
