package config

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Notify configures notifications: the receivers events are sent to
// after they commit (webhooks, commands) and how a failed delivery is
// tried again. The event's transaction writes one outbox row per receiver
// that takes its type, so a receiver that is down only delays its own
// messages.
type Notify struct {
	// Events are the event types a receiver takes when it lists none:
	// event types ("CALLED"), prefixes with * ("BOOKING_*") or *. Default
	// [BOOKING_*], every booking event.
	Events []string `mapstructure:"events"`
	// Attempts is how many failed attempts make a message dead (kept for
	// an operator, `nowserving notify requeue`); default 12.
	Attempts int `mapstructure:"attempts" usage:"delivery attempts of a notification before it is dead"`
	// Backoff bounds the pause after a failed attempt: Min after the
	// first, doubling up to Max (default 2s to 15m).
	Backoff NotifyBackoff `mapstructure:"backoff"`
	// Batch is how many messages a daemon claims at once (default 50).
	Batch int `mapstructure:"batch" usage:"notifications read at once from the outbox"`
	// Timeout bounds one attempt: a webhook's answer, a command's run
	// (default 10s).
	Timeout time.Duration `mapstructure:"timeout" usage:"deadline of one delivery"`
	// Poll is how often a daemon looks for due messages (default 1s).
	Poll time.Duration `mapstructure:"poll" usage:"how often the outbox is read"`
	// Webhooks and Commands are the receivers; their names are unique
	// among both.
	Webhooks []Webhook `mapstructure:"webhooks"`
	// Commands get each message on the standard input of a command.
	Commands []NotifyCommand `mapstructure:"commands"`
	// Emails send each message as an e-mail over SMTP (reports.go).
	Emails []NotifyEmail `mapstructure:"emails"`
}

// Webhook receives each message as a signed JSON POST.
type Webhook struct {
	// Name names the receiver in the outbox, logs and metrics: renaming it
	// strands the messages not yet delivered under the old name.
	Name string `mapstructure:"name"`
	// URL is the http:// or https:// address posted to.
	URL string `mapstructure:"url"`
	// Secret signs the body (X-Nowserving-Signature), at least MinSecret
	// characters; or SecretEnv names an environment variable holding it.
	Secret    string `mapstructure:"secret"`
	SecretEnv string `mapstructure:"secret_env"`
	// Events overrides notify.events for this receiver.
	Events []string `mapstructure:"events"`
}

// NotifyCommand receives each message on the standard input of a shell
// command (e.g. an SMS gateway's client).
type NotifyCommand struct {
	Name string `mapstructure:"name"`
	// Run is run with /bin/sh -c; exit status 0 means delivered.
	Run string `mapstructure:"run"`
	// Events overrides notify.events for this receiver.
	Events []string `mapstructure:"events"`
}

// NotifyBackoff is the range of the pause between attempts.
type NotifyBackoff struct {
	Min time.Duration `mapstructure:"min" usage:"shortest pause between delivery attempts"`
	Max time.Duration `mapstructure:"max" usage:"longest pause between delivery attempts"`
}

// Defaults of the notify section.
var (
	DefaultNotifyEvents = []string{"BOOKING_*"}
	DefaultNotify       = Notify{Attempts: 12, Backoff: NotifyBackoff{Min: 2 * time.Second, Max: 15 * time.Minute},
		Batch: 50, Timeout: 10 * time.Second, Poll: time.Second}
)

// EventTypes are the event types a notify pattern may name: the ticket
// and counter events and the booking events.
var EventTypes = []string{
	"ISSUED", "CALLED", "RECALLED", "NO_SHOW", "REENTERED", "TRANSFERRED", "SERVING", "DONE", "CANCELLED",
	"EXPIRED", "COUNTER_OPENED", "COUNTER_PAUSED", "PRINT_FAILED",
	"BOOKING_BOOKED", "BOOKING_CANCELLED", "BOOKING_CHECKED_IN", "BOOKING_MISSED", "BOOKING_HELD", "BOOKING_EXPIRED",
	// REPORT is no event: a receiver that lists only it takes no events,
	// only the scheduled reports that name it (reports.go).
	"REPORT",
}

var (
	reReceiver = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	reEventPat = regexp.MustCompile(`^(\*|[A-Z][A-Z0-9_]*\*?)$`)
)

// applyNotifyDefaults fills omitted notify values; isSet as in
// applyDefaults, so an explicit zero is kept (and refused).
func applyNotifyDefaults(c *Config, isSet func(key string) bool) {
	n, d := &c.Notify, DefaultNotify
	orDefault(isSet, "notify.events", &n.Events, slices.Clone(DefaultNotifyEvents))
	orDefault(isSet, "notify.attempts", &n.Attempts, d.Attempts)
	orDefault(isSet, "notify.batch", &n.Batch, d.Batch)
	orDefault(isSet, "notify.backoff.min", &n.Backoff.Min, d.Backoff.Min)
	orDefault(isSet, "notify.backoff.max", &n.Backoff.Max, d.Backoff.Max)
	orDefault(isSet, "notify.timeout", &n.Timeout, d.Timeout)
	orDefault(isSet, "notify.poll", &n.Poll, d.Poll)
}

// resolveNotify reads the webhooks' secret_env values into Secret, and
// the e-mail receivers' password_env into Password.
func (c *Config) resolveNotify(lookup func(string) (string, bool), ps *problems) {
	for i := range c.Notify.Webhooks {
		h := &c.Notify.Webhooks[i]
		fromEnv(lookup, keyf("notify.webhooks[%d]", i), "secret", h.SecretEnv, &h.Secret, ps)
	}
	for i := range c.Notify.Emails {
		e := &c.Notify.Emails[i]
		fromEnv(lookup, keyf("notify.emails[%d]", i), "password", e.PasswordEnv, &e.Password, ps)
	}
}

func (c *Config) validateNotify(ps *problems) {
	n := &c.Notify
	checkPatterns("notify.events", n.Events, ps)
	if n.Attempts < 1 || n.Attempts > 100 {
		ps.add("notify.attempts", "must be 1..100, got %d", n.Attempts)
	}
	if n.Backoff.Min <= 0 || n.Backoff.Min > time.Hour {
		ps.add("notify.backoff.min", "must be more than 0 and at most 1h, got %s", n.Backoff.Min)
	}
	if n.Backoff.Max < n.Backoff.Min || n.Backoff.Max > 24*time.Hour {
		ps.add("notify.backoff.max", "must be at least notify.backoff.min (%s) and at most 24h, got %s", n.Backoff.Min, n.Backoff.Max)
	}
	if n.Batch < 1 || n.Batch > 1000 {
		ps.add("notify.batch", "must be 1..1000, got %d", n.Batch)
	}
	if n.Timeout <= 0 || n.Timeout > 5*time.Minute {
		ps.add("notify.timeout", "must be more than 0 and at most 5m, got %s", n.Timeout)
	}
	if n.Poll < 10*time.Millisecond || n.Poll > time.Minute {
		ps.add("notify.poll", "must be 10ms..1m, got %s", n.Poll)
	}
	names := map[string]string{}
	name := func(k, v string) {
		switch {
		case !reReceiver.MatchString(v):
			ps.add(k, "must be 1 to 32 lower-case letters, digits or dashes, got %q", v)
		case names[v] != "":
			ps.add(k, "duplicate receiver name %q (also %s)", v, names[v])
		default:
			names[v] = k
		}
	}
	for i, h := range n.Webhooks {
		k := keyf("notify.webhooks[%d]", i)
		name(k+".name", h.Name)
		if u, err := url.Parse(h.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			ps.add(k+".url", "must be an http:// or https:// address, got %q", h.URL)
		}
		switch {
		case len(h.Secret) < MinSecret && h.SecretEnv != "":
			ps.add(k+".secret_env", "secret in %s must be at least %d characters, got %d", h.SecretEnv, MinSecret, len(h.Secret))
		case len(h.Secret) < MinSecret:
			ps.add(k+".secret", "must be at least %d characters, got %d (or use secret_env)", MinSecret, len(h.Secret))
		}
		checkPatterns(k+".events", h.Events, ps)
	}
	for i, cmd := range n.Commands {
		k := keyf("notify.commands[%d]", i)
		name(k+".name", cmd.Name)
		if strings.TrimSpace(cmd.Run) == "" {
			ps.add(k+".run", "required")
		}
		checkPatterns(k+".events", cmd.Events, ps)
	}
	for i, e := range n.Emails {
		k := keyf("notify.emails[%d]", i)
		name(k+".name", e.Name)
		validateEmail(k, e, ps)
	}
}

// checkPatterns checks a list of event patterns: each well formed and
// matching at least one of EventTypes.
func checkPatterns(k string, pats []string, ps *problems) {
	for i, p := range pats {
		pk := keyf("%s[%d]", k, i)
		if !reEventPat.MatchString(p) {
			ps.add(pk, "want an event type such as CALLED, a prefix and * such as BOOKING_*, or *; got %q", p)
			continue
		}
		prefix, wild := strings.CutSuffix(p, "*")
		if !slices.ContainsFunc(EventTypes, func(t string) bool { return t == p || wild && strings.HasPrefix(t, prefix) }) {
			ps.add(pk, "matches no event type, got %q (known: %s)", p, strings.Join(EventTypes, ", "))
		}
	}
}
