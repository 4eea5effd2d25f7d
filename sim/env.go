// Package sim plays the devices of a site over the device protocol, against
// a running daemon: it resolves which device to be (from a configuration,
// or an id and a secret), dials as it, acts as a kiosk, a counter keypad or
// a display, turns the client's errors into messages a person can act on,
// and formats tickets, events and snapshots one line each. The `nowserving
// sim` commands and the load generator (package load) are built on it.
package sim

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// DefaultAddr is the protocol address of `make run`.
const DefaultAddr = "127.0.0.1:7400"

// DefaultConfig is read for device credentials when neither a
// configuration nor a device id with its secret is given (the demo
// configuration of `make run`).
const DefaultConfig = "testdata/hospital.yaml"

// Opts say where the daemon is and which device to play.
type Opts struct {
	Addr    string        // protocol address (default: Addr of the configuration)
	Config  string        // YAML configuration with the devices (default: ConfigFile)
	Device  string        // device id (default: the first suitable device of Config)
	Secret  string        // its secret (default: from Config)
	Site    string        // site code (default: the device's site)
	Timeout time.Duration // of each attempt of a request
	Retries int           // retries of a request; 0: none
	Logger  *slog.Logger  // connection events; nil: discarded

	TLS         bool   // TLS with the system roots
	TLSCA       string // PEM file of the CA to trust
	TLSInsecure bool   // TLS without verifying the daemon
}

// Env is what Opts resolve to: the address, the TLS configuration and the
// configuration the devices come from.
type Env struct {
	Addr   string
	TLS    *tls.Config    // nil: plain TCP
	Config *config.Config // nil without a configuration
	log    *slog.Logger
	o      Opts
}

// New loads the configuration the options name and resolves the address.
func New(o Opts) (*Env, error) {
	if o.Secret != "" && o.Device == "" {
		return nil, errors.New("sim: --secret needs --device: say which device the secret is for")
	}
	e := &Env{o: o, log: o.Logger}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if file := ConfigFile(o.Config, o.Device, o.Secret); file != "" {
		cfg, err := config.Load(config.Opts{File: file, Client: true})
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		e.Config = cfg
	}
	e.Addr = Addr(o.Addr, e.Config)
	var err error
	if e.TLS, err = TLSConfig(o.TLS, o.TLSCA, o.TLSInsecure); err != nil {
		return nil, err
	}
	return e, nil
}

// ConfigFile is the configuration to read devices from: file, else
// DefaultConfig when it exists and device and secret are not both given.
func ConfigFile(file, device, secret string) string {
	if file == "" && (device == "" || secret == "") {
		if _, err := os.Stat(DefaultConfig); err == nil {
			return DefaultConfig
		}
	}
	return file
}

// AddrOf is where device d connects: --addr when given (one daemon or a
// comma-separated list, tried in order), else the device's own daemons
// from the configuration, else the Env's address.
func (e *Env) AddrOf(d Device) string {
	if e.o.Addr == "" && d.Daemons != "" {
		return d.Daemons
	}
	return e.Addr
}

// Addr is the daemon's address: addr, else the configured listen.protocol
// unless its port is 0, else DefaultAddr.
func Addr(addr string, cfg *config.Config) string {
	if addr == "" && cfg != nil {
		if _, port, err := net.SplitHostPort(cfg.Listen.Protocol); err == nil && port != "0" {
			addr = cfg.Listen.Protocol
		}
	}
	if addr == "" {
		addr = DefaultAddr
	}
	return addr
}

// TLSConfig returns the TLS configuration to dial with, or nil for plain
// TCP: system trusts the system's CAs, caFile the CA certificate(s) in a
// PEM file, insecure trusts any certificate (tests only).
func TLSConfig(system bool, caFile string, insecure bool) (*tls.Config, error) {
	if !system && caFile == "" && !insecure {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("sim: read --tls-ca: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("sim: --tls-ca %s: no PEM certificate in it", caFile)
		}
	}
	return c, nil
}

// Device is the identity a simulated device connects with.
type Device struct {
	ID      string
	Secret  []byte
	Role    wire.Role
	Site    string
	Counter string // a keypad's counter
	// Daemons is the device's own list of daemons (devices[].daemons),
	// comma-separated; empty: the Env's address.
	Daemons string
}

// Device picks the identity: Opts.Device (from the configuration, or with
// Opts.Secret), else the first device of the configuration with one of
// roles (in order of preference) and, when counter is set, bound to it (a
// console may act for any counter).
func (e *Env) Device(counter string, roles ...wire.Role) (Device, error) {
	o := e.o
	if err := e.knownSite(); err != nil {
		return Device{}, err
	}
	if o.Device != "" && o.Secret != "" {
		d := Device{ID: o.Device, Secret: []byte(o.Secret), Role: roles[0], Site: o.Site, Counter: counter}
		if e.Config != nil {
			if cd, ok := e.Config.Device(o.Device); ok {
				d.Role = roleOf(cd.Role)
				d.Site = cmp.Or(o.Site, cd.Site)
			}
		}
		return d, nil
	}
	if e.Config == nil {
		return Device{}, errors.New("sim: no device: give --config, or --device and --secret")
	}
	if o.Device != "" {
		cd, ok := e.Config.Device(o.Device)
		if !ok {
			return Device{}, fmt.Errorf("sim: device %q is not in the configuration", o.Device)
		}
		return Device{ID: cd.ID, Secret: []byte(cd.Secret), Role: roleOf(cd.Role), Site: cmp.Or(o.Site, cd.Site), Counter: cmp.Or(counter, cd.Counter),
			Daemons: strings.Join(cd.Daemons, ",")}, nil
	}
	for _, r := range roles {
		for _, cd := range e.Config.Devices {
			if roleOf(cd.Role) != r || o.Site != "" && cd.Site != "" && cd.Site != o.Site {
				continue
			}
			if r == wire.RoleKeypad && counter != "" && cd.Counter != counter {
				continue
			}
			return Device{ID: cd.ID, Secret: []byte(cd.Secret), Role: r, Site: cmp.Or(o.Site, cd.Site), Counter: cmp.Or(counter, cd.Counter),
				Daemons: strings.Join(cd.Daemons, ",")}, nil
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
	return Device{}, fmt.Errorf("sim: the configuration has no %s device", what)
}

// knownSite checks Opts.Site against the configuration's sites.
func (e *Env) knownSite() error {
	if e.o.Site == "" || e.Config == nil {
		return nil
	}
	if _, ok := e.Config.Site(e.o.Site); ok {
		return nil
	}
	ids := make([]string, 0, len(e.Config.Sites))
	for _, s := range e.Config.Sites {
		ids = append(ids, s.ID)
	}
	return fmt.Errorf("sim: unknown site %q: the configuration has %s", e.o.Site, strings.Join(ids, ", "))
}

// Devices returns every configured device of role (to spread many
// connections over).
func (e *Env) Devices(role wire.Role) []Device {
	o := e.o
	if e.Config == nil {
		if o.Device != "" && o.Secret != "" {
			return []Device{{ID: o.Device, Secret: []byte(o.Secret), Role: role, Site: o.Site}}
		}
		return nil
	}
	var out []Device
	for _, cd := range e.Config.Devices {
		if roleOf(cd.Role) == role && (o.Site == "" || cd.Site == "" || cd.Site == o.Site) {
			out = append(out, Device{ID: cd.ID, Secret: []byte(cd.Secret), Role: role, Site: cmp.Or(o.Site, cd.Site), Counter: cd.Counter,
				Daemons: strings.Join(cd.Daemons, ",")})
		}
	}
	return out
}

// Named reports whether Opts named one device (Opts.Device).
func (e *Env) Named() bool { return e.o.Device != "" }

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

// ClientOpts returns the client options to connect as d.
func (e *Env) ClientOpts(d Device) client.Opts {
	o := client.Opts{
		DeviceID: d.ID, Secret: d.Secret, Role: d.Role, Site: d.Site,
		Timeout: e.o.Timeout, Retries: e.o.Retries, Logger: e.log,
		Firmware: "nowserving-sim/1", TLSConfig: e.TLS,
	}
	if o.Retries == 0 {
		o.Retries = -1
	}
	return o
}

// Dial connects as d with o, turning failures into messages a person can
// act on.
func (e *Env) Dial(ctx context.Context, d Device, o client.Opts) (*client.Client, error) {
	return e.DialNth(ctx, d, o, 0)
}

// DialNth is Dial for the nth device of a load: given several daemons by
// --addr, it starts at daemon n modulo their number, then fails over in
// list order, so n devices spread evenly over the daemons. A device's own
// list (devices[].daemons) is tried in its order.
func (e *Env) DialNth(ctx context.Context, d Device, o client.Opts, n int) (*client.Client, error) {
	addrs := client.SplitList(e.AddrOf(d))
	if k := n % max(len(addrs), 1); k > 0 && e.o.Addr != "" {
		addrs = append(addrs[k:], addrs[:k]...)
	}
	c, err := client.Dial(ctx, strings.Join(addrs, ","), o)
	if err != nil {
		return nil, e.Explain(err, d)
	}
	return c, nil
}

// connect picks a device of one of roles (Device) and dials as it.
func (e *Env) connect(ctx context.Context, roles ...wire.Role) (*client.Client, Device, error) {
	d, err := e.Device("", roles...)
	if err != nil {
		return nil, d, err
	}
	c, err := e.Dial(ctx, d, e.ClientOpts(d))
	return c, d, err
}
