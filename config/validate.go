package config

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	// The zone database is embedded so that a site's time zone loads on
	// machines without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Validate checks the whole configuration and returns an *Error listing
// every problem, or nil. It also resolves each site's time zone for
// Site.Location. Load calls it; call it yourself after building or changing
// a Config by hand (defaults are not applied then).
func (c *Config) Validate() error {
	if ps := c.validate(); len(ps) > 0 {
		return &Error{Problems: ps}
	}
	return nil
}

var (
	reSiteID    = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	reLang      = regexp.MustCompile(`^[a-z]{2,3}(-[a-z0-9]{2,8})*$`)
	reClass     = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	reCode      = regexp.MustCompile(`^[A-Z0-9]{1,8}$`)
	rePrefix    = regexp.MustCompile(`^[A-Z0-9]{0,4}$`)
	reCounterID = regexp.MustCompile(`^[1-9][0-9]{0,3}$`)
	reZone      = regexp.MustCompile(`^[a-z0-9-]*$`)
	reDeviceID  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// deviceIDRule says what reDeviceID accepts (devices and printers).
const deviceIDRule = "must be 1 to 64 letters, digits, '.', '_' or '-'"

// MinSecret is the minimum length of a device secret.
const MinSecret = 16

func (c *Config) validate() problems {
	var ps problems
	c.validateTop(&ps)
	if len(c.Sites) == 0 {
		ps.add("sites", "at least one site is required")
	}
	siteAt := map[string]int{}
	for i := range c.Sites {
		s := &c.Sites[i]
		k := keyf("sites[%d]", i)
		ps.unique(siteAt, i, s.ID, k+".id", "site id", "sites")
		s.validate(k, &ps)
	}
	deviceAt := map[string]int{}
	for i := range c.Devices {
		d := &c.Devices[i]
		k := keyf("devices[%d]", i)
		ps.unique(deviceAt, i, d.ID, k+".id", "device id", "devices")
		c.validateDevice(k, d, &ps)
	}
	c.validateHardware(&ps)
	c.validateHTTP(&ps)
	c.validateNotify(&ps)
	c.validateReports(&ps)
	c.validateRetention(&ps)
	return ps
}

func (c *Config) validateTop(ps *problems) {
	switch c.Store.Driver {
	case DriverSQLite, DriverPostgres, DriverMySQL:
	default:
		ps.add("store.driver", "must be sqlite, postgres or mysql, got %q", c.Store.Driver)
	}
	if c.Store.DSN == "" {
		ps.add("store.dsn", "required")
	} else if msg := checkHosts(c.Store.Driver, c.Store.DSN); msg != "" {
		ps.add("store.dsn", "%s", msg)
	}
	if c.Store.ReleaseAfter <= 0 || c.Store.ReleaseAfter > MaxReleaseAfter {
		ps.add("store.release_after", "must be more than 0 and at most %s, got %s", MaxReleaseAfter, c.Store.ReleaseAfter)
	}
	if c.Store.Batch < 1 || c.Store.Batch > 10000 {
		ps.add("store.batch", "must be 1..10000, got %d", c.Store.Batch)
	}
	if c.Store.Timeout <= 0 || c.Store.Timeout > MaxStoreTimeout {
		ps.add("store.timeout", "must be more than 0 and at most %s (devices give up after 5s), got %s", MaxStoreTimeout, c.Store.Timeout)
	}
	if c.Store.Pool < 1 || c.Store.Pool > MaxStorePool {
		ps.add("store.pool", "must be 1..%d, got %d", MaxStorePool, c.Store.Pool)
	}
	if c.Store.Committers < 1 || c.Store.Committers > MaxStoreCommitters {
		ps.add("store.committers", "must be 1..%d, got %d", MaxStoreCommitters, c.Store.Committers)
	}
	if c.Store.Poll < MinPoll || c.Store.Poll > MaxPollIdle {
		ps.add("store.poll", "must be %s..%s, got %s", MinPoll, MaxPollIdle, c.Store.Poll)
	}
	if c.Store.PollIdle < c.Store.Poll || c.Store.PollIdle > MaxPollIdle {
		ps.add("store.poll_idle", "must be store.poll (%s)..%s, got %s", c.Store.Poll, MaxPollIdle, c.Store.PollIdle)
	}
	if c.Listen.Protocol == "" {
		ps.add("listen.protocol", "required")
	} else if err := checkAddr(c.Listen.Protocol); err != "" {
		ps.add("listen.protocol", "%s", err)
	}
	if c.Listen.HTTP != "" {
		if err := checkAddr(c.Listen.HTTP); err != "" {
			ps.add("listen.http", "%s", err)
		}
	}
	c.validateAppointmentsListener(ps)
	checkTLS("listen.tls", c.Listen.TLS, ps)
	checkTLS("listen.http_tls", c.Listen.HTTPTLS, ps)
	if c.Listen.MaxConnections < 1 {
		ps.add("listen.max_connections", "must be at least 1, got %d", c.Listen.MaxConnections)
	}
	if c.Listen.MaxPending < 1 {
		ps.add("listen.max_pending", "must be at least 1, got %d", c.Listen.MaxPending)
	}
	if c.Listen.HandshakeTimeout < 3*time.Second {
		// PROTOCOL.md promises devices at least 3 s, which they cannot learn.
		ps.add("listen.handshake_timeout", "must be at least 3s, got %s", c.Listen.HandshakeTimeout)
	}
	if c.Listen.Heartbeat <= 0 {
		ps.add("listen.heartbeat", "must be positive, got %s", c.Listen.Heartbeat)
	}
	if c.Listen.RateLimit < 0 || c.Listen.RateLimit > MaxRateLimit {
		ps.add("listen.rate_limit", "must be 0 (off) to %d requests/s per device, got %g", MaxRateLimit, c.Listen.RateLimit)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		ps.add("log.level", "must be debug, info, warn or error, got %q", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		ps.add("log.format", "must be text or json, got %q", c.Log.Format)
	}
}

// checkAddr returns why addr is not a host:port, or "".
// validateAppointmentsListener checks listen.appointments and its limits.
func (c *Config) validateAppointmentsListener(ps *problems) {
	l := c.Listen
	if n := l.AppointmentsMaxConnections; n < 1 || n > MaxAppointmentsMaxConnections {
		ps.add("listen.appointments_max_connections", "must be 1..%d, got %d", MaxAppointmentsMaxConnections, n)
	}
	if d := l.AppointmentsIdleTimeout; d <= 0 || d > MaxAppointmentsIdleTimeout {
		ps.add("listen.appointments_idle_timeout", "must be more than 0 and at most %s, got %s", MaxAppointmentsIdleTimeout, d)
	}
	if l.Appointments == "" {
		return
	}
	if err := checkAddr(l.Appointments); err != "" {
		ps.add("listen.appointments", "%s", err)
		return
	}
	if l.HTTP == "" {
		ps.add("listen.appointments", "needs listen.http (the API's tokens, health and metrics are served there)")
		return
	}
	for _, o := range []struct{ key, addr string }{{"listen.http", l.HTTP}, {"listen.protocol", l.Protocol}} {
		if _, port, _ := net.SplitHostPort(l.Appointments); port != "0" && o.addr == l.Appointments {
			ps.add("listen.appointments", "must differ from %s, both are %s", o.key, o.addr)
		}
	}
}

func checkAddr(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Sprintf("want host:port, got %q", addr)
	}
	var n int
	if _, err := fmt.Sscanf(port, "%d", &n); err != nil || n < 0 || n > 65535 || fmt.Sprint(n) != port {
		return fmt.Sprintf("bad port in %q", addr)
	}
	return ""
}

func (s *Site) validate(k string, ps *problems) {
	ps.match(k+".id", s.ID, reSiteID, "must be lowercase letters, digits and dashes")
	langs := s.validateLanguages(k, ps)
	checkNames(k+".name", s.Name, langs, false, ps)
	s.validateDay(k, ps)
	s.validateClasses(k, ps)
	s.validateClassNames(k, langs, ps)
	codeAt := s.validateServices(k, langs, ps)
	s.validateCounters(k, langs, codeAt, ps)
	s.validateAppointments(k, langs, codeAt, ps)
}

// validateLanguages checks the site languages and returns the valid ones,
// in order: names are checked against them so that one bad tag gives one
// message, not one per name.
func (s *Site) validateLanguages(k string, ps *problems) []string {
	if len(s.Languages) == 0 {
		ps.add(k+".languages", "at least one language is required")
	}
	var langs []string
	for i, l := range s.Languages {
		lk := keyf("%s.languages[%d]", k, i)
		switch {
		case !reLang.MatchString(l):
			ps.add(lk, "want a lowercase language tag such as \"en\" or \"zh\", got %q", l)
		case slices.Contains(langs, l):
			ps.add(lk, "duplicate language %q", l)
		default:
			langs = append(langs, l)
		}
	}
	return langs
}

// validateDay checks the held grace, the time zone (resolving it for
// Location) and the rollover.
func (s *Site) validateDay(k string, ps *problems) {
	if s.HeldGrace < 0 || s.HeldGrace >= 24*time.Hour {
		ps.add(k+".held_grace", "must be from 0 (the default, 4h) to under 24h, got %s", s.HeldGrace)
	}
	s.loc = nil
	if s.Timezone == "" {
		ps.add(k+".timezone", "required (an IANA zone such as \"Europe/Paris\")")
	} else if loc, err := time.LoadLocation(s.Timezone); err != nil {
		ps.add(k+".timezone", "unknown time zone %q", s.Timezone)
	} else {
		s.loc = loc
	}
	if s.Rollover.Minutes() >= 24*60 {
		ps.add(k+".rollover", "must be before 24:00, got %s", s.Rollover)
	}
}

// validateClasses checks the ticket classes and their ranks.
func (s *Site) validateClasses(k string, ps *problems) {
	if len(s.Classes) == 0 {
		ps.add(k+".classes", "at least one class is required")
	} else if _, ok := s.Classes["normal"]; !ok {
		ps.add(k+".classes", "class \"normal\" is required")
	}
	for _, name := range sortedKeys(s.Classes) {
		ck := k + ".classes." + name
		if !reClass.MatchString(name) {
			ps.add(ck, "class name must be lowercase letters, digits and _")
		}
		if r := s.Classes[name]; r < 0 {
			ps.add(ck, "rank must not be negative, got %d", r)
		}
	}
}

// validateClassNames checks the display names of the classes: each names
// a class of the site, in every site language.
func (s *Site) validateClassNames(k string, langs []string, ps *problems) {
	for _, name := range sortedKeys(s.ClassNames) {
		ck := k + ".class_names." + name
		if _, ok := s.Classes[name]; !ok {
			ps.add(ck, "class %q is not in %s.classes", name, k)
			continue
		}
		checkNames(ck, s.ClassNames[name], langs, true, ps)
	}
}

// validateServices checks the services; it returns the index of each
// service code.
func (s *Site) validateServices(k string, langs []string, ps *problems) (codeAt map[string]int) {
	if len(s.Services) == 0 {
		ps.add(k+".services", "at least one service is required")
	}
	codeAt, prefixAt := map[string]int{}, map[string]int{}
	for i := range s.Services {
		v := &s.Services[i]
		vk := keyf("%s.services[%d]", k, i)
		ps.unique(codeAt, i, v.Code, vk+".code", "service code", k+".services")
		if j, dup := prefixAt[v.Prefix]; dup {
			ps.add(vk+".prefix", "prefix %q already used by service %s: numbers would be ambiguous", v.Prefix, s.Services[j].Code)
		} else {
			prefixAt[v.Prefix] = i
		}
		s.validateService(vk, v, langs, ps)
	}
	return codeAt
}

// validateCounters checks the counters against the services of codeAt,
// and that every service has a counter.
func (s *Site) validateCounters(k string, langs []string, codeAt map[string]int, ps *problems) {
	if len(s.Counters) == 0 {
		ps.add(k+".counters", "at least one counter is required")
	}
	served := map[string]bool{}
	ids := newIDList(k+".counters", "counter id", reCounterID, "must be a counter number 1..9999 (devices address counters by number)")
	for i := range s.Counters {
		ct := &s.Counters[i]
		ck := ids.check(i, ct.ID, ps)
		checkNames(ck+".name", ct.Name, langs, false, ps)
		switch ct.Policy {
		case PolicyStrict, PolicyWeighted:
		default:
			ps.add(ck+".policy", "must be strict or weighted, got %q", ct.Policy)
		}
		if !reZone.MatchString(ct.Zone) {
			ps.add(ck+".zone", "must be lowercase letters, digits and dashes, got %q", ct.Zone)
		}
		if len(ct.Services) == 0 {
			ps.add(ck+".services", "at least one service is required")
		}
		seen := map[string]bool{}
		for j, cs := range ct.Services {
			sk := keyf("%s.services[%d]", ck, j)
			if _, ok := codeAt[cs.Service]; !ok {
				ps.add(sk+".service", "unknown service %q in site %q", cs.Service, s.ID)
			} else if seen[cs.Service] {
				ps.add(sk+".service", "service %q listed twice", cs.Service)
			}
			seen[cs.Service] = true
			served[cs.Service] = true
			if cs.Weight < 1 {
				ps.add(sk+".weight", "must be at least 1, got %d", cs.Weight)
			}
		}
	}
	if len(s.Counters) > 0 {
		for i, v := range s.Services {
			if v.Code != "" && !served[v.Code] {
				ps.add(keyf("%s.services[%d]", k, i), "no counter serves service %q", v.Code)
			}
		}
	}
}

// checkNames requires a text for every site language and no other.
func checkNames(k string, n Names, langs []string, required bool, ps *problems) {
	if len(n) == 0 {
		if required {
			ps.add(k, "required, in every site language (%s)", strings.Join(langs, ", "))
		}
		return
	}
	for _, l := range langs {
		if n[l] == "" {
			ps.add(k+"."+l, "missing (site languages: %s)", strings.Join(langs, ", "))
		}
	}
	for _, l := range sortedKeys(n) {
		if !slices.Contains(langs, l) {
			ps.add(k+"."+l, "language %q is not in the site languages (%s)", l, strings.Join(langs, ", "))
		}
	}
}

func (s *Site) validateService(k string, v *Service, langs []string, ps *problems) {
	ps.match(k+".code", v.Code, reCode, "must be 1 to 8 uppercase letters or digits")
	checkNames(k+".name", v.Name, langs, true, ps)
	if !rePrefix.MatchString(v.Prefix) {
		ps.add(k+".prefix", "must be 0 to 4 uppercase letters or digits, got %q", v.Prefix)
	}
	widthOK := v.Width >= 1 && v.Width <= 6
	if !widthOK {
		ps.add(k+".width", "must be 1..6, got %d", v.Width)
	}
	switch {
	case v.DailyCap < 0:
		ps.add(k+".daily_cap", "must not be negative (0 means no cap), got %d", v.DailyCap)
	case widthOK && v.DailyCap > 0:
		if max := pow10(v.Width) - 1; v.DailyCap > max {
			ps.add(k+".daily_cap", "%d does not fit width %d (at most %d)", v.DailyCap, v.Width, max)
		}
	}
	for i, h := range v.Hours {
		hk := keyf("%s.hours[%d]", k, i)
		seen := map[time.Weekday]bool{}
		for j, d := range h.Days {
			if seen[d] {
				ps.add(keyf("%s.days[%d]", hk, j), "day %s listed twice", strings.ToLower(d.String()[:3]))
			}
			seen[d] = true
		}
		if h.Open.Minutes() >= 24*60 {
			ps.add(hk+".open", "must be before 24:00, got %s", h.Open)
		}
		if h.Open.Minutes() >= h.Close.Minutes() {
			ps.add(hk+".close", "must be after open %s, got %s (split a window across midnight in two)", h.Open, h.Close)
		}
	}
	if v.AvgService <= 0 {
		ps.add(k+".avg_service", "must be positive, got %s", v.AvgService)
	}
	for _, d := range []struct {
		key string
		val time.Duration
	}{{"wait_target", v.WaitTarget}, {"max_wait", v.MaxWait}, {"call_timeout", v.CallTimeout}} {
		if d.val < 0 {
			ps.add(k+"."+d.key, "must not be negative (0 means off), got %s", d.val)
		}
	}
	for _, n := range []struct {
		key string
		val int
	}{{"revisit_after", v.RevisitAfter}, {"reentry_after", v.ReentryAfter}, {"max_reentries", v.MaxReentries}} {
		if n.val < 0 || n.val > 1000 {
			ps.add(k+"."+n.key, "must be 0..1000, got %d", n.val)
		}
	}
	switch v.CallTimeoutAction {
	case TimeoutNoShow, TimeoutRequeue:
	default:
		ps.add(k+".call_timeout_action", "must be noshow or requeue, got %q", v.CallTimeoutAction)
	}
	if r := v.Ratio; r != nil {
		if len(r.Priority) == 0 {
			ps.add(k+".ratio.priority", "at least one priority class is required")
		}
		for i, cl := range r.Priority {
			pk := keyf("%s.ratio.priority[%d]", k, i)
			if _, ok := s.Classes[cl]; !ok {
				ps.add(pk, "unknown class %q (site classes: %s)", cl, strings.Join(sortedKeys(s.Classes), ", "))
			} else if cl == "normal" {
				ps.add(pk, "class \"normal\" cannot be a priority class")
			}
		}
		if r.NormalPerPriority < 1 {
			ps.add(k+".ratio.normal_per_priority", "must be at least 1, got %d", r.NormalPerPriority)
		}
	}
}

func (c *Config) validateDevice(k string, d *Device, ps *problems) {
	ps.match(k+".id", d.ID, reDeviceID, deviceIDRule)
	switch d.Role {
	case RoleKiosk, RoleKeypad, RoleDisplay, RoleConsole:
	default:
		ps.add(k+".role", "must be kiosk, keypad, display or console, got %q", d.Role)
	}
	var site *Site
	switch {
	case d.Site == "" && d.Role != RoleConsole:
		ps.add(k+".site", "required (only a console may watch every site)")
	case d.Site != "":
		var ok bool
		if site, ok = c.Site(d.Site); !ok {
			ps.add(k+".site", "unknown site %q", d.Site)
		}
	}
	switch {
	case d.Role == RoleKeypad && d.Counter == "":
		ps.add(k+".counter", "keypad needs a counter")
	case d.Role == RoleKeypad && site != nil:
		if _, ok := site.Counter(d.Counter); !ok {
			ps.add(k+".counter", "unknown counter %q in site %q", d.Counter, d.Site)
		}
	case d.Role != RoleKeypad && d.Counter != "":
		ps.add(k+".counter", "only a keypad has a counter (role %s)", d.Role)
	}
	if d.Lang != "" && site != nil && !slices.Contains(site.Languages, d.Lang) {
		ps.add(k+".lang", "must be one of the site's languages %v, got %q", site.Languages, d.Lang)
	}
	for i, a := range d.Daemons {
		if err := checkAddr(a); err != "" {
			ps.add(fmt.Sprintf("%s.daemons[%d]", k, i), "%s", err)
		}
	}
	if d.SecretEnv != "" {
		if len(d.Secret) < MinSecret {
			ps.add(k+".secret_env", "secret in %s must be at least %d characters, got %d", d.SecretEnv, MinSecret, len(d.Secret))
		}
	} else if len(d.Secret) < MinSecret {
		ps.add(k+".secret", "must be at least %d characters, got %d (or use secret_env)", MinSecret, len(d.Secret))
	}
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkTLS checks that a certificate and its key are set together.
func checkTLS(k string, t TLS, ps *problems) {
	if t.Cert != "" && t.Key == "" {
		ps.add(k+".key", "required when %s.cert is set", k)
	}
	if t.Key != "" && t.Cert == "" {
		ps.add(k+".cert", "required when %s.key is set", k)
	}
}
