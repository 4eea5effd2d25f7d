package config

import (
	"net"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// NotifyEmail sends each message it takes as an e-mail through an SMTP
// server: a scheduled report with the report attached, an event with its
// JSON as the text. Unlike a webhook or a command it takes no events
// unless it lists them (Events): by default only the reports that name it.
type NotifyEmail struct {
	Name string `mapstructure:"name"`
	// SMTP is the host:port of the server (a relay, or a submission port
	// with Username).
	SMTP string `mapstructure:"smtp"`
	// From is the sender's address; To the recipients'.
	From string   `mapstructure:"from"`
	To   []string `mapstructure:"to"`
	// Username and Password (or PasswordEnv, an environment variable
	// holding it) authenticate with AUTH PLAIN, which is sent only over
	// TLS or to the host itself.
	Username    string `mapstructure:"username"`
	Password    string `mapstructure:"password"`
	PasswordEnv string `mapstructure:"password_env"`
	// StartTLS is auto (the default: STARTTLS when the server offers it),
	// always (refuse to send without it) or never.
	StartTLS string `mapstructure:"start_tls"`
	// Events are the event types it takes too; none by default.
	Events []string `mapstructure:"events"`
}

// Reports are the reports a daemon sends on its own.
type Reports struct {
	// Schedules are the scheduled reports; each goes out once per period
	// however many daemons share the database.
	Schedules []ReportSchedule `mapstructure:"schedules"`
}

// ReportSchedule sends one site's report of the day before every day,
// or of the week before (Monday to Sunday) every Monday, at a time of day,
// to receivers of the notify section, through the outbox: a receiver that
// is down gets it later, with the outbox's retries and dead letters.
type ReportSchedule struct {
	// Name names the schedule in the outbox and the logs: renaming it
	// sends the current period's report again.
	Name string `mapstructure:"name"`
	Site string `mapstructure:"site"`
	// Every is day or week.
	Every string `mapstructure:"every"`
	// At is the site's local time of day, HH:MM, after the service day
	// ended (the site's rollover); default 07:00.
	At string `mapstructure:"at"`
	// Format is the report's format: csv (the default), json or table.
	Format string `mapstructure:"format"`
	// To names the receivers (webhooks, commands, emails).
	To []string `mapstructure:"to"`
}

// ReportFormats are the formats a scheduled report may take; the report
// package renders them.
var ReportFormats = []string{"csv", "json", "table"}

var reHHMM = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// applyReportDefaults fills a schedule's omitted at and format.
func applyReportDefaults(c *Config) {
	for i := range c.Reports.Schedules {
		s := &c.Reports.Schedules[i]
		if s.At == "" {
			s.At = "07:00"
		}
		if s.Format == "" {
			s.Format = "csv"
		}
	}
}

// validateEmail checks an e-mail receiver (its name is checked with the
// other receivers').
func validateEmail(k string, e NotifyEmail, ps *problems) {
	if host, port, err := net.SplitHostPort(e.SMTP); err != nil || host == "" {
		ps.add(k+".smtp", "must be host:port, got %q", e.SMTP)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		ps.add(k+".smtp", "port must be 1..65535, got %q", port)
	}
	if _, err := mail.ParseAddress(e.From); err != nil {
		ps.add(k+".from", "must be an e-mail address, got %q", e.From)
	}
	if len(e.To) == 0 {
		ps.add(k+".to", "required: at least one address")
	}
	for i, to := range e.To {
		if _, err := mail.ParseAddress(to); err != nil {
			ps.add(keyf("%s.to[%d]", k, i), "must be an e-mail address, got %q", to)
		}
	}
	if e.Password != "" && e.Username == "" {
		ps.add(k+".username", "required with a password")
	}
	if !slices.Contains([]string{"", "auto", "always", "never"}, e.StartTLS) {
		ps.add(k+".start_tls", "must be auto, always or never, got %q", e.StartTLS)
	}
	checkPatterns(k+".events", e.Events, ps)
}

// validateReports checks the schedules: unique names, a known site, every
// receiver named in the notify section.
func (c *Config) validateReports(ps *problems) {
	receivers := map[string]bool{}
	for _, h := range c.Notify.Webhooks {
		receivers[h.Name] = true
	}
	for _, cmd := range c.Notify.Commands {
		receivers[cmd.Name] = true
	}
	for _, e := range c.Notify.Emails {
		receivers[e.Name] = true
	}
	names := map[string]bool{}
	for i, s := range c.Reports.Schedules {
		k := keyf("reports.schedules[%d]", i)
		switch {
		case !reReceiver.MatchString(s.Name):
			ps.add(k+".name", "must be 1 to 32 lower-case letters, digits or dashes, got %q", s.Name)
		case names[s.Name]:
			ps.add(k+".name", "duplicate schedule name %q", s.Name)
		}
		names[s.Name] = true
		if !slices.ContainsFunc(c.Sites, func(site Site) bool { return site.ID == s.Site }) {
			ps.add(k+".site", "unknown site %q", s.Site)
		}
		if s.Every != "day" && s.Every != "week" {
			ps.add(k+".every", "must be day or week, got %q", s.Every)
		}
		if !reHHMM.MatchString(s.At) {
			ps.add(k+".at", "must be a time of day HH:MM, got %q", s.At)
		}
		if !slices.Contains(ReportFormats, s.Format) {
			ps.add(k+".format", "must be one of %s, got %q", strings.Join(ReportFormats, ", "), s.Format)
		}
		if len(s.To) == 0 {
			ps.add(k+".to", "required: the receivers of the notify section to send it to")
		}
		for j, r := range s.To {
			if !receivers[r] {
				ps.add(keyf("%s.to[%d]", k, j), "no receiver %q in notify.webhooks, notify.commands or notify.emails", r)
			}
		}
	}
}
