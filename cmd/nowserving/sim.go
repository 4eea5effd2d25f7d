package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

func init() { commands = append(commands, newSimCmd) }

// defaultAddr is the protocol address of `make run`.
const defaultAddr = "127.0.0.1:7400"

// defaultSimConfig is read for device credentials when neither --config
// nor --device is given (the demo configuration of `make run`).
const defaultSimConfig = "testdata/hospital.yaml"

// simFlags are the flags every sim subcommand shares.
type simFlags struct {
	addr, config, device, secret, site string
	timeout                            time.Duration
	retries                            int
	verbose                            bool
	tls                                bool   // TLS with the system roots
	tlsCA                              string // PEM file of the CA to trust
	tlsInsecure                        bool   // TLS without verifying the daemon
}

// tlsFlags adds the TLS flags to fs.
func (f *simFlags) tlsFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS, trusting the system's CAs")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "connect with TLS, trusting the CA certificate(s) in this PEM file")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure", false, "connect with TLS without checking the daemon's certificate (tests only)")
}

// tlsConfig returns the TLS configuration the flags ask for, or nil.
func (f *simFlags) tlsConfig() (*tls.Config, error) {
	if !f.tls && f.tlsCA == "" && !f.tlsInsecure {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.tlsInsecure}
	if f.tlsCA != "" {
		pem, err := os.ReadFile(f.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("sim: read --tls-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("sim: --tls-ca %s: no PEM certificate in it", f.tlsCA)
		}
	}
	return c, nil
}

func newSimCmd() *cobra.Command {
	f := &simFlags{}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Play a kiosk, a counter keypad or a display against a running daemon",
		Long: `sim plays the devices of a site over the device protocol, against a daemon
started with "nowserving serve". Device ids and secrets come from --config
(by default ` + defaultSimConfig + ` when it exists): the first device of the
needed role (and counter) is used unless --device names one. --device with
--secret works without any configuration file.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.addr, "addr", "", "daemon protocol address (default: listen.protocol of --config, else "+defaultAddr+")")
	pf.StringVar(&f.config, "config", "", "YAML configuration to read devices from (default "+defaultSimConfig+" if present)")
	pf.StringVar(&f.device, "device", "", "device id (default: the first suitable device of --config)")
	pf.StringVar(&f.secret, "secret", "", "device secret (default: from --config)")
	pf.StringVar(&f.site, "site", "", "site code (default: the device's site)")
	pf.DurationVar(&f.timeout, "timeout", 3*time.Second, "time-out of each attempt of a request")
	pf.IntVar(&f.retries, "retries", 3, "retries of a request after a time-out or a dropped connection")
	pf.BoolVarP(&f.verbose, "verbose", "v", false, "log connection events on stderr")
	f.tlsFlags(pf)
	cmd.AddCommand(newSimKioskCmd(f), newSimKeypadCmd(f), newSimDisplayCmd(f), newSimStatusCmd(f), newSimLoadCmd(f))
	return cmd
}

// simDevice is the identity a sim subcommand connects with.
type simDevice struct {
	id      string
	secret  []byte
	role    wire.Role
	site    string
	counter string // keypad binding
}

// simEnv is what the flags resolve to.
type simEnv struct {
	addr string
	tls  *tls.Config    // nil: plain TCP
	cfg  *config.Config // nil without a configuration
	log  *slog.Logger
	f    *simFlags
}

func (f *simFlags) env(cmd *cobra.Command) (*simEnv, error) {
	var err error
	e := &simEnv{f: f, log: slog.New(slog.DiscardHandler)}
	if f.verbose {
		e.log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	file := f.config
	if file == "" && (f.device == "" || f.secret == "") {
		if _, err := os.Stat(defaultSimConfig); err == nil {
			file = defaultSimConfig
		}
	}
	if file != "" {
		cfg, err := config.Load(config.Opts{File: file})
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		e.cfg = cfg
	}
	e.addr = f.addr
	if e.addr == "" && e.cfg != nil {
		if _, port, err := net.SplitHostPort(e.cfg.Listen.Protocol); err == nil && port != "0" {
			e.addr = e.cfg.Listen.Protocol
		}
	}
	if e.addr == "" {
		e.addr = defaultAddr
	}
	if e.tls, err = f.tlsConfig(); err != nil {
		return nil, err
	}
	return e, nil
}

// device picks the identity: --device (from the configuration, or with
// --secret), else the first device of the configuration with one of roles
// (in order of preference) and, when counter is set, bound to it (a console
// may act for any counter).
func (e *simEnv) device(counter string, roles ...wire.Role) (simDevice, error) {
	f := e.f
	if f.device != "" && f.secret != "" {
		d := simDevice{id: f.device, secret: []byte(f.secret), role: roles[0], site: f.site, counter: counter}
		if e.cfg != nil {
			if cd, ok := e.cfg.Device(f.device); ok {
				d.role = roleOf(cd.Role)
				d.site = pick(f.site, cd.Site)
			}
		}
		return d, nil
	}
	if e.cfg == nil {
		return simDevice{}, errors.New("sim: no device: give --config, or --device and --secret")
	}
	if f.device != "" {
		cd, ok := e.cfg.Device(f.device)
		if !ok {
			return simDevice{}, fmt.Errorf("sim: device %q is not in the configuration", f.device)
		}
		return simDevice{id: cd.ID, secret: []byte(cd.Secret), role: roleOf(cd.Role), site: pick(f.site, cd.Site), counter: pick(counter, cd.Counter)}, nil
	}
	for _, r := range roles {
		for _, cd := range e.cfg.Devices {
			if roleOf(cd.Role) != r || f.site != "" && cd.Site != "" && cd.Site != f.site {
				continue
			}
			if r == wire.RoleKeypad && counter != "" && cd.Counter != counter {
				continue
			}
			return simDevice{id: cd.ID, secret: []byte(cd.Secret), role: r, site: pick(f.site, cd.Site), counter: pick(counter, cd.Counter)}, nil
		}
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.String()
	}
	what := strings.Join(names, " or ")
	if counter != "" {
		what += " for counter " + counter
	}
	return simDevice{}, fmt.Errorf("sim: the configuration has no %s device", what)
}

// devices returns every configured device of role (for load and bench).
func (e *simEnv) devices(role wire.Role) []simDevice {
	if e.cfg == nil {
		if e.f.device != "" && e.f.secret != "" {
			return []simDevice{{id: e.f.device, secret: []byte(e.f.secret), role: role, site: e.f.site}}
		}
		return nil
	}
	var out []simDevice
	for _, cd := range e.cfg.Devices {
		if roleOf(cd.Role) == role && (e.f.site == "" || cd.Site == "" || cd.Site == e.f.site) {
			out = append(out, simDevice{id: cd.ID, secret: []byte(cd.Secret), role: role, site: pick(e.f.site, cd.Site), counter: cd.Counter})
		}
	}
	return out
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func roleOf(r config.Role) wire.Role {
	switch r {
	case config.RoleKiosk:
		return wire.RoleKiosk
	case config.RoleKeypad:
		return wire.RoleKeypad
	case config.RoleDisplay:
		return wire.RoleDisplay
	case config.RoleConsole:
		return wire.RoleConsole
	}
	return 0
}

// opts returns the client options for d.
func (e *simEnv) opts(d simDevice) client.Opts {
	o := client.Opts{
		DeviceID: d.id, Secret: d.secret, Role: d.role, Site: d.site,
		Timeout: e.f.timeout, Retries: e.f.retries, Logger: e.log,
		Firmware: "nowserving-sim/1", TLSConfig: e.tls,
	}
	if o.Retries == 0 {
		o.Retries = -1
	}
	return o
}

// dial connects as d, turning failures into messages a person can act on.
func (e *simEnv) dial(ctx context.Context, d simDevice, o client.Opts) (*client.Client, error) {
	c, err := client.Dial(ctx, e.addr, o)
	if err != nil {
		return nil, e.explain(err, d)
	}
	return c, nil
}

// unreachableError says that nothing answers at the daemon's address; it
// unwraps to the client's error (client.ErrUnreachable).
type unreachableError struct {
	addr string
	err  error
}

func (u *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the daemon at %s: is `nowserving serve` running?", u.addr)
}

func (u *unreachableError) Unwrap() error { return u.err }

// explain turns a client error into a clear message.
func (e *simEnv) explain(err error, d simDevice) error {
	var se *wire.StatusError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrAuthFailed):
		return fmt.Errorf("the daemon at %s refused device %q (role %s): check the device id, its role and its secret", e.addr, d.id, d.role)
	case errors.As(err, &se):
		return fmt.Errorf("refused: %s (code 0x%02x)", se.Msg, se.Code)
	case errors.Is(err, client.ErrUnreachable):
		return &unreachableError{addr: e.addr, err: err}
	case errors.Is(err, client.ErrHandshake) && e.tls == nil:
		return fmt.Errorf("the daemon at %s closed the session before welcoming device %q: if it listens with TLS, give --tls-ca (%v)", e.addr, d.id, err)
	case errors.Is(err, client.ErrHandshake):
		return fmt.Errorf("the daemon at %s did not complete the session for device %q: %v", e.addr, d.id, err)
	case errors.Is(err, client.ErrTimeout):
		return fmt.Errorf("the daemon at %s did not answer in time", e.addr)
	}
	return err
}

// reason says why a connection was lost: the daemon's own words when it
// sent an ERROR before closing, else what explain says.
func (e *simEnv) reason(err error, d simDevice) string {
	var se *wire.StatusError
	if errors.As(err, &se) && !errors.Is(err, wire.ErrAuthFailed) {
		return se.Msg
	}
	if err == nil {
		return ""
	}
	return e.explain(err, d).Error()
}

// counterNum is a counter id as a wire number.
func counterNum(id string) (uint32, error) {
	if id == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("sim: counter %q: want a counter number such as 1 or 12", id)
	}
	return uint32(n), nil
}

func parseClass(s string) (wire.Class, error) {
	for c := wire.ClassNormal; c <= wire.ClassReentered; c++ {
		if c.String() == strings.ToLower(s) {
			return c, nil
		}
	}
	return 0, fmt.Errorf("sim: class %q: want normal, vip, emergency, revisit, appointment or reentered", s)
}

func newSimKioskCmd(f *simFlags) *cobra.Command {
	var (
		service, class, lang, key string
		print                     bool
	)
	cmd := &cobra.Command{
		Use:   "kiosk --service CODE",
		Short: "Take a ticket as a kiosk and print it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := f.env(cmd)
			if err != nil {
				return err
			}
			cl, err := parseClass(class)
			if err != nil {
				return err
			}
			d, err := e.device("", wire.RoleKiosk, wire.RoleConsole)
			if err != nil {
				return err
			}
			c, err := e.dial(cmd.Context(), d, e.opts(d))
			if err != nil {
				return err
			}
			defer c.Close()
			t, err := c.TakeTicket(cmd.Context(), service, cl, client.TicketOpts{IdemKey: key, ESCPOS: print, Language: lang})
			if err != nil {
				return e.explain(err, d)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "ticket %s  service %s  %s\n", t.Number, t.Service, t.Class)
			fmt.Fprintf(out, "people ahead: %d\n", t.PeopleAhead)
			fmt.Fprintf(out, "estimated wait: %s\n", waitText(t.WaitSeconds))
			if print {
				if len(t.ESCPOS) == 0 {
					fmt.Fprintln(out, "(the daemon sent no printout)")
				} else {
					fmt.Fprintf(out, "--- printout (%d bytes of ESC/POS) ---\n%s", len(t.ESCPOS), escpos.Dump(t.ESCPOS))
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&service, "service", "", "service code, e.g. A (required)")
	fl.StringVar(&class, "class", "normal", "ticket class: normal, vip, emergency, revisit, appointment")
	fl.StringVar(&lang, "lang", "", "language of the printout (default: the site's first)")
	fl.StringVar(&key, "idem-key", "", "idempotency key: the same key twice gives the same ticket")
	fl.BoolVar(&print, "print", false, "ask for the ESC/POS printout and list its commands")
	_ = cmd.MarkFlagRequired("service")
	return cmd
}

// waitText renders an estimated wait in whole minutes.
func waitText(sec uint32) string {
	switch {
	case sec == 0:
		return "none"
	case sec < 60:
		return "under a minute"
	}
	m := (sec + 30) / 60
	if m == 1 {
		return "about 1 minute"
	}
	return fmt.Sprintf("about %d minutes", m)
}

func newSimKeypadCmd(f *simFlags) *cobra.Command {
	var (
		counter, toService, toCounter, key string
	)
	cmd := &cobra.Command{
		Use:   "keypad --counter ID ACTION [NUMBER]",
		Short: "Press a counter keypad key: next, call, recall, noshow, start, done, transfer, pause, resume, reenter, cancel",
		Long: `keypad acts for one counter, as its keypad (or a console) would:

  next               call the next waiting ticket
  call NUMBER        call a given ticket
  recall [NUMBER]    announce the called ticket again
  noshow [NUMBER]    the called ticket did not come
  start [NUMBER]     start serving the called ticket
  done [NUMBER]      finish serving
  transfer [NUMBER] --to-service B | --to-counter 3
  pause [REASON]     stop calls to this counter
  resume             reopen it
  reenter NUMBER     put a no-show back into the queue
  cancel NUMBER      cancel a ticket (as the console: keypads may not)

Without NUMBER an action applies to the ticket the counter is handling.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := f.env(cmd)
			if err != nil {
				return err
			}
			if counter == "" && (len(args) == 0 || args[0] != "cancel") {
				return errors.New("sim: keypad: --counter is required")
			}
			num, err := counterNum(counter)
			if err != nil {
				return err
			}
			action, arg := args[0], ""
			if len(args) > 1 {
				arg = args[1]
			}
			needArg := map[string]bool{"call": true, "reenter": true, "cancel": true}
			noArg := map[string]bool{"next": true, "resume": true}
			switch {
			case needArg[action] && arg == "":
				return fmt.Errorf("sim: keypad %s: give the ticket number, e.g. %s A001", action, action)
			case noArg[action] && arg != "":
				return fmt.Errorf("sim: keypad %s takes no argument", action)
			}
			roles := []wire.Role{wire.RoleKeypad, wire.RoleConsole}
			if action == "cancel" {
				// A keypad may not cancel (PROTOCOL.md §4): a supervisor does.
				roles = []wire.Role{wire.RoleConsole, wire.RoleKeypad}
			}
			d, err := e.device(counter, roles...)
			if err != nil {
				return err
			}
			forCounter := num
			if d.role == wire.RoleKeypad {
				forCounter = 0 // the keypad's own counter
			}
			c, err := e.dial(cmd.Context(), d, e.opts(d))
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			var opts []client.ReqOpt
			if key != "" {
				opts = append(opts, client.WithIdemKey(key))
			}
			var (
				t  *wire.Ticket
				ok *wire.OK
			)
			switch action {
			case "next":
				t, err = c.CallNext(ctx, forCounter, opts...)
			case "call":
				t, err = c.CallNumber(ctx, forCounter, arg, opts...)
			case "recall":
				t, err = c.Recall(ctx, forCounter, arg, opts...)
			case "noshow", "no-show":
				t, err = c.NoShow(ctx, forCounter, arg, opts...)
			case "start":
				t, err = c.Start(ctx, forCounter, arg, opts...)
			case "done", "complete":
				t, err = c.Complete(ctx, forCounter, arg, opts...)
			case "reenter":
				t, err = c.Reenter(ctx, forCounter, arg, opts...)
			case "cancel":
				t, err = c.Cancel(ctx, forCounter, arg, opts...)
			case "transfer":
				to := client.Target{Service: toService}
				if to.Counter, err = counterNum(toCounter); err != nil {
					return err
				}
				if to.Service == "" && to.Counter == 0 {
					return errors.New("sim: keypad transfer: give --to-service or --to-counter")
				}
				t, err = c.Transfer(ctx, forCounter, arg, to, opts...)
			case "pause":
				ok, err = c.Pause(ctx, forCounter, arg, opts...)
			case "resume":
				ok, err = c.Resume(ctx, forCounter, opts...)
			default:
				return fmt.Errorf("sim: keypad: unknown action %q (see nowserving sim keypad --help)", action)
			}
			if err != nil {
				return e.explain(err, d)
			}
			out := cmd.OutOrStdout()
			var lcd []string
			if t != nil {
				fmt.Fprintln(out, ticketLine(t))
				lcd = t.LCD
			} else {
				state := "paused"
				if action == "resume" {
					state = "open"
				}
				fmt.Fprintf(out, "counter %s %s\n", counter, state)
				lcd = ok.LCD
			}
			for _, l := range lcd {
				fmt.Fprintf(out, "lcd: %s\n", l)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&counter, "counter", "", "counter id, e.g. 5 (required)")
	fl.StringVar(&toService, "to-service", "", "transfer: the service to wait in")
	fl.StringVar(&toCounter, "to-counter", "", "transfer: the counter that must call it")
	fl.StringVar(&key, "idem-key", "", "idempotency key: the same key twice makes one change")
	return cmd
}

// ticketLine describes a ticket after an action, e.g. "A001 called -> 1".
func ticketLine(t *wire.Ticket) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", t.Number, t.Status)
	switch t.Status {
	case wire.StatusCalled:
		fmt.Fprintf(&b, " -> %d", t.Counter)
		if t.CallCount > 1 {
			fmt.Fprintf(&b, " (call %d)", t.CallCount)
		}
	case wire.StatusServing:
		fmt.Fprintf(&b, " at %d", t.Counter)
	case wire.StatusWaiting:
		fmt.Fprintf(&b, " in %s", t.Service)
		if t.Counter != 0 {
			fmt.Fprintf(&b, " for counter %d", t.Counter)
		}
		fmt.Fprintf(&b, ", %d ahead", t.PeopleAhead)
	}
	return b.String()
}

func newSimDisplayCmd(f *simFlags) *cobra.Command {
	var (
		from     uint64
		count    int
		counters []string
		services []string
		snapshot bool
		wait     bool
	)
	cmd := &cobra.Command{
		Use:   "display",
		Short: "Print the site's events live, one line each, until interrupted",
		Long: `display subscribes to the site's events and prints one line per event, e.g.
"v12 CALLED A023 -> 5". By default it starts with the events after the
current version; --from V replays the events after version V first (the
daemon sends a snapshot instead when it no longer has them all), --snapshot
prints the state of the site first. It follows the daemon through
reconnections and resumes where it stopped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := f.env(cmd)
			if err != nil {
				return err
			}
			d, err := e.device("", wire.RoleDisplay, wire.RoleConsole, wire.RoleKeypad)
			if err != nil {
				return err
			}
			o := e.opts(d)
			errw := cmd.ErrOrStderr()
			last := "" // say each reason once, not at every redial
			o.OnState = func(s client.State, err error) {
				switch s {
				case client.StateReconnecting:
					if msg := e.reason(err, d); err != nil && msg != last {
						last = msg
						fmt.Fprintf(errw, "connection lost (%s), reconnecting...\n", msg)
					}
				case client.StateConnected:
					last = ""
					fmt.Fprintln(errw, "reconnected")
				}
			}
			ctx := cmd.Context()
			c, err := e.dial(ctx, d, o)
			for attempt := 0; wait && errors.Is(err, client.ErrUnreachable); attempt++ {
				if attempt == 0 {
					fmt.Fprintf(errw, "waiting for the daemon at %s...\n", e.addr)
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(client.Backoff(attempt, 200*time.Millisecond, 2*time.Second)):
				}
				c, err = e.dial(ctx, d, o)
			}
			if err != nil {
				return err
			}
			defer c.Close()
			filter := client.Filter{Services: services, Snapshot: snapshot}
			for _, id := range counters {
				n, err := counterNum(id)
				if err != nil {
					return err
				}
				filter.Counters = append(filter.Counters, n)
			}
			filter.FromVersion = c.Welcome().Version
			if cmd.Flags().Changed("from") {
				filter.FromVersion = from
			}
			s, err := c.Subscribe(ctx, filter)
			if err != nil {
				return e.explain(err, d)
			}
			defer s.Close()
			w := c.Welcome()
			fmt.Fprintf(errw, "watching site %s (service day %s) after v%d; Ctrl-C to stop\n", w.Site, w.ServiceDay, filter.FromVersion)
			out := cmd.OutOrStdout()
			n := 0
			for u := range s.Updates() {
				if u.Snapshot != nil {
					fmt.Fprint(out, snapshotText(u.Snapshot))
					continue
				}
				fmt.Fprintln(out, eventLine(u.Event))
				if n++; count > 0 && n >= count {
					return nil
				}
			}
			if err := s.Err(); err != nil {
				return e.explain(err, d)
			}
			return nil // interrupted
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&from, "from", 0, "replay the events after this version first")
	fl.IntVar(&count, "count", 0, "stop after this many events (0: never)")
	fl.StringSliceVar(&counters, "counter", nil, "only events of these counters")
	fl.StringSliceVar(&services, "service", nil, "only events of these services")
	fl.BoolVar(&snapshot, "snapshot", false, "print the state of the site first")
	fl.BoolVar(&wait, "wait", false, "wait for the daemon to come up instead of failing (a board that boots first)")
	return cmd
}

// eventLine formats one event, e.g. "v12 CALLED A023 -> 5".
func eventLine(e *wire.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "v%d %s", e.Version, strings.ToUpper(e.Kind.String()))
	switch e.Kind {
	case wire.EventCounterOpened, wire.EventCounterPaused, wire.EventCounterClosed:
		fmt.Fprintf(&b, " %d", e.Counter)
		return b.String()
	}
	fmt.Fprintf(&b, " %s", e.Number)
	switch e.Kind {
	case wire.EventCalled, wire.EventRecalled:
		fmt.Fprintf(&b, " -> %d", e.Counter)
		if e.CallCount > 1 {
			fmt.Fprintf(&b, " (call %d)", e.CallCount)
		}
	case wire.EventServing, wire.EventDone, wire.EventNoShow:
		if e.Counter != 0 {
			fmt.Fprintf(&b, " at %d", e.Counter)
		}
	case wire.EventIssued, wire.EventReentered, wire.EventTransferred:
		fmt.Fprintf(&b, " in %s", e.Service)
		if e.Counter != 0 {
			fmt.Fprintf(&b, " for counter %d", e.Counter)
		}
	}
	return b.String()
}

// snapshotText formats a snapshot, a line per service and per counter.
func snapshotText(s *wire.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "snapshot v%d site %s day %s\n", s.Version, s.Site, s.ServiceDay)
	for _, sv := range s.Services {
		state := "open"
		if !sv.Open {
			state = "closed"
		}
		fmt.Fprintf(&b, "  service %s %s: %d waiting, %d issued, %d served", sv.Code, state, sv.Waiting, sv.Issued, sv.Served)
		if sv.LastCalled != "" {
			fmt.Fprintf(&b, ", last called %s", sv.LastCalled)
		}
		b.WriteByte('\n')
	}
	for _, c := range s.Counters {
		fmt.Fprintf(&b, "  counter %d %s", c.ID, c.State)
		if c.Number != "" {
			fmt.Fprintf(&b, ": %s %s", c.Number, c.Status)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func newSimStatusCmd(f *simFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status [NUMBER]",
		Short: "Print the state of the site, or of one ticket",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := f.env(cmd)
			if err != nil {
				return err
			}
			d, err := e.device("", wire.RoleDisplay, wire.RoleConsole, wire.RoleKiosk)
			if err != nil {
				return err
			}
			c, err := e.dial(cmd.Context(), d, e.opts(d))
			if err != nil {
				return err
			}
			defer c.Close()
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				t, err := c.Status(cmd.Context(), args[0])
				if err != nil {
					return e.explain(err, d)
				}
				fmt.Fprintln(out, ticketLine(t))
				return nil
			}
			s, err := c.Snapshot(cmd.Context(), 0)
			if err != nil {
				return e.explain(err, d)
			}
			fmt.Fprint(out, snapshotText(s))
			return nil
		},
	}
}
