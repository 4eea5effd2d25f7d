// Package config loads and validates the nowserving configuration: the
// store, the listeners, logging, the sites with their services and counters,
// and the devices allowed to connect.
//
// A configuration is read from a YAML file, then overridden by NOWSERVING_*
// environment variables (key path upper-cased, "." replaced by "_", e.g.
// NOWSERVING_STORE_DSN for store.dsn), then by command-line flags registered
// with [BindFlags]. Every scalar key outside a list can be overridden (store,
// listen, log, http.public_url, notify's settings; the table is derived
// from the struct tags, see [Overrides]); lists (sites, devices, boards,
// tokens...) come from the file.
//
// viper is used only here, always through viper.New(). Unknown keys are an
// error, and [Config.Validate] reports every problem at once, each naming the
// key path and saying why, e.g.
//
//	sites[0].services[1].width: must be 1..6, got 9
//
// The package does not import the domain package: cmd/nowserving maps these
// plain structs onto it.
package config

import (
	"io"
	"log/slog"
	"time"
)

// Config is a whole nowserving configuration.
type Config struct {
	Store   Store    `mapstructure:"store"`
	Listen  Listen   `mapstructure:"listen"`
	Log     Log      `mapstructure:"log"`
	Sites   []Site   `mapstructure:"sites"`
	Devices []Device `mapstructure:"devices"`

	// Device hardware sections (printers, led, voice) are added below by
	// their owners: one typed field each, checked by a step called from
	// Config.validate. Until then such keys are rejected as unknown.

	// Printers are network ticket printers (hardware.go).
	Printers []Printer `mapstructure:"printers"`
	// LED holds the LED boards' serial lines and boards.
	LED LED `mapstructure:"led"`
	// Voice holds the voice zones.
	Voice Voice `mapstructure:"voice"`
	// Keypads are buses of wired serial keypads.
	Keypads []Keypads `mapstructure:"keypads"`
	// HTTP holds the ticket status pages' public address and the API
	// clients (http.go).
	HTTP HTTP `mapstructure:"http"`
	// Notify holds the receivers of notifications (notify.go).
	Notify Notify `mapstructure:"notify"`
	// Retention says how long stored rows are kept (retention.go).
	Retention Retention `mapstructure:"retention"`
	// Reports are the reports sent on a schedule (reports.go).
	Reports Reports `mapstructure:"reports"`
}

// Driver names a database engine.
type Driver string

// The supported store drivers.
const (
	DriverSQLite   Driver = "sqlite"
	DriverPostgres Driver = "postgres"
	DriverMySQL    Driver = "mysql"
)

// Store says where the tickets live.
type Store struct {
	// Driver is sqlite, postgres or mysql.
	Driver Driver `mapstructure:"driver" usage:"store driver: sqlite, postgres or mysql"`
	// DSN is a file path for sqlite, a postgres:// URL (or key=value string)
	// for postgres, and user:pass@tcp(host:port)/db for mysql.
	DSN string `mapstructure:"dsn" usage:"store DSN: sqlite file, postgres://..., or user:pass@tcp(host:port)/db"`
	// Batch is the maximum number of requests applied in one group-commit
	// transaction.
	Batch int `mapstructure:"batch" usage:"maximum requests per group-commit transaction"`
	// Timeout is the deadline of every store transaction the engine runs
	// and of the /readyz write probe: a database that does not answer in
	// time fails the request as unavailable (ERROR 0x41, retryable) instead
	// of holding the device past its own request timeout. Default
	// DefaultStoreTimeout; at most MaxStoreTimeout.
	Timeout time.Duration `mapstructure:"timeout" usage:"deadline of each store transaction and of the readiness probe"`
	// Pool caps the connections of a server database's pool (PostgreSQL,
	// MySQL; SQLite's readers): DefaultStorePool. Several daemons on one
	// server add up: keep their sum below its max_connections.
	Pool int `mapstructure:"pool" usage:"connections of the database pool"`
	// Committers is how many group-commit transactions a daemon on a
	// server database runs at once, each for its own share of the sites:
	// DefaultStoreCommitters. Several daemons on one database add up, and
	// on a database short of CPU more, smaller transactions cost more per
	// ticket: give each daemon fewer (README "Several daemons"). SQLite
	// always has one (one writer).
	Committers int `mapstructure:"committers" usage:"group-commit transactions at once on a server database"`
	// Poll is how often a daemon on a shared server database reads the
	// store's versions for events other daemons committed, while devices
	// wait for events (and, on PostgreSQL, LISTEN is down): DefaultPoll.
	Poll time.Duration `mapstructure:"poll" usage:"poll for other daemons' events while devices wait for them"`
	// PollIdle is that poll with no device waiting, and behind a working
	// LISTEN on PostgreSQL (a safety net): DefaultPollIdle.
	PollIdle time.Duration `mapstructure:"poll_idle" usage:"poll for other daemons' events when idle (or behind PostgreSQL LISTEN)"`
	// ReleaseAfter is how long a daemon on a server database goes on
	// serving devices while no store transaction succeeds: past it, it
	// closes their sessions with ERROR 0x41 (request id 0), so devices
	// that know another daemon move there (once per outage).
	// DefaultReleaseAfter; at most MaxReleaseAfter.
	ReleaseAfter time.Duration `mapstructure:"release_after" usage:"close device sessions after the store has failed this long, so devices move to another daemon"`
}

// DefaultReleaseAfter is store.release_after when it is not set: with a
// second or less to notice, devices of a daemon whose database is gone
// are on another daemon within 5 s of the first failure; and it outlasts
// the store deadline's own retries (a request times out after 3 s).
const DefaultReleaseAfter = 3 * time.Second

// MaxReleaseAfter bounds store.release_after.
const MaxReleaseAfter = time.Minute

// Defaults and bounds of store.pool, store.committers, store.poll and
// store.poll_idle.
const (
	DefaultStorePool       = 20
	MaxStorePool           = 1000
	DefaultStoreCommitters = 4
	MaxStoreCommitters     = 64
	DefaultPoll            = 50 * time.Millisecond
	MinPoll                = 5 * time.Millisecond
	DefaultPollIdle        = time.Second
	MaxPollIdle            = time.Minute
)

// DefaultStoreTimeout is store.timeout when it is not set: well inside the
// 5 s a device client waits for an answer.
const DefaultStoreTimeout = 3 * time.Second

// MaxStoreTimeout bounds store.timeout: a longer deadline would outlast the
// devices' request timeout and the daemon's shutdown grace.
const MaxStoreTimeout = 10 * time.Second

// Listen holds the network listeners.
type Listen struct {
	// Protocol is the host:port of the device protocol (TCP).
	Protocol string `mapstructure:"protocol" usage:"device protocol address host:port"`
	// TLS enables TLS on the device protocol when both files are set.
	TLS TLS `mapstructure:"tls" usage:"for the device protocol"`
	// HTTP is the host:port for metrics, health, API and web display;
	// empty disables it.
	HTTP string `mapstructure:"http" usage:"HTTP address host:port for metrics, health, API and pages (empty: off)"`
	// HTTPTLS serves HTTPS on listen.http when both files are set (the same
	// options as TLS; both listeners may use the same certificate).
	HTTPTLS TLS `mapstructure:"http_tls" usage:"for the HTTP listener"`
	// Appointments, when set, is the host:port of a listener of its own for
	// the appointments API (slot lists, bookings, cancel, confirm,
	// check-in): listen.http then answers those routes 421 misdirected,
	// naming it. It serves at most AppointmentsMaxConnections connections
	// at once (the next wait in the kernel's backlog, costing the daemon
	// nothing, a poll or two, then are answered 429 at the door) and
	// closes a keep-alive connection idle for
	// AppointmentsIdleTimeout, so that a rush of appointments cannot take
	// the CPU the kiosks and counters need. It takes listen.http_tls.
	// Empty: the appointments API is served on listen.http.
	Appointments string `mapstructure:"appointments" usage:"address host:port of the appointments API's own listener (empty: on listen.http)"`
	// AppointmentsMaxConnections caps the connections listen.appointments
	// serves at once.
	AppointmentsMaxConnections int `mapstructure:"appointments_max_connections" usage:"connections listen.appointments serves at once; more wait in the kernel's backlog a poll or two, then get 429"`
	// AppointmentsIdleTimeout closes a connection of listen.appointments
	// idle this long between requests.
	AppointmentsIdleTimeout time.Duration `mapstructure:"appointments_idle_timeout" usage:"idle keep-alive time of a listen.appointments connection"`
	// MaxConnections caps concurrent authenticated device sessions;
	// connections still authenticating do not count.
	MaxConnections int `mapstructure:"max_connections" usage:"maximum authenticated device sessions"`
	// MaxPending caps connections that have not authenticated yet; one more
	// closes the oldest of them (of the host with the most).
	MaxPending int `mapstructure:"max_pending" usage:"maximum connections not authenticated yet"`
	// HandshakeTimeout is how long a connection may take from connecting to
	// a verified AUTH.
	HandshakeTimeout time.Duration `mapstructure:"handshake_timeout" usage:"time from connect to authentication"`
	// Heartbeat is the interval of protocol heartbeats.
	Heartbeat time.Duration `mapstructure:"heartbeat" usage:"protocol heartbeat interval"`
	// RateLimit is the average requests per second each device may send
	// (a token bucket; past it ERROR 0x30 with a time to retry after);
	// 0 turns the limit off, e.g. to measure throughput with few device ids.
	RateLimit float64 `mapstructure:"rate_limit" usage:"requests per second each device may send on average (0: no limit)"`
}

// DefaultRateLimit is listen.rate_limit when it is not set: far above what
// a kiosk or a keypad sends, low enough that one device stuck in a loop
// cannot hold the committer.
const DefaultRateLimit = 10

// MaxRateLimit bounds listen.rate_limit: WELCOME announces it in 16 bits.
const MaxRateLimit = 65535

// Defaults and bounds of listen.appointments_max_connections and
// listen.appointments_idle_timeout: a few dozen connections keep two
// cores busy with appointments (each request holds its connection for
// tenths of a millisecond of CPU, or while it waits for the store), and an
// idle connection holds a place only for seconds.
const (
	DefaultAppointmentsMaxConnections = 64
	MaxAppointmentsMaxConnections     = 10000
	DefaultAppointmentsIdleTimeout    = 5 * time.Second
	MaxAppointmentsIdleTimeout        = 2 * time.Minute
)

// TLS names a PEM certificate and key file; both or neither.
type TLS struct {
	Cert string `mapstructure:"cert" usage:"TLS certificate file"`
	Key  string `mapstructure:"key" usage:"TLS key file"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.Cert != "" && t.Key != "" }

// Log configures the daemon's slog handler.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `mapstructure:"level" usage:"log level: debug, info, warn or error"`
	// Format is text or json.
	Format string `mapstructure:"format" usage:"log format: text or json"`
}

// SlogLevel returns Level as a slog.Level (info when unknown).
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// NewLogger returns a logger writing to w in Format at Level.
func (l Log) NewLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: l.SlogLevel()}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Names maps a language tag ("en", "zh") to a display text.
type Names map[string]string

// Pick returns the text for the first of langs that has one, or "".
func (n Names) Pick(langs ...string) string {
	for _, l := range langs {
		if s := n[l]; s != "" {
			return s
		}
	}
	return ""
}

// Site is a branch or hall with its own time zone, day rollover, services
// and counters.
type Site struct {
	// ID is unique, [a-z0-9-]+.
	ID string `mapstructure:"id"`
	// Name is optional (tickets then show ID); when set it needs every
	// site language.
	Name Names `mapstructure:"name"`
	// Timezone is an IANA zone name such as "Asia/Shanghai".
	Timezone string `mapstructure:"timezone"`
	// Rollover is the local time at which the service day changes
	// (default 00:00).
	Rollover Clock `mapstructure:"rollover"`
	// HeldGrace is how long after the rollover a counter may still finish
	// a ticket it called or served the day before (default 4h, under 24h).
	HeldGrace time.Duration `mapstructure:"held_grace"`
	// Languages lists the site's languages, the main one first
	// (default [en]). Every service has a name in each.
	Languages []string `mapstructure:"languages"`
	// Classes maps a ticket class to its rank; lower is called first.
	// Default: emergency 0, vip 10, appointment 15, normal 20.
	Classes map[string]int `mapstructure:"classes"`
	// ClassNames gives classes their display names, in every site
	// language (kiosks show them: WELCOME.Classes); a class without one is
	// shown by a built-in English word, or its name.
	ClassNames map[string]Names `mapstructure:"class_names"`
	Services   []Service        `mapstructure:"services"`
	Counters   []Counter        `mapstructure:"counters"`
	// Resources are what patients book (appointments.go); Appointments
	// the site's booking rules.
	Resources    []Resource   `mapstructure:"resources"`
	Appointments Appointments `mapstructure:"appointments"`

	loc *time.Location // set by Validate
}

// Location returns the site's time zone (UTC if Timezone cannot be loaded,
// which Validate reports).
func (s *Site) Location() *time.Location {
	if s.loc != nil {
		return s.loc
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Service returns the service with the given code.
func (s *Site) Service(code string) (*Service, bool) {
	return find(s.Services, func(x *Service) bool { return x.Code == code })
}

// Counter returns the counter with the given id.
func (s *Site) Counter(id string) (*Counter, bool) {
	return find(s.Counters, func(x *Counter) bool { return x.ID == id })
}

// Rank returns the rank of a ticket class.
func (s *Site) Rank(class string) (int, bool) {
	r, ok := s.Classes[class]
	return r, ok
}

// TimeoutAction says what happens to a called ticket nobody starts in time.
type TimeoutAction string

// The call time-out actions.
const (
	TimeoutNoShow  TimeoutAction = "noshow"
	TimeoutRequeue TimeoutAction = "requeue"
)

// Service is one queue: its numbers, hours and ordering rules.
type Service struct {
	// Code is unique in the site, [A-Z0-9]{1,8}.
	Code string `mapstructure:"code"`
	Name Names  `mapstructure:"name"`
	// Prefix is printed before the number, [A-Z0-9]{0,4}; default Code.
	Prefix string `mapstructure:"prefix"`
	// Width is the zero-padded number width, 1..6 (default 3).
	Width int `mapstructure:"width"`
	// DailyCap is the maximum number of tickets per service day; 0 = no cap.
	DailyCap int `mapstructure:"daily_cap"`
	// Hours lists opening hours; empty means always open.
	Hours []Hours `mapstructure:"hours"`
	// AvgService is the average service time, for wait estimates
	// (default 5m).
	AvgService time.Duration `mapstructure:"avg_service"`
	// WaitTarget is the wait beyond which metrics and the console report a
	// breach; 0 = none.
	WaitTarget time.Duration `mapstructure:"wait_target"`
	// MaxWait promotes a ticket that has waited this long; 0 = off.
	MaxWait time.Duration `mapstructure:"max_wait"`
	// RevisitAfter places a revisit exactly this many places after the head
	// (default 3).
	RevisitAfter int `mapstructure:"revisit_after"`
	// ReentryAfter places a re-entered no-show this many places after the
	// head (default RevisitAfter/2).
	ReentryAfter int `mapstructure:"reentry_after"`
	// MaxReentries is how many times a no-show may re-enter (default 2).
	MaxReentries int `mapstructure:"max_reentries"`
	// CallTimeout turns a called ticket not started in time into
	// CallTimeoutAction; 0 = off.
	CallTimeout time.Duration `mapstructure:"call_timeout"`
	// CallTimeoutAction is noshow or requeue (default noshow).
	CallTimeoutAction TimeoutAction `mapstructure:"call_timeout_action"`
	// Ratio, when set, serves one priority ticket after every
	// NormalPerPriority normal ones.
	Ratio *Ratio `mapstructure:"ratio"`
}

// Hours is one opening window on the listed days.
type Hours struct {
	// Days are written mon..sun; empty means every day.
	Days []time.Weekday `mapstructure:"days"`
	// Open is inclusive, Close exclusive; Open < Close (no overnight
	// windows; split them in two).
	Open  Clock `mapstructure:"open"`
	Close Clock `mapstructure:"close"`
}

// Ratio serves one ticket of the Priority classes after every
// NormalPerPriority tickets of other classes.
type Ratio struct {
	Priority          []string `mapstructure:"priority"`
	NormalPerPriority int      `mapstructure:"normal_per_priority"`
}

// Policy is how a counter serving several services picks the next ticket.
type Policy string

// The counter policies.
const (
	// PolicyStrict serves the services in the listed order.
	PolicyStrict Policy = "strict"
	// PolicyWeighted serves the longest wait multiplied by the weight.
	PolicyWeighted Policy = "weighted"
)

// Counter is a window that calls tickets.
type Counter struct {
	// ID is the counter number, unique in the site, 1..9999 written in
	// decimal, e.g. "5": the protocol, LED boards and keypads address
	// counters by number.
	ID string `mapstructure:"id"`
	// Name is optional; when set it needs every site language.
	Name Names `mapstructure:"name"`
	// Services are served in this order (strict) or by weight (weighted).
	// A bare code is accepted for {service: CODE, weight: 1}.
	Services []CounterService `mapstructure:"services"`
	// Policy is strict or weighted (default strict).
	Policy Policy `mapstructure:"policy"`
	// Zone is the voice zone announcing this counter; empty = site default.
	Zone string `mapstructure:"zone"`
}

// CounterService is one service of a counter with its weight (default 1).
type CounterService struct {
	Service string `mapstructure:"service"`
	Weight  int    `mapstructure:"weight"`
}

// Role is what a device may do.
type Role string

// The device roles.
const (
	RoleKiosk   Role = "kiosk"
	RoleKeypad  Role = "keypad"
	RoleDisplay Role = "display"
	RoleConsole Role = "console"
)

// Device is the credential of one device allowed on the protocol.
type Device struct {
	ID   string `mapstructure:"id"`
	Role Role   `mapstructure:"role"`
	// Site is required, except for a console where empty means every site.
	Site string `mapstructure:"site"`
	// Counter is required for a keypad and forbidden otherwise.
	Counter string `mapstructure:"counter"`
	// Secret is the shared HMAC secret, at least 16 characters. After
	// Load it holds the value of SecretEnv when that is set.
	Secret string `mapstructure:"secret"`
	// SecretEnv names an environment variable holding the secret.
	SecretEnv string `mapstructure:"secret_env"`
	// Printer, for a kiosk with no printer of its own, is the id of the
	// network printer (printers[].id) its tickets print on.
	Printer string `mapstructure:"printer"`
	// Daemons are the protocol addresses (host:port) of the daemons the
	// device may use, tried in order: on failure it moves to the next one
	// (PROTOCOL.md §7). Empty: the one daemon of listen.protocol.
	Daemons []string `mapstructure:"daemons"`
	// Lang is the one language of a keypad's LCD lines and of a console's
	// screen (names and words), one of its site's languages. Empty: the
	// site's first language (a console's --lang overrides it).
	Lang string `mapstructure:"lang"`
}

// find returns the first element of xs that match takes.
func find[T any](xs []T, match func(*T) bool) (*T, bool) {
	for i := range xs {
		if match(&xs[i]) {
			return &xs[i], true
		}
	}
	return nil, false
}

// Site returns the site with the given id.
func (c *Config) Site(id string) (*Site, bool) {
	return find(c.Sites, func(x *Site) bool { return x.ID == id })
}

// Device returns the device with the given id.
func (c *Config) Device(id string) (*Device, bool) {
	return find(c.Devices, func(x *Device) bool { return x.ID == id })
}

// DefaultClasses returns the default class ranks.
func DefaultClasses() map[string]int {
	return map[string]int{"emergency": 0, "vip": 10, "appointment": 15, "normal": 20}
}

// DefaultConfig returns the defaults of the top-level sections; it has no
// sites or devices. Load decodes the file on top of it.
func DefaultConfig() Config {
	return Config{
		Store: Store{Driver: DriverSQLite, DSN: "nowserving.db", Batch: 64, Timeout: DefaultStoreTimeout,
			Pool: DefaultStorePool, Committers: DefaultStoreCommitters, Poll: DefaultPoll, PollIdle: DefaultPollIdle,
			ReleaseAfter: DefaultReleaseAfter},
		Listen: Listen{
			Protocol:         "127.0.0.1:7400",
			HTTP:             "127.0.0.1:7480",
			MaxConnections:   10000,
			MaxPending:       256,
			HandshakeTimeout: 3 * time.Second,
			Heartbeat:        10 * time.Second,
			RateLimit:        DefaultRateLimit,

			AppointmentsMaxConnections: DefaultAppointmentsMaxConnections,
			AppointmentsIdleTimeout:    DefaultAppointmentsIdleTimeout,
		},
		Log: Log{Level: "info", Format: "text"},
	}
}

// Defaults for omitted per-service and per-counter values.
const (
	DefaultWidth        = 3
	DefaultAvgService   = 5 * time.Minute
	DefaultRevisitAfter = 3
	DefaultMaxReentries = 2
)

// applyDefaults fills omitted values of sites, services and counters.
// isSet reports whether a key path (as in Problem.Key) was given, so that an
// explicit zero is kept.
func applyDefaults(c *Config, isSet func(key string) bool) {
	for i := range c.Sites {
		s := &c.Sites[i]
		sk := keyf("sites[%d]", i)
		if !isSet(sk+".languages") && len(s.Languages) == 0 {
			s.Languages = []string{"en"}
		}
		if !isSet(sk+".classes") && len(s.Classes) == 0 {
			s.Classes = DefaultClasses()
		}
		for j := range s.Services {
			v := &s.Services[j]
			vk := keyf("%s.services[%d]", sk, j)
			orDefault(isSet, vk+".prefix", &v.Prefix, v.Code)
			orDefault(isSet, vk+".width", &v.Width, DefaultWidth)
			orDefault(isSet, vk+".avg_service", &v.AvgService, DefaultAvgService)
			orDefault(isSet, vk+".revisit_after", &v.RevisitAfter, DefaultRevisitAfter)
			orDefault(isSet, vk+".reentry_after", &v.ReentryAfter, v.RevisitAfter/2)
			orDefault(isSet, vk+".max_reentries", &v.MaxReentries, DefaultMaxReentries)
			orDefault(isSet, vk+".call_timeout_action", &v.CallTimeoutAction, TimeoutNoShow)
		}
		applyAppointmentDefaults(s, sk, isSet)
		for j := range s.Counters {
			ct := &s.Counters[j]
			ck := keyf("%s.counters[%d]", sk, j)
			orDefault(isSet, ck+".policy", &ct.Policy, PolicyStrict)
			for k := range ct.Services {
				orDefault(isSet, keyf("%s.services[%d].weight", ck, k), &ct.Services[k].Weight, 1)
			}
		}
	}
	applyHardwareDefaults(c, isSet)
	applyNotifyDefaults(c, isSet)
	applyReportDefaults(c)
	applyRetentionDefaults(c, isSet)
}

// orDefault sets *v to d when the file did not give key; isSet as in
// applyDefaults, so that an explicit zero is kept.
func orDefault[T any](isSet func(key string) bool, key string, v *T, d T) {
	if !isSet(key) {
		*v = d
	}
}
